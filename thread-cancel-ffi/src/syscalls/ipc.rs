//! POSIX message queues (`mq_*`; bionic has none). The System V ones (`msgrcv`, `msgsnd`) are
//! made from the table of points (`table.rs`).
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use super::c;
use libc::{c_int, size_t, ssize_t};
use thread_cancel::c_abi::calls;

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_mq_timedreceive(
    mq: libc::mqd_t,
    msg: *mut libc::c_char,
    len: size_t,
    prio: *mut libc::c_uint,
    timeout: *const libc::timespec,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::MQ_TIMEDRECEIVE, args!(mq, msg, len, prio, timeout)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_mq_receive(
    mq: libc::mqd_t,
    msg: *mut libc::c_char,
    len: size_t,
    prio: *mut libc::c_uint,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_mq_timedreceive(mq, msg, len, prio, std::ptr::null()) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_mq_timedsend(
    mq: libc::mqd_t,
    msg: *const libc::c_char,
    len: size_t,
    prio: libc::c_uint,
    timeout: *const libc::timespec,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::MQ_TIMEDSEND, args!(mq, msg, len, prio, timeout)) as c_int }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_mq_send(
    mq: libc::mqd_t,
    msg: *const libc::c_char,
    len: size_t,
    prio: libc::c_uint,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_mq_timedsend(mq, msg, len, prio, std::ptr::null()) }
}
