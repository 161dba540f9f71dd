//! [`JoinHandle`]: join, wait for, or cancel a thread of the crate's.

use super::*;

/// An owned permission to join a cancelable thread, and to cancel it.
///
/// Dropping it detaches the thread (it can still be canceled through a [`Canceler`]).
///
/// Its `Debug` shows the thread's name and id, whether it has finished and whether a request
/// is pending:
///
/// ```
/// let h = thread_cancel::Builder::new().name("io".into()).spawn(|| ()).unwrap();
/// h.wait();
/// let s = format!("{h:?}");
/// assert!(s.contains(r#"name: Some("io")"#) && s.contains("finished: true"), "{s}");
/// h.join();
/// ```
pub struct JoinHandle<T> {
    pub(super) inner: Native<T>,
    pub(super) control: Arc<Control>,
}

impl<T> std::fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let thread = match &self.inner {
            Native::Std(h) => Some(h.thread()),
            Native::Light { packet, .. } => packet.thread.get(),
        };
        let mut d =
            crate::canceler::debug_thread(&self.control, thread, f.debug_struct("JoinHandle"));
        if matches!(self.inner, Native::Light { .. }) {
            d.field("lightweight", &true);
        }
        d.finish()
    }
}

/// The thread under a [`JoinHandle`]: `std`'s, or one of [`Builder::lightweight`].
pub(super) enum Native<T> {
    Std(std::thread::JoinHandle<Outcome<T>>),
    Light {
        thread: crate::sys::pthread::Thread,
        packet: Arc<Packet<T>>,
    },
}

impl<T> std::fmt::Debug for Native<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Native::Std(h) => h.fmt(f),
            Native::Light { thread, .. } => f.debug_tuple("Lightweight").field(thread).finish(),
        }
    }
}

/// What a lightweight thread shares with its handle: one allocation, made by the spawn, that
/// also carries the thread's work to it (`W`, the spawn's `Work`; the handle sees it erased).
pub(super) struct Packet<T, W: ?Sized = dyn std::any::Any + Send + Sync> {
    /// `std`'s handle of the thread, set by the thread before it runs user code.
    pub(super) thread: std::sync::OnceLock<std::thread::Thread>,
    /// How the thread ended, set as its last act (read after `pthread_join`).
    pub(super) outcome: std::sync::Mutex<Option<Outcome<T>>>,
    /// The thread's work, until the thread takes it as it starts (dropped unrun with the
    /// packet if the thread could not be created). Its room stays allocated with the packet,
    /// until both the handle and the thread are done with it.
    pub(super) work: W,
}

impl<T> JoinHandle<T> {
    /// Queues a cancellation request (see [`Canceler::cancel`]).
    ///
    /// # Errors
    /// [`NoSuchThread`] once the thread has finished (returned, exited, panicked or acted on a
    /// request): there is nothing left to cancel.
    ///
    /// ```
    /// let (go, wait) = std::sync::mpsc::channel::<()>();
    /// let h = thread_cancel::spawn(move || {
    ///     let held = thread_cancel::disable(); // requests are held pending
    ///     wait.recv().unwrap();
    ///     drop(held);
    ///     thread_cancel::testcancel(); // acted on here
    /// });
    /// assert_eq!(h.cancel(), Ok(()));
    /// assert_eq!(h.cancel(), Ok(())); // merged with the first
    /// go.send(()).unwrap();
    /// assert!(h.join().is_canceled());
    /// ```
    pub fn cancel(&self) -> Result<(), NoSuchThread> {
        crate::canceler::cancel(&self.control)
    }

    /// A handle that can cancel the thread from anywhere, and outlives this one.
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
    /// let c = h.canceler();
    /// c.cancel().unwrap();
    /// assert!(h.join().is_canceled());
    /// ```
    pub fn canceler(&self) -> Canceler {
        Canceler {
            control: self.control.clone(),
        }
    }

    /// Waits for the thread to end and reports how. It is a cancellation point for the
    /// calling thread. Other threads may [`wait`](Self::wait) for the same thread meanwhile.
    ///
    /// # Panics
    ///
    /// If called by the thread itself (a handle can reach its own thread, e.g. through a
    /// channel): it would wait for itself forever. Like `std`'s `join`, which panics with the
    /// error of `pthread_join`, this panics with "failed to join thread: Resource deadlock
    /// avoided (os error 35) ...", at once (the C ABI's `tc_join` returns `EDEADLK`).
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| 40 + 2);
    /// assert_eq!(h.join().unwrap(), 42);
    /// ```
    #[inline]
    pub fn join(self) -> Outcome<T> {
        if wait_for_end(&self.control, None, true) == Wake::Cancel {
            // The handle goes first (the thread is detached, as the unwind would have done),
            // and the act is inlined: the unwind starts in the caller's frame with nothing of
            // `join`'s to drop. What `join` does besides is out of line.
            self.abandon();
            crate::point::wait::act_current();
        }
        self.join_finished()
    }

    /// Drops the handle of a thread this one stops waiting for: the thread is detached.
    #[inline(never)]
    fn abandon(self) {
        drop(self);
    }

    /// [`join`](Self::join), once the thread has finished (or the caller cannot be canceled):
    /// `std`'s join or the system's, and the outcome.
    #[inline(never)]
    fn join_finished(self) -> Outcome<T> {
        match self.inner {
            Native::Std(h) => h.join().unwrap_or_else(Outcome::Panicked),
            Native::Light { thread, packet } => {
                thread.join();
                lock(&packet.outcome)
                    .take()
                    .unwrap_or_else(|| Outcome::Panicked(Box::new("the thread left no outcome")))
            }
        }
    }

    /// Waits until the thread has finished, without consuming the handle; a cancellation point
    /// for the caller. If the caller is canceled here, the thread stays joinable by whoever
    /// holds the handle next (keep it in a shared place, e.g. a `sync::Mutex<Option<_>>`).
    ///
    /// Any number of threads may wait at once (the handle is `Sync`); the thread's end wakes
    /// every one of them. A waiter that times out or is canceled leaves the others waiting.
    ///
    /// # Panics
    ///
    /// If called by the thread itself, like [`join`](Self::join): "failed to wait for thread:
    /// Resource deadlock avoided (os error 35) ...". The same holds for
    /// [`wait_timeout`](Self::wait_timeout): a thread cannot finish while it waits, so that
    /// call could only time out.
    ///
    /// ```
    /// use std::sync::Arc;
    /// let h = Arc::new(thread_cancel::spawn(|| thread_cancel::sleep(std::time::Duration::MAX)));
    /// let waiters: Vec<_> = (0..3)
    ///     .map(|_| {
    ///         let h = h.clone();
    ///         std::thread::spawn(move || h.wait())
    ///     })
    ///     .collect();
    /// h.cancel().unwrap();
    /// for w in waiters {
    ///     w.join().unwrap(); // every waiter is woken
    /// }
    /// ```
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| 1);
    /// h.wait();
    /// assert!(h.canceler().is_finished());
    /// assert_eq!(h.join().unwrap(), 1);
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
    /// let h = thread_cancel::spawn(|| thread_cancel::sleep(std::time::Duration::from_secs(60)));
    /// assert!(!h.wait_timeout(std::time::Duration::from_millis(5)));
    /// h.cancel().unwrap();
    /// assert!(h.wait_timeout(std::time::Duration::from_secs(60)));
    /// ```
    pub fn wait_timeout(&self, dur: std::time::Duration) -> bool {
        wait_finished(
            &self.control,
            crate::point::wait::deadline_after(dur),
            false,
        )
    }

    /// The system's thread id (for the C ABI's `tc_kill` / `tc_native`).
    #[doc(hidden)]
    pub fn as_pthread_t(&self) -> libc::pthread_t {
        use std::os::unix::thread::JoinHandleExt;
        match &self.inner {
            Native::Std(h) => h.as_pthread_t() as libc::pthread_t,
            Native::Light { thread, .. } => thread.id(),
        }
    }

    /// The underlying `std` thread.
    ///
    /// For a [lightweight](Builder::lightweight) thread it is the handle `std` made in the
    /// thread when it started (its name is `None`); if the thread has not started yet, this
    /// waits until it has (spawning never waits for it).
    ///
    /// ```
    /// let h = thread_cancel::Builder::new().name("worker".into()).spawn(|| ()).unwrap();
    /// assert_eq!(h.thread().name(), Some("worker"));
    /// h.join();
    /// ```
    pub fn thread(&self) -> &std::thread::Thread {
        match &self.inner {
            Native::Std(h) => h.thread(),
            Native::Light { packet, .. } => packet.thread.wait(),
        }
    }

    /// Whether the thread finished with a cancellation request pending that it never acted on:
    /// it was blocked in, or busy with, code that is not a cancellation point (a `std` call
    /// such as `std::thread::sleep`, `std::sync::mpsc::Receiver::recv` or `std`'s
    /// `TcpStream::read`, a third-party client), or it had cancellation disabled, and then
    /// returned, exited or panicked as if no request had come. `false` while the thread runs,
    /// and for a thread that acted on the request ([`Outcome::Canceled`]).
    ///
    /// [`join`](Self::join)'s [`Outcome`] keeps its variants, so take a [`Canceler`] first to
    /// ask after the join ([`Canceler::request_ignored`]), or ask here after
    /// [`wait`](Self::wait).
    ///
    /// ```
    /// use std::time::Duration;
    /// let h = thread_cancel::spawn(|| std::thread::sleep(Duration::from_millis(50)));
    /// h.cancel().unwrap(); // `std::thread::sleep` is not a cancellation point
    /// h.wait();
    /// assert!(h.request_ignored());
    /// assert!(matches!(h.join(), thread_cancel::Outcome::Returned(())));
    /// ```
    pub fn request_ignored(&self) -> bool {
        self.control.request_ignored().unwrap_or(false)
    }

    /// Whether the thread has finished running (like `std`'s `is_finished`).
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| ());
    /// while !h.is_finished() { std::thread::yield_now() }
    /// h.join();
    /// ```
    pub fn is_finished(&self) -> bool {
        match &self.inner {
            Native::Std(h) => h.is_finished(),
            // The thread drops its reference as its last act, after storing the outcome.
            Native::Light { packet, .. } => Arc::strong_count(packet) == 1,
        }
    }
}
