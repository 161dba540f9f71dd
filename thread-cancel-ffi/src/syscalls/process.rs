//! Waits for child processes: `waitpid`, `wait`, `waitid`, `wait4`, `wait3`.
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use super::c;
use libc::c_int;
use thread_cancel::c_abi::calls;

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_waitpid(
    pid: libc::pid_t,
    status: *mut c_int,
    options: c_int,
) -> libc::pid_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::WAIT4, args!(pid, status, options, 0)) as libc::pid_t }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_wait(status: *mut c_int) -> libc::pid_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_waitpid(-1, status, 0) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_waitid(
    idtype: libc::idtype_t,
    id: libc::id_t,
    info: *mut libc::siginfo_t,
    options: c_int,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    let r = unsafe { c(calls::WAITID, args!(idtype, id, info, options, 0)) };
    if r < 0 {
        -1
    } else {
        0
    }
}

/// `wait4`: `waitpid` that also reports the child's resource usage.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_wait4(
    pid: libc::pid_t,
    status: *mut c_int,
    options: c_int,
    usage: *mut libc::rusage,
) -> libc::pid_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::WAIT4, args!(pid, status, options, usage)) as libc::pid_t }
}

/// `wait3`: `wait4` for any child.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_wait3(
    status: *mut c_int,
    options: c_int,
    usage: *mut libc::rusage,
) -> libc::pid_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_wait4(-1, status, options, usage) }
}
