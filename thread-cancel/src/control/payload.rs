//! The payloads of the crate's own unwinds. They are defined here, below the points that raise
//! them, because containment (`callbacks.rs`) must tell them from a panic.

/// The payload of the unwind by which a thread acts on a cancellation or on [`exit`](crate::exit).
///
/// Code that catches unwinds (`catch_unwind`) can recognise it with
/// `payload.is::<CancelPayload>()`; it should resume the unwind. If it does not, the thread's
/// next cancellation point raises it again, and a join still reports the thread canceled.
///
/// ```
/// let h = thread_cancel::spawn(|| {
///     let r = std::panic::catch_unwind(|| loop { thread_cancel::testcancel() });
///     r.unwrap_err().is::<thread_cancel::CancelPayload>()
/// });
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled()); // the swallowed cancellation still counts
/// ```
#[derive(Debug)]
pub struct CancelPayload {
    _private: (),
}

impl CancelPayload {
    /// The payload, for reporting a canceled thread where `std` expects an unwind's payload.
    pub(crate) fn new() -> Self {
        CancelPayload { _private: () }
    }
}

/// The payload of the unwind by which a thread acts on a scope's cancellation; the scope's
/// [`CancelScope::run`](crate::CancelScope::run) catches it and returns `Err(Canceled)`.
///
/// Code that catches unwinds should resume it; if it does not, the thread's next cancellation
/// point raises it again (and a `run` that returns after swallowing it still returns
/// `Err(Canceled)`).
///
/// ```
/// use thread_cancel::{CancelScope, ScopeUnwind};
/// let scope = CancelScope::new();
/// let r = scope.run(|| {
///     scope.cancel();
///     let e = std::panic::catch_unwind(thread_cancel::testcancel).unwrap_err();
///     assert!(e.is::<ScopeUnwind>());
///     std::panic::resume_unwind(e)
/// });
/// assert!(r.is_err());
/// ```
#[derive(Debug)]
pub struct ScopeUnwind {
    _private: (),
}

impl ScopeUnwind {
    /// The payload of a scope unwind.
    pub(crate) fn new() -> Self {
        ScopeUnwind { _private: () }
    }
}
