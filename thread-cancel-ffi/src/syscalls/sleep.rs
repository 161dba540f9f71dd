//! Sleeps: `clock_nanosleep`, `nanosleep`, `sleep`, `usleep`, `pause`.
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use super::call;
use super::poll::tc_ppoll;
use libc::c_int;
use thread_cancel::c_abi::calls;

/// `clock_nanosleep`: returns the error number (not -1), as POSIX says.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_clock_nanosleep(
    clock: libc::clockid_t,
    flags: c_int,
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    let r = unsafe { call(calls::CLOCK_NANOSLEEP, args!(clock, flags, req, rem)) };
    (-r) as c_int
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_nanosleep(
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    let e = unsafe { tc_clock_nanosleep(libc::CLOCK_REALTIME, 0, req, rem) };
    if e == 0 {
        0
    } else {
        crate::set_errno(e);
        -1
    }
}

/// `sleep`: 0, or if a handled signal interrupted it, the seconds left truncated (as glibc:
/// interrupted after 200 ms, `sleep(5)` returns 4) with `errno` set to `EINTR`; `errno` is
/// left as it was otherwise.
#[no_mangle]
pub extern "C-unwind" fn tc_sleep(seconds: libc::c_uint) -> libc::c_uint {
    let req = libc::timespec {
        tv_sec: seconds as _,
        tv_nsec: 0,
    };
    let mut rem = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: both timespecs are locals, alive for the call.
    match unsafe { tc_clock_nanosleep(libc::CLOCK_REALTIME, 0, &req, &mut rem) } {
        0 => 0,
        e => {
            // Interrupted by a signal: the whole seconds left (glibc's `seconds + ts.tv_sec`
            // after its `nanosleep`, which sets errno).
            crate::set_errno(e);
            rem.tv_sec as libc::c_uint
        }
    }
}

#[no_mangle]
pub extern "C-unwind" fn tc_usleep(usec: libc::useconds_t) -> c_int {
    let req = libc::timespec {
        tv_sec: (usec / 1_000_000) as _,
        tv_nsec: ((usec % 1_000_000) * 1000) as libc::c_long,
    };
    // SAFETY: `req` is a local, alive for the call.
    unsafe { tc_nanosleep(&req, std::ptr::null_mut()) }
}

/// `pause`: blocks until a signal is handled; -1 with `EINTR`.
#[no_mangle]
pub extern "C-unwind" fn tc_pause() -> c_int {
    // SAFETY: no descriptors, no timeout, no mask: waits for a signal.
    unsafe { tc_ppoll(std::ptr::null_mut(), 0, std::ptr::null(), std::ptr::null()) }
}
