//! `sleep`, `park`, `park_timeout`: cancellation points that a request wakes at once.

use crate::current::{current_control, with_own};
use crate::point::wait::{act_current, deadline_after, wait_until, Wake};
use std::time::Duration;

/// Sleeps for `dur`; a cancellation point that a request interrupts at once (like C's `sleep`,
/// `nanosleep`, `clock_nanosleep`).
///
/// ```
/// let h = thread_cancel::spawn(|| thread_cancel::sleep(std::time::Duration::from_secs(3600)));
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled()); // not an hour later
/// ```
#[inline]
pub fn sleep(dur: Duration) {
    // The wait is out of line and the act inlined: the unwind starts in the caller's frame.
    if sleep_unacted(dur) {
        act_current();
    }
}

/// [`sleep`]'s wait: whether a request must be acted on (the caller acts).
#[inline(never)]
fn sleep_unacted(dur: Duration) -> bool {
    // Borrowed, not an `Arc`: nothing to drop when the caller acts.
    let deadline = deadline_after(dur);
    with_own(|me| wait_until(me, || false, deadline) == Wake::Cancel)
}

/// Blocks until the thread's `std` park token is made available (`Thread::unpark`) or a
/// cancellation request arrives; a cancellation point. Like `std::thread::park`, it may return
/// spuriously.
///
/// ```
/// let h = thread_cancel::spawn(|| loop { thread_cancel::park() });
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// ```
pub fn park() {
    // Adopted, with `std`'s handle: from now on a request unparks it.
    current_control().record_std_thread();
    crate::testcancel();
    std::thread::park();
    crate::testcancel();
}

/// [`park`] with a time limit.
///
/// ```
/// thread_cancel::park_timeout(std::time::Duration::from_millis(1));
/// ```
pub fn park_timeout(dur: Duration) {
    // Adopted, with `std`'s handle: from now on a request unparks it.
    current_control().record_std_thread();
    crate::testcancel();
    std::thread::park_timeout(dur);
    crate::testcancel();
}
