//! [`Canceler`], the handle that cancels one thread, and [`current`].

use crate::control::Control;
use crate::current::current_control;
use crate::NoSuchThread;
use std::sync::Arc;

/// Queues a cancellation request for `c` and wakes it if it waits (every handle's `cancel`).
///
/// Async-cancel-safe: a caller inside an asynchronous region holds its own cancellation while
/// this takes locks, and acts on it (if it canceled itself) once they are released. If the
/// caller began to act on its own cancellation (or `exit`) inside an `on_cancel` callback, that
/// unwind goes on once every callback has run and the locks are released.
pub(crate) fn cancel(c: &Control) -> Result<(), NoSuchThread> {
    let shield = crate::async_region::shield();
    let r = c.request();
    crate::async_region::unshield(shield);
    r.map(crate::control::resume_own)
}

/// A handle that can send cancellation requests to one thread; `Clone + Send + Sync`.
///
/// It stays memory-safe forever: once its thread has finished, [`Canceler::cancel`] returns
/// [`NoSuchThread`].
///
/// ```
/// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
/// let c = h.canceler();
/// std::thread::spawn(move || c.cancel().unwrap()).join().unwrap();
/// assert!(h.join().is_canceled());
/// ```
///
/// Two cancelers are equal (and hash alike) exactly when they reach the same thread:
///
/// ```
/// use std::collections::HashSet;
/// let h = thread_cancel::spawn(|| ());
/// let (a, b) = (h.canceler(), h.canceler());
/// assert_eq!(a, b);
/// assert_ne!(a, thread_cancel::current());
/// assert_eq!(HashSet::from([a, b]).len(), 1);
/// h.join();
/// ```
///
/// Its `Debug` shows the thread's name and id (once it has started), whether it has finished
/// and whether a request is pending.
#[derive(Clone)]
pub struct Canceler {
    pub(crate) control: Arc<Control>,
}

impl PartialEq for Canceler {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.control, &other.control)
    }
}

impl Eq for Canceler {}

impl std::hash::Hash for Canceler {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.control), state);
    }
}

impl std::fmt::Debug for Canceler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        debug_thread(&self.control, None, f.debug_struct("Canceler")).finish()
    }
}

/// The fields a user can act on, for the `Debug` of the handles: the thread's name and id,
/// whether it has finished, whether a request is pending.
/// `thread` is `std`'s handle if the caller knows it before the thread has started.
pub(crate) fn debug_thread<'a, 'b>(
    control: &Control,
    thread: Option<&std::thread::Thread>,
    mut d: std::fmt::DebugStruct<'a, 'b>,
) -> std::fmt::DebugStruct<'a, 'b> {
    let word = control.word.load();
    let thread = thread.or(control.std_thread());
    d.field("name", &thread.and_then(|t| t.name()))
        .field("id", &thread.map(|t| t.id()))
        .field("finished", &(word & crate::word::FINISHED != 0))
        .field("cancel_requested", &(word & crate::word::PENDING != 0));
    d
}

impl Canceler {
    /// Queues a cancellation request for the thread. Returns as soon as it is queued, whether
    /// or when the thread acts on it; several requests before the thread acts count as one.
    ///
    /// # Errors
    /// [`NoSuchThread`] if the thread has finished (returned, exited, panicked or acted on a
    /// request), or, in a child made by `fork`, if it is a thread of the parent process (the child
    /// has only the thread that forked).
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| thread_cancel::testcancel());
    /// let c = h.canceler();
    /// h.join();
    /// assert_eq!(c.cancel(), Err(thread_cancel::NoSuchThread));
    /// ```
    pub fn cancel(&self) -> Result<(), NoSuchThread> {
        cancel(&self.control)
    }

    /// Sends signal `sig` to the thread (for the C ABI's `tc_kill`): `Ok` with `pthread_kill`'s
    /// result.
    ///
    /// # Errors
    /// [`NoSuchThread`] if the thread has finished.
    #[doc(hidden)]
    pub fn signal(&self, sig: i32) -> Result<i32, NoSuchThread> {
        self.control.send_signal(sig).ok_or(NoSuchThread)
    }

    /// Whether the thread finished with a cancellation request pending that it never acted on
    /// (it was in code that is not a cancellation point, or had cancellation disabled, and
    /// then returned, exited or panicked). `false` while it runs, and once it acted on one.
    ///
    /// The handle outlives [`JoinHandle::join`](crate::JoinHandle::join), whose
    /// [`Outcome::Returned`](crate::Outcome::Returned) alone does not tell a thread that was
    /// never asked to stop from one that did not hear the request:
    ///
    /// ```
    /// use std::time::Duration;
    /// let h = thread_cancel::spawn(|| std::thread::sleep(Duration::from_millis(50)));
    /// let c = h.canceler();
    /// c.cancel().unwrap(); // `std::thread::sleep` is not a cancellation point
    /// let outcome = h.join();
    /// assert!(matches!(outcome, thread_cancel::Outcome::Returned(())));
    /// assert!(c.request_ignored()); // but the request was never acted on
    /// ```
    pub fn request_ignored(&self) -> bool {
        self.control.request_ignored().unwrap_or(false)
    }

    /// The thread's `std` id, once it has started (`None` before, and for a thread created
    /// through the C ABI).
    ///
    /// ```
    /// let me = thread_cancel::current();
    /// assert_eq!(me.thread_id(), Some(std::thread::current().id()));
    /// let h = thread_cancel::spawn(|| std::thread::current().id());
    /// let c = h.canceler();
    /// let id = h.join().unwrap();
    /// assert_eq!(c.thread_id(), Some(id));
    /// ```
    pub fn thread_id(&self) -> Option<std::thread::ThreadId> {
        self.control.std_thread().map(|t| t.id())
    }

    /// Whether the thread has finished (its handlers and destructors have all run).
    ///
    /// ```
    /// assert!(!thread_cancel::current().is_finished());
    /// ```
    pub fn is_finished(&self) -> bool {
        self.control.word.load() & crate::word::FINISHED != 0
    }
}

/// A [`Canceler`] for the calling thread, which need not have been spawned by this crate (the
/// main thread, a `std` or rayon thread): such a thread is adopted on first use.
///
/// # Panics
/// If the calling thread is adopted here (its first use of the crate) and it is the crate's first
/// thread, while the cancel signal (none was chosen with [`io::set_signal`](crate::io::set_signal))
/// already has someone else's handler.
///
/// ```
/// let me = thread_cancel::current();
/// let _guard = thread_cancel::disable();
/// me.cancel().unwrap(); // held pending while disabled
/// ```
pub fn current() -> Canceler {
    Canceler {
        control: current_control(),
    }
}
