//! Blocking as a cancellation point: the wait loop every blocking primitive goes through.

use crate::control::Control;
use crate::word::{self, Action};
use std::time::Instant;

/// Why [`wait_until`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// The condition holds.
    Ready,
    /// A cancellation request must be acted on; the caller undoes what it must, then calls
    /// [`act`].
    Cancel,
    /// The deadline passed with the condition false.
    Timeout,
}

/// Whether the word `s` makes a point act now (or resume a swallowed termination).
#[inline]
pub(crate) fn must_act(s: u32) -> bool {
    s & word::SLOW != 0 && word::classify(s) != Action::None && !std::thread::panicking()
}

/// Blocks the calling thread (whose control block is `me`) until `ready()` holds, a
/// cancellation request must be acted on, or `deadline` passes. It never acts itself.
///
/// The waker's side: make `ready()` true, then `me.parker.unpark()`. A cancel request unparks
/// too, so a thread blocked in a cancellation point sees it at once.
/// `ready()` is checked first after every wake-up, so a wait that completed is reported as
/// completed even with a request pending (a completed wait is never undone): the request is
/// acted on at the next point.
pub(crate) fn wait_until(
    me: &Control,
    mut ready: impl FnMut() -> bool,
    deadline: Option<Instant>,
) -> Wake {
    // The innermost deadline of the scopes the thread runs in bounds the sleep too; when it
    // passes, this thread cancels those scopes itself (no timer needed), and the next turn
    // acts on that. Only while a request could be acted on (enabled, not unwinding): else the
    // expired deadline would make this loop spin.
    let mut scope_deadline = super::runs::wait_deadline();
    loop {
        if ready() {
            return Wake::Ready;
        }
        let s = me.word.load();
        if must_act(s) {
            return Wake::Cancel;
        }
        let now_needed = deadline.is_some() || scope_deadline.is_some();
        let now = now_needed.then(Instant::now);
        if let (Some(d), Some(now)) = (deadline, now) {
            if now >= d {
                return if ready() { Wake::Ready } else { Wake::Timeout };
            }
        }
        if s & word::DISABLED != 0 || std::thread::panicking() {
            scope_deadline = None;
        }
        if let (Some(d), Some(now)) = (scope_deadline, now) {
            if now >= d {
                super::runs::expire();
                // A deadline moved later meanwhile is waited for again (one that passed is
                // acted on at the next turn, through the cancel `expire` made).
                scope_deadline = super::runs::wait_deadline().filter(|&d| d > now);
                continue;
            }
        }
        let wake_at = match (deadline, scope_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        me.parker.park(wake_at);
    }
}

/// Acts on the request that made [`wait_until`] return [`Wake::Cancel`].
///
/// Inlined: the unwind starts in the caller's frame, and callers call it with nothing left
/// to drop in their own frame (they undo their wait and drop their `Arc`s first, then act
/// through [`act_current`]). Each frame and each landing pad between the point and the
/// caller's code costs both phases of the unwind, so this is the cancellation latency.
#[inline(always)]
pub(crate) fn act(me: &Control) -> ! {
    crate::point::unwind(act_payload(me))
}

/// [`act`]'s work before the unwind, out of line: what is inlined where the unwind starts is
/// this call and the raise, so that the caller (often a user's closure, inside a run's or a
/// thread's catch) stays small enough to be inlined where it is called.
#[inline(never)]
fn act_payload(me: &Control) -> Box<dyn std::any::Any + Send> {
    // `wait_until` saw a word that acts; only the owner could have changed it since, and it
    // did not: acting is certain. Raise in any case rather than return into a finished wait.
    crate::point::begin_act(me, me.word.load())
        .unwrap_or_else(|| Box::new(crate::control::CancelPayload::raised()))
}

/// [`act`] on the calling thread's own control block, borrowed from the thread-local rather
/// than through an `Arc` the caller would have to keep alive (and the unwind to drop).
///
/// # Panics
/// If the calling thread has no control block (it could not have been asked to act).
#[inline(always)]
pub(crate) fn act_current() -> ! {
    let c = crate::control::current_ptr().expect("a thread that acts has a control block");
    // SAFETY: `current_ptr` is the calling thread's control block, alive until its
    // thread-local destructors run, so for the whole unwind that starts here.
    act(unsafe { &*c })
}

/// A deadline `d` from now, or `None` (forever) if it overflows.
pub(crate) fn deadline_after(d: std::time::Duration) -> Option<Instant> {
    Instant::now().checked_add(d)
}
