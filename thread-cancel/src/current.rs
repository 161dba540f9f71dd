//! The link between a thread and its control block, and the adoption of threads the crate did
//! not spawn.
//!
//! Every thread that has a control block keeps a raw pointer to it in `control::tls` (the
//! pointer a cancellation point reads) and something that keeps the block alive while the
//! pointer names it: the root, in a thread the crate spawned ([`link_spawned`]); the
//! thread-local `LINK`, whose destructor releases it at the thread's end, in a thread the crate
//! adopted. Threads the crate did not spawn are adopted on first use (`thread_cancel::current`,
//! `set_cancel_state`, ...); until then no one can hold a `Canceler` for them, so they have
//! nothing to act on.

use crate::control::{current_ptr, set_current, with_current, Control};
use std::cell::{Cell, RefCell};
use std::sync::Arc;

thread_local! {
    static LINK: RefCell<Option<Link>> = const { RefCell::new(None) };
    /// Set when a spawned thread's root is over (no destructor: nothing to register).
    static ROOT_OVER: Cell<bool> = const { Cell::new(false) };
}

/// Keeps an adopted thread's control block alive; its destructor (at thread exit) detaches
/// it and marks it finished (an adopted thread has no root of ours).
struct Link {
    control: Arc<Control>,
}

impl Drop for Link {
    fn drop(&mut self) {
        set_current(std::ptr::null());
        self.control.finish();
    }
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

/// The calling thread's control block, adopting the thread if needed.
pub(crate) fn current_control() -> Arc<Control> {
    if let Some(c) = current_arc() {
        return c;
    }
    if ROOT_OVER.get() {
        // A spawned thread past its root (its thread-local destructors): its block is
        // finished, and so is the one it gets here.
        return Arc::new(Control::finished());
    }
    LINK.try_with(|l| {
        let mut l = l.borrow_mut();
        if let Some(link) = &*l {
            return link.control.clone();
        }
        let control = Arc::new(Control::new(None));
        install(&mut l, control.clone());
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

/// Called first thing on a thread the crate spawned: links `control`, which the caller (the
/// root) keeps alive until the returned guard is dropped. No thread-local destructor is
/// registered for it: registering one takes the dynamic loader's lock and an allocation, for
/// every thread.
pub(crate) fn link_spawned(control: &Arc<Control>) -> SpawnedLink {
    crate::sys::prepare();
    control.set_thread(std::thread::current());
    set_current(Arc::as_ptr(control));
    SpawnedLink(())
}

/// A spawned thread's link, dropped when its root is over (its block finished, or the root
/// unwinding): the block is no longer the thread's current one, so that code its thread-local
/// destructors run later (a `CancelScope::run`, a deadline) gets a block of its own for the
/// length of a run ([`link_for_teardown`]), as in a thread the crate did not spawn, and its
/// scopes and deadlines are enforced there; [`current_control`] gives a finished block there.
pub(crate) struct SpawnedLink(());

impl Drop for SpawnedLink {
    fn drop(&mut self) {
        set_current(std::ptr::null());
        ROOT_OVER.set(true);
    }
}

/// Called first thing on a thread created for the C ABI with the system's `pthread_create`:
/// links `control` (which the caller keeps alive until [`unlink_unregistered`]) without
/// registering any thread-local destructor — registering one takes the dynamic loader's lock,
/// which the creating thread may hold (a library destructor run by `dlclose`).
#[cfg(feature = "c-abi")]
pub(crate) fn link_unregistered(control: &Arc<Control>) {
    crate::sys::prepare();
    control.set_pthread();
    set_current(Arc::as_ptr(control));
}

/// A control block linked to the calling thread for the length of one call, in a thread whose
/// link is gone (its thread-local destructors are running: `LINK` can no longer be used, but
/// the pointer in `control::tls` has no destructor). Unlinked, and its block finished, when
/// dropped. A `CancelScope::run` in a thread-local destructor uses one, so that its scope and
/// deadline are enforced there as anywhere.
pub(crate) struct TeardownLink(Arc<Control>);

pub(crate) fn link_for_teardown() -> TeardownLink {
    let control = Arc::new(Control::new(None));
    crate::sys::prepare();
    control.set_pthread();
    set_current(Arc::as_ptr(&control));
    TeardownLink(control)
}

impl Drop for TeardownLink {
    fn drop(&mut self) {
        set_current(std::ptr::null());
        self.0.finish();
    }
}

/// Links `control`, which the calling thread's pointer already names (a block linked by
/// [`link_unregistered`] whose `Arc` the caller gives up), as an adopted thread's: released by
/// the thread-local destructor at the thread's end. Gives it back if the thread is so far into
/// its teardown that it can no longer register that destructor.
#[cfg(feature = "c-abi")]
pub(crate) fn link_adopted(control: Arc<Control>) -> Result<(), Arc<Control>> {
    let mut control = Some(control);
    let linked = LINK.try_with(|l| {
        if let Some(c) = control.take() {
            install(&mut l.borrow_mut(), c);
        }
    });
    match (linked, control) {
        (Err(_), Some(c)) => Err(c),
        _ => Ok(()),
    }
}

/// Undoes [`link_unregistered`], before the caller drops its `Arc`.
#[cfg(feature = "c-abi")]
pub(crate) fn unlink_unregistered() {
    set_current(std::ptr::null());
}

/// Threads adopted from now on do not take `std`'s handle at once (set by the C library before
/// `main`: see [`adopt_without_std_handle`]).
static NO_STD_HANDLE_ON_ADOPTION: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// From now on, a thread adopted (not spawned by the crate) records `std`'s handle of itself
/// only when it first parks through `std` ([`park`](crate::park)), not when it is adopted:
/// the first `std::thread::current()` of a thread that `std` did not start makes `std` create
/// a thread-specific key of the C library's for the process (its thread-exit guard), one of
/// the `PTHREAD_KEYS_MAX` a C program counts on. Until then its `Canceler::thread_id()` is
/// `None`, as for a thread created for the C ABI. The C library calls this before `main`.
#[cfg(feature = "c-abi")]
pub(crate) fn adopt_without_std_handle() {
    NO_STD_HANDLE_ON_ADOPTION.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Links `control` as the adopted calling thread's.
fn install(slot: &mut Option<Link>, control: Arc<Control>) {
    // Before the thread can make a cancellable call: the signal handler and the fence.
    crate::sys::prepare();
    if NO_STD_HANDLE_ON_ADOPTION.load(std::sync::atomic::Ordering::Relaxed) {
        control.set_pthread();
    } else {
        control.set_thread(std::thread::current());
    }
    set_current(Arc::as_ptr(&control));
    *slot = Some(Link { control });
}
