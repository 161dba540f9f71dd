//! Waits on several descriptors: `poll`, `ppoll`, `select`, `pselect` and the `epoll` waits.
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use super::signal::Mask;
use super::{c, SIGSET_SIZE};
use libc::{c_int, c_long};
use thread_cancel::c_abi::calls;

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_ppoll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    timeout: *const libc::timespec,
    mask: *const libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    // SAFETY: the caller's arguments (module docs); the mask copy lives for the call.
    unsafe {
        c(
            calls::PPOLL,
            args!(fds, n, timeout, mask.ptr(), SIGSET_SIZE),
        ) as c_int
    }
}

fn ms_timespec(ms: c_int) -> libc::timespec {
    libc::timespec {
        tv_sec: (ms / 1000) as _,
        tv_nsec: ((ms % 1000) * 1_000_000) as libc::c_long,
    }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_poll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    timeout_ms: c_int,
) -> c_int {
    let ts = ms_timespec(timeout_ms.max(0));
    let t = if timeout_ms < 0 {
        std::ptr::null()
    } else {
        &ts as *const libc::timespec
    };
    // SAFETY: the caller's arguments (module docs); `t` is null or `ts`, alive for the call.
    unsafe { tc_ppoll(fds, n, t, std::ptr::null()) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_select(
    n: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    timeout: *mut libc::timeval,
) -> c_int {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let t = if timeout.is_null() {
        std::ptr::null_mut()
    } else {
        // SAFETY: a non-null timeout is the caller's valid timeval.
        let tv = unsafe { *timeout };
        ts = libc::timespec {
            tv_sec: tv.tv_sec,
            tv_nsec: tv.tv_usec * 1000,
        };
        &mut ts as *mut libc::timespec
    };
    // SAFETY: the caller's arguments (module docs); `t` is null or `ts`, alive for the call.
    let res = unsafe { c(calls::PSELECT6, args!(n, r, w, e, t, 0)) as c_int };
    if !timeout.is_null() {
        // Linux's select reports the time left, as pselect6 does in `ts`.
        // SAFETY: as above.
        unsafe {
            (*timeout).tv_sec = ts.tv_sec;
            (*timeout).tv_usec = ts.tv_nsec / 1000;
        }
    }
    res
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_epoll_wait(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe {
        c(
            calls::EPOLL_PWAIT,
            args!(epfd, ev, max, timeout, 0, SIGSET_SIZE),
        ) as c_int
    }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_pselect(
    n: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    timeout: *const libc::timespec,
    mask: *const libc::sigset_t,
) -> c_int {
    // pselect6's last argument: the mask and its size. A copy of the timeout, which pselect
    // (unlike the system call) does not update.
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    let sig = [mask.ptr() as c_long, SIGSET_SIZE];
    // SAFETY: a non-null timeout is the caller's valid timespec.
    let mut ts = (!timeout.is_null()).then(|| unsafe { *timeout });
    let t = ts
        .as_mut()
        .map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
    let sig_arg = if mask.ptr().is_null() {
        std::ptr::null()
    } else {
        sig.as_ptr()
    };
    // SAFETY: the caller's arguments (module docs); `t` and `sig` live for the call.
    unsafe { c(calls::PSELECT6, args!(n, r, w, e, t, sig_arg)) as c_int }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_epoll_pwait(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
    mask: *const libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    // SAFETY: the caller's arguments (module docs); the mask's copy lives for the call.
    unsafe {
        c(
            calls::EPOLL_PWAIT,
            args!(epfd, ev, max, timeout, mask.ptr(), SIGSET_SIZE),
        ) as c_int
    }
}

/// `epoll_pwait2` (a timespec timeout; null waits forever).
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_epoll_pwait2(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: *const libc::timespec,
    mask: *const libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    // SAFETY: the caller's arguments (module docs); the mask's copy lives for the call.
    unsafe {
        c(
            calls::EPOLL_PWAIT2,
            args!(epfd, ev, max, timeout, mask.ptr(), SIGSET_SIZE),
        ) as c_int
    }
}
