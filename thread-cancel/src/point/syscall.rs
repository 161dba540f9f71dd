//! The system-call point: a system call that a request aborts only if it had no effect.
//!
//! [`in_call`] is the sequence every such call makes (the Rust points here, the C library's
//! points of the C ABI): publish "in a call" for cancelers, enter the platform's trampoline
//! (`sys::syscall_cp`), which tests the word once and makes the call, and restore the flag.
//! [`cp`] is the Rust side's point around it: it acts on the trampoline's verdict, or on
//! `EINTR` from a call the cancel signal interrupted.

use super::wait::{act, must_act};
use crate::control::Control;
use crate::sys::{self, calls, CpResult};
use std::io;
use std::sync::atomic::Ordering;

/// Makes system call `nr` through the trampoline, inside the "in a call" flag: the platform's
/// verdict, not acted on. A call made by a signal handler that interrupted one of our calls
/// leaves the flag as it found it: the interrupted call is still inside (and must still get
/// the signal).
///
/// # Safety
/// `c` is the calling thread's control block; the arguments must be valid for system call
/// `nr`, as for [`cp`].
#[inline(always)]
pub(crate) unsafe fn in_call(c: &Control, nr: calls::Call, a: [libc::c_long; 6]) -> CpResult {
    // SAFETY: forwarded from the caller.
    unsafe { in_call_keep(c, nr, a) }.0
}

/// [`in_call`], also returning the arguments as the platform has them after the call
/// (`sys::syscall_cp`): a caller that may make the call again uses these, so that it
/// keeps no copies of its own across the call.
///
/// # Safety
/// As [`in_call`].
#[inline(always)]
pub(crate) unsafe fn in_call_keep(
    c: &Control,
    nr: calls::Call,
    a: [libc::c_long; 6],
) -> (CpResult, [libc::c_long; 6]) {
    let outer = c.in_syscall.load(Ordering::Relaxed);
    sys::publish_in_syscall(&c.in_syscall, c.fence_asymmetric.load(Ordering::Relaxed));
    // SAFETY: the word is this thread's (borrowed `c` outlives the call); the arguments are
    // valid for `nr` by this function's contract.
    let r = unsafe { sys::syscall_cp(c.word.as_ptr(), nr, a) };
    c.in_syscall.store(outer, Ordering::Release);
    r
}

/// Runs system call `nr` as a cancellation point.
///
/// The fast path — a thread with a control block, nothing to act on, a call that does not
/// fail with `EINTR` — is inlined into every caller: one TLS load, the flag stores around the
/// trampoline, and the result test.
///
/// # Safety
/// The arguments must be valid for system call `nr`: every pointer valid (for reads or writes,
/// as the call does them) for the sizes passed, for the whole call.
#[inline(always)]
pub(crate) unsafe fn cp(nr: calls::Call, a: [libc::c_long; 6]) -> io::Result<libc::c_long> {
    // A thread without a control block cannot be canceled: it makes the plain call.
    let r = match crate::control::current_ptr() {
        // SAFETY: forwarded from this function's contract; `c` is the calling thread's
        // control block, alive for the whole call (`current_ptr`).
        Some(c) => unsafe { cp_on(&*c, nr, a) },
        // SAFETY: forwarded from this function's contract.
        None => unsafe { plain_cold(nr, a[0], a[1], a[2], a[3], a[4], a[5]) },
    };
    if super::conv::is_error(r) {
        Err(io::Error::from_raw_os_error(-r as i32))
    } else {
        Ok(r)
    }
}

/// [`calls::plain`] out of line. Its arguments are scalars, so that the hot path never has to
/// store them in memory for it (an array argument would be passed by reference).
///
/// # Safety
/// As [`cp`].
#[cold]
#[inline(never)]
unsafe fn plain_cold(
    nr: calls::Call,
    a1: libc::c_long,
    a2: libc::c_long,
    a3: libc::c_long,
    a4: libc::c_long,
    a5: libc::c_long,
    a6: libc::c_long,
) -> libc::c_long {
    // SAFETY: forwarded from the caller.
    unsafe { calls::plain(nr, [a1, a2, a3, a4, a5, a6]) }
}

/// The fast path of [`cp`] on a thread with a control block: the trampoline, which gives the
/// argument registers back, and one sign test. Everything else is out of line, reached by a
/// jump with every argument in a register ([`cp_slow3`] for calls whose last three arguments
/// are zero, the common case), so that the fast path keeps nothing across the call (no
/// callee-saved register to save and restore around it).
///
/// # Safety
/// As [`cp`].
#[inline(always)]
unsafe fn cp_on(c: &Control, nr: calls::Call, a: [libc::c_long; 6]) -> libc::c_long {
    // SAFETY: forwarded from this function's contract.
    let (r, a) = unsafe { in_call_keep(c, nr, a) };
    let r = match r {
        CpResult::Done(r) if r >= 0 => return r,
        CpResult::Done(r) => r,
        CpResult::Canceled => CANCELED,
    };
    let [a1, a2, a3, a4, a5, a6] = a;
    // (A test the compiler folds away: the arguments are constants at nearly every call.)
    if a4 == 0 && a5 == 0 && a6 == 0 {
        // SAFETY: forwarded from this function's contract.
        unsafe { cp_slow3(c, nr, r, a1, a2, a3) }
    } else {
        // SAFETY: forwarded from this function's contract.
        unsafe { cp_again(c, nr, r, a) }
    }
}

/// The trampoline's "act" verdict, as a result no system call returns.
const CANCELED: libc::c_long = libc::c_long::MIN;

/// [`cp_again`] for a call whose last three arguments are zero: six arguments, all in
/// registers.
///
/// # Safety
/// As [`cp`].
#[cold]
#[inline(never)]
unsafe fn cp_slow3(
    c: &Control,
    nr: calls::Call,
    r: libc::c_long,
    a1: libc::c_long,
    a2: libc::c_long,
    a3: libc::c_long,
) -> libc::c_long {
    // SAFETY: forwarded from the caller.
    unsafe { cp_again(c, nr, r, [a1, a2, a3, 0, 0, 0]) }
}

/// The rest of [`cp_on`] once the trampoline returned `r` (a failure, or [`CANCELED`]): the
/// failure, or the slow path's verdict ([`cp_slow`]), making the call again when told to.
///
/// # Safety
/// As [`cp`].
#[cold]
#[inline(never)]
unsafe fn cp_again(
    c: &Control,
    nr: calls::Call,
    mut r: libc::c_long,
    a: [libc::c_long; 6],
) -> libc::c_long {
    loop {
        // The trampoline's one load of the word decided: act on a pending request, or raise
        // again a cancellation that `catch_unwind` swallowed (`act` tells the two apart).
        let v = if r == CANCELED {
            CpResult::Canceled
        } else {
            CpResult::Done(r)
        };
        return match v {
            CpResult::Done(r) if r != -(libc::EINTR as libc::c_long) => r,
            _ => match cp_slow(c, v) {
                Slow::Result(r) => r,
                // A point inside an unwind (a `Drop` during a panic) does not act: the plain
                // call.
                // SAFETY: forwarded from this function's contract.
                Slow::Plain => unsafe { calls::plain(nr, a) },
                Slow::Again => {
                    // SAFETY: forwarded from this function's contract.
                    r = match unsafe { in_call(c, nr, a) } {
                        CpResult::Done(r) => r,
                        CpResult::Canceled => CANCELED,
                    };
                    continue;
                }
            },
        };
    }
}

/// What [`cp_slow`] decided, when it did not act.
enum Slow {
    /// The call's result.
    Result(libc::c_long),
    /// Make the call again without cancellation.
    Plain,
    /// Make the call again as a point: a deadline tick stopped it, and no deadline had passed
    /// after all (it was moved later).
    Again,
}

/// The rare outcomes of [`cp_on`]: the trampoline said act, or the call failed with `EINTR`.
/// Acts (and does not return), or says what [`cp_on`] does next ([`Slow`]): return the call's
/// result, make it again without cancellation (the thread is already unwinding), or make it
/// again as a point (a deadline tick found no deadline passed).
#[cold]
#[inline(never)]
fn cp_slow(c: &Control, r: CpResult) -> Slow {
    if matches!(r, CpResult::Canceled) && !crate::word::trampoline_acts(c.word.load()) {
        // A deadline tick stopped the call with nothing requested (no timer thread marks
        // deadlines): time the runs' scopes out here, which delivers their request to this
        // thread, then act on it — or make the call again if the word still says nothing
        // (no deadline had passed after all, or cancellation is disabled).
        crate::point::runs::expire_deadlines();
        if !crate::word::trampoline_acts(c.word.load()) {
            return Slow::Again;
        }
    }
    let canceled = match r {
        CpResult::Canceled => true,
        // A call that cannot be restarted, interrupted by our signal: nothing happened.
        CpResult::Done(r) => must_act(c.word.load()) && r == -(libc::EINTR as libc::c_long),
    };
    match r {
        CpResult::Done(r) if !canceled => Slow::Result(r),
        _ if std::thread::panicking() => Slow::Plain,
        _ => act(c),
    }
}
