//! Files and descriptors: read and write (plain, vectored, positioned), open and close, sync,
//! locks, `tcdrain`, the pipe moves (`splice`, `tee`, `vmsplice`) and `aio_suspend`.
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use super::c;
use crate::threads;
use libc::{c_int, c_long, size_t, ssize_t};
use thread_cancel::c_abi::calls;

/// `close`: the descriptor is released exactly once, then a pending request is acted on.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_close(fd: c_int) -> c_int {
    // SAFETY: closing a descriptor is sound whatever it is (the caller owns it).
    let r = unsafe { libc::close(fd) };
    // On Linux the descriptor is released even when close fails with EINTR.
    let r = if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
        0
    } else {
        r
    };
    threads::point();
    r
}

/// `fcntl` with one argument (an integer or a pointer); a cancellation point for the waiting
/// lock commands (`F_SETLKW`, `F_OFD_SETLKW`), the system's call for the others.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fcntl(fd: c_int, cmd: c_int, arg: c_long) -> c_int {
    if cmd == libc::F_SETLKW || cmd == libc::F_OFD_SETLKW {
        // SAFETY: the caller's arguments (module docs): `arg` points to a `struct flock`.
        unsafe { c(calls::FCNTL, args!(fd, cmd, arg)) as c_int }
    } else {
        // SAFETY: the caller's arguments, as for fcntl.
        unsafe { libc::fcntl(fd, cmd, arg) }
    }
}

/// `lockf`: `F_LOCK` waits (a cancellation point); the other commands are the system's.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_lockf(fd: c_int, cmd: c_int, len: libc::off_t) -> c_int {
    if cmd != libc::F_LOCK {
        // SAFETY: the caller's arguments, as for lockf.
        return unsafe { libc::lockf(fd, cmd, len) };
    }
    // SAFETY: all-zero is a valid `flock`.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_CUR as libc::c_short;
    fl.l_len = len;
    // SAFETY: `fl` lives for the call.
    unsafe { tc_fcntl(fd, libc::F_SETLKW, &mut fl as *mut libc::flock as c_long) }
}

/// `preadv`: `readv` at `off` (the file offset is not changed).
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_preadv(
    fd: c_int,
    iov: *const libc::iovec,
    cnt: c_int,
    off: libc::off_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_preadv2(fd, iov, cnt, off, 0) }
}

/// `pwritev`: `writev` at `off`.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_pwritev(
    fd: c_int,
    iov: *const libc::iovec,
    cnt: c_int,
    off: libc::off_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_pwritev2(fd, iov, cnt, off, 0) }
}

/// `preadv2` (`off` -1: at the file offset; `RWF_*` flags).
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_preadv2(
    fd: c_int,
    iov: *const libc::iovec,
    cnt: c_int,
    off: libc::off_t,
    flags: c_int,
) -> ssize_t {
    let (lo, hi) = calls::lo_hi(off as u64);
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::PREADV2, args!(fd, iov, cnt, lo, hi, flags)) as ssize_t }
}

/// `pwritev2` (`off` -1: at the file offset; `RWF_*` flags).
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_pwritev2(
    fd: c_int,
    iov: *const libc::iovec,
    cnt: c_int,
    off: libc::off_t,
    flags: c_int,
) -> ssize_t {
    let (lo, hi) = calls::lo_hi(off as u64);
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::PWRITEV2, args!(fd, iov, cnt, lo, hi, flags)) as ssize_t }
}

/// `splice` (between a pipe and another descriptor).
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_splice(
    fd_in: c_int,
    off_in: *mut libc::loff_t,
    fd_out: c_int,
    off_out: *mut libc::loff_t,
    len: size_t,
    flags: libc::c_uint,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe {
        c(
            calls::SPLICE,
            args!(fd_in, off_in, fd_out, off_out, len, flags),
        ) as ssize_t
    }
}

/// `aio_suspend`: glibc's, in slices of at most [`AIO_SLICE`], with a cancellation point
/// before each (glibc's wait is on a futex of its own that no signal of ours can end early;
/// waiting in slices bounds the time a request waits to be acted on). It takes nothing from
/// the requests, so a canceled wait had no effect. -1 with `EAGAIN` once `timeout` (relative,
/// null for none) has passed; `EINTR` if a signal handler ran.
#[cfg(not(target_os = "android"))] // bionic has neither
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_aio_suspend(
    list: *const *const libc::aiocb,
    n: c_int,
    timeout: *const libc::timespec,
) -> c_int {
    let deadline = (!timeout.is_null()).then(|| {
        // SAFETY: a non-null timeout is the caller's valid timespec.
        let t = unsafe { *timeout };
        let d = std::time::Duration::new(
            t.tv_sec.max(0) as u64,
            t.tv_nsec.clamp(0, 999_999_999) as u32,
        );
        std::time::Instant::now().checked_add(d)
    });
    loop {
        threads::point();
        let left = match deadline {
            None | Some(None) => AIO_SLICE,
            Some(Some(d)) => d
                .saturating_duration_since(std::time::Instant::now())
                .min(AIO_SLICE),
        };
        let slice = libc::timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as c_long,
        };
        // SAFETY: the caller's list (module docs); `slice` is a local, alive for the call.
        if unsafe { libc::aio_suspend(list, n, &slice) } == 0 {
            return 0;
        }
        let e = std::io::Error::last_os_error().raw_os_error();
        if e != Some(libc::EAGAIN) || left < AIO_SLICE {
            return -1; // EINTR, EINVAL, ... or the caller's timeout (EAGAIN)
        }
    }
}

/// The longest `aio_suspend` wait between two cancellation points.
#[cfg(not(target_os = "android"))]
const AIO_SLICE: std::time::Duration = std::time::Duration::from_millis(10);
