//! Feature `interpose` (E01–E07): std, crates and C code that block in the C library are
//! reached by a deadline or a cancel, by an error return, never an unwind. Every test runs
//! through the public API; the interposed symbols are what `std` calls.
// Where the interposition is built (the one condition, named by build.rs).
#![cfg(thread_cancel_interpose)]

mod common;

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The deadline of every "table" test, and the bound it must end within: `HANG`, generous for
/// a loaded machine (what ended it is checked by `acted()` and the calls' errors, not by a
/// latency; latencies are the benchmarks').
const DEADLINE: Duration = Duration::from_millis(100);
const BOUND: Duration = common::HANG;

/// Runs `f` under `with_timeout(DEADLINE)`; checks that the run ended within `BOUND` and never
/// before its deadline, that its error says the deadline passed and that the cancel acted (an
/// interposed call failed); returns the closure's value (it returned: the foreign code left by
/// its error path). See [`timed_out_with`].
fn timed_out<R>(mut f: impl FnMut() -> R) -> R {
    timed_out_with(|_| f())
}

/// [`timed_out`], the budget given to `f`: `DEADLINE`, doubled until the run started its
/// closure (on a loaded or emulated machine a deadline can pass before the run's entry, which
/// then rightly never starts it, and there is no value). Work that must outlast the deadline
/// and would end by itself (a sleep, a child's) is made as many budgets long.
fn timed_out_with<R>(mut f: impl FnMut(Duration) -> R) -> R {
    let (r, took, budget) = common::once_started(DEADLINE, |budget, started| {
        let t = Instant::now();
        let r = thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            f(budget)
        });
        (r, t.elapsed(), budget)
    });
    assert!(took < BOUND, "the run took {took:?}");
    assert!(
        took >= budget,
        "ended before its deadline {budget:?}: {took:?}"
    );
    let e = r
        .err()
        .expect("the deadline passed: the run reports it")
        .into_canceled();
    assert!(
        e.deadline_passed(),
        "the cause is the deadline: {:?}",
        e.cause()
    );
    assert!(
        e.acted(),
        "an interposed call failed with the deadline's error"
    );
    e.into_value().expect("the closure returned")
}

/// The error of an interposed call that failed because a deadline passed.
fn assert_deadline_error(e: &io::Error) {
    assert_eq!(e.raw_os_error(), Some(libc::ETIMEDOUT), "{e}");
    assert_eq!(e.kind(), io::ErrorKind::TimedOut);
}

#[test]
fn e02_std_thread_sleep_ends_at_the_deadline_without_a_panic() {
    timed_out_with(|budget| std::thread::sleep(budget * 6));
}

#[test]
fn e02_std_tcp_read_to_string_ends_at_the_deadline_and_loses_nothing() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // The server stays silent until the run has ended (the test's word, not a time; at most
    // `BOUND`, so that a deadline that does not act fails the test rather than hangs it).
    let (reply, silent) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let _ = silent.recv_timeout(BOUND);
        // The client has given up and closed: the reply goes nowhere (EPIPE is fine).
        let _ = s.write_all(b"late reply");
    });
    let mut got = String::new();
    let r = timed_out(|| {
        let mut s = TcpStream::connect(addr)?;
        s.read_to_string(&mut got)
    });
    drop(reply);
    assert_deadline_error(&r.unwrap_err());
    assert_eq!(
        got, "",
        "no byte was taken from the socket by the failed read"
    );
    server.join().unwrap();
}

#[test]
fn e01_std_fs_read_of_a_fifo_without_writer_ends_at_the_deadline() {
    let dir = tempdir("fifo-open");
    let fifo = dir.join("f");
    mkfifo(&fifo);
    // No writer: `open` (the C shim of `open64`) blocks, and fails at the deadline.
    let r = timed_out(|| std::fs::read(&fifo));
    assert_deadline_error(&r.unwrap_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn e01_std_fs_read_of_a_fifo_with_a_silent_writer_ends_at_the_deadline() {
    let dir = tempdir("fifo-read");
    let fifo = dir.join("f");
    mkfifo(&fifo);
    let path = fifo.clone();
    // The writer opens (which waits for the reader), then writes nothing until the run has
    // ended (the test's word, not a time; at most `BOUND`, as above).
    let (late, silent) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let _ = silent.recv_timeout(BOUND);
        let _ = w.write_all(b"late");
    });
    let r = timed_out(|| std::fs::read(&fifo));
    drop(late);
    assert_deadline_error(&r.unwrap_err());
    writer.join().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// No child of the calling thread is left: neither running nor waiting to be reaped.
fn assert_no_child_left() {
    assert_eq!(own_children(), Vec::<libc::pid_t>::new(), "children left");
}

#[test]
fn e05_command_status_ends_at_the_deadline_with_its_child_killed_and_reaped() {
    // `status` waits in `waitpid`: the deadline kills the child the run started, and the wait
    // for it reaps it. std returns the status: killed by SIGKILL.
    let r = timed_out_with(|budget| Command::new("sleep").arg(secs(budget * 6)).status());
    let status = r.expect("the wait for the killed child completes");
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_no_child_left();
}

#[test]
fn e05_command_output_ends_at_the_deadline_with_what_the_child_wrote_and_its_kill() {
    // `output` waits for the child's pipes with `poll` and unwraps the result: the deadline
    // kills the child, its pipes reach end of file, and std returns what it wrote before the
    // kill, then its status from the wait that reaps it. No panic inside std.
    let r = timed_out(|| {
        Command::new("sh")
            .args(["-c", "echo before; echo err >&2; exec sleep 5"])
            .output()
    });
    let out = r.expect("the output of the killed child");
    assert_eq!(out.stdout, b"before\n", "nothing the child wrote is lost");
    assert_eq!(out.stderr, b"err\n");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    assert_no_child_left();
}

#[test]
fn e05_command_output_on_stds_fork_path_ends_at_the_deadline_without_a_panic() {
    use std::os::unix::process::CommandExt;
    let out = timed_out_with(|budget| {
        let mut cmd = Command::new("sleep");
        cmd.arg(secs(budget * 6));
        // SAFETY: the closure does nothing (it only makes std fork instead of `posix_spawn`).
        unsafe { cmd.pre_exec(|| Ok(())) };
        cmd.output()
    })
    .expect("the output of the killed child");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    assert!(out.stdout.is_empty());
    assert_no_child_left();
}

/// A sleep's argument of `d`, in seconds.
fn secs(d: Duration) -> String {
    d.as_secs_f64().to_string()
}

#[test]
fn e05_spawn_in_a_canceled_run_fails_with_the_deadline_and_starts_nothing() {
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it).
    let r = common::once_started(Duration::from_millis(50), |budget, started| {
        thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            std::thread::sleep(budget * 100); // ends at the deadline
            let spawned = Command::new("true").spawn().map(|_| ());
            let mut forked = Command::new("true");
            // SAFETY: as above: the fork path of std.
            unsafe { std::os::unix::process::CommandExt::pre_exec(&mut forked, || Ok(())) };
            (spawned, forked.spawn().map(|_| ()))
        })
    });
    let (spawned, forked) = r.unwrap_err().into_canceled().into_value().unwrap();
    assert_deadline_error(&spawned.unwrap_err());
    assert_deadline_error(&forked.unwrap_err());
    assert_no_child_left();
}

#[test]
fn e05_a_child_started_outside_the_run_is_not_killed_by_its_deadline() {
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it); the child, started before each run, outlives the
    // deadline by far (40 budgets: a loaded machine may start the run late). The child of a
    // run that did not start is ended here.
    let (r, mut child) = common::once_started(Duration::from_millis(50), |budget, started| {
        let mut child = Command::new("sleep")
            .arg(secs(budget * 40))
            .spawn()
            .unwrap();
        let r = thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            child.wait()
        });
        if !started.load(Ordering::SeqCst) {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        (r, child)
    });
    let e = r.unwrap_err().into_canceled();
    assert!(e.deadline_passed() && e.acted());
    assert_deadline_error(&e.into_value().unwrap().unwrap_err());
    // Not the run's child: still running, and it ends by itself.
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn e05_a_child_the_run_returns_running_is_left_alone() {
    let r = thread_cancel::with_timeout(Duration::from_secs(10), || {
        Command::new("sleep").arg("0.2").spawn()
    });
    let mut child = r.unwrap().unwrap();
    // Its run ended: a later deadline of another run does not concern it.
    let r = thread_cancel::with_timeout(Duration::from_millis(20), || {
        std::thread::sleep(Duration::from_secs(1));
    });
    assert!(r.unwrap_err().into_canceled().acted());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn e02_std_tcp_listener_accept_ends_at_the_deadline_and_loses_no_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let r = timed_out(|| listener.accept());
    assert_deadline_error(&r.unwrap_err());
    // The canceled accept took nothing: a connection made afterwards is accepted.
    let client = TcpStream::connect(addr).unwrap();
    let (server_side, peer) = listener.accept().unwrap();
    assert_eq!(peer, client.local_addr().unwrap());
    drop(server_side);
}

#[test]
fn e03_in_a_canceled_run_every_later_call_fails_at_once_with_no_effect() {
    let (mut a, mut b) = UnixStream::pair().unwrap();
    a.write_all(b"x").unwrap();
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it).
    let (r, took) = common::once_started(Duration::from_millis(50), |budget, started| {
        let t = Instant::now();
        let r = thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            std::thread::sleep(budget * 100); // ends at the deadline
            let mut buf = [0u8; 1];
            // Level-triggered: this read fails at once although a byte is there to read.
            let first = b.read(&mut buf).map_err(|e| e.raw_os_error());
            let second = b.read(&mut buf).map_err(|e| e.raw_os_error());
            (first, second)
        });
        (r, t.elapsed())
    });
    assert!(took < BOUND, "not ended by the deadline: took {took:?}");
    let e = r.unwrap_err().into_canceled();
    assert!(e.deadline_passed() && e.acted());
    let (first, second) = e.into_value().unwrap();
    assert_eq!(first, Err(Some(libc::ETIMEDOUT)));
    assert_eq!(second, Err(Some(libc::ETIMEDOUT)));
    // No effect: the byte is still there after the run.
    let mut buf = [0u8; 1];
    assert_eq!(b.read(&mut buf).unwrap(), 1);
    assert_eq!(&buf, b"x");
}

#[test]
fn e03_a_scope_cancel_fails_with_ecanceled_and_acts() {
    let scope = thread_cancel::CancelScope::new();
    let s2 = scope.clone();
    let entered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let e2 = entered.clone();
    let tid = common::gettid();
    // The cancel comes once the run's read is blocked (not before the run started).
    let canceler = std::thread::spawn(move || {
        common::wait_flag(&e2, "the run started");
        common::wait_blocked(tid);
        s2.cancel();
    });
    let (_a, mut b) = UnixStream::pair().unwrap();
    let r = scope.run(|| {
        entered.store(true, std::sync::atomic::Ordering::SeqCst);
        let mut buf = [0u8; 1];
        b.read(&mut buf).map_err(|e| e.raw_os_error())
    });
    canceler.join().unwrap();
    let e = r.unwrap_err();
    assert!(!e.deadline_passed() && e.acted());
    assert_eq!(e.into_value(), Some(Err(Some(libc::ECANCELED))));
    // `Canceled::from_io_error` recognises an interposed call's `ECANCELED`.
    let io = io::Error::from_raw_os_error(libc::ECANCELED);
    assert!(thread_cancel::Canceled::from_io_error(&io).is_some());
}

#[test]
fn e04_a_thread_cancel_fails_std_read_and_acts_at_the_next_own_point() {
    let (mut a, b) = UnixStream::pair().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (h, tid) = common::spawn_watched(move || {
        let mut b = b;
        let mut buf = [0u8; 1];
        let r = b.read(&mut buf).map_err(|e| e.raw_os_error());
        tx.send(r).unwrap();
        // The request is still pending: the thread's next own point acts on it.
        thread_cancel::testcancel();
        unreachable!("testcancel acted");
    });
    tid.wait_blocked(); // in std's read
    h.cancel().unwrap();
    assert_eq!(
        rx.recv_timeout(common::HANG).unwrap(),
        Err(Some(libc::ECANCELED))
    );
    // Join reports the thread canceled (R09): it acted at `testcancel`.
    assert!(h.join().is_canceled());
    // No effect: a byte written now is not lost to the canceled read (the peer is gone, so
    // the write fails; nothing was consumed before). A process another test is starting may
    // hold a copy of the peer until its `exec`: the write fails once that copy is closed.
    assert!(common::wait_for(|| a.write_all(b"y").is_err()));
}

#[test]
fn e02_with_cancellation_disabled_nothing_acts() {
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it); the sleep lasts seven and a half budgets.
    let (r, sleep) = common::once_started(Duration::from_millis(20), |budget, started| {
        let t = Instant::now();
        let sleep = budget * 15 / 2;
        let r = thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            let _g = thread_cancel::disable();
            std::thread::sleep(sleep); // sleeps in full
            t.elapsed()
        });
        (r, sleep)
    });
    let e = r.unwrap_err().into_canceled();
    assert!(e.deadline_passed());
    assert!(e.into_value().unwrap() >= sleep);
}

#[test]
fn e02_standard_output_and_error_are_not_points() {
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it).
    let r = common::once_started(Duration::from_millis(20), |budget, started| {
        thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            // Ends at the deadline.
            std::thread::sleep(budget * 250);
            // A canceled run's logging does not panic (println! panics on a failed write).
            println!("e02: printed in a canceled run");
            eprintln!("e02: printed to stderr in a canceled run");
            7
        })
    });
    let e = r.unwrap_err().into_canceled();
    assert_eq!(e.into_value(), Some(7));
}

#[test]
fn e06_std_io_works_unchanged_without_a_cancel() {
    let work = || {
        // Files.
        let dir = tempdir("plain");
        let f = dir.join("data");
        std::fs::write(&f, b"hello file").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"hello file");
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("log"))
            .unwrap();
        writeln!(file, "line").unwrap();
        drop(file);
        assert_eq!(std::fs::read_to_string(dir.join("log")).unwrap(), "line\n");
        std::fs::remove_dir_all(&dir).unwrap();
        // Sockets.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let echo = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 5];
            s.read_exact(&mut buf).unwrap();
            s.write_all(&buf).unwrap();
        });
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(b"howdy").unwrap();
        let mut back = String::new();
        c.read_to_string(&mut back).unwrap();
        assert_eq!(back, "howdy");
        echo.join().unwrap();
        // Processes.
        let out = Command::new("echo").arg("hi").output().unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"hi\n");
        // Sleeps.
        let t = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        assert!(t.elapsed() >= Duration::from_millis(20));
    };
    // In a thread that never met the crate, in a run, and in a thread of the crate.
    std::thread::spawn(work).join().unwrap();
    thread_cancel::with_timeout(Duration::from_secs(30), work).unwrap();
    assert!(matches!(
        thread_cancel::spawn(work).join(),
        thread_cancel::Outcome::Returned(())
    ));
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "thread-cancel-interpose-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mkfifo(p: &std::path::Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// The children of the calling thread (`/proc/thread-self/children`).
fn own_children() -> Vec<libc::pid_t> {
    // SAFETY: `gettid` takes nothing.
    let tid = unsafe { libc::gettid() };
    std::fs::read_to_string(format!("/proc/self/task/{tid}/children"))
        .expect("/proc/<pid>/task/<tid>/children")
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect()
}

#[test]
fn e05_read_exact_and_read_to_end_return_the_error_and_keep_what_they_read() {
    let (mut a, mut b) = UnixStream::pair().unwrap();
    a.write_all(b"abc").unwrap();
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it, and reads nothing).
    let r = common::once_started(Duration::from_millis(50), |budget, started| {
        thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            let mut got = Vec::new();
            // Reads "abc", then blocks: the deadline fails the next read, and the error is
            // returned (only `Interrupted` is retried), with the bytes already read kept in
            // `got`.
            let e = b.read_to_end(&mut got).unwrap_err();
            let mut five = [0u8; 5];
            let e2 = b.read_exact(&mut five).unwrap_err();
            (got, e.raw_os_error(), e2.raw_os_error())
        })
    });
    let (got, e, e2) = r.unwrap_err().into_value().unwrap();
    assert_eq!(got, b"abc");
    assert_eq!(e, Some(libc::ETIMEDOUT));
    assert_eq!(e2, Some(libc::ETIMEDOUT));
}

/// The stress count: `THREAD_CANCEL_STRESS`, default small (CI).
fn stress_count() -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

/// A tiny deterministic spread of spin delays.
fn spin(n: u32) {
    for i in 0..n {
        std::hint::black_box(i);
    }
}

#[test]
fn e02_stress_scope_cancel_against_an_interposed_one_byte_read() {
    let n = stress_count();
    let (a, mut b) = UnixStream::pair().unwrap();
    let (to_helper, jobs) = std::sync::mpsc::channel::<(thread_cancel::CancelScope, u32, bool)>();
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    let helper = std::thread::spawn(move || {
        let mut a = a;
        for (scope, d, write_first) in jobs {
            spin(d);
            if write_first {
                a.write_all(b"x").unwrap();
                spin(d / 2);
                scope.cancel();
            } else {
                scope.cancel();
                spin(d / 2);
                a.write_all(b"x").unwrap();
            }
            done_tx.send(()).unwrap();
        }
    });
    let (mut before, mut during, mut after, mut in_run, mut drained) = (0, 0, 0, 0, 0);
    for i in 0..n {
        let scope = thread_cancel::CancelScope::new();
        let d = ((i * 7919) % 4000) as u32;
        to_helper.send((scope.clone(), d, i % 2 == 0)).unwrap();
        let r = scope.run(|| {
            let mut buf = [0u8; 1];
            b.read(&mut buf).map_err(|e| e.raw_os_error())
        });
        let got = match r {
            Ok(Ok(k)) => {
                after += 1;
                k
            }
            Ok(Err(e)) => panic!("read failed without a cancel: {e:?}"),
            Err(e) => match e.into_value() {
                None => {
                    before += 1;
                    0
                }
                Some(Ok(k)) => {
                    after += 1;
                    k
                }
                Some(Err(e)) => {
                    assert_eq!(e, Some(libc::ECANCELED));
                    during += 1;
                    0
                }
            },
        };
        assert!(
            !thread_cancel::cancel_requested(),
            "the thread is clean after the run"
        );
        done.recv().unwrap(); // the byte is written
        in_run += got;
        if got == 0 {
            // The canceled read had no effect: the byte is still there.
            let mut buf = [0u8; 1];
            assert_eq!(b.read(&mut buf).unwrap(), 1);
            drained += 1;
        }
    }
    // The writer is still open: nothing is left over (and nothing was read twice).
    b.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 1];
    assert_eq!(
        b.read(&mut buf).unwrap_err().kind(),
        io::ErrorKind::WouldBlock,
        "no byte duplicated or left over"
    );
    drop(to_helper);
    helper.join().unwrap();
    assert_eq!(in_run + drained, n, "0 bytes lost");
    println!(
        "e02 read stress: {n} races; cancel before the run {before}, during the read {during}, \
         after the read {after}; bytes read in runs {in_run}, after {drained}"
    );
    assert!(during > 0, "the races happened");
}

#[test]
fn e02_stress_scope_cancel_against_std_thread_sleep() {
    let n = stress_count();
    let (to_helper, jobs) = std::sync::mpsc::channel::<(thread_cancel::CancelScope, u32)>();
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    let helper = std::thread::spawn(move || {
        for (scope, d) in jobs {
            spin(d);
            scope.cancel();
            done_tx.send(()).unwrap();
        }
    });
    let (mut before, mut during, mut after) = (0, 0, 0);
    for i in 0..n {
        let scope = thread_cancel::CancelScope::new();
        let d = ((i * 7919) % 20_000) as u32;
        to_helper.send((scope.clone(), d)).unwrap();
        let r = scope.run(|| std::thread::sleep(Duration::from_micros(20)));
        match r {
            Ok(()) => after += 1,
            Err(e) if !e.completed() => before += 1,
            Err(e) if e.acted() => during += 1,
            Err(_) => after += 1,
        }
        assert!(
            !thread_cancel::cancel_requested(),
            "the thread is clean after the run"
        );
        done.recv().unwrap();
    }
    drop(to_helper);
    helper.join().unwrap();
    println!(
        "e02 sleep stress: {n} races; cancel before the run {before}, during the sleep {during}, \
         after it {after}; 0 panics"
    );
    assert_eq!(before + during + after, n);
}

use thread_cancel_fixtures::{
    interpose_test_c_glibc_cancels, interpose_test_c_read_one, interpose_test_so_glibc_cancels,
    interpose_test_so_read_one,
};

/// A C library linked as a shared object is reached as a static one is: its `read` is bound at
/// load to the program's definition (the linker exports a definition of the executable that a
/// shared library it links against also defines, so that it takes precedence — the rule that
/// lets an executable replace `malloc`), with no flag.
#[test]
fn e06_a_c_shared_object_blocked_in_read_is_reached_by_a_deadline() {
    use std::os::fd::AsRawFd;
    let (mut a, b) = UnixStream::pair().unwrap();
    let fd = b.as_raw_fd();
    // SAFETY: `fd` is an open socket for the whole call.
    let r = timed_out(|| unsafe { interpose_test_so_read_one(fd) });
    assert_eq!(r, -libc::c_long::from(libc::ETIMEDOUT));
    a.write_all(b"z").unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { interpose_test_so_read_one(fd) }, 1);
}

/// A thread that never met the crate (here a C library's own threads) gets the C library's
/// definition of each interposed function, so the C library's own `pthread_cancel` still acts
/// on it there: read, nanosleep, poll, recv, select and the open of a FIFO, from a static
/// library and from a shared object; each thread canceled, its cleanup handler run.
#[test]
fn e06_the_c_librarys_own_cancel_still_reaches_its_threads_blocked_in_interposed_calls() {
    let dir = tempdir("glibc-cancels");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    for (what, f) in [
        (
            "static library",
            interpose_test_c_glibc_cancels as unsafe extern "C" fn(_, _, _) -> _,
        ),
        ("shared object", interpose_test_so_glibc_cancels),
    ] {
        let mut out = vec![0u8; 1024];
        // SAFETY: a nul-terminated path and a buffer of `out.len()` bytes, both alive for the
        // call.
        let missed = unsafe { f(path.as_ptr(), out.as_mut_ptr().cast(), out.len()) };
        let text = std::ffi::CStr::from_bytes_until_nul(&out)
            .unwrap()
            .to_string_lossy();
        eprintln!("{what}:\n{text}");
        assert_eq!(missed, 0, "{what}: {text}");
        assert_eq!(text.lines().count(), 6, "{text}");
    }
}

#[test]
fn e06_a_c_static_library_blocked_in_read_is_reached_by_a_deadline() {
    use std::os::fd::AsRawFd;
    let (mut a, b) = UnixStream::pair().unwrap();
    let fd = b.as_raw_fd();
    // SAFETY: `fd` is an open socket for the whole call.
    let r = timed_out(|| unsafe { interpose_test_c_read_one(fd) });
    assert_eq!(r, -libc::c_long::from(libc::ETIMEDOUT));
    // No effect: a byte written afterwards is read by the same C code.
    a.write_all(b"z").unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { interpose_test_c_read_one(fd) }, 1);
}

/// More of E01's list, called as C code calls them: `select` and `pselect` on a pipe with no
/// data, `flock` of a file another descriptor holds, `waitid` of a sleeping child — each fails
/// with `ETIMEDOUT` at the deadline and had no effect (the lock is still the other's, the child
/// is still there to reap). `fsync`/`fdatasync` work unchanged.
#[test]
fn e01_select_pselect_flock_and_waitid_end_at_the_deadline() {
    let (r, _w) = std::io::pipe().unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&r);
    let err = timed_out(|| {
        // SAFETY: an fd_set for one descriptor below FD_SETSIZE; no timeout.
        unsafe {
            let mut set: libc::fd_set = std::mem::zeroed();
            libc::FD_SET(fd, &mut set);
            let n = libc::select(
                fd + 1,
                &mut set,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            (n, io::Error::last_os_error())
        }
    });
    assert_eq!(err.0, -1);
    assert_deadline_error(&err.1);
    let err = timed_out(|| {
        // SAFETY: as above; no timeout and no mask.
        unsafe {
            let mut set: libc::fd_set = std::mem::zeroed();
            libc::FD_SET(fd, &mut set);
            let n = libc::pselect(
                fd + 1,
                &mut set,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            );
            (n, io::Error::last_os_error())
        }
    });
    assert_eq!(err.0, -1);
    assert_deadline_error(&err.1);
    // flock: another open file description holds the lock.
    let path = std::env::temp_dir().join(format!("tc-e01-flock-{}", std::process::id()));
    let holder = std::fs::File::create(&path).unwrap();
    let other = std::fs::File::open(&path).unwrap();
    use std::os::fd::AsRawFd;
    // SAFETY: valid descriptors.
    assert_eq!(unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX) }, 0);
    let err = timed_out(|| {
        // SAFETY: a valid descriptor.
        let n = unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX) };
        (n, io::Error::last_os_error())
    });
    assert_eq!(err.0, -1);
    assert_deadline_error(&err.1);
    // No effect: the lock is still the holder's.
    // SAFETY: as above.
    assert_eq!(
        unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        -1
    );
    // SAFETY: as above.
    unsafe {
        assert_eq!(libc::fsync(holder.as_raw_fd()), 0);
        assert_eq!(libc::fdatasync(holder.as_raw_fd()), 0);
    }
    drop((holder, other));
    std::fs::remove_file(&path).unwrap();
    // waitid of a child that sleeps.
    let mut child = Command::new("sleep").arg("5").spawn().unwrap();
    let err = timed_out(|| {
        // SAFETY: `info` is a valid siginfo_t to fill.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let n = libc::waitid(libc::P_PID, child.id(), &mut info, libc::WEXITED);
            (n, io::Error::last_os_error())
        }
    });
    assert_eq!(err.0, -1);
    assert_deadline_error(&err.1);
    assert!(child.try_wait().unwrap().is_none(), "the child was reaped");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A real blocking HTTP client from crates.io (`ureq`, no timeout of its own) against a local
/// server that accepts and never answers: without the feature it would wait for ever (its
/// default has no read timeout); with it the deadline reaches the client's `recv`, which fails
/// with `ETIMEDOUT`, and the client returns its transport error at the deadline.
#[test]
fn e02_a_blocking_http_client_from_crates_io_ends_at_the_deadline() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Never answers: it closes the connection once the run has ended (the test's word, not a
    // time; at most `BOUND`, so that a deadline that does not act fails the test, not hangs).
    let (done, silent) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        let _ = silent.recv_timeout(BOUND);
        drop(s);
    });
    let r = timed_out(|| {
        ureq::get(&format!("http://{addr}/"))
            .call()
            .map_err(Box::new)
    });
    drop(done);
    let e = r.expect_err("the server never answered");
    eprintln!("ureq at the deadline: {e}");
    assert!(matches!(*e, ureq::Error::Transport(_)), "{e}");
    server.join().unwrap();
}

/// In a `Drop` run by a panic the crate's own points cannot act (no second unwind may leave a
/// destructor), but an interposed call acts by an error: a deadline there ends std's sleep,
/// and the run reports it as acted on.
#[test]
fn e03_a_deadline_in_a_drop_during_a_panic_ends_an_interposed_call() {
    struct InDrop(std::sync::Arc<std::sync::Mutex<Option<(Duration, bool)>>>);
    impl Drop for InDrop {
        fn drop(&mut self) {
            let t = Instant::now();
            let r = thread_cancel::with_timeout(DEADLINE, || {
                std::thread::sleep(Duration::from_millis(600))
            });
            let acted = r.unwrap_err().acted();
            *self.0.lock().unwrap() = Some((t.elapsed(), acted));
        }
    }
    let _ = thread_cancel::with_timeout(Duration::from_millis(1), || ());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let s = seen.clone();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::thread::spawn(move || {
        let _d = InDrop(s);
        panic!("unwinds through the Drop");
    })
    .join();
    std::panic::set_hook(prev);
    assert!(r.is_err());
    let (took, acted) = seen.lock().unwrap().take().expect("the Drop ran");
    assert!(took < BOUND, "{took:?}");
    assert!(acted);
}

static E07_PIPE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn e07_handler(_: libc::c_int) {
    let b = [7u8];
    // SAFETY: a valid one-byte buffer; `write` is async-signal-safe (and so must ours be).
    unsafe {
        libc::write(
            E07_PIPE.load(std::sync::atomic::Ordering::SeqCst),
            b.as_ptr().cast(),
            1,
        )
    };
}

/// What POSIX lists as async-signal-safe stays so: the interposed `write` called from a signal
/// handler that interrupted this thread inside a canceled run's interposed `read`, and `write`,
/// `read` and `waitpid` in a forked child of a multithreaded process before it exits — no
/// deadlock, no allocation needed, errno left as the C library's.
#[test]
fn e07_interposed_calls_stay_async_signal_safe_in_handlers_and_after_fork() {
    let (r, w) = std::io::pipe().unwrap();
    use std::os::fd::AsRawFd;
    E07_PIPE.store(w.as_raw_fd(), std::sync::atomic::Ordering::SeqCst);
    // SAFETY: installs a handler that only calls `write`.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = e07_handler as *const () as usize;
        assert_eq!(libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut()), 0);
    }
    // The handler runs on a thread blocked in an interposed read of another pipe.
    let (r2, _w2) = std::io::pipe().unwrap();
    let r2_fd = r2.as_raw_fd();
    let tid = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    let t2 = tid.clone();
    let h = std::thread::spawn(move || {
        // SAFETY: gettid has no arguments.
        t2.store(
            unsafe { libc::syscall(libc::SYS_gettid) } as i32,
            std::sync::atomic::Ordering::SeqCst,
        );
        let mut b = [0u8; 1];
        // The deadline only ends the read if the signal never comes.
        let r = thread_cancel::with_timeout(common::HANG, || {
            (&r2).read(&mut b).map_err(|e| e.raw_os_error())
        });
        match r {
            Ok(v) => v,
            Err(e) => e.into_value().expect("the read returned"),
        }
    });
    while tid.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    // Blocked in the run's read: the signal interrupts it.
    common::wait_blocked_in_read(tid.load(std::sync::atomic::Ordering::SeqCst), r2_fd);
    // SAFETY: a signal to a live thread of this process.
    unsafe {
        libc::syscall(
            libc::SYS_tgkill,
            libc::getpid(),
            tid.load(std::sync::atomic::Ordering::SeqCst),
            libc::SIGUSR2,
        )
    };
    let mut b = [0u8; 1];
    (&r).read_exact(&mut b).unwrap();
    assert_eq!(b[0], 7, "the handler's write");
    // The handler has no SA_RESTART: the interrupted read fails with EINTR, as glibc's does.
    let v = h.join().unwrap();
    assert_eq!(v, Err(Some(libc::EINTR)));
    // After fork in a multithreaded process: the child uses write, read and waitpid.
    let busy = std::thread::spawn(|| std::thread::sleep(Duration::from_millis(200)));
    // SAFETY: the child calls only async-signal-safe functions, then _exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: async-signal-safe calls only.
        unsafe {
            let ok = libc::write(w.as_raw_fd(), [9u8].as_ptr().cast(), 1) == 1;
            let mut st = 0;
            let none = libc::waitpid(-1, &mut st, libc::WNOHANG) == -1;
            libc::_exit(if ok && none { 0 } else { 1 });
        }
    }
    let mut st = 0;
    // SAFETY: waits for our child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
    assert!(
        libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0,
        "status {st}"
    );
    (&r).read_exact(&mut b).unwrap();
    assert_eq!(b[0], 9);
    busy.join().unwrap();
}

/// `sigtimedwait`, `sigwaitinfo` and `sigwait` are points: in a run whose deadline passes, each
/// ends at the deadline with the deadline's error (`sigwait` returns it as its error number)
/// and takes nothing: the signal sent afterwards is still there for the next wait, and it
/// reports `SI_USER` for a `raise`, as glibc does. A set that holds every signal (the crate's
/// cancel signal included) is still interrupted: the cancel signal is never taken by the wait.
#[test]
fn e01_sigwait_sigwaitinfo_and_sigtimedwait_end_at_the_deadline_and_take_nothing() {
    std::thread::spawn(|| {
        // SAFETY: plain data; the sets are locals, the signal valid.
        let (mut usr2, mut full): (libc::sigset_t, libc::sigset_t) =
            unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
        // SAFETY: as above.
        unsafe {
            libc::sigemptyset(&mut usr2);
            libc::sigaddset(&mut usr2, libc::SIGUSR2);
            libc::sigfillset(&mut full);
            assert_eq!(
                libc::pthread_sigmask(libc::SIG_BLOCK, &usr2, std::ptr::null_mut()),
                0
            );
        }
        let forever = libc::timespec {
            tv_sec: 3600,
            tv_nsec: 0,
        };
        // SAFETY (each closure): valid sets, a null or valid info, a valid timeout.
        let r = timed_out(|| unsafe {
            (
                libc::sigtimedwait(&usr2, std::ptr::null_mut(), &forever),
                io::Error::last_os_error(),
            )
        });
        assert_eq!(r.0, -1);
        assert_deadline_error(&r.1);
        let r = timed_out(|| unsafe {
            (
                libc::sigwaitinfo(&full, std::ptr::null_mut()),
                io::Error::last_os_error(),
            )
        });
        assert_eq!(r.0, -1);
        assert_deadline_error(&r.1);
        let mut sig = 0;
        let r = timed_out(|| unsafe { libc::sigwait(&usr2, &mut sig) });
        assert_eq!(r, libc::ETIMEDOUT);
        // Nothing was taken: a signal raised now is there for the next wait.
        // SAFETY: a valid signal; `info` is a local written by the call.
        unsafe {
            assert_eq!(libc::raise(libc::SIGUSR2), 0);
            let mut info: libc::siginfo_t = std::mem::zeroed();
            assert_eq!(libc::sigwaitinfo(&usr2, &mut info), libc::SIGUSR2);
            assert_eq!(info.si_code, libc::SI_USER);
        }
    })
    .join()
    .unwrap();
}

/// A thread that blocks every signal with the C library's `pthread_sigmask` (or
/// `sigprocmask`) stays cancelable while blocked in a system call: the interposed mask
/// functions take the crate's cancel signal out of a blocking set, as the C library does for
/// its own signals. Before, the read below was reached only when data came (the deadline
/// waited for the next point).
#[test]
fn e02_a_thread_that_blocks_every_signal_is_still_reached_in_a_blocked_call() {
    use std::os::fd::AsRawFd;
    for use_sigprocmask in [false, true] {
        let (_a, b) = UnixStream::pair().unwrap();
        let fd = b.as_raw_fd();
        std::thread::spawn(move || {
            // SAFETY: plain data; the set is a local.
            let mut full: libc::sigset_t = unsafe { std::mem::zeroed() };
            // SAFETY: a valid set; a null old set.
            unsafe {
                libc::sigfillset(&mut full);
                let r = if use_sigprocmask {
                    libc::sigprocmask(libc::SIG_BLOCK, &full, std::ptr::null_mut())
                } else {
                    libc::pthread_sigmask(libc::SIG_BLOCK, &full, std::ptr::null_mut())
                };
                assert_eq!(r, 0);
            }
            let mut buf = [0u8; 1];
            // SAFETY: a 1-byte buffer, an open socket.
            let (r, e) = timed_out(|| unsafe {
                (
                    libc::read(fd, buf.as_mut_ptr().cast(), 1),
                    io::Error::last_os_error(),
                )
            });
            assert_eq!(r, -1);
            assert_deadline_error(&e);
            // Every other signal is still blocked.
            // SAFETY: a null new set only reads the mask into a local.
            let mut now: libc::sigset_t = unsafe { std::mem::zeroed() };
            unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut now) };
            // SAFETY: a valid set and signal.
            assert_eq!(unsafe { libc::sigismember(&now, libc::SIGUSR1) }, 1);
        })
        .join()
        .unwrap();
    }
}

#[test]
fn e05_command_output_of_a_shell_ends_at_the_deadline_with_its_children_killed() {
    // The shell's own children (the `sleep`, and both sides of the pipeline) hold its output
    // pipe: they are killed with it, so the pipe reaches end of file and std returns.
    let r = timed_out(|| {
        Command::new("sh")
            .args([
                "-c",
                "echo before; sleep 4.321; echo after; sleep 4.321 | cat",
            ])
            .output()
    });
    let out = r.expect("the output of the killed shell");
    assert_eq!(out.stdout, b"before\n");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    assert_no_child_left();
    // The shell's `sleep` was killed too, not left to run on (reparented): it is gone once
    // the kill is delivered (waited for, up to `HANG`).
    common::wait_for(|| processes_running(b"sleep\x004.321\x00") == 0);
    let sleeps: Vec<_> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|cmd| cmd == b"sleep\x004.321\x00")
        .collect();
    assert!(sleeps.is_empty(), "a `sleep 4.321` runs on: {sleeps:?}");
}

#[test]
fn e05_stress_scope_cancel_against_command_output() {
    // Each race: a shell that writes a line, starts a `sleep` of 5 ms twice (its own children,
    // which hold its output pipe), then writes another; the cancel comes 0–15 ms after the run
    // starts. Whatever the moment — the shell forking included —: no panic, nothing the shell
    // wrote is lost, no process is left, and the result says which side won.
    let n = (stress_count() / 10).max(50);
    let (to_helper, jobs) = std::sync::mpsc::channel::<(thread_cancel::CancelScope, u64)>();
    let helper = std::thread::spawn(move || {
        for (scope, us) in jobs {
            std::thread::sleep(Duration::from_micros(us));
            scope.cancel();
        }
    });
    let (mut before, mut refused, mut killed, mut completed) = (0, 0, 0, 0);
    for i in 0..n {
        let scope = thread_cancel::CancelScope::new();
        to_helper
            .send((scope.clone(), (i as u64 * 7919) % 15_000))
            .unwrap();
        let r = scope.run(|| {
            std::panic::catch_unwind(|| {
                Command::new("sh")
                    .args(["-c", "echo x; sleep 0.005; sleep 0.005; echo y"])
                    .output()
            })
            .expect("no panic inside std")
        });
        let out = match r {
            Ok(out) => Some(out.expect("not canceled: the output")),
            Err(e) => match e.into_value() {
                None => {
                    before += 1;
                    None
                }
                Some(Err(e)) => {
                    assert_eq!(e.raw_os_error(), Some(libc::ECANCELED), "{e}");
                    refused += 1;
                    None
                }
                Some(Ok(out)) => Some(out),
            },
        };
        if let Some(out) = out {
            if out.status.signal() == Some(libc::SIGKILL) {
                assert!(
                    [&b""[..], b"x\n", b"x\ny\n"].contains(&&out.stdout[..]),
                    "{out:?}"
                );
                killed += 1;
            } else {
                assert!(out.status.success(), "{out:?}");
                assert_eq!(out.stdout, b"x\ny\n", "nothing lost");
                completed += 1;
            }
        }
        assert_no_child_left();
        assert!(!thread_cancel::cancel_requested(), "the thread is clean");
    }
    drop(to_helper);
    helper.join().unwrap();
    println!(
        "e05 output stress: {n} races; cancel before the run {before}, spawn refused {refused}, \
         child killed {killed}, completed {completed}"
    );
    assert!(killed > 0, "the races happened");
}

#[test]
fn e07_a_forked_child_never_kills_its_parents_children() {
    // In a run: the parent starts a `sleep` (the run's child), then forks. The forked child
    // inherits the thread's record of the run's children, cancels its copy of the scope and
    // makes an interposed call that acts on it: what the parent started is not the child's,
    // and stays running.
    let scope = thread_cancel::CancelScope::new();
    let (r, _w) = std::io::pipe().unwrap();
    let inner = scope.clone();
    let out = scope.run(|| {
        let mut sleeper = Command::new("sleep").arg("2").spawn().unwrap();
        // SAFETY: the child cancels a scope, reads a pipe and `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            inner.cancel();
            let mut b = [0u8; 1];
            let failed = (&r).read(&mut b).is_err();
            // SAFETY: ends the child.
            unsafe { libc::_exit(if failed { 0 } else { 1 }) };
        }
        assert!(pid > 0);
        let mut st = 0;
        // SAFETY: our own child; a valid out-pointer.
        assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
        assert!(libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0, "{st:#x}");
        // The sleep runs on: the forked child did not kill it.
        let alive = sleeper.try_wait().unwrap().is_none();
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        alive
    });
    assert!(
        out.expect("the parent's run was not canceled"),
        "the sleep was killed"
    );
}

#[test]
fn e04_a_thread_cancel_kills_the_children_of_the_threads_runs() {
    // A thread in a run waits for `Command::output`; its cancel kills the child (no panic in
    // std: `output` returns what the child wrote and its status), then the thread acts on the
    // cancel at its next own point.
    let (tx, rx) = std::sync::mpsc::channel();
    let h = thread_cancel::spawn(move || {
        let r = thread_cancel::with_timeout(Duration::from_secs(30), || {
            Command::new("sh")
                .args(["-c", "echo started; exec sleep 5.0432"])
                .output()
        });
        tx.send(r.map_err(|e| e.into_value())).unwrap();
        thread_cancel::testcancel();
        unreachable!("testcancel acted");
    });
    // The child has written its line and become the sleep (the run is in `output`).
    assert!(
        common::wait_for(|| processes_running(b"sleep\x005.0432\x00") == 1),
        "the child never started its sleep"
    );
    let t = Instant::now();
    h.cancel().unwrap();
    let out = rx
        .recv_timeout(common::HANG)
        .unwrap()
        .expect("the run was not canceled: the thread was")
        .expect("the output of the killed child");
    assert!(t.elapsed() < BOUND, "{:?}", t.elapsed());
    assert_eq!(out.stdout, b"started\n");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    assert!(h.join().is_canceled());
}

#[test]
fn e05_a_cancel_while_the_child_forks_leaves_no_descendant_holding_its_pipe() {
    // The shell starts 20 `sleep`s one after the other (each holds its output pipe); the
    // deadline comes while it is forking. A process sent SIGSTOP may still fork until it has
    // stopped: its children are listed only once it has, so none escapes the kill to keep the
    // pipe open (std's `output` would then fail, and panic).
    for i in 0..30u64 {
        let budget = Duration::from_micros(1_000 + i * 300);
        let r = thread_cancel::with_timeout(budget, || {
            std::panic::catch_unwind(|| {
                Command::new("sh")
                    .args([
                        "-c",
                        "i=0; while [ $i -lt 20 ]; do sleep 3.21 & i=$((i+1)); done; wait",
                    ])
                    .output()
            })
            .expect("no panic inside std")
        });
        match r {
            Ok(out) => panic!("the shell ended before its deadline: {out:?}"),
            Err(e) => match e.into_value() {
                None | Some(Err(_)) => {} // canceled before the spawn
                Some(Ok(out)) => {
                    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{out:?}")
                }
            },
        }
        assert_no_child_left();
    }
    // Gone once the kills are delivered (waited for, up to `HANG`).
    common::wait_for(|| processes_running(b"sleep\x003.21\x00") == 0);
    let sleeps = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|cmd| cmd == b"sleep\x003.21\x00")
        .count();
    assert_eq!(sleeps, 0, "a `sleep` escaped the kill");
}

#[test]
fn e07_a_forked_child_forgets_its_parents_pidfds_at_once() {
    // The record of a run's children holds a pidfd per child. In the child of `fork` these are
    // copies of the parent's: closed by `fork` itself, before the child can reuse their
    // numbers (closing them later could close a descriptor the child opened meanwhile). Other
    // tests run beside this one: the pidfd looked for is the one of this run's child (its
    // `fdinfo` names the process).
    fn pidfds_of(pid: u32) -> usize {
        std::fs::read_dir("/proc/self/fdinfo")
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
            .filter(|info| info.lines().any(|l| l == format!("Pid:\t{pid}")))
            .count()
    }
    let out = thread_cancel::CancelScope::new().run(|| {
        let mut sleeper = Command::new("sleep").arg("2").spawn().unwrap();
        let id = sleeper.id();
        let before = pidfds_of(id);
        // SAFETY: the child lists its descriptors and `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let n = pidfds_of(id);
            // SAFETY: ends the child.
            unsafe { libc::_exit(n as i32) };
        }
        let mut st = 0;
        // SAFETY: our own child; a valid out-pointer.
        assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
        (before, libc::WEXITSTATUS(st))
    });
    let (before, in_child) = out.unwrap();
    assert_eq!(before, 1, "the run's child is recorded with a pidfd");
    assert_eq!(in_child, 0, "the forked child kept the parent's pidfd");
}

#[test]
fn e04_a_pending_thread_cancel_does_not_refuse_a_spawn() {
    // `fork` and `posix_spawn` are not cancellation points: with a thread cancel pending the
    // child is started, and the thread acts on the cancel at its next point.
    let (tx, rx) = std::sync::mpsc::channel();
    let h = thread_cancel::spawn(move || {
        thread_cancel::current().cancel().unwrap();
        let spawned = Command::new("true").spawn().map(|mut c| {
            let _g = thread_cancel::disable();
            c.wait().map(|s| s.success())
        });
        tx.send(spawned.map_err(|e| e.raw_os_error())).unwrap();
        thread_cancel::testcancel();
        unreachable!("testcancel acted");
    });
    let spawned = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(spawned.expect("spawned").ok(), Some(true));
    assert!(h.join().is_canceled());
}

// ---------------------------------------------------------------------------------------------
// W03: children are tracked while they run (never "the first N started"); what std does between
// `fork` and `exec` never panics.

/// The number of open descriptors of this process.
fn open_fds() -> usize {
    // The listing's own descriptor is counted too, every time.
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Whether process `pid` exists and is a child of this process (running or a zombie).
fn is_our_child(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The parent's id is the second field after the `)` closing the name.
    let ppid = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .nth(1)
        .unwrap();
    ppid == std::process::id().to_string()
}

/// Processes of the system whose command line is `cmdline` (its words nul-terminated).
fn processes_running(cmdline: &[u8]) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|cmd| cmd == cmdline)
        .count()
}

#[test]
fn w03_a_hundred_commands_in_one_long_run_the_last_killed_at_its_deadline_nothing_left_open() {
    // A worker runs commands one after the other in one long run. Each child is tracked while
    // it runs: the 100th is killed at its deadline like the first would be, `wait_with_output`
    // returns its output and kill (no panic), and the run leaves no descriptor and no process.
    const NAME: &str =
        "w03_a_hundred_commands_in_one_long_run_the_last_killed_at_its_deadline_nothing_left_open";
    if common::child_value().is_none() {
        // In a process of its own, so that the descriptors counted are this test's alone.
        let run = common::run_child(NAME, "child", Duration::from_secs(120));
        assert!(run.status.success(), "{}", run.stderr);
        for line in run.stderr.lines().filter(|l| l.starts_with("w03")) {
            println!("{line}");
        }
        return;
    }
    let before = open_fds();
    let scope = thread_cancel::CancelScope::new();
    let mut pids = Vec::new();
    let mut during = 0;
    let t = Instant::now();
    let r = scope.run(|| {
        for _ in 0..99 {
            let child = Command::new("true")
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            pids.push(child.id());
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{out:?}");
        }
        during = open_fds();
        scope.set_deadline(Instant::now() + DEADLINE);
        let child = Command::new("sleep")
            .arg("5.4321")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        pids.push(child.id());
        let t = Instant::now();
        let out = child.wait_with_output();
        (out, t.elapsed())
    });
    let all = t.elapsed();
    let after = open_fds();
    let e = r.expect_err("the deadline passed");
    assert!(e.deadline_passed() && e.acted(), "{:?}", e.cause());
    let (out, took) = e.into_value().unwrap();
    let out = out.expect("the output of the killed 100th child");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    assert!(took < BOUND, "the 100th command took {took:?}");
    eprintln!(
        "w03 100 commands: {all:?} in all, the last {took:?}; descriptors before {before}, \
         before the last command {during}, after {after}"
    );
    assert!(
        during <= before + 1,
        "descriptors of reaped children kept: {before} before, {during} after 99 commands"
    );
    assert_eq!(after, before, "descriptors left open by the run");
    assert_no_child_left();
    let left: Vec<_> = pids.iter().filter(|&&p| is_our_child(p)).collect();
    assert!(left.is_empty(), "children left: {left:?}");
    assert_eq!(
        processes_running(b"sleep\x005.4321\x00"),
        0,
        "the sleep runs on"
    );
}

#[test]
fn w03_a_slow_pre_exec_under_a_100ms_deadline_ends_with_the_child_killed_no_panic() {
    // std forks, runs the `pre_exec` closure in the child, and waits for the child's `exec`
    // with a `recv` on a socket pair. The deadline passes while the closure runs: the child is
    // killed, the socket's peer is gone, so the `recv` completes (end of file, as after an
    // `exec`) and std goes on: `output` and `status` return the kill status.
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new("true");
    // SAFETY: the closure makes one raw system call (async-signal-safe).
    unsafe {
        cmd.pre_exec(|| {
            common::raw_sleep(Duration::from_secs(5));
            Ok(())
        })
    };
    let out = timed_out(|| cmd.output()).expect("the output of the killed child");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    assert_no_child_left();
    let status = timed_out(|| cmd.status()).expect("the status of the killed child");
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_no_child_left();
}

#[test]
fn w03_stds_fork_path_under_400_random_deadlines_of_0_to_3_ms_never_panics() {
    // An empty `pre_exec` (std forks rather than `posix_spawn`), each run under a random
    // deadline of 0–3 ms: the deadline lands before the fork, between `fork` and `exec`, while
    // std waits for the exec, or after. Never a panic inside std, never a child left.
    use std::os::unix::process::CommandExt;
    let n = common::stress_count(400);
    let mut rng = common::Rng::new(3);
    let (mut before, mut refused, mut killed, mut completed, mut panics) = (0, 0, 0, 0, 0);
    let mut first_panic = None;
    for _ in 0..n {
        let budget = Duration::from_micros(rng.below(3_001) as u64);
        let mut cmd = Command::new("true");
        // SAFETY: the closure does nothing.
        unsafe { cmd.pre_exec(|| Ok(())) };
        let r = thread_cancel::with_timeout(budget, || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cmd.output()))
        });
        let r = match r {
            Ok(r) => r,
            Err(e) => match e.into_value() {
                Some(r) => r,
                None => {
                    before += 1; // the deadline passed before the run started
                    continue;
                }
            },
        };
        match r {
            Err(p) => {
                panics += 1;
                first_panic.get_or_insert_with(|| common::panic_message(&*p));
            }
            Ok(Err(e)) => {
                assert_deadline_error(&e);
                refused += 1;
            }
            Ok(Ok(out)) if out.status.signal() == Some(libc::SIGKILL) => killed += 1,
            Ok(Ok(out)) => {
                assert!(out.status.success(), "{out:?}");
                completed += 1;
            }
        }
        assert_no_child_left();
    }
    println!(
        "w03 fork path: {n} random deadlines of 0-3 ms: passed before the run {before}, \
         spawn refused {refused}, child killed {killed}, completed {completed}, panics {panics}"
    );
    assert_eq!(panics, 0, "panics inside std; the first: {first_panic:?}");
}

#[test]
fn w03_forty_children_running_at_once_in_a_run_are_all_killed_at_its_deadline() {
    // More children at once than the thread-local part of the table holds: the table grows,
    // and every one of them is killed at the deadline and reaped by its wait.
    let scope = thread_cancel::CancelScope::new();
    let r = scope.run(|| {
        let mut kids: Vec<_> = (0..40)
            .map(|_| {
                Command::new("sleep")
                    .arg("5.678")
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        scope.set_deadline(Instant::now() + DEADLINE);
        let t = Instant::now();
        let statuses: Vec<_> = kids.iter_mut().map(|k| k.wait()).collect();
        (statuses, t.elapsed())
    });
    let e = r.expect_err("the deadline passed");
    assert!(e.deadline_passed() && e.acted(), "{:?}", e.cause());
    let (statuses, took) = e.into_value().unwrap();
    for (i, s) in statuses.iter().enumerate() {
        let s = s.as_ref().unwrap_or_else(|e| panic!("child {i}: {e}"));
        assert_eq!(s.signal(), Some(libc::SIGKILL), "child {i}: {s:?}");
    }
    assert!(took < BOUND, "{took:?}");
    assert_no_child_left();
    assert_eq!(
        processes_running(b"sleep\x005.678\x00"),
        0,
        "a sleep runs on"
    );
}

// ---------------------------------------------------------------------------------------------
// W03, the child-process cases of issue 36's "not yet tried" list.

/// The state letter of process `pid` (`/proc/<pid>/stat`: `S` sleeping, `T` stopped, `Z` a
/// zombie), or `None` if there is no such process.
fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].chars().next()
}

/// A null-terminated `argv` of C strings for `execv`.
struct Argv(
    #[allow(dead_code)] Vec<std::ffi::CString>,
    Vec<*const libc::c_char>,
);

impl Argv {
    fn new(words: &[&str]) -> Argv {
        let strs: Vec<_> = words
            .iter()
            .map(|w| std::ffi::CString::new(*w).unwrap())
            .collect();
        let mut ptrs: Vec<_> = strs.iter().map(|s| s.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        Argv(strs, ptrs)
    }
}

#[test]
fn w03_vfork_and_clone_children_are_not_tracked_they_run_on_past_the_deadline() {
    // `vfork` and the C library's `clone` are not interposed (a function that calls `vfork`
    // and returns would return twice on one stack): their children are not the run's, so the
    // deadline does not kill them, and a wait for one fails with the deadline's error like a
    // wait for any child not the run's. They run to their end.
    use thread_cancel_fixtures::{interpose_test_c_clone_exec, interpose_test_c_vfork_exec};
    for (how, start) in [
        (
            "vfork",
            interpose_test_c_vfork_exec as unsafe extern "C" fn(_) -> _,
        ),
        ("clone", interpose_test_c_clone_exec),
    ] {
        // The budget grows until the run started its closure (a deadline that passes before
        // the run's entry rightly never starts it); the child sleeps six budgets, past it.
        let r = common::once_started(Duration::from_millis(50), |budget, started| {
            let argv = Argv::new(&["/bin/sleep", &secs(budget * 6)]);
            thread_cancel::with_timeout(budget, || {
                started.store(true, Ordering::SeqCst);
                // SAFETY: a null-terminated argv of C strings, alive for the call.
                let pid = unsafe { start(argv.1.as_ptr()) } as libc::pid_t;
                assert!(pid > 0, "{how}: {pid}");
                let mut st = 0;
                // SAFETY: our child; a valid out-pointer.
                let r = unsafe { libc::waitpid(pid, &mut st, 0) };
                (pid, r, io::Error::last_os_error())
            })
        });
        let e = r.unwrap_err();
        assert!(e.deadline_passed() && e.acted(), "{how}");
        let (pid, r, err) = e.into_value().unwrap();
        assert_eq!(r, -1, "{how}");
        assert_deadline_error(&err);
        assert_eq!(
            process_state(pid),
            Some('S'),
            "{how}: neither stopped nor killed"
        );
        let mut st = 0;
        // SAFETY: as above, outside the run.
        assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
        assert!(
            libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0,
            "{how}: {st:#x}"
        );
    }
}

#[test]
fn w03_system_and_popen_children_are_not_reached_they_run_to_their_end() {
    // The C library's `system` and `popen` start their child with its own internal
    // `posix_spawn` and wait for it with its internal `waitpid` (and `popen`'s stream reads
    // with its internal `read`): none is the interposed symbol. A `system("sleep ..")` in a run
    // whose deadline passes runs to its end, and the run reports the deadline, not acted on.
    // Each budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it); the child sleeps six budgets, past it.
    let (r, took, slept) = common::once_started(Duration::from_millis(50), |budget, started| {
        let t = Instant::now();
        let command = std::ffi::CString::new(format!("exec sleep {}", secs(budget * 6))).unwrap();
        let r = thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            // SAFETY: a nul-terminated command.
            unsafe { libc::system(command.as_ptr()) }
        });
        (r, t.elapsed(), budget * 6)
    });
    let e = r.unwrap_err();
    assert!(e.deadline_passed(), "{:?}", e.cause());
    assert!(!e.acted(), "no interposed call met the deadline");
    assert_eq!(e.into_value(), Some(0), "`sleep` ran to its end");
    assert!(took >= slept, "{took:?} < {slept:?}");

    let r = common::once_started(Duration::from_millis(50), |budget, started| {
        let command =
            std::ffi::CString::new(format!("sleep {}; echo done", secs(budget * 6))).unwrap();
        thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            // SAFETY: nul-terminated strings; the stream is read and closed here.
            unsafe {
                let f = libc::popen(command.as_ptr(), c"r".as_ptr());
                assert!(!f.is_null());
                let mut line = [0 as libc::c_char; 16];
                let got = !libc::fgets(line.as_mut_ptr(), 16, f).is_null();
                let status = libc::pclose(f);
                let line = std::ffi::CStr::from_ptr(line.as_ptr()).to_owned();
                (got, line, status)
            }
        })
    });
    let e = r.unwrap_err();
    assert!(e.deadline_passed() && !e.acted(), "{:?}", e.cause());
    let (got, line, status) = e.into_value().unwrap();
    assert!(got);
    assert_eq!(line.to_bytes(), b"done\n");
    assert_eq!(status, 0);
    assert_no_child_left();
}

/// The wrapper that runs a test's child process as the first process of new user, PID and
/// mount namespaces (`/proc` its own): there it may choose the id of the next process
/// (`/proc/sys/kernel/ns_last_pid`), and every process it leaves dies with it.
const PID_NAMESPACE: [&str; 6] = [
    "unshare",
    "--user",
    "--map-root-user",
    "--pid",
    "--fork",
    "--mount-proc",
];

/// Runs the test `name` as `value` in a child process in [`PID_NAMESPACE`]; `false` (and a
/// "skipped:" line) where namespaces are not available, unless
/// `THREAD_CANCEL_REQUIRE_NAMESPACES` is set.
fn in_pid_namespace(name: &str, value: &str) -> bool {
    if std::env::var_os("THREAD_CANCEL_TEST_RUNNER").is_some() {
        eprintln!("skipped under emulation");
        return false;
    }
    let probe = Command::new(PID_NAMESPACE[0])
        .args(&PID_NAMESPACE[1..])
        .arg("true")
        .stderr(std::process::Stdio::piped())
        .output();
    if let Some(why) = match probe {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(String::from_utf8_lossy(&o.stderr).trim().to_string()),
        Err(e) => Some(e.to_string()),
    } {
        let msg = format!("needs `{}`: {why}", PID_NAMESPACE.join(" "));
        assert!(
            std::env::var_os("THREAD_CANCEL_REQUIRE_NAMESPACES").is_none(),
            "{msg}"
        );
        eprintln!("skipped: {msg}");
        return false;
    }
    let run = common::run_child_under(&PID_NAMESPACE, name, value, Duration::from_secs(60), &[]);
    eprint!("{}", run.stderr);
    assert!(run.status.success(), "the child failed: {}", run.status);
    true
}

/// Makes `pid` the id of the next process this namespace starts.
fn next_pid_is(pid: libc::pid_t) {
    std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string()).unwrap();
}

/// Reaps every child of this process that has exited (in its own PID namespace the test's
/// process is the first, and the orphans of the namespace are its children).
fn reap_orphans() {
    let mut st = 0;
    // SAFETY: a valid out-pointer.
    while unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) } > 0 {}
}

#[test]
fn w03_a_child_reaped_by_the_programs_own_wait_is_never_signaled_through_its_reused_id() {
    // The run starts a child, and the program's own `waitpid(-1)` — or the kernel, with
    // `SIGCHLD` ignored — reaps it before the deadline; its id is then reused by an unrelated
    // process. The run's record holds a pidfd of the reaped child, not its id: the deadline's
    // kill reaches nothing, and the process with that id is neither stopped nor killed.
    const NAME: &str =
        "w03_a_child_reaped_by_the_programs_own_wait_is_never_signaled_through_its_reused_id";
    match common::child_value().as_deref() {
        Some(how) => reused_id(how),
        None => {
            if in_pid_namespace(NAME, "waitpid") {
                in_pid_namespace(NAME, "sigchld-ignored");
            }
        }
    }
}

/// The child of the test above, in its own PID namespace: `how` the run's child is reaped.
fn reused_id(how: &str) {
    // Every thread is started first (a thread takes an id too): the deadline timer's, by a
    // first deadline, and one that never met the crate, which starts the unrelated process.
    let _ = thread_cancel::with_timeout(Duration::from_millis(1), || {
        std::thread::sleep(Duration::from_millis(20))
    });
    let (go, started) = std::sync::mpsc::channel::<()>();
    let (to_test, unrelated) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for () in started {
            let c = Command::new("sleep").arg("9.87").spawn().unwrap();
            to_test.send(c).unwrap();
        }
    });
    if how == "sigchld-ignored" {
        // SAFETY: sets a disposition; no handler.
        unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    }
    let scope = thread_cancel::CancelScope::new();
    let r = scope.run(|| {
        let a = Command::new("true").spawn().unwrap();
        let id = a.id() as libc::pid_t;
        drop(a);
        if how == "waitpid" {
            let mut st = 0;
            // SAFETY: a valid out-pointer.
            assert_eq!(
                unsafe { libc::waitpid(-1, &mut st, 0) },
                id,
                "reaped by the program"
            );
        } else {
            // Reaped by the kernel when it exits.
            assert!(
                common::wait_for(|| process_state(id).is_none()),
                "the kernel reaps it"
            );
        }
        // The id is free once the child is released; until then the next one is given: a
        // process that missed the id is ended and another started.
        let mut tries = 0;
        let u: std::process::Child = loop {
            next_pid_is(id);
            go.send(()).unwrap();
            let mut u: std::process::Child = unrelated.recv().unwrap();
            if u.id() as libc::pid_t == id {
                break u;
            }
            tries += 1;
            assert!(tries < 1000, "the id {id} is never reused");
            u.kill().unwrap();
            let _ = u.wait();
        };
        scope.set_deadline(Instant::now() + DEADLINE);
        // Ends at the deadline, which kills the run's children.
        std::thread::sleep(Duration::from_secs(5));
        u
    });
    let e = r.unwrap_err();
    assert!(e.deadline_passed() && e.acted());
    let mut u = e.into_value().unwrap();
    let id = u.id() as libc::pid_t;
    assert_eq!(
        process_state(id),
        Some('S'),
        "{how}: the process that reused the id was signaled"
    );
    u.kill().unwrap();
    let _ = u.wait();
    eprintln!("w03 reused id ({how}): pid {id} reused by an unrelated process, left alone");
}

#[test]
fn w03_an_id_reused_by_a_descendant_is_killed_once_as_the_descendant() {
    // The run's child A is reaped by the program; its id is then taken by a descendant of the
    // run's other child B (B's own child). At the deadline the record of A (a pidfd of the
    // reaped A) reaches nothing; the descendant is killed as B's, with B, and B's wait returns
    // the kill.
    const NAME: &str = "w03_an_id_reused_by_a_descendant_is_killed_once_as_the_descendant";
    if common::child_value().is_some() {
        return reused_by_descendant();
    }
    in_pid_namespace(NAME, "descendant");
}

fn reused_by_descendant() {
    use std::io::BufRead;
    let _ = thread_cancel::with_timeout(Duration::from_millis(1), || {
        std::thread::sleep(Duration::from_millis(20))
    });
    let scope = thread_cancel::CancelScope::new();
    let r = scope.run(|| {
        // B waits for a line before it starts its child, then prints the child's id.
        let mut b = Command::new("sh")
            .args(["-c", "read x; sleep 9.87 & echo $!; wait"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let a = Command::new("true").spawn().unwrap();
        let id = a.id() as libc::pid_t;
        drop(a);
        let mut st = 0;
        // SAFETY: a valid out-pointer.
        assert_eq!(
            unsafe { libc::waitpid(id, &mut st, 0) },
            id,
            "A reaped by the program"
        );
        next_pid_is(id);
        b.stdin.take().unwrap().write_all(b"go\n").unwrap();
        let mut line = String::new();
        std::io::BufReader::new(b.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), id.to_string(), "B's child took A's id");
        scope.set_deadline(Instant::now() + DEADLINE);
        (b.wait(), id)
    });
    let e = r.unwrap_err();
    assert!(e.deadline_passed() && e.acted());
    let (b, id) = e.into_value().unwrap();
    assert_eq!(b.unwrap().signal(), Some(libc::SIGKILL), "B killed");
    // B's child, orphaned when B died, is this process's (the namespace's first) to reap.
    let mut st = 0;
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(id, &mut st, 0) }, id);
    assert!(
        libc::WIFSIGNALED(st) && libc::WTERMSIG(st) == libc::SIGKILL,
        "the descendant with A's id killed: {st:#x}"
    );
    reap_orphans();
    eprintln!("w03 id reused by a descendant: pid {id} killed as B's child");
}

#[test]
fn w03_a_daemon_that_left_its_parent_is_not_reached_by_the_kill() {
    // A child that double-forks and calls `setsid` leaves a daemon reparented away from the
    // run's tree (to the namespace's first process here, to init or a subreaper otherwise):
    // descendants are found through each process's children, so the deadline kills the child
    // and not the daemon. (Had the daemon kept the child's output pipe: see
    // `w03_a_process_that_kept_the_runs_pipes_does_not_make_std_panic_after_the_kill`.)
    const NAME: &str = "w03_a_daemon_that_left_its_parent_is_not_reached_by_the_kill";
    if common::child_value().is_some() {
        return daemon_left();
    }
    in_pid_namespace(NAME, "daemon");
}

fn daemon_left() {
    let scope = thread_cancel::CancelScope::new();
    let r = scope.run(|| {
        let mut child = Command::new("sh")
            .args([
                "-c",
                "(setsid sleep 8.76 </dev/null >/dev/null 2>&1 &); echo started; exec sleep 5",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Once the line is written, the subshell that started the daemon has exited.
        let mut b = [0u8; 8];
        child.stdout.as_mut().unwrap().read_exact(&mut b).unwrap();
        assert_eq!(&b, b"started\n");
        // The daemon may still be on its way to its `sleep` (setsid forks and executes it):
        // the deadline comes once it is there.
        assert!(
            common::wait_for(|| processes_running(b"sleep\x008.76\x00") == 1),
            "the daemon never started its sleep"
        );
        scope.set_deadline(Instant::now() + DEADLINE);
        child.wait()
    });
    let e = r.unwrap_err();
    assert!(e.deadline_passed() && e.acted());
    let status = e.into_value().unwrap().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "the child killed");
    // The daemon runs on, never stopped.
    let d = kill_and_reap(|pid| process_cmdline(pid) == b"sleep\x008.76\x00");
    reap_orphans();
    eprintln!("w03 daemon: the child killed, the daemon (pid {d}, setsid, reparented) not reached");
}

#[test]
fn w03_a_process_that_kept_the_runs_pipes_does_not_make_std_panic_after_the_kill() {
    // Another process holds copies of a run's pipes past the kill of the run's child: a daemon
    // the child started (it kept the child's output), or a process forked before the child's
    // `exec` that never executes anything (it holds std's exec-check socket pair too: a sibling
    // thread's child on its way to `exec` on a slow machine is the same case for a while).
    // Those pipes never hang up; the canceled run's reads of them end all the same once the
    // wait for the hang-up is over: what is in them, then end of file. std's `output` returns
    // the child's output and kill (it unwraps its pipe reads, and panics when its exec-check
    // read fails), and the run reports the cancel, acted on. In its own PID namespace: the
    // processes left behind are found by name, killed and reaped there.
    const NAME: &str =
        "w03_a_process_that_kept_the_runs_pipes_does_not_make_std_panic_after_the_kill";
    if common::child_value().is_some() {
        return kept_pipes();
    }
    in_pid_namespace(NAME, "kept");
}

/// The process name a keeper of [`kept_pipes`] gives itself (`/proc/<pid>/comm`).
const KEEPER: &str = "tc-pipe-keeper";

fn kept_pipes() {
    use std::os::unix::process::CommandExt;
    // 1. A daemon (double fork, `setsid`) that kept the child's standard output and error; std's
    //    spawn without `pre_exec` (`posix_spawn`).
    let mut daemon = Command::new("sh");
    daemon.args(["-c", "(setsid sleep 8.77 &); echo started; exec sleep 5.77"]);
    let out = cancel_once_running(&mut daemon, || {
        processes_running(b"sleep\x008.77\x00") == 1 && processes_running(b"sleep\x005.77\x00") == 1
    });
    assert_eq!(out.stdout, b"started\n");
    kill_and_reap(|pid| process_cmdline(pid) == b"sleep\x008.77\x00");
    // 2. std's fork path (a `pre_exec`): the closure forks a process that leaves its parent
    //    (it is reparented) and holds every descriptor the child had before its `exec`,
    //    std's exec-check socket pair among them, for 8 s without executing anything.
    let mut forked = Command::new("sleep");
    forked.arg("5.78");
    // SAFETY: the closure makes raw system calls only (no allocation, no lock), as a child of
    // a multi-threaded process may.
    unsafe {
        forked.pre_exec(|| {
            keep_descriptors_in_an_orphan();
            Ok(())
        })
    };
    let out = cancel_once_running(&mut forked, || {
        keepers().len() == 1 && processes_running(b"sleep\x005.78\x00") == 1
    });
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    kill_and_reap(|pid| keepers().contains(&pid));
    // 3. A daemon that kept the child's output and writes on, as fast as it can, once told to
    //    (just before the cancel): the run's reads take a bounded amount and end.
    let fifo = std::env::temp_dir().join(format!("tc-kept-{}", std::process::id()));
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let writer = format!("read x < {}; exec yes", fifo.display());
    let mut writes_on = Command::new("sh");
    writes_on.args([
        "-c",
        &format!("(setsid sh -c '{writer}' &); exec sleep 5.76"),
    ]);
    let writer_cmdline = format!("sh\0-c\0{writer}\0");
    let out = cancel_once_running(&mut writes_on, || {
        let ready = processes_running(writer_cmdline.as_bytes()) == 1
            && processes_running(b"sleep\x005.76\x00") == 1;
        if ready {
            // Opened once the daemon opens it to read; the line starts its `yes`.
            std::fs::write(&fifo, b"\n").unwrap();
        }
        ready
    });
    std::fs::remove_file(&fifo).unwrap();
    // A prefix of `yes`'s stream (a read may end between a `y` and its line's end).
    let alternates = |(i, &b): (usize, &u8)| b == if i % 2 == 0 { b'y' } else { b'\n' };
    assert!(out.stdout.iter().enumerate().all(alternates));
    // The daemon's `yes` ends on its own: its pipe has no reader left (`SIGPIPE`).
    reap_orphans();
    eprintln!(
        "w03 kept pipes: a daemon and an orphan of pre_exec held the run's pipes; output returned, no panic; \
         a daemon writing on: {} bytes taken",
        out.stdout.len()
    );
}

/// Runs `cmd.output()` in a scope, canceled from this thread once `ready`; checks that the run
/// reports the cancel, acted on, and that `output` returned the child's kill; its output.
fn cancel_once_running(cmd: &mut Command, ready: impl Fn() -> bool) -> std::process::Output {
    let scope = thread_cancel::CancelScope::new();
    let r = std::thread::scope(|s| {
        let runner = s.spawn(|| scope.run(|| cmd.output()));
        assert!(common::wait_for(&ready), "the child never got ready");
        scope.cancel();
        runner.join().expect("no panic inside std")
    });
    let e = r.unwrap_err();
    assert!(e.acted(), "{:?}", e.cause());
    let out = e.into_value().unwrap().expect("output returns Ok");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "the child killed");
    out
}

/// In a child between `fork` and `exec`: forks a process (raw `clone`: nothing of the C
/// library's runs in it) that forks the keeper and exits, so that the keeper is reparented
/// away from the child's tree; the keeper names itself [`KEEPER`] and sleeps 8 s, holding
/// copies of every descriptor the child had.
fn keep_descriptors_in_an_orphan() {
    // SAFETY: raw system calls with valid arguments; the forked processes run raw calls only
    // and end with `exit_group`.
    unsafe {
        let mid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0);
        if mid == 0 {
            if libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0) == 0 {
                let name = b"tc-pipe-keeper\0";
                libc::syscall(libc::SYS_prctl, libc::PR_SET_NAME, name.as_ptr(), 0, 0, 0);
                common::raw_sleep(Duration::from_secs(8));
            }
            libc::syscall(libc::SYS_exit_group, 0);
        }
        if mid > 0 {
            let mut st = 0;
            libc::syscall(libc::SYS_wait4, mid, &mut st as *mut libc::c_int, 0, 0);
        }
    }
}

/// The processes named [`KEEPER`].
fn keepers() -> Vec<libc::pid_t> {
    pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_end() == KEEPER)
        })
        .collect()
}

fn pids() -> Vec<libc::pid_t> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

fn process_cmdline(pid: libc::pid_t) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

/// Kills the one process that `which` picks (this namespace's, reparented to this process,
/// found running: the kill did not reach it) and reaps it; its id.
fn kill_and_reap(which: impl Fn(libc::pid_t) -> bool) -> libc::pid_t {
    let found: Vec<libc::pid_t> = pids().into_iter().filter(|&p| which(p)).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    let p = found[0];
    assert_eq!(
        process_state(p),
        Some('S'),
        "it runs on, not reached by the kill"
    );
    // SAFETY: a process of this namespace, reparented to this process.
    assert_eq!(unsafe { libc::kill(p, libc::SIGKILL) }, 0);
    let mut st = 0;
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(p, &mut st, 0) }, p);
    p
}

#[test]
fn w03_a_fork_in_a_run_that_could_not_track_its_child_fails_and_starts_nothing() {
    // With no descriptor left for the child's pidfd, a `fork` in a run fails with `EMFILE`
    // before starting the child: a run's child is never started untracked. Outside a run the
    // same `fork` is made. In a process of its own: it uses up its descriptors.
    const NAME: &str =
        "w03_a_fork_in_a_run_that_could_not_track_its_child_fails_and_starts_nothing";
    if common::child_value().is_none() {
        let run = common::run_child(NAME, "child", Duration::from_secs(60));
        assert!(run.status.success(), "{}", run.stderr);
        return;
    }
    // Every thread is started first (the deadline timer's), then the limit is lowered and
    // every descriptor below it taken.
    let _ = thread_cancel::with_timeout(Duration::from_millis(1), || {
        std::thread::sleep(Duration::from_millis(20))
    });
    let lim = libc::rlimit {
        rlim_cur: 64,
        rlim_max: 64,
    };
    // SAFETY: a valid `rlimit`.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
    let mut taken = Vec::new();
    loop {
        // SAFETY: duplicates descriptor 2 (open); the copies are closed below.
        let fd = unsafe { libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            break;
        }
        taken.push(fd);
    }
    /// Forks a child that `_exit`s at once: its id, or the errno.
    fn fork_one() -> Result<libc::pid_t, i32> {
        // SAFETY: the child only `_exit`s.
        match unsafe { libc::fork() } {
            // SAFETY: ends the child, which does nothing else.
            0 => unsafe { libc::_exit(0) },
            -1 => Err(io::Error::last_os_error().raw_os_error().unwrap()),
            pid => Ok(pid),
        }
    }
    let in_run = thread_cancel::CancelScope::new().run(fork_one).unwrap();
    assert_eq!(in_run, Err(libc::EMFILE), "refused in the run");
    let outside = fork_one().expect("made outside a run");
    let mut st = 0;
    // SAFETY: our child; a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(outside, &mut st, 0) }, outside);
    // One descriptor free (the listing of children needs it too): nothing was started in the
    // run, and now the run's child is started.
    // SAFETY: a descriptor taken above.
    unsafe { libc::close(taken.pop().unwrap()) };
    assert_no_child_left();
    let pid = thread_cancel::CancelScope::new()
        .run(fork_one)
        .unwrap()
        .expect("started in the run");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
    for fd in taken {
        // SAFETY: descriptors taken above.
        unsafe { libc::close(fd) };
    }
}
