//! Signal masks and sets passed to the points that take one (issue 17, item 5): a mask that
//! blocks every signal, given to `io::sigsuspend`, must not make the wait uninterruptible, and a
//! set given to `io::sigtimedwait` must never take the cancel signal. (glibc never lets its
//! own cancel signal be blocked or waited for; the crate's signal is an ordinary real-time
//! signal to the C library, so the crate removes it from the copies it passes to the kernel.)
//!
//! A thread that hangs is detected by a generous timeout (10 s), never by a measured latency.

use std::time::Duration;
use thread_cancel::{io, spawn, Outcome};

/// A generous bound: a thread still blocked after it is hung, not slow.
const HANG: Duration = Duration::from_secs(10);

/// Every signal.
fn full_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigfillset initialises it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        set
    }
}

/// Waits until the thread with kernel id `tid` sleeps in the kernel (seen three times in a row),
/// so that the request sent next finds it blocked, not on its way in.
fn wait_blocked(tid: i32) {
    let path = format!("/proc/self/task/{tid}/stat");
    let mut seen = 0;
    while seen < 3 {
        let stat = std::fs::read_to_string(&path).unwrap_or_default();
        let state = stat.rsplit_once(") ").and_then(|(_, r)| r.chars().next());
        seen = if state == Some('S') { seen + 1 } else { 0 };
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Spawns `f` (told nothing) after it reports its kernel thread id, waits until it blocks,
/// cancels it and returns its outcome, or panics if it is still running after [`HANG`].
fn cancel_when_blocked<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Outcome<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn(move || {
        // SAFETY: gettid takes no argument.
        tx.send(unsafe { libc::gettid() }).unwrap();
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
        // SAFETY: gettid takes no argument.
        tx.send(unsafe { libc::gettid() }).unwrap();
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
