//! System-call points without interruption: the state word is checked before the call and
//! after it, and nothing reaches a thread blocked inside (no cancel signal, so no handler, no
//! fence and nothing to drain).

use super::calls::{self, Call};
use crate::word::trampoline_acts as acts;
use std::sync::atomic::Ordering;

/// The result of a cancellable system call.
pub(crate) enum CpResult {
    /// The call ran (and completed or failed): the raw return value (`-errno` on failure).
    Done(libc::c_long),
    /// The call was not made, or failed without effect: act on the request.
    Canceled,
}

/// Makes call `nr` unless the word pointed to by `word` says act; after a call that failed
/// (it had no effect), acts if a request arrived meanwhile. A call that completed returns its
/// result: the request waits for the next point. The arguments are returned with the verdict,
/// unchanged (the Linux layer's x86_64 trampoline returns them from the registers it kept).
///
/// # Safety
/// `word` must point to the calling thread's live state word; the arguments must be valid for
/// call `nr`.
#[inline(always)]
pub(crate) unsafe fn syscall_cp(
    word: *const u32,
    nr: Call,
    a: [libc::c_long; 6],
) -> (CpResult, [libc::c_long; 6]) {
    // SAFETY: forwarded from the caller.
    (unsafe { syscall_cp_once(word, nr, a) }, a)
}

/// [`syscall_cp`]'s verdict.
///
/// # Safety
/// As [`syscall_cp`].
#[inline(always)]
unsafe fn syscall_cp_once(word: *const u32, nr: Call, a: [libc::c_long; 6]) -> CpResult {
    // SAFETY: the caller's word is a live, aligned `u32` only changed atomically.
    let load = || unsafe { (*word.cast::<std::sync::atomic::AtomicU32>()).load(Ordering::SeqCst) };
    if acts(load()) {
        return CpResult::Canceled;
    }
    // SAFETY: forwarded from the caller.
    let r = unsafe { calls::plain(nr, a) };
    if super::super::is_error(r) && acts(load()) {
        CpResult::Canceled
    } else {
        CpResult::Done(r)
    }
}

/// Never an error: this layer has no cancel signal (the type has no value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignalError {}

impl SignalError {
    /// The error's kind for `io::set_signal`.
    pub(crate) fn kind(&self) -> std::io::ErrorKind {
        match *self {}
    }
}

impl std::fmt::Display for SignalError {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {}
    }
}

/// Accepts any signal and does nothing: no signal is used.
pub(crate) fn set_signal(_sig: i32) -> Result<(), SignalError> {
    Ok(())
}

/// No cancel signal is in use.
pub(crate) fn signal() -> Option<i32> {
    None
}

/// Nothing to install.
#[inline]
pub(crate) fn prepare() {}

/// `set` itself: no signal is used.
pub(crate) fn without_cancel_signal(set: &libc::sigset_t) -> libc::sigset_t {
    *set
}

/// No signal handler asks anything.
pub(crate) fn set_decisions(_d: &'static crate::sys::Decisions) {}

/// No signal handler asks anything.
pub(crate) fn set_deadline_due(_f: fn() -> bool) {}

/// No kernel timer signals a thread here.
pub(crate) struct DeadlineTick;

/// Nothing to delete (the type keeps the interface of the Linux layer, whose drop deletes the
/// timer).
impl Drop for DeadlineTick {
    fn drop(&mut self) {}
}

/// None: no cancel signal (a blocked call is not interrupted by a deadline here).
pub(crate) fn arm_deadline_tick(_deadline: std::time::Instant) -> Option<DeadlineTick> {
    None
}

/// A thread the cancel signal could be sent to (none is: [`signal`] is `None`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target {
    pub(crate) id: crate::sys::pthread::Id,
}

impl Target {
    /// The calling thread.
    pub(crate) fn current() -> Self {
        Target {
            id: crate::sys::pthread::Id::current(),
        }
    }

    /// In a forked child: nothing changes.
    pub(crate) fn after_fork_in_child(&mut self) {}
}

/// Nothing to do in a forked child.
pub(crate) fn after_fork_in_child() {}

/// Sends nothing (never called: [`signal`] is `None`).
///
/// # Safety
/// None needed; `unsafe` for the interface's sake.
pub(crate) unsafe fn kill(_t: Target, _sig: i32) {}

/// Nothing can be pending.
pub(crate) fn drain() {}
