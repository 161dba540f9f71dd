//! The cancel signal and the process's own signal handling: a user's handler running on a
//! thread blocked in a cancellable call, a cancellable call made from a handler, the choice of
//! the signal (`io::set_signal`), a handler for it installed by someone else before or after the
//! crate's start, a thread that blocks the cancel signal; and the signal masks and sets passed
//! to the points that take one (`io::sigsuspend`, `io::sigtimedwait`): a mask that blocks every
//! signal must not make the wait uninterruptible, and a set must never take the cancel signal.
//!
//! Tests that install process-wide signal handlers, or that need a process in which the crate
//! has not started yet, run their scenario in a child process: this test binary re-executed
//! with only that test selected (`common::run_child`). `THREAD_CANCEL_STRESS` sets the rounds
//! of the handler races (default 200).

mod common;

use common::{
    drain, gettid, run_child, stress_count, wait_blocked, wait_blocked_in_read, wait_for, ChildRun,
    HANG,
};
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering, Ordering::SeqCst,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thread_cancel::{io, spawn, testcancel, Outcome};

// ---------------------------------------------------------------------------------------------
// A cancel that lands in the user's own handler on a thread blocked in `io::read`

/// The rounds of the handler races: `THREAD_CANCEL_STRESS`, default 200.
fn rounds() -> usize {
    stress_count(200)
}

/// Whether this process is the child running scenario `name`.
fn is_child(name: &str) -> bool {
    common::child_value().as_deref() == Some(name)
}

/// Runs test `name` in a child process (where `is_child(name)` holds) and asserts it
/// succeeded; a child that runs longer than a minute (plus a margin per round) is killed and
/// reported as a hang.
fn child_must_pass(name: &str) -> ChildRun {
    let limit = Duration::from_secs(60) + Duration::from_millis(50) * rounds() as u32;
    let run = run_child(name, name, limit);
    assert!(
        run.status.success(),
        "{name}: the child failed ({}); its stderr:\n{}",
        run.status,
        run.stderr
    );
    run
}

/// Installs `handler` for `sig` with `flags` (plus `SA_SIGINFO` if `siginfo`).
fn install(sig: i32, handler: usize, flags: i32) {
    // SAFETY: all-zero is a valid `sigaction` (empty mask, no flags).
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = handler;
    sa.sa_flags = flags;
    // SAFETY: `sa` is initialised; the handlers of this file are async-signal-safe.
    let r = unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) };
    assert_eq!(r, 0);
}

/// The handler currently installed for `sig`.
fn installed(sig: i32) -> usize {
    // SAFETY: all-zero is a valid `sigaction`; a null new action only queries.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let r = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
    assert_eq!(r, 0);
    old.sa_sigaction
}

#[cfg(not(thread_cancel_interpose))]
fn default_cancel_signal() -> i32 {
    libc::SIGRTMIN() + 7
}

/// With `interpose`, the C library's first real-time signal (the crate defines
/// `__libc_current_sigrtmin`, which `libc::SIGRTMIN` calls here: the C library's is looked up
/// behind it).
#[cfg(thread_cancel_interpose)]
fn default_cancel_signal() -> i32 {
    // SAFETY: a nul-terminated name; `RTLD_NEXT` is a valid handle for `dlsym`.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, c"__libc_current_sigrtmin".as_ptr()) };
    assert!(!p.is_null(), "the C library's __libc_current_sigrtmin");
    // SAFETY: the C library's function of this signature.
    let f = unsafe { std::mem::transmute::<*mut libc::c_void, extern "C" fn() -> libc::c_int>(p) };
    f()
}

/// Whether `sig` is blocked in thread `tid`'s signal mask (`SigBlk` in its status).
fn blocked_in(tid: i32, sig: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("SigBlk:")).unwrap();
    let mask = u64::from_str_radix(line["SigBlk:".len()..].trim(), 16).unwrap();
    mask & (1 << (sig - 1)) != 0
}

/// Asserts that `sig` is not left blocked in thread `tid` (it is blocked while a handler for
/// it runs, so this waits for that to end).
fn assert_not_left_blocked(tid: i32, sig: i32) {
    let t0 = Instant::now();
    while blocked_in(tid, sig) {
        assert!(
            t0.elapsed() < HANG,
            "the cancel signal was left blocked in thread {tid}"
        );
        std::thread::yield_now();
    }
}

/// Set by the slow handler when it starts.
static IN_HANDLER: AtomicBool = AtomicBool::new(false);

/// Set by the test once its `cancel()` returned: the slow handler may finish.
static RELEASE: AtomicBool = AtomicBool::new(false);

/// A user handler that runs for a while: it reports that it started, waits for the test's
/// cancel, then stays a few milliseconds more so that the cancel signal lands inside it.
extern "C" fn slow_handler(_sig: libc::c_int) {
    IN_HANDLER.store(true, SeqCst);
    let t0 = Instant::now();
    while !RELEASE.load(SeqCst) && t0.elapsed() < HANG {
        std::hint::spin_loop();
    }
    let t1 = Instant::now();
    while t1.elapsed() < Duration::from_millis(2) {
        std::hint::spin_loop();
    }
}

/// A thread blocked in `io::read` on an empty pipe, its pthread id and kernel thread id.
struct Reader {
    handle: thread_cancel::JoinHandle<std::io::Result<usize>>,
    pthread: libc::pthread_t,
    tid: i32,
    _writer: std::io::PipeWriter,
}

fn blocked_reader() -> Reader {
    let (r, w) = std::io::pipe().unwrap();
    let ids = std::sync::Arc::new((AtomicU64::new(0), AtomicI32::new(0)));
    let ids2 = ids.clone();
    let handle = spawn(move || {
        // SAFETY: pthread_self has no preconditions.
        ids2.0.store(unsafe { libc::pthread_self() } as u64, SeqCst);
        ids2.1.store(gettid(), SeqCst);
        let mut b = [0u8; 1];
        io::read(r.as_fd(), &mut b)
    });
    let t0 = Instant::now();
    while ids.1.load(SeqCst) == 0 {
        assert!(t0.elapsed() < HANG, "the reader never started");
        std::thread::yield_now();
    }
    let tid = ids.1.load(SeqCst);
    wait_blocked(tid);
    Reader {
        handle,
        pthread: ids.0.load(SeqCst) as libc::pthread_t,
        tid,
        _writer: w,
    }
}

/// One round: a reader blocked in `io::read`, the user's SIGUSR1 handler running on it, a
/// cancel sent while the handler runs; the reader must end canceled (nothing is ever written).
fn cancel_during_handler_round(round: usize) {
    let reader = blocked_reader();
    IN_HANDLER.store(false, SeqCst);
    RELEASE.store(false, SeqCst);
    // SAFETY: the reader is alive (joined below).
    assert_eq!(
        unsafe { libc::pthread_kill(reader.pthread, libc::SIGUSR1) },
        0
    );
    let t0 = Instant::now();
    while !IN_HANDLER.load(SeqCst) {
        assert!(t0.elapsed() < HANG, "round {round}: the handler never ran");
        std::thread::yield_now();
    }
    reader.handle.cancel().unwrap();
    RELEASE.store(true, SeqCst);
    assert!(
        reader.handle.wait_timeout(HANG),
        "round {round}: the reader is still blocked {HANG:?} after cancel() (the cancel was lost)"
    );
    assert!(reader.handle.join().is_canceled(), "round {round}");
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn cancel_during_user_sa_restart_handler_is_acted_on() {
    const NAME: &str = "cancel_during_user_sa_restart_handler_is_acted_on";
    if !is_child(NAME) {
        child_must_pass(NAME);
        return;
    }
    install(
        libc::SIGUSR1,
        slow_handler as *const () as usize,
        libc::SA_RESTART,
    );
    for round in 0..rounds() {
        cancel_during_handler_round(round);
    }
}

/// Without `SA_RESTART` the read fails with `EINTR` when the user's handler returns: the
/// cancel signal that landed in the handler must not leave anything behind (the thread acts on
/// the `EINTR` of its call).
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn cancel_during_user_handler_without_restart_is_acted_on() {
    const NAME: &str = "cancel_during_user_handler_without_restart_is_acted_on";
    if !is_child(NAME) {
        child_must_pass(NAME);
        return;
    }
    install(libc::SIGUSR1, slow_handler as *const () as usize, 0);
    for round in 0..rounds() {
        cancel_during_handler_round(round);
    }
}

// ---------------------------------------------------------------------------------------------
// The reverse nesting: a user handler that itself makes a cancellable call

static NESTED_DONE: AtomicBool = AtomicBool::new(false);

static NESTED_FD: AtomicI32 = AtomicI32::new(-1);

/// A user handler that writes through a cancellable call (`io::write` to `/dev/null`).
extern "C" fn writing_handler(_sig: libc::c_int) {
    // SAFETY: the descriptor stays open for the whole test.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(NESTED_FD.load(SeqCst)) };
    let _ = io::write(fd, b"x");
    NESTED_DONE.store(true, SeqCst);
}

/// A reader blocked in `io::read` is interrupted by the user's handler, which makes a
/// cancellable call of its own and returns; the read is restarted. A cancel after that must
/// still interrupt the read: the nested call must not have made the outer one look like it is
/// outside any call.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn cancel_after_handler_made_a_cancellable_call_is_acted_on() {
    const NAME: &str = "cancel_after_handler_made_a_cancellable_call_is_acted_on";
    if !is_child(NAME) {
        child_must_pass(NAME);
        return;
    }
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    NESTED_FD.store(std::os::fd::AsRawFd::as_raw_fd(&null), SeqCst);
    install(
        libc::SIGUSR1,
        writing_handler as *const () as usize,
        libc::SA_RESTART,
    );
    for round in 0..rounds() {
        let reader = blocked_reader();
        NESTED_DONE.store(false, SeqCst);
        // SAFETY: the reader is alive (joined below).
        assert_eq!(
            unsafe { libc::pthread_kill(reader.pthread, libc::SIGUSR1) },
            0
        );
        let t0 = Instant::now();
        while !NESTED_DONE.load(SeqCst) {
            assert!(t0.elapsed() < HANG, "round {round}: the handler never ran");
            std::thread::yield_now();
        }
        // Back in the restarted read.
        wait_blocked(reader.tid);
        reader.handle.cancel().unwrap();
        assert!(
            reader.handle.wait_timeout(HANG),
            "round {round}: the reader is still blocked {HANG:?} after cancel() (the cancel was lost)"
        );
        assert!(reader.handle.join().is_canceled(), "round {round}");
    }
}

// ---------------------------------------------------------------------------------------------
// A cancel signal with nothing to act on changes nothing; other threads never see it

/// The cancel signal sent by hand (as a late signal from a `cancel()` would arrive) to a
/// thread outside any call, and to a thread blocked in a read with no request: nothing
/// happens, the signal is not left blocked, and the read goes on to return its data.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn cancel_signal_with_nothing_to_act_on_is_a_noop() {
    let sig = default_cancel_signal();
    // Outside any call, with a request pending (the thread acts at its next point only).
    let go = std::sync::Arc::new(AtomicBool::new(false));
    let ids = std::sync::Arc::new((AtomicU64::new(0), AtomicI32::new(0)));
    let (go2, ids2) = (go.clone(), ids.clone());
    let h = spawn(move || {
        // SAFETY: pthread_self has no preconditions.
        ids2.0.store(unsafe { libc::pthread_self() } as u64, SeqCst);
        ids2.1.store(gettid(), SeqCst);
        while !go2.load(SeqCst) {
            std::hint::spin_loop();
        }
        testcancel();
    });
    while ids.1.load(SeqCst) == 0 {
        std::thread::yield_now();
    }
    let (pt, tid) = (ids.0.load(SeqCst) as libc::pthread_t, ids.1.load(SeqCst));
    h.cancel().unwrap();
    for _ in 0..rounds() {
        // SAFETY: the thread is alive until `go` is set.
        assert_eq!(unsafe { libc::pthread_kill(pt, sig) }, 0);
    }
    assert_not_left_blocked(tid, sig);
    assert!(!h.is_finished(), "a signal outside any call acted");
    go.store(true, SeqCst);
    assert!(h.join().is_canceled());

    // Blocked in a read, no request: the read is restarted each time and returns its data.
    let (r, mut w) = std::io::pipe().unwrap();
    let ids = std::sync::Arc::new((AtomicU64::new(0), AtomicI32::new(0)));
    let ids2 = ids.clone();
    let h = spawn(move || {
        // SAFETY: pthread_self has no preconditions.
        ids2.0.store(unsafe { libc::pthread_self() } as u64, SeqCst);
        ids2.1.store(gettid(), SeqCst);
        let mut b = [0u8; 1];
        let n = io::read(r.as_fd(), &mut b).unwrap();
        (n, b[0])
    });
    while ids.1.load(SeqCst) == 0 {
        std::thread::yield_now();
    }
    let (pt, tid) = (ids.0.load(SeqCst) as libc::pthread_t, ids.1.load(SeqCst));
    for _ in 0..rounds() {
        wait_blocked(tid);
        // SAFETY: the thread is alive until it read the byte written below.
        assert_eq!(unsafe { libc::pthread_kill(pt, sig) }, 0);
    }
    assert_not_left_blocked(tid, sig);
    std::io::Write::write_all(&mut w, b"z").unwrap();
    assert_eq!(h.join().unwrap(), (1, b'z'));
}

static USR1: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_usr1(_: libc::c_int) {
    USR1.fetch_add(1, Ordering::SeqCst);
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn user_signal_handlers_run_and_other_threads_never_see_eintr() {
    // A user's SIGUSR1 handler still runs after our signal is installed.
    let (r, _w) = std::io::pipe().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn(move || {
        tx.send(gettid()).unwrap();
        io::read(r.as_fd(), &mut [0u8; 1]).map(|_| ())
    });
    wait_blocked(rx.recv().unwrap()); // in the read: the signal interrupts it
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    // SAFETY: installing a handler that only touches an atomic; raising it on this thread.
    unsafe {
        libc::signal(libc::SIGUSR1, on_usr1 as *const () as libc::sighandler_t);
        libc::raise(libc::SIGUSR1);
    }
    assert_eq!(USR1.load(Ordering::SeqCst), 1);

    // A thread in a plain (non-restartable) poll, with a pending request, is not interrupted:
    // the signal goes only to threads inside our cancellable calls.
    let (pr, _pw) = std::io::pipe().unwrap();
    let saw_eintr = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let e = saw_eintr.clone();
    let h = spawn(move || {
        thread_cancel::current().cancel().unwrap(); // pending, not acted on by libc::poll
        let mut p = libc::pollfd {
            fd: pr.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        // The raw system call: plain with or without the feature `interpose` (which makes the
        // C library's `poll` a point).
        // SAFETY: one valid pollfd and a valid timespec; no signal mask.
        let r = unsafe {
            libc::syscall(
                libc::SYS_ppoll,
                &mut p as *mut libc::pollfd,
                1,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0,
            )
        };
        e.store(r == -1, Ordering::SeqCst);
        thread_cancel::testcancel();
    });
    assert!(h.join().is_canceled());
    assert!(
        !saw_eintr.load(Ordering::SeqCst),
        "a plain poll got EINTR from our signal"
    );

    // A std thread blocked in a plain read is not disturbed by canceling another thread.
    let (ar, mut aw) = std::io::pipe().unwrap();
    let plain = std::thread::spawn(move || {
        let mut b = [0u8; 1];
        (&ar).read(&mut b)
    });
    let (br, _bw) = std::io::pipe().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn(move || {
        tx.send(gettid()).unwrap();
        io::read(br.as_fd(), &mut [0u8; 1]).map(|_| ())
    });
    wait_blocked(rx.recv().unwrap()); // in the read: the signal interrupts it
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    aw.write_all(b"z").unwrap();
    assert_eq!(plain.join().unwrap().unwrap(), 1);
}

#[test]
fn r10_a_thread_that_blocks_the_cancel_signal_is_canceled_at_its_next_point_without_effect() {
    let (r, mut w) = std::io::pipe().unwrap();
    w.write_all(b"keep").unwrap();
    let r = Arc::new(r);
    let r2 = r.clone();
    let h = spawn(move || {
        // Make sure the signal exists, then block it on this thread.
        let _ = io::write(std::fs::File::open("/dev/null").unwrap().as_fd(), b"");
        // SAFETY: sigset_t is plain data; the calls initialise it and block every real-time
        // signal (ours among them) on this thread only.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in libc::SIGRTMIN()..=libc::SIGRTMAX() {
                libc::sigaddset(&mut set, s);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        thread_cancel::current().cancel().unwrap();
        // The trampoline's own check acts before the read: no byte is consumed.
        let _ = io::read(r2.as_fd(), &mut [0u8; 4]);
        unreachable!()
    });
    assert!(h.join().is_canceled());
    assert_eq!(drain(&OwnedFd::from(Arc::try_unwrap(r).unwrap())), 4);
}

// ---------------------------------------------------------------------------------------------
// Choosing the signal, and someone else's handler for it

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn set_signal_after_start_says_too_late() {
    const NAME: &str = "set_signal_after_start_says_too_late";
    if !is_child(NAME) {
        child_must_pass(NAME);
        return;
    }
    spawn(|| ()).join().unwrap();
    let other = default_cancel_signal() + 1;
    let e = io::set_signal(other).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("too late"), "message: {msg}");
    assert!(
        msg.contains(&default_cancel_signal().to_string()),
        "the message names the signal in use: {msg}"
    );
    // Choosing the signal that is in use is no change: Ok.
    io::set_signal(default_cancel_signal()).unwrap();
    // Not a real-time signal: rejected for that reason, whatever the time.
    let msg = io::set_signal(libc::SIGINT).unwrap_err().to_string();
    assert!(msg.contains("real-time"), "message: {msg}");
}

extern "C" fn foreign_handler(_sig: libc::c_int) {}

/// A handler installed for the default cancel signal before the crate starts is not replaced:
/// the first spawn panics saying so, the handler stays; `set_signal` refuses that signal too,
/// and choosing another one makes the crate work.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn start_refuses_a_handler_already_installed_for_the_signal() {
    const NAME: &str = "start_refuses_a_handler_already_installed_for_the_signal";
    if !is_child(NAME) {
        let run = child_must_pass(NAME);
        assert!(
            run.stderr.contains("already has a handler"),
            "stderr: {}",
            run.stderr
        );
        return;
    }
    let sig = default_cancel_signal();
    install(sig, foreign_handler as *const () as usize, 0);
    let r = std::panic::catch_unwind(|| spawn(|| ()).join());
    let payload = r.expect_err("spawn must refuse to take over a signal that has a handler");
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap();
    assert!(msg.contains("already has a handler"), "message: {msg}");
    assert!(
        msg.contains("set_signal"),
        "the message says what to do: {msg}"
    );
    assert_eq!(installed(sig), foreign_handler as *const () as usize);
    // Refused every time, not only once.
    assert!(std::panic::catch_unwind(|| spawn(|| ())).is_err());

    let msg = io::set_signal(sig).unwrap_err().to_string();
    assert!(msg.contains("already has a handler"), "message: {msg}");
    assert_eq!(installed(sig), foreign_handler as *const () as usize);

    // Another signal works.
    io::set_signal(sig + 1).unwrap();
    let reader = blocked_reader();
    reader.handle.cancel().unwrap();
    assert!(reader.handle.wait_timeout(HANG), "the cancel was lost");
    assert!(reader.handle.join().is_canceled());
    assert_eq!(installed(sig), foreign_handler as *const () as usize);
}

/// `SIG_IGN` for the cancel signal before the start (an ignored signal is inherited across
/// `exec`) is taken over: the crate works.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn start_takes_over_an_ignored_signal() {
    const NAME: &str = "start_takes_over_an_ignored_signal";
    if !is_child(NAME) {
        child_must_pass(NAME);
        return;
    }
    install(default_cancel_signal(), libc::SIG_IGN, 0);
    let reader = blocked_reader();
    reader.handle.cancel().unwrap();
    assert!(reader.handle.wait_timeout(HANG), "the cancel was lost");
    assert!(reader.handle.join().is_canceled());
}

/// After the start, the cancel signal's handler is replaced by `SIG_DFL` (which would kill the
/// process), `SIG_IGN`, and a handler of the user's: `cancel()` sends no signal, the process
/// lives, the request is acted on at the thread's next point, and the replacement is reported
/// once on stderr.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn cancel_after_handler_replaced_reports_and_does_not_signal() {
    const NAME: &str = "cancel_after_handler_replaced_reports_and_does_not_signal";
    if !is_child(NAME) {
        let run = child_must_pass(NAME);
        let reports = run.stderr.matches("was replaced").count();
        assert_eq!(reports, 1, "stderr: {}", run.stderr);
        assert!(run.stderr.contains("set_signal"), "stderr: {}", run.stderr);
        return;
    }
    let sig = default_cancel_signal();
    spawn(|| ()).join().unwrap(); // the crate has started: its handler is installed
    for replacement in [
        libc::SIG_DFL,
        libc::SIG_IGN,
        foreign_handler as *const () as usize,
    ] {
        install(sig, replacement, 0);
        let (r, mut w) = std::io::pipe().unwrap();
        let ids = std::sync::Arc::new(AtomicI32::new(0));
        let ids2 = ids.clone();
        let h = spawn(move || {
            ids2.store(gettid(), SeqCst);
            let mut b = [0u8; 1];
            let n = io::read(r.as_fd(), &mut b);
            testcancel();
            n
        });
        while ids.load(SeqCst) == 0 {
            std::thread::yield_now();
        }
        wait_blocked(ids.load(SeqCst));
        h.cancel().unwrap();
        // The read cannot be interrupted: it returns its data, the next point acts.
        std::io::Write::write_all(&mut w, b"z").unwrap();
        assert!(h.wait_timeout(HANG));
        assert!(h.join().is_canceled());
        assert_eq!(installed(sig), replacement, "the user's choice is kept");
    }
}

// ---------------------------------------------------------------------------------------------
// Masks and sets given to sigsuspend and sigtimedwait. glibc never lets its own cancel signal be
// blocked or waited for; the crate's signal is an ordinary real-time signal to the C library, so
// the crate removes it from the copies of masks and sets it passes to the kernel.

/// Every signal.
fn full_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigfillset initialises it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        set
    }
}

/// Spawns `f` (told nothing) after it reports its kernel thread id, waits until it blocks,
/// cancels it and returns its outcome, or panics if it is still running after [`HANG`].
fn cancel_when_blocked<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Outcome<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn(move || {
        tx.send(gettid()).unwrap();
        f()
    });
    wait_blocked(rx.recv().unwrap());
    h.cancel().unwrap();
    assert!(
        h.wait_timeout(HANG),
        "the canceled thread is still blocked after {HANG:?}"
    );
    h.join()
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls (no cancel signal)"
)]
fn r05_sigsuspend_with_a_full_mask_is_still_canceled() {
    let out = cancel_when_blocked(|| io::sigsuspend(&full_set()).is_ok());
    assert!(out.is_canceled());
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls (no cancel signal)"
)]
fn r10_sigtimedwait_on_every_signal_never_takes_the_cancel_signal() {
    // Before: the wait took the cancel signal as its result (the call "completed"), so the
    // thread went on and returned.
    let out = cancel_when_blocked(|| io::sigtimedwait(&full_set(), None).ok());
    match out {
        Outcome::Canceled => {}
        Outcome::Returned(r) => panic!("the wait returned {r:?} instead of being canceled"),
        _ => panic!("neither canceled nor returned"),
    }
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls (no cancel signal)"
)]
fn r05_sigtimedwait_with_a_timeout_on_every_signal_is_still_canceled() {
    let out =
        cancel_when_blocked(|| io::sigtimedwait(&full_set(), Some(Duration::from_secs(3600))).ok());
    assert!(out.is_canceled());
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls (no cancel signal)"
)]
fn sigsuspend_with_a_full_mask_still_blocks_the_other_signals() {
    // The cancel signal is the only one taken out: a SIGUSR1 sent to a thread in
    // sigsuspend(full) stays pending (the thread is then canceled, and the signal discarded
    // with the process' own block of it in this test).
    // SAFETY: sigset_t is plain data; SIGUSR1 is blocked on this (the test's) thread, so the
    // process-directed signal below can only reach a thread that unblocks it.
    unsafe {
        let mut usr1: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut usr1);
        libc::sigaddset(&mut usr1, libc::SIGUSR1);
        libc::pthread_sigmask(libc::SIG_BLOCK, &usr1, std::ptr::null_mut());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn(move || {
        tx.send(gettid()).unwrap();
        let r = io::sigsuspend(&full_set());
        r.map_err(|e| e.raw_os_error())
    });
    let tid = rx.recv().unwrap();
    wait_blocked(tid);
    // SAFETY: a signal to a thread of this process that blocks it (sigsuspend's full mask).
    unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, libc::SIGUSR1) };
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        !h.is_finished(),
        "SIGUSR1 woke a sigsuspend whose mask blocks it"
    );
    h.cancel().unwrap();
    assert!(h.wait_timeout(HANG), "still blocked after {HANG:?}");
    assert!(h.join().is_canceled());
}

// ---------------------------------------------------------------------------------------------
// A thread that blocks every signal with the C library's own call

/// Blocks every signal on the calling thread with `libc::pthread_sigmask` (not the crate's:
/// the cancel signal is in the set) and returns the mask it had.
fn block_every_signal() -> libc::sigset_t {
    let all = full_set();
    // SAFETY: sigset_t is plain data, written by the call.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid sets; changes this thread's mask only.
    assert_eq!(
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old) },
        0
    );
    old
}

/// R10 / R05: a thread that blocked every signal with `libc::pthread_sigmask` (the cancel
/// signal too) and then blocks in `io::read` cannot be woken by the signal (the kernel holds a
/// blocked signal pending; the crate does not see a mask changed through the C library). It is
/// canceled at its next point: the read that then completes keeps its byte (never both), and
/// the `testcancel` after it acts. (Waking it there would need the crate's own mask call, as the
/// C ABI's `tc_pthread_sigmask`, or an interposed `pthread_sigmask`.)
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls (no cancel signal)"
)]
#[cfg_attr(
    thread_cancel_interpose,
    ignore = "with `interpose` the C library's pthread_sigmask never blocks the cancel signal: \
              the read is interrupted (tests/interpose.rs, e02_a_thread_that_blocks_every_signal_...)"
)]
fn r10_read_blocked_with_every_signal_blocked_completes_then_the_next_point_acts() {
    for attempt in 1.. {
        let (r, mut w) = std::io::pipe().unwrap();
        let keep = OwnedFd::from(r.try_clone().unwrap());
        let got = Arc::new(AtomicUsize::new(0));
        let g = got.clone();
        let reading = Arc::new(AtomicBool::new(false));
        let rd = reading.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let h = spawn(move || {
            block_every_signal();
            tx.send(gettid()).unwrap();
            rd.store(true, SeqCst);
            let mut b = [0u8; 1];
            if let Ok(n) = io::read(r.as_fd(), &mut b) {
                g.store(n, SeqCst);
            }
            testcancel();
        });
        let tid = rx.recv().unwrap();
        assert!(
            wait_for(|| reading.load(SeqCst)),
            "the thread never reached its read"
        );
        wait_blocked(tid);
        h.cancel().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        w.write_all(b"x").unwrap();
        assert!(
            h.wait_timeout(HANG),
            "still blocked {HANG:?} after the write"
        );
        assert!(h.join().is_canceled());
        if got.load(SeqCst) == 0 {
            before_the_read(&keep, attempt);
            continue;
        }
        assert_eq!(got.load(SeqCst), 1, "the completed read kept its byte");
        return;
    }
}

/// How many attempts a test of a cancel that finds its thread in a read makes under an
/// emulator (see [`before_the_read`]).
const READ_ATTEMPTS: u32 = 20;

/// A test of a cancel that must find its thread asleep in a read saw the thread end without
/// the read's byte: it checks that the byte is still in the pipe (`keep`, another read end:
/// the read never ran, nothing is lost) and says whether to try again. Natively that fails the
/// test: `/proc` showed the thread asleep in that very read. Under an emulator
/// (`THREAD_CANCEL_TEST_RUNNER`) `/proc` shows the host's calls, and a thread seen asleep
/// after announcing its read may still be before it (in the emulator's own locks, or a lock of
/// its first run): the cancel then acts at the read's entry. The attempt is made again, up to
/// [`READ_ATTEMPTS`] times.
fn before_the_read(keep: &OwnedFd, attempt: u32) {
    assert_eq!(drain(keep), 1, "the byte written was lost");
    assert!(
        std::env::var_os("THREAD_CANCEL_TEST_RUNNER").is_some() && attempt < READ_ATTEMPTS,
        "the cancel acted before the read (attempt {attempt}), the thread seen asleep in it"
    );
}

/// C01 / C04: the same for a scope's cancel: the run that blocks in `io::read` with every
/// signal blocked ends with `Err(Canceled)` at its next point once the read completes (the
/// byte kept), and the thread goes on with the mask it had set.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls (no cancel signal)"
)]
#[cfg_attr(
    thread_cancel_interpose,
    ignore = "with `interpose` the C library's pthread_sigmask never blocks the cancel signal: \
              the read is interrupted (tests/interpose.rs, e02_a_thread_that_blocks_every_signal_...)"
)]
fn c01_scope_cancel_of_a_read_with_every_signal_blocked_acts_at_the_next_point() {
    for attempt in 1.. {
        let (r, mut w) = std::io::pipe().unwrap();
        let rfd = r.as_raw_fd();
        let keep = OwnedFd::from(r.try_clone().unwrap());
        let scope = thread_cancel::CancelScope::new();
        let s2 = scope.clone();
        let reading = Arc::new(AtomicBool::new(false));
        let rd = reading.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let h = spawn(move || {
            let old = block_every_signal();
            tx.send(gettid()).unwrap();
            let mut got = 0;
            let res = s2.run(|| {
                rd.store(true, SeqCst);
                got = io::read(r.as_fd(), &mut [0u8; 1]).unwrap_or(0);
                testcancel();
            });
            // SAFETY: sigset_t is plain data, written by the call.
            let mut now: libc::sigset_t = unsafe { std::mem::zeroed() };
            // SAFETY: a null new set only reads the mask.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut now) };
            // SAFETY: `now` is initialised.
            let still_blocked = unsafe { libc::sigismember(&now, libc::SIGUSR1) == 1 };
            // SAFETY: restores the mask the thread had.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
            (res.is_err(), got, still_blocked)
        });
        // Blocked in the run's read (not in some earlier call: the cancel must find the run).
        let tid = rx.recv().unwrap();
        assert!(
            wait_for(|| reading.load(SeqCst)),
            "the run never reached its read"
        );
        wait_blocked_in_read(tid, rfd);
        scope.cancel();
        std::thread::sleep(Duration::from_millis(20));
        w.write_all(b"x").unwrap();
        assert!(
            h.wait_timeout(HANG),
            "still blocked {HANG:?} after the write"
        );
        let (canceled, got, still_blocked) = h.join().unwrap();
        assert!(canceled && still_blocked, "{canceled} {still_blocked}");
        if got == 0 {
            before_the_read(&keep, attempt);
            continue;
        }
        assert_eq!(got, 1);
        return;
    }
}

// ---------------------------------------------------------------------------------------------
// A user's handler without SA_RESTART interrupting a blocked read; masks after a cancel

/// Counts the deliveries of the user's handler.
static HANDLED: AtomicUsize = AtomicUsize::new(0);

extern "C" fn counting_handler(_sig: libc::c_int) {
    HANDLED.fetch_add(1, SeqCst);
}

/// The calling thread's signal mask.
fn own_mask() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, written by the call.
    let mut now: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new set only reads the mask.
    assert_eq!(
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut now) },
        0
    );
    now
}

/// The signals of `set` among SIGUSR1, SIGUSR2, SIGALRM and the cancel signal, by name.
fn members(set: &libc::sigset_t) -> Vec<&'static str> {
    [
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGALRM, "SIGALRM"),
        (default_cancel_signal(), "cancel"),
    ]
    .into_iter()
    // SAFETY: `set` is an initialised set; the signals are valid.
    .filter(|&(s, _)| unsafe { libc::sigismember(set, s) } == 1)
    .map(|(_, n)| n)
    .collect()
}

/// R10 with a user's handler installed without `SA_RESTART` (SIGALRM, then SIGUSR1): a read
/// blocked in `io::read` that the handler interrupts fails with `EINTR` (as C's), having taken
/// nothing; the byte written next is read by the next call; and the thread stays cancelable:
/// blocked again, interrupted again and canceled at once, it ends canceled, and the byte
/// written after that is still in the pipe.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no cancel signal"
)]
fn r10_user_handler_without_restart_interrupts_a_read_loses_nothing_and_it_stays_cancelable() {
    const NAME: &str =
        "r10_user_handler_without_restart_interrupts_a_read_loses_nothing_and_it_stays_cancelable";
    if !is_child(NAME) {
        child_must_pass(NAME);
        return;
    }
    for sig in [libc::SIGALRM, libc::SIGUSR1] {
        install(sig, counting_handler as *const () as usize, 0);
        HANDLED.store(0, SeqCst);
        let (r, mut w) = std::io::pipe().unwrap();
        let r = Arc::new(r);
        let r2 = r.clone();
        let (ids_tx, ids_rx) = std::sync::mpsc::channel();
        let (tx, rx) = std::sync::mpsc::channel();
        let h = spawn(move || {
            // SAFETY: pthread_self has no preconditions.
            ids_tx
                .send((gettid(), unsafe { libc::pthread_self() } as u64))
                .unwrap();
            let mut b = [0u8; 1];
            let first = io::read(r2.as_fd(), &mut b).map_err(|e| e.raw_os_error());
            tx.send(format!("{first:?}")).unwrap();
            let second = io::read(r2.as_fd(), &mut b).map(|n| (n, b[0]));
            tx.send(format!("{second:?}")).unwrap();
            loop {
                let _ = io::read(r2.as_fd(), &mut b); // EINTR or not: canceled here
            }
        });
        let (tid, pthread) = ids_rx.recv().unwrap();
        let kill = || {
            // SAFETY: the thread is alive (joined below).
            assert_eq!(
                unsafe { libc::pthread_kill(pthread as libc::pthread_t, sig) },
                0
            );
        };
        wait_blocked(tid);
        kill();
        let eintr = format!("{:?}", Err::<usize, _>(Some(libc::EINTR)));
        assert_eq!(rx.recv().unwrap(), eintr, "{sig}: the first read");
        w.write_all(b"a").unwrap();
        assert_eq!(rx.recv().unwrap(), "Ok((1, 97))", "{sig}: the second read");
        wait_blocked(tid);
        kill();
        h.cancel().unwrap();
        assert!(h.wait_timeout(HANG), "{sig}: not canceled after {HANG:?}");
        assert!(h.join().is_canceled(), "{sig}");
        assert_eq!(
            HANDLED.load(SeqCst),
            2,
            "{sig}: the handler ran for each signal"
        );
        w.write_all(b"b").unwrap();
        drop(w);
        let mut left = Vec::new();
        (&*r).read_to_end(&mut left).unwrap();
        assert_eq!(left, b"b", "{sig}: nothing was taken by the canceled read");
    }
}

/// The mask a point sets for its wait (`io::sigsuspend` with every signal blocked) is the
/// kernel's for the wait only: after a scope's cancel ends the run there, and in the cleanup
/// handler of a thread canceled there, the thread's mask is the one it had before (here:
/// SIGUSR2 blocked, the rest not).
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls (no cancel signal)"
)]
fn c01_mask_of_a_canceled_sigsuspend_is_restored_after_the_run_and_in_cleanup_handlers() {
    fn block_usr2() {
        // SAFETY: sigset_t is plain data; the calls initialise it and block SIGUSR2 on this
        // thread only.
        unsafe {
            let mut s: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut s);
            libc::sigaddset(&mut s, libc::SIGUSR2);
            libc::pthread_sigmask(libc::SIG_BLOCK, &s, std::ptr::null_mut());
        }
    }
    // A scope's cancel: the run ends, the thread goes on with its own mask.
    let scope = thread_cancel::CancelScope::new();
    let s2 = scope.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn(move || {
        block_usr2();
        tx.send(gettid()).unwrap();
        let res = s2.run(|| io::sigsuspend(&full_set()));
        (res.is_err(), members(&own_mask()))
    });
    wait_blocked(rx.recv().unwrap());
    scope.cancel();
    assert!(
        h.wait_timeout(HANG),
        "still blocked {HANG:?} after the cancel"
    );
    assert_eq!(h.join().unwrap(), (true, vec!["SIGUSR2"]));
    // A thread's cancel: its cleanup handler runs with the thread's own mask.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let out = cancel_when_blocked(move || {
        block_usr2();
        let _g = thread_cancel::cleanup_push(move || *s.lock().unwrap() = members(&own_mask()));
        let _ = io::sigsuspend(&full_set());
    });
    assert!(out.is_canceled());
    assert_eq!(*seen.lock().unwrap(), vec!["SIGUSR2"]);
}
