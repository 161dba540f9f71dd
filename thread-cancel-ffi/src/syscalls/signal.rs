//! Signals: the mask calls (which never block the cancel signal), `sigpause`, `sigsuspend`,
//! and the waits for a signal.
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use super::{c, call, SIGSET_SIZE};
use libc::{c_int, c_long};
use thread_cancel::c_abi::{self, calls};

/// A signal mask or set given by C code, as passed to the kernel: a copy without the cancel
/// signal (`c_abi::cancel_signal`), or null. A mask that blocks the cancel signal would make the
/// call (or, set with `sigprocmask`, the thread) impossible to interrupt; a set of signals to
/// wait for that holds it would take the request's signal as the call's result. glibc never
/// lets its own cancel signal be blocked or waited for either.
pub(super) struct Mask(Option<libc::sigset_t>);

impl Mask {
    /// # Safety
    /// `set` must be null or point to an initialised `sigset_t`.
    pub(super) unsafe fn of(set: *const libc::sigset_t) -> Mask {
        if set.is_null() {
            return Mask(None);
        }
        // SAFETY: non-null: the caller's initialised set (plain data).
        Mask(Some(c_abi::without_cancel_signal(unsafe { &*set })))
    }

    /// The copy (or null), valid while `self` lives.
    pub(super) fn ptr(&self) -> *const libc::sigset_t {
        self.0
            .as_ref()
            .map_or(std::ptr::null(), |s| s as *const libc::sigset_t)
    }
}

/// Calls `set_mask` (the system's `pthread_sigmask` or `sigprocmask`) with the mask argument as
/// passed on: without the cancel signal for `SIG_BLOCK` and `SIG_SETMASK` (`SIG_UNBLOCK` can
/// only help; any other `how` is the system's `EINVAL`), or the caller's `set` itself.
///
/// # Safety
/// As [`Mask::of`].
unsafe fn pass_mask(
    how: c_int,
    set: *const libc::sigset_t,
    set_mask: impl FnOnce(*const libc::sigset_t) -> c_int,
) -> c_int {
    if how == libc::SIG_BLOCK || how == libc::SIG_SETMASK {
        // SAFETY: forwarded from the caller.
        let m = unsafe { Mask::of(set) };
        let p = if m.0.is_some() { m.ptr() } else { set };
        set_mask(p)
    } else {
        set_mask(set)
    }
}

/// `pthread_sigmask`: the system's, except that the cancel signal is never blocked.
///
/// # Safety
/// As `pthread_sigmask`.
#[no_mangle]
pub unsafe extern "C" fn tc_pthread_sigmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's set (module docs); `p` is the caller's set or its copy, alive for
    // the call; `old` is the caller's.
    unsafe { pass_mask(how, set, |p| libc::pthread_sigmask(how, p, old)) }
}

/// `sigprocmask`: the system's, except that the cancel signal is never blocked.
///
/// # Safety
/// As `sigprocmask`.
#[no_mangle]
pub unsafe extern "C" fn tc_sigprocmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: as in `tc_pthread_sigmask`.
    unsafe { pass_mask(how, set, |p| libc::sigprocmask(how, p, old)) }
}

/// `sigpause` (X/Open: `sig` is removed from the thread's mask for the wait): a cancellation
/// point, as `sigsuspend`; -1 with `EINTR`, or `EINVAL` for an invalid signal.
#[no_mangle]
pub extern "C-unwind" fn tc_sigpause(sig: c_int) -> c_int {
    // SAFETY: sigset_t is plain data; all-zero is a valid (empty) set.
    let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new set only reads the thread's mask into `mask`.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask) };
    // SAFETY: `mask` is initialised; sigdelset checks `sig`.
    if unsafe { libc::sigdelset(&mut mask, sig) } != 0 {
        crate::set_errno(libc::EINVAL);
        return -1;
    }
    // SAFETY: `mask` is a local set, alive for the call.
    unsafe { tc_sigsuspend(&mask) }
}

/// `sigwait`: returns 0 and the signal in `*sig`, or the error number.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sigwait(set: *const libc::sigset_t, sig: *mut c_int) -> c_int {
    // SAFETY: the caller's set (module docs).
    let set = unsafe { Mask::of(set) };
    loop {
        // SAFETY: the caller's arguments (module docs); the set's copy lives for the call.
        let r = unsafe { call(calls::RT_SIGTIMEDWAIT, args!(set.ptr(), 0, 0, SIGSET_SIZE)) };
        if r == -(libc::EINTR as c_long) {
            continue; // sigwait is not interrupted by other signals
        }
        if r < 0 {
            return (-r) as c_int;
        }
        // SAFETY: the caller passes a writable int.
        unsafe { *sig = r as c_int };
        return 0;
    }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sigsuspend(mask: *const libc::sigset_t) -> c_int {
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    // SAFETY: the caller's arguments (module docs); the mask's copy lives for the call.
    unsafe { c(calls::RT_SIGSUSPEND, args!(mask.ptr(), SIGSET_SIZE)) as c_int }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sigtimedwait(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const libc::timespec,
) -> c_int {
    // SAFETY: the caller's set (module docs).
    let set = unsafe { Mask::of(set) };
    // SAFETY: the caller's arguments (module docs); the set's copy lives for the call.
    let r = unsafe {
        c(
            calls::RT_SIGTIMEDWAIT,
            args!(set.ptr(), info, timeout, SIGSET_SIZE),
        ) as c_int
    };
    // As glibc's wrapper: the kernel's SI_TKILL (`raise`, `pthread_kill`, any `tgkill`) is
    // reported as SI_USER.
    if r >= 0 && !info.is_null() {
        // SAFETY: the call succeeded, so the kernel filled the caller's `*info`.
        unsafe {
            if (*info).si_code == SI_TKILL {
                (*info).si_code = libc::SI_USER;
            }
        }
    }
    r
}

/// The kernel's `si_code` for a signal sent by `tkill`/`tgkill` (`<asm-generic/siginfo.h>`).
const SI_TKILL: c_int = -6;

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sigwaitinfo(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_sigtimedwait(set, info, std::ptr::null()) }
}
