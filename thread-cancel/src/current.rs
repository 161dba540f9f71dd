//! The link between a thread and its control block, and [`Canceler`] / [`current`].
//!
//! Every thread that has a control block keeps an `Arc` of it in the thread-local `LINK` and a
//! raw pointer to it in `CURRENT`, a `const`-initialised thread-local without a destructor, so a
//! cancellation point reads it with one TLS load and no lazy-initialisation check.
//! Threads the crate did not spawn are adopted on first use ([`current`], `set_cancel_state`,
//! ...); until then no one can hold a [`Canceler`] for them, so they have nothing to act on.

use crate::control::Control;
use crate::NoSuchThread;
use std::cell::{Cell, RefCell};
use std::sync::Arc;

thread_local! {
    /// Non-null exactly while `LINK` holds the `Arc` it points into, or (a thread created for
    /// the C ABI, [`link_unregistered`]) while the thread's root holds it.
    static CURRENT: Cell<*const Control> = const { Cell::new(std::ptr::null()) };
    static LINK: RefCell<Option<Link>> = const { RefCell::new(None) };
}

/// Keeps the thread's control block alive; its destructor (at thread exit) detaches it.
struct Link {
    control: Arc<Control>,
    /// Adopted threads have no root of ours: they are marked finished here.
    adopted: bool,
}

impl Drop for Link {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(std::ptr::null()));
        if self.adopted {
            self.control.finish();
        }
    }
}

/// The calling thread's control block if it has one (no adoption), as a raw pointer: valid
/// until the thread's thread-local destructors run, so for any borrow that ends before the
/// caller returns.
#[inline(always)]
pub(crate) fn current_ptr() -> Option<*const Control> {
    let p = CURRENT.with(Cell::get);
    (!p.is_null()).then_some(p)
}

/// Runs `f` on the calling thread's control block if it has one (no adoption). The fast path of
/// every cancellation point.
#[inline(always)]
pub(crate) fn with_current<R>(f: impl FnOnce(&Control) -> R) -> Option<R> {
    // SAFETY: `CURRENT` is set to `Arc::as_ptr` of the `Arc` stored in this thread's `LINK`, and
    // reset to null in `Link::drop` before that `Arc` is released (or of the `Arc` a C thread's
    // root holds, reset by `unlink_unregistered` before the root drops it). It is only read on
    // this thread, so the pointee is alive for the whole of `f`.
    current_ptr().map(|p| f(unsafe { &*p }))
}

/// Runs `f` on the calling thread's control block, adopting the thread if it has none. Once the
/// thread has one, this borrows nothing (no `RefCell`, no `Arc` count), so it is safe in code
/// that an asynchronous cancellation may abandon at any instruction.
pub(crate) fn with_own<R>(f: impl Fn(&Control) -> R) -> R {
    match with_current(&f) {
        Some(r) => r,
        None => f(&current_control()),
    }
}

/// Whether `c` is the calling thread's control block.
pub(crate) fn is_current(c: &Control) -> bool {
    with_current(|me| std::ptr::eq(me, c)).unwrap_or(false)
}

/// The calling thread's control block, adopting the thread if needed.
pub(crate) fn current_control() -> Arc<Control> {
    if let Some(c) = current_arc() {
        return c;
    }
    LINK.try_with(|l| {
        let mut l = l.borrow_mut();
        if let Some(link) = &*l {
            return link.control.clone();
        }
        let control = Arc::new(Control::new(None));
        install(&mut l, control.clone(), true);
        control
    })
    // The thread is being torn down: it can no longer be canceled.
    .unwrap_or_else(|_| Arc::new(Control::finished()))
}

/// The calling thread's control block if it has one (no adoption).
pub(crate) fn try_current_control() -> Option<Arc<Control>> {
    current_arc()
}

/// A new `Arc` of the calling thread's control block, from `CURRENT` (without touching `LINK`,
/// whose first use registers its destructor with the C library).
fn current_arc() -> Option<Arc<Control>> {
    let p = current_ptr()?;
    // SAFETY: `p` comes from `Arc::as_ptr` of an `Arc` that stays alive while `CURRENT` holds
    // it (see `with_current`), so its strong count is at least one and may be incremented.
    unsafe {
        Arc::increment_strong_count(p);
        Some(Arc::from_raw(p))
    }
}

/// Called first thing on a thread the crate spawned.
pub(crate) fn link_spawned(control: Arc<Control>) {
    LINK.with(|l| install(&mut l.borrow_mut(), control, false));
}

/// Called first thing on a thread created for the C ABI with the system's `pthread_create`:
/// links `control` (which the caller keeps alive until [`unlink_unregistered`]) without
/// registering any thread-local destructor — registering one takes the dynamic loader's lock,
/// which the creating thread may hold (a library destructor run by `dlclose`).
#[cfg(feature = "c-abi")]
pub(crate) fn link_unregistered(control: &Arc<Control>) {
    crate::sys::prepare();
    control.set_pthread();
    CURRENT.with(|c| c.set(Arc::as_ptr(control)));
}

/// Undoes [`link_unregistered`], before the caller drops its `Arc`.
#[cfg(feature = "c-abi")]
pub(crate) fn unlink_unregistered() {
    CURRENT.with(|c| c.set(std::ptr::null()));
}

fn install(slot: &mut Option<Link>, control: Arc<Control>, adopted: bool) {
    // Before the thread can make a cancellable call: the signal handler and the fence.
    crate::sys::prepare();
    control.set_thread(std::thread::current());
    CURRENT.with(|c| c.set(Arc::as_ptr(&control)));
    *slot = Some(Link { control, adopted });
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
    let word = control.state.load();
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
    /// ```
    /// let h = thread_cancel::spawn(|| thread_cancel::testcancel());
    /// let c = h.canceler();
    /// h.join();
    /// assert_eq!(c.cancel(), Err(thread_cancel::NoSuchThread));
    /// ```
    pub fn cancel(&self) -> Result<(), NoSuchThread> {
        self.control.cancel()
    }

    /// Sends signal `sig` to the thread (for the C ABI's `tc_kill`): `pthread_kill`'s
    /// result, or `Err` if the thread has finished.
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
        self.control.state.load() & crate::word::FINISHED != 0
    }
}

/// A [`Canceler`] for the calling thread, which need not have been spawned by this crate (the
/// main thread, a `std` or rayon thread): such a thread is adopted on first use.
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
