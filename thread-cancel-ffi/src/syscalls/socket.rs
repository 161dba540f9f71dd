//! Sockets: accept, connect, and the send and receive calls.
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use super::c;
use libc::{c_int, c_void, size_t, sockaddr, socklen_t, ssize_t};
use thread_cancel::c_abi::calls;

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_accept4(
    fd: c_int,
    addr: *mut sockaddr,
    len: *mut socklen_t,
    flags: c_int,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::ACCEPT4, args!(fd, addr, len, flags)) as c_int }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_accept(
    fd: c_int,
    addr: *mut sockaddr,
    len: *mut socklen_t,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_accept4(fd, addr, len, 0) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_connect(
    fd: c_int,
    addr: *const sockaddr,
    len: socklen_t,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::CONNECT, args!(fd, addr, len)) as c_int }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_recvfrom(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    flags: c_int,
    addr: *mut sockaddr,
    len: *mut socklen_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::RECVFROM, args!(fd, buf, n, flags, addr, len)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_recv(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    flags: c_int,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe {
        tc_recvfrom(
            fd,
            buf,
            n,
            flags,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sendto(
    fd: c_int,
    buf: *const c_void,
    n: size_t,
    flags: c_int,
    addr: *const sockaddr,
    len: socklen_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::SENDTO, args!(fd, buf, n, flags, addr, len)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_send(
    fd: c_int,
    buf: *const c_void,
    n: size_t,
    flags: c_int,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_sendto(fd, buf, n, flags, std::ptr::null(), 0) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_recvmsg(
    fd: c_int,
    msg: *mut libc::msghdr,
    flags: c_int,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::RECVMSG, args!(fd, msg, flags)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sendmsg(
    fd: c_int,
    msg: *const libc::msghdr,
    flags: c_int,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::SENDMSG, args!(fd, msg, flags)) as ssize_t }
}

/// `sendmmsg`: the number of messages sent. As `sendmsg`, a canceled call sent nothing.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sendmmsg(
    fd: c_int,
    msgs: *mut libc::mmsghdr,
    n: libc::c_uint,
    flags: c_int,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::SENDMMSG, args!(fd, msgs, n, flags)) as c_int }
}

/// `recvmmsg`: the number of messages received. A canceled call received nothing.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_recvmmsg(
    fd: c_int,
    msgs: *mut libc::mmsghdr,
    n: libc::c_uint,
    flags: c_int,
    timeout: *mut libc::timespec,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::RECVMMSG, args!(fd, msgs, n, flags, timeout)) as c_int }
}
