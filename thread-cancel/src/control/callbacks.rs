//! The `on_cancel` callbacks a request runs, and the containment of code the crate runs on the
//! user's behalf (callbacks, cleanup handlers): a panic in one never stops the rest.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// How many [`contain`] calls the thread is inside: an unwind started there is caught
    /// before it can leave a destructor, so `exit` may start one even during another unwind.
    static CONTAINED: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f`, catching any unwind out of it: for code the crate runs on the user's behalf
/// whose panic must not stop the rest (cleanup handlers, `on_cancel` callbacks). While `f`
/// runs, `exit` may start its unwind even if the thread is already unwinding: it ends here.
pub(crate) fn contain<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    CONTAINED.with(|c| c.set(c.get() + 1));
    let r = catch_unwind(AssertUnwindSafe(f));
    CONTAINED.with(|c| c.set(c.get() - 1));
    r
}

/// Whether the calling thread is inside a [`contain`] call (`exit` may then unwind even while
/// the thread is already unwinding: the unwind ends there).
pub(crate) fn contained() -> bool {
    CONTAINED.with(Cell::get) != 0
}

/// An `on_cancel` callback.
pub(crate) type Callback = Box<dyn FnOnce() + Send>;

#[derive(Default)]
pub(super) struct Callbacks {
    pub(super) next_id: u64,
    /// (id, the number of `CancelScope::run`s the owner was in when it registered, callback).
    pub(super) list: Vec<(u64, usize, Callback)>,
    /// The depths of the owner's canceled runs whose callbacks another thread is running now
    /// (taken from `list`): the end of a run at such a depth waits for them.
    pub(super) running: Vec<usize>,
    /// Callbacks whose guard was dropped after a cancel of a run they were registered in was
    /// decided, before its delivery took them: each with the depth of that canceled run, whose
    /// end runs it (the run's closure has returned by then: nothing of it is held).
    pub(super) deferred: Vec<(usize, Callback)>,
    /// The depths of the owner's runs that a callback registered on their scope fired for
    /// (`Control::scope_hooks_fired`): their ends report the cancel as acted on.
    pub(super) hooked: Vec<usize>,
}

impl std::fmt::Debug for Callbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callbacks")
            .field("len", &self.list.len())
            .finish()
    }
}

/// The payload of an unwind caught out of an `on_cancel` callback.
pub(crate) type Payload = Box<dyn Any + Send>;

/// Runs an `on_cancel` callback, contained: a panic does not escape (the panic hook has
/// reported it; the payload is dropped). Returns the payload of a termination the calling
/// thread began in it (a cancellation point that acted, an `exit`): that one is resumed by
/// [`resume_own`] once the caller's work is done, not lost.
pub(super) fn run_callback(f: Box<dyn FnOnce() + Send>) -> Option<Payload> {
    match contain(f) {
        Ok(()) => None,
        Err(p) if p.is::<super::CancelPayload>() => Some(p),
        Err(p) => {
            // A payload whose own `Drop` panics must not escape either.
            let _ = contain(move || drop(p));
            None
        }
    }
}

/// Resumes the calling thread's own termination caught by [`run_callback`]. During another
/// unwind (a `cancel()` from a `Drop`) it cannot start again: the thread's root reports the
/// termination from the state word.
pub(crate) fn resume_own(own: Option<Payload>) {
    if let Some(p) = own {
        if !std::thread::panicking() {
            std::panic::resume_unwind(p);
        }
    }
}
