//! The payloads of the crate's own unwinds. They are defined here, below the points that raise
//! them, because containment (`callbacks.rs`) must tell them from a panic, and a lock's poison
//! (`sync`) must know whether the unwind in flight is one of them.

use std::cell::Cell;

/// The payload of the unwind by which a thread acts on a cancellation or on [`exit`](crate::exit).
///
/// Code that catches unwinds (`catch_unwind`) can recognise it with
/// `payload.is::<CancelPayload>()`; it should resume the unwind. If it does not, the thread's
/// next cancellation point raises it again, and a join still reports the thread canceled.
///
/// Keep it no longer than that: drop it, or resume it. While a caught payload of the thread's
/// is alive, a genuine panic of that thread is taken for the cancellation's unwind — it does
/// not poison the crate's [`Mutex`](crate::sync::Mutex) and runs the cleanup handlers it
/// passes — because Rust does not say which unwind is in flight, and a payload resumed with
/// `resume_unwind` must go on counting as the cancellation. To log it later, keep a
/// description (`payload.is::<..>()`) and drop the payload.
///
/// ```
/// let h = thread_cancel::spawn(|| {
///     let r = std::panic::catch_unwind(|| loop { thread_cancel::testcancel() });
///     r.unwrap_err().is::<thread_cancel::CancelPayload>()
/// });
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled()); // the swallowed cancellation still counts
/// ```
pub struct CancelPayload {
    _raised: Raised,
}

impl CancelPayload {
    /// The payload, for reporting a canceled thread where `std` expects an unwind's payload.
    pub(crate) fn new() -> Self {
        CancelPayload {
            _raised: Raised::NOT,
        }
    }

    /// The payload of an unwind the calling thread starts now.
    pub(crate) fn raised() -> Self {
        CancelPayload {
            _raised: Raised::now(),
        }
    }
}

/// The payload of the unwind by which a thread acts on a scope's cancellation; the scope's
/// [`CancelScope::run`](crate::CancelScope::run) catches it and returns `Err(Canceled)`.
///
/// Code that catches unwinds should resume it; if it does not, the thread's next cancellation
/// point raises it again (and a `run` that returns after swallowing it still returns
/// `Err(Canceled)`).
///
/// Keep it no longer than that: drop it, or resume it. While a caught payload of the thread's
/// is alive, a genuine panic of that thread is taken for the cancellation's unwind — it does
/// not poison the crate's [`Mutex`](crate::sync::Mutex) and runs the cleanup handlers it
/// passes — because Rust does not say which unwind is in flight, and a payload resumed with
/// `resume_unwind` must go on counting as the cancellation. To log it later, keep a
/// description (`payload.is::<..>()`) and drop the payload.
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
pub struct ScopeUnwind {
    _raised: Raised,
}

impl ScopeUnwind {
    /// The payload of a scope unwind the calling thread starts now.
    pub(crate) fn raised() -> Self {
        ScopeUnwind {
            _raised: Raised::now(),
        }
    }
}

impl std::fmt::Debug for CancelPayload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CancelPayload")
    }
}

impl std::fmt::Debug for ScopeUnwind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ScopeUnwind")
    }
}

thread_local! {
    /// How many payloads of unwinds this thread raised are alive: one is from the moment its
    /// unwind starts until the payload is dropped, by the run or root that catches it, or by a
    /// `catch_unwind` of the user's that swallowed it.
    static LIVE: Cell<u32> = const { Cell::new(0) };
}

/// Whether an unwind of the crate's raised by the calling thread may be the one in flight: a
/// payload of one is alive. False once every such payload was dropped (a swallowed unwind
/// ends there), so a later panic is a panic (it poisons; cleanup handlers do not run for it).
pub(crate) fn own_unwind_live() -> bool {
    LIVE.try_with(|l| l.get() != 0).unwrap_or(false)
}

/// A payload's place in its thread's count: the address of the raising thread's counter (the
/// payload may be dropped in another thread, whose count it must not change), or 0.
#[derive(Debug)]
struct Raised(usize);

impl Raised {
    const NOT: Raised = Raised(0);

    fn now() -> Raised {
        LIVE.try_with(|l| {
            l.set(l.get() + 1);
            Raised(l as *const Cell<u32> as usize)
        })
        .unwrap_or(Raised::NOT)
    }
}

impl Drop for Raised {
    fn drop(&mut self) {
        if self.0 == 0 {
            return;
        }
        let _ = LIVE.try_with(|l| {
            if l as *const Cell<u32> as usize == self.0 {
                l.set(l.get().saturating_sub(1));
            }
        });
    }
}
