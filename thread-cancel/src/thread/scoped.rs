//! Scoped cancelable threads, over [`std::thread::scope`].

use crate::control::Control;
use crate::point::wait::Wake;
use crate::thread::{new_control, root, wait_finished, wait_for_end, Outcome};
use crate::{Canceler, NoSuchThread};
use std::io;
use std::sync::Arc;

/// A scope to spawn cancelable threads that may borrow from the enclosing stack; see [`scope`].
#[repr(transparent)]
#[derive(Debug)]
pub struct Scope<'scope, 'env: 'scope> {
    inner: std::thread::Scope<'scope, 'env>,
}

/// Like [`std::thread::scope`]: every thread spawned in it is joined before `scope` returns,
/// and each one can be canceled; a canceled thread is not a failure.
///
/// A scoped thread's result type must be `'static`, because [`exit`](crate::exit) hands it over
/// as a `Box<dyn Any>`.
///
/// # Panics
/// If `f` panics, or a thread spawned in it panicked and was not joined, as with `std`: once
/// every thread has been joined.
///
/// ```
/// let data = [1u64, 2, 3];
/// thread_cancel::scope(|s| {
///     let sum = s.spawn(|| data.iter().sum::<u64>());
///     let spinner = s.spawn(|| loop { thread_cancel::testcancel() });
///     spinner.cancel().unwrap();
///     assert!(spinner.join().is_canceled());
///     assert_eq!(sum.join().unwrap(), 6);
/// });
/// ```
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    std::thread::scope(|s| {
        // SAFETY: `Scope` is `repr(transparent)` over `std::thread::Scope`, so the two references
        // have the same layout and validity; the lifetime `'scope` is carried over unchanged.
        let ours =
            unsafe { &*(s as *const std::thread::Scope<'_, 'env>).cast::<Scope<'_, 'env>>() };
        f(ours)
    })
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Spawns a cancelable thread in this scope.
    ///
    /// # Panics
    /// If the system cannot create the thread (as `std`'s `Scope::spawn`; use
    /// [`Builder::spawn_scoped`](crate::Builder::spawn_scoped) for the error instead), or as
    /// [`Builder::spawn`](crate::Builder::spawn) panics.
    ///
    /// ```
    /// let mut n = 0;
    /// thread_cancel::scope(|s| { s.spawn(|| n += 1); });
    /// assert_eq!(n, 1);
    /// ```
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'static,
    {
        spawn_in(std::thread::Builder::new(), self, f).expect("failed to spawn thread")
    }
}

pub(crate) fn spawn_in<'scope, 'env, F, T>(
    builder: std::thread::Builder,
    scope: &'scope Scope<'scope, 'env>,
    f: F,
) -> io::Result<ScopedJoinHandle<'scope, T>>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'static,
{
    let control = new_control::<T>();
    let c = control.clone();
    let inner = builder.spawn_scoped(&scope.inner, move || match root(c, f) {
        // Re-raised after the root's work so that `std::thread::scope` sees an unjoined panic.
        Outcome::Panicked(p) => std::panic::resume_unwind(p),
        other => other,
    })?;
    Ok(ScopedJoinHandle { inner, control })
}

/// A handle to a scoped cancelable thread; like [`JoinHandle`](crate::JoinHandle).
#[derive(Debug)]
pub struct ScopedJoinHandle<'scope, T> {
    inner: std::thread::ScopedJoinHandle<'scope, Outcome<T>>,
    control: Arc<Control>,
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Queues a cancellation request (see [`Canceler::cancel`]).
    ///
    /// # Errors
    /// [`NoSuchThread`] once the thread has finished (returned, exited, panicked or acted on a
    /// request).
    ///
    /// ```
    /// thread_cancel::scope(|s| {
    ///     let h = s.spawn(|| loop { thread_cancel::testcancel() });
    ///     h.cancel().unwrap();
    ///     assert!(h.join().is_canceled());
    /// });
    /// ```
    pub fn cancel(&self) -> Result<(), NoSuchThread> {
        crate::canceler::cancel(&self.control)
    }

    /// A handle that can cancel the thread from anywhere.
    ///
    /// ```
    /// thread_cancel::scope(|s| {
    ///     let h = s.spawn(|| loop { thread_cancel::testcancel() });
    ///     let c = h.canceler();
    ///     s.spawn(move || c.cancel().unwrap());
    ///     assert!(h.join().is_canceled());
    /// });
    /// ```
    pub fn canceler(&self) -> Canceler {
        Canceler {
            control: self.control.clone(),
        }
    }

    /// Waits for the thread and reports how it ended; a cancellation point for the caller.
    ///
    /// # Panics
    ///
    /// If called by the thread itself, like [`JoinHandle::join`](crate::JoinHandle::join).
    ///
    /// ```
    /// thread_cancel::scope(|s| {
    ///     let h = s.spawn(|| panic!("boom"));
    ///     assert!(matches!(h.join(), thread_cancel::Outcome::Panicked(_)));
    /// });
    /// ```
    #[inline]
    pub fn join(self) -> Outcome<T> {
        if wait_for_end(&self.control, None, true) == Wake::Cancel {
            // As `JoinHandle::join`: the handle goes before the unwind starts.
            drop(self);
            crate::point::wait::act_current();
        }
        self.inner.join().unwrap_or_else(Outcome::Panicked)
    }

    /// Waits until the thread has finished, without consuming the handle; a cancellation point
    /// for the caller. Any number of threads may wait at once; the thread's end wakes every
    /// one, and a waiter that is canceled leaves the others waiting.
    ///
    /// # Panics
    ///
    /// If called by the thread itself, like [`JoinHandle::wait`](crate::JoinHandle::wait).
    ///
    /// ```
    /// use std::sync::Arc;
    /// thread_cancel::scope(|s| {
    ///     let h = Arc::new(s.spawn(|| thread_cancel::sleep(std::time::Duration::MAX)));
    ///     let waiters: Vec<_> = (0..2)
    ///         .map(|_| {
    ///             let h = h.clone();
    ///             s.spawn(move || h.wait())
    ///         })
    ///         .collect();
    ///     h.cancel().unwrap();
    ///     for w in waiters {
    ///         w.join().unwrap(); // both are woken
    ///     }
    ///     let h = Arc::try_unwrap(h).unwrap();
    ///     assert!(h.join().is_canceled());
    /// });
    /// ```
    pub fn wait(&self) {
        wait_finished(&self.control, None, false);
    }

    /// [`wait`](Self::wait) for at most `dur`; returns whether the thread has finished.
    ///
    /// # Panics
    ///
    /// If called by the thread itself, as [`wait`](Self::wait).
    ///
    /// ```
    /// thread_cancel::scope(|s| {
    ///     let h = s.spawn(|| thread_cancel::sleep(std::time::Duration::MAX));
    ///     assert!(!h.wait_timeout(std::time::Duration::from_millis(5)));
    ///     h.cancel().unwrap();
    ///     assert!(h.wait_timeout(std::time::Duration::from_secs(60)));
    /// });
    /// ```
    pub fn wait_timeout(&self, dur: std::time::Duration) -> bool {
        wait_finished(
            &self.control,
            crate::point::wait::deadline_after(dur),
            false,
        )
    }

    /// The underlying `std` thread.
    ///
    /// ```
    /// thread_cancel::scope(|s| {
    ///     let h = s.spawn(|| ());
    ///     let _ = h.thread().id();
    /// });
    /// ```
    pub fn thread(&self) -> &std::thread::Thread {
        self.inner.thread()
    }

    /// Whether the thread has finished running.
    ///
    /// ```
    /// thread_cancel::scope(|s| {
    ///     let h = s.spawn(|| ());
    ///     while !h.is_finished() { std::thread::yield_now() }
    /// });
    /// ```
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// Whether the thread finished with a cancellation request pending that it never acted on,
    /// as [`JoinHandle::request_ignored`](crate::JoinHandle::request_ignored).
    ///
    /// ```
    /// thread_cancel::scope(|s| {
    ///     let h = s.spawn(|| std::thread::sleep(std::time::Duration::from_millis(20)));
    ///     h.cancel().unwrap(); // `std::thread::sleep` is not a cancellation point
    ///     h.wait();
    ///     assert!(h.request_ignored());
    /// });
    /// ```
    pub fn request_ignored(&self) -> bool {
        self.control.request_ignored().unwrap_or(false)
    }
}
