//! Any POSIX C library: no private layout is read (musl, bionic; on glibc with
//! `--cfg thread_cancel_any_libc`).
//!
//! Condition variables: the waker cannot see whether the waiter is still between its last
//! check and its sleep (it then holds the mutex and is not queued, and a broadcast would be
//! lost), so it broadcasts at once and then again, with growing pauses (20 µs up to 5 ms), until
//! the wait has returned. The repeats run in a thread of their own, since the canceling thread
//! may itself hold the mutex (the waiter then cannot return until it lets go) and must not wait
//! here. Each repeat is a spurious wake-up for the condition's other waiters, which POSIX
//! allows.
//!
//! Semaphores: the wait is the C library's `sem_timedwait`, in slices of at most [`SLICE`] with
//! a cancellation point between them, so a request is acted on within a slice (no signal of
//! ours can end the library's own futex wait early); a slice that took the token completes the
//! wait (R10), and one that ended by time took nothing.

use super::Waiter;
use std::sync::Arc;
use std::time::Duration;

/// The longest semaphore wait between two cancellation points.
const SLICE: Duration = Duration::from_millis(10);

/// The first pause between two broadcasts, and the longest.
const FIRST_PAUSE: Duration = Duration::from_micros(20);
const LAST_PAUSE: Duration = Duration::from_millis(5);

/// Wakes the waiter (called between `enter` and `leave`, in the canceling thread).
pub(super) fn wake(w: &Arc<Waiter>) {
    w.broadcast();
    if w.is_done() {
        w.leave();
        return;
    }
    let w2 = w.clone();
    let spawned = std::thread::Builder::new()
        .name("thread-cancel cond waker".into())
        .spawn(move || keep_waking(&w2));
    if spawned.is_err() {
        // No thread to be had (out of memory or threads): repeat here. This waits for the
        // waiter, and so for the mutex, which the canceling thread must then not hold.
        keep_waking(w);
    }
}

/// Sleeps up to `d` or until the wait returns; whether it has returned.
fn nap(w: &Waiter, d: Duration) -> bool {
    let n = crate::lock(&w.wakers);
    if w.is_done() {
        return true;
    }
    drop(w.changed.wait_timeout(n, d));
    w.is_done()
}

/// Broadcasts after growing pauses until the wait has returned, then leaves.
fn keep_waking(w: &Waiter) {
    let mut pause = FIRST_PAUSE;
    while !nap(w, pause) {
        w.broadcast();
        pause = (pause * 2).min(LAST_PAUSE);
    }
    w.leave();
}

fn realtime_now() -> libc::timespec {
    // SAFETY: `timespec` is plain integers, for which all-zero is valid.
    let mut now: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `now` is a local, valid for the write; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
    now
}

/// `t + d`, normalised.
fn add(t: libc::timespec, d: Duration) -> libc::timespec {
    let mut r = t;
    r.tv_sec = r.tv_sec.saturating_add(d.as_secs() as _);
    r.tv_nsec += d.subsec_nanos() as libc::c_long;
    if r.tv_nsec >= 1_000_000_000 {
        r.tv_nsec -= 1_000_000_000;
        r.tv_sec = r.tv_sec.saturating_add(1);
    }
    r
}

fn earlier(a: &libc::timespec, b: &libc::timespec) -> bool {
    (a.tv_sec, a.tv_nsec) < (b.tv_sec, b.tv_nsec)
}

/// The wait, in slices (module docs).
///
/// # Safety
/// `sem` is an initialised semaphore; the time of `limit` (if any) a valid timespec on its
/// clock, `CLOCK_REALTIME` or `CLOCK_MONOTONIC` (each slice's end is then converted to
/// `CLOCK_REALTIME`, the clock of `sem_timedwait`, from the time left on it).
pub(super) unsafe fn sem_wait(
    sem: *mut libc::sem_t,
    limit: Option<(libc::clockid_t, *const libc::timespec)>,
) -> i32 {
    loop {
        // SAFETY: the caller's valid timespec.
        let limit = limit.map(|(clock, t)| super::realtime_deadline(clock, unsafe { *t }));
        let now = realtime_now();
        let mut slice = add(now, SLICE);
        if let Some(limit) = &limit {
            if !earlier(&now, limit) {
                // As the C library: the token if there is one, else a timeout.
                // SAFETY: the caller's semaphore.
                if unsafe { libc::sem_trywait(sem) } == 0 {
                    return 0;
                }
                crate::set_errno(libc::ETIMEDOUT);
                return -1;
            }
            if earlier(limit, &slice) {
                slice = *limit;
            }
        }
        // SAFETY: the caller's semaphore; `slice` is a local, valid for the call.
        if unsafe { libc::sem_timedwait(sem, &slice) } == 0 {
            return 0; // the token is taken: the wait completed
        }
        let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if e != libc::ETIMEDOUT {
            // A signal handled by the program (EINTR, as the C library), or an error.
            crate::set_errno(e);
            return -1;
        }
        // The slice ended and took nothing: a cancellation point before the next.
        crate::threads::point();
    }
}
