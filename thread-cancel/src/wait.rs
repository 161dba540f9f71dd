//! Blocking as a cancellation point: the wait loop every blocking primitive goes through.

use crate::control::Control;
use crate::point::slow_point;
use crate::state;
use std::time::Instant;

/// Blocks the calling thread (whose control block is `me`) until `ready()` returns true, a
/// cancellation request must be acted on, or `deadline` passes. Returns whether `ready()` held.
///
/// The waker's side: make `ready()` true, then `me.parker.unpark()`. A cancel request unparks
/// too, so a blocked thread acts on it at once (R05: "blocked in a cancellation point").
/// `ready()` is checked after every wake-up and before acting, so a wait that completed is
/// reported as completed and the request is acted on at the next point (R10, R22).
pub(crate) fn block_until(
    me: &Control,
    mut ready: impl FnMut() -> bool,
    deadline: Option<Instant>,
) -> bool {
    loop {
        if ready() {
            return true;
        }
        let s = me.state.load();
        if s & state::SLOW != 0 {
            slow_point(me, s);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return ready();
        }
        me.parker.park(deadline);
    }
}
