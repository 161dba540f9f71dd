//! The two sides of the `in_syscall` flag, without a fence: nothing signals a thread in a call.

use std::sync::atomic::{AtomicBool, Ordering};

/// Owner: sets the flag (read by nobody who would signal; kept for the interface).
#[inline(always)]
pub(crate) fn publish(flag: &AtomicBool, _asymmetric: bool) {
    flag.store(true, Ordering::Relaxed);
}

/// No fence: nothing to register.
pub(crate) fn asymmetric() -> bool {
    false
}

/// Canceler: never signal.
pub(crate) fn observe(_flag: &AtomicBool) -> bool {
    false
}

/// No asymmetric fence here ([`asymmetric`] is false): the light sides are real fences.
pub(crate) fn membarrier() {}
