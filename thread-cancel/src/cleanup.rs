//! Cleanup handlers: a guard on the stack, so push and pop pair in one scope by
//! construction.
//!
//! The handler stack is the thread's call stack itself: the termination unwind drops the guards
//! innermost first, which is last-pushed-first.

use crate::point::terminating;
use std::marker::PhantomData;

/// Pushes `routine` as the calling thread's newest cleanup handler.
///
/// It runs if the thread is canceled or calls [`exit`](crate::exit) while the guard lives,
/// or on [`CleanupGuard::pop`]`(true)`. It does not run when the guard goes out of scope
/// normally, nor when the thread returns or panics. If the handler itself panics, the panic is
/// reported by the panic hook and caught; the remaining handlers still run and the thread still
/// ends as canceled (or exited).
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
/// let ran = Arc::new(AtomicBool::new(false));
/// let r = ran.clone();
/// let h = thread_cancel::spawn(move || {
///     let _g = thread_cancel::cleanup_push(move || r.store(true, Ordering::SeqCst));
///     loop { thread_cancel::testcancel() }
/// });
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// assert!(ran.load(Ordering::SeqCst));
/// ```
#[must_use = "the handler is popped (without running) as soon as the guard is dropped"]
pub fn cleanup_push<F: FnOnce()>(routine: F) -> CleanupGuard<F> {
    CleanupGuard {
        routine: Some(routine),
        _not_send: PhantomData,
    }
}

/// An installed cleanup handler; see [`cleanup_push`]. It is not `Send`: it belongs to the
/// thread whose stack it is on, and it pairs push and pop in one lexical scope.
///
/// ```compile_fail
/// let g = thread_cancel::cleanup_push(|| ());
/// std::thread::spawn(move || g.pop(true)); // error: the guard cannot leave its thread
/// ```
#[derive(Debug)]
pub struct CleanupGuard<F: FnOnce()> {
    routine: Option<F>,
    _not_send: PhantomData<*const ()>,
}

impl<F: FnOnce()> CleanupGuard<F> {
    /// Removes the handler and runs it if `execute`.
    ///
    /// ```
    /// let mut n = 0;
    /// thread_cancel::cleanup_push(|| n += 1).pop(true);
    /// thread_cancel::cleanup_push(|| n += 10).pop(false);
    /// assert_eq!(n, 1);
    /// ```
    pub fn pop(mut self, execute: bool) {
        let routine = self.routine.take();
        if execute {
            if let Some(f) = routine {
                f();
            }
        }
    }
}

impl<F: FnOnce()> Drop for CleanupGuard<F> {
    fn drop(&mut self) {
        if let Some(f) = self.routine.take() {
            if terminating() {
                // A panic escaping a destructor during an unwind aborts the process: contain it.
                let _ = crate::control::contain(f);
            }
        }
    }
}
