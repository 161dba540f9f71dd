//! W02: with feature `interpose`, a call made from a signal handler behaves as the plain call.
//! A handler runs on whichever thread the signal lands on; that thread's canceled run, passed
//! deadline or pending cancel must never make the handler's self-pipe `write` fail (the way out
//! of a handler that tokio, mio, glib and libuv use). The handlers are installed as programs
//! install them: by tokio (through `sigaction`), by C's `signal()` (through the C library's
//! hidden `sigaction`), and one that leaves by `siglongjmp`.
//!
//! The stress sends `THREAD_CANCEL_STRESS` signals (default 100,000) into threads that enter
//! and leave canceled runs.
// Where the interposition is built (the one condition, named by build.rs).
#![cfg(thread_cancel_interpose)]

mod common;

use common::{gettid, HANG};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use thread_cancel::CancelScope;

/// The C fixture's handlers share its static state: one test at a time.
static C_FIXTURE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Sends `sig` to thread `tid` of this process.
fn tgkill(tid: i32, sig: i32) {
    // SAFETY: plain integers; `tid` is a thread of this process, alive (the caller waits for
    // its end after).
    let r = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, sig) };
    assert_eq!(r, 0, "tgkill: {}", std::io::Error::last_os_error());
}

/// A non-blocking pipe: (read end, write end).
fn self_pipe() -> (OwnedFd, OwnedFd) {
    let (r, w) = std::io::pipe().unwrap();
    for fd in [r.as_raw_fd(), w.as_raw_fd()] {
        // SAFETY: `fd` is open (owned above); F_SETFL takes an int.
        unsafe { libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK) };
    }
    (r.into(), w.into())
}

/// A thread that enters `with_timeout(10 ms)`, spins past the deadline (no cancellation point:
/// the run is canceled, the thread goes on), says so, and spins until told to stop. Returns its
/// id and the stop flag. The budget grows until the run started its closure (a deadline that
/// passes before the run's entry rightly never starts it: no thread would be past it).
fn worker_past_its_deadline() -> (i32, Arc<AtomicBool>, std::thread::JoinHandle<bool>) {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        let r = common::once_started(Duration::from_millis(10), |budget, started| {
            thread_cancel::with_timeout(budget, || {
                started.store(true, Ordering::SeqCst);
                let deadline = thread_cancel::current_deadline().unwrap();
                while Instant::now() <= deadline {
                    std::hint::spin_loop();
                }
                tx.send(gettid()).unwrap();
                while !s.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        });
        r.is_err_and(|e| e.deadline_passed())
    });
    let tid = rx
        .recv_timeout(HANG)
        .expect("the worker passed its deadline");
    (tid, stop, h)
}

/// tokio's `ctrl_c` (its handler writes to a self-pipe) resolves when the `SIGINT` lands on a
/// thread whose run is past its deadline. Before the fix the handler's `write` failed with
/// `ETIMEDOUT` there and the future never resolved ("ctrl_c did not resolve within 20 s").
#[test]
fn w02_tokio_ctrl_c_resolves_when_the_signal_lands_on_a_thread_past_its_deadline() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    // Registered (its handler installed) before the signal.
    let mut sigint = rt
        .block_on(async {
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        })
        .unwrap();
    let (tid, stop, worker) = worker_past_its_deadline();
    tgkill(tid, libc::SIGINT);
    let got = rt.block_on(async { tokio::time::timeout(HANG, sigint.recv()).await });
    stop.store(true, Ordering::Relaxed);
    assert!(worker.join().unwrap(), "the worker's run did not time out");
    assert!(
        matches!(got, Ok(Some(()))),
        "ctrl_c did not resolve within {HANG:?}: the handler's write on the worker failed"
    );
}

/// A handler installed with C's `signal()` (the C library installs it through its hidden
/// `sigaction`, which interposition does not see): its write gets through on a thread in a
/// canceled run, and `sigaction` reports the program's handler, not the crate's trampoline.
#[test]
fn w02_a_handler_installed_with_signal_writes_through_a_canceled_run() {
    let _one = C_FIXTURE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (r, w) = self_pipe();
    // SAFETY: installs a C handler for SIGUSR2 that writes to `w`, which outlives the test.
    let prev = unsafe {
        thread_cancel_fixtures::signal_test_install_with_signal(libc::SIGUSR2, w.as_raw_fd())
    };
    assert_ne!(prev, libc::SIG_ERR);
    // SAFETY: queries the action of SIGUSR2.
    let installed = unsafe { thread_cancel_fixtures::signal_test_installed_handler(libc::SIGUSR2) };
    // The handler `signal()` installed, as C sees it (the address of `write_one`): not ours.
    // SAFETY: as above; the same query through std's libc declaration.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only queries.
    assert_eq!(
        unsafe { libc::sigaction(libc::SIGUSR2, std::ptr::null(), &mut old) },
        0
    );
    assert_eq!(old.sa_sigaction, installed as usize);
    assert_eq!(
        old.sa_flags & libc::SA_SIGINFO,
        0,
        "the program's flags, without SA_SIGINFO"
    );
    let (tid, stop, worker) = worker_past_its_deadline();
    tgkill(tid, libc::SIGUSR2);
    let mut b = [0u8; 1];
    let give_up = Instant::now() + HANG;
    // SAFETY: `r` is open; `b` is valid for one byte.
    while unsafe { libc::read(r.as_raw_fd(), b.as_mut_ptr().cast(), 1) } != 1 {
        assert!(Instant::now() < give_up, "the handler's byte never came");
        std::thread::yield_now();
    }
    stop.store(true, Ordering::Relaxed);
    assert!(worker.join().unwrap());
    let mut err = 0;
    // SAFETY: `err` is valid for writes.
    let wrote = unsafe { thread_cancel_fixtures::signal_test_last_write(&mut err) };
    assert_eq!((wrote, err), (1, 0));
}

/// A handler that leaves by `siglongjmp` (as C code that recovers from a signal does): its
/// write inside gets through, and after the jump the thread is no longer taken to be in a
/// handler — in its canceled run, an interposed `read` fails with the cancel again.
#[test]
fn w02_after_a_siglongjmp_out_of_a_handler_the_threads_calls_are_points_again() {
    let _one = C_FIXTURE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (r, w) = self_pipe();
    let scope = CancelScope::new();
    let out = scope.run(|| {
        scope.cancel();
        // SAFETY: installs a handler for SIGURG that writes to `w` and jumps back into the
        // fixture's frame, which is still live (the C function returns only after the jump).
        let jumped = unsafe {
            thread_cancel_fixtures::signal_test_jump_out_of_a_handler(libc::SIGURG, w.as_raw_fd())
        };
        let mut err = 0;
        // SAFETY: `err` is valid for writes.
        let wrote = unsafe { thread_cancel_fixtures::signal_test_last_write(&mut err) };
        let mut b = [0u8; 1];
        // SAFETY: `r` is open (a byte is there if the handler wrote one: the read would
        // complete as the plain call); `b` is valid for one byte.
        let n = unsafe { libc::read(r.as_raw_fd(), b.as_mut_ptr().cast(), 1) };
        let read_errno = std::io::Error::last_os_error().raw_os_error();
        (jumped, wrote, err, n, read_errno)
    });
    let e = out.unwrap_err();
    let (jumped, wrote, err, n, read_errno) = e.into_value().unwrap();
    assert_eq!(jumped, 1, "the handler did not jump back");
    assert_eq!(
        (wrote, err),
        (1, 0),
        "the handler's write in the canceled run failed"
    );
    assert_eq!(
        (n, read_errno),
        (-1, Some(libc::ECANCELED)),
        "after the jump, the canceled run's read made the plain call"
    );
}

/// The handler of the stress: one byte to the self-pipe; counts its calls and the writes that
/// failed for another reason than a full pipe (which loses no wake-up: a byte is there).
static STRESS_PIPE: AtomicI32 = AtomicI32::new(-1);
static STRESS_CALLS: AtomicU64 = AtomicU64::new(0);
static STRESS_FAILED: AtomicU64 = AtomicU64::new(0);
static STRESS_FULL: AtomicU64 = AtomicU64::new(0);

extern "C" fn stress_handler(_sig: libc::c_int) {
    // SAFETY: errno of this thread, saved and restored around the handler's write.
    let saved = unsafe { *libc::__errno_location() };
    STRESS_CALLS.fetch_add(1, Ordering::Relaxed);
    let fd = STRESS_PIPE.load(Ordering::Relaxed);
    // SAFETY: `fd` is the stress's pipe, open while signals are sent; one byte from a static.
    let r = unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) };
    if r != 1 {
        // SAFETY: as above.
        let e = unsafe { *libc::__errno_location() };
        if e == libc::EAGAIN {
            STRESS_FULL.fetch_add(1, Ordering::Relaxed);
        } else {
            STRESS_FAILED.fetch_add(1, Ordering::Relaxed);
        }
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved };
}

/// 100,000 signals from another thread at random moments into two threads that enter and leave
/// canceled runs (a scope canceled in the run, a deadline passed) and one with a thread cancel
/// pending, each handler writing one byte to a self-pipe: no handler write fails, and
/// every call that wrote is a byte read.
#[test]
fn w02_stress_signals_into_threads_entering_and_leaving_canceled_runs() {
    let signals = common::stress_count(100_000);
    let (r, w) = self_pipe();
    STRESS_PIPE.store(w.as_raw_fd(), Ordering::Relaxed);
    // SAFETY: `sigaction` is plain data; all-zero is a valid value.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = stress_handler as *const () as usize;
    sa.sa_flags = libc::SA_RESTART;
    // A real-time signal: queued, never merged with one pending, so that every signal sent is
    // a handler call.
    let sig = libc::SIGRTMAX() - 1;
    // SAFETY: installs an async-signal-safe handler (atomics and a write).
    assert_eq!(
        unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) },
        0
    );
    let stop = Arc::new(AtomicBool::new(false));
    let mut tids = Vec::new();
    let mut workers = Vec::new();
    for n in 0..3u64 {
        let (tx, rx) = mpsc::channel();
        let stop = stop.clone();
        workers.push(thread_cancel::spawn(move || {
            tx.send(gettid()).unwrap();
            let mut rounds = 0u64;
            let (pr, _pw) = std::io::pipe().unwrap();
            if n == 2 {
                // A thread cancel pending all along (no point acts on it: none is met).
                let _ = thread_cancel::current().cancel();
                while !stop.load(Ordering::Relaxed) {
                    rounds += 1;
                    std::hint::spin_loop();
                }
                return rounds;
            }
            while !stop.load(Ordering::Relaxed) {
                rounds += 1;
                if (rounds + n).is_multiple_of(2) {
                    let s = CancelScope::new();
                    let _ = s.run(|| {
                        s.cancel();
                        for _ in 0..200 {
                            std::hint::spin_loop();
                        }
                    });
                } else {
                    let _ = thread_cancel::with_timeout(Duration::ZERO, || {
                        // An interposed call that fails in the canceled run.
                        let mut b = [0u8; 1];
                        // SAFETY: `pr` is open; `b` valid for one byte.
                        unsafe { libc::read(pr.as_raw_fd(), b.as_mut_ptr().cast(), 1) }
                    });
                }
            }
            rounds
        }));
        tids.push(rx.recv_timeout(HANG).unwrap());
    }
    let mut rng = common::Rng::new(0x5eed);
    let mut drained = 0u64;
    let mut buf = [0u8; 4096];
    let mut drain = |drained: &mut u64| loop {
        // SAFETY: `r` is open and non-blocking; `buf` valid for its length.
        let n = unsafe { libc::read(r.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        *drained += n as u64;
    };
    let give_up = Instant::now() + 10 * HANG;
    for i in 0..signals {
        // At most 1,000 queued and not yet handled (the queue of pending signals is bounded).
        while i as u64 - STRESS_CALLS.load(Ordering::Relaxed) > 1000 {
            assert!(Instant::now() < give_up, "signals are not handled");
            std::thread::yield_now();
        }
        tgkill(tids[rng.below(tids.len())], sig);
        if rng.coin(4) {
            for _ in 0..rng.below(500) {
                std::hint::spin_loop();
            }
        }
        if i.is_multiple_of(64) {
            drain(&mut drained);
        }
    }
    while STRESS_CALLS.load(Ordering::Relaxed) < signals as u64 {
        assert!(Instant::now() < give_up, "signals never handled");
        std::thread::yield_now();
    }
    stop.store(true, Ordering::Relaxed);
    let rounds: Vec<_> = workers
        .into_iter()
        .map(|h| format!("{:?}", h.join()))
        .collect();
    drain(&mut drained);
    let (calls, failed, full) = (
        STRESS_CALLS.load(Ordering::Relaxed),
        STRESS_FAILED.load(Ordering::Relaxed),
        STRESS_FULL.load(Ordering::Relaxed),
    );
    println!(
        "{signals} signals sent, {calls} handler calls, {failed} writes failed, {full} found the \
         pipe full, {drained} bytes read; worker rounds {rounds:?}"
    );
    assert_eq!(failed, 0, "handler writes failed in canceled runs");
    assert_eq!(drained + full, calls, "wake-ups lost");
    assert_eq!(calls, signals as u64, "signals without a handler call");
}
