//! `sleep`, `park`, `park_timeout`: cancellation points that a request wakes at once.

use crate::current::{current_control, with_own};
use crate::point::wait::{block_until, deadline_after};
use std::time::Duration;

/// Sleeps for `dur`; a cancellation point that a request interrupts at once (like C's `sleep`,
/// `nanosleep`, `clock_nanosleep`).
///
/// ```
/// let h = thread_cancel::spawn(|| thread_cancel::sleep(std::time::Duration::from_secs(3600)));
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled()); // not an hour later
/// ```
pub fn sleep(dur: Duration) {
    // Borrowed, not an `Arc`: nothing to drop here when the wait acts (no landing pad between
    // the point and the caller's frames, see `wait::act`).
    let deadline = deadline_after(dur);
    with_own(|me| block_until(me, || false, deadline));
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
