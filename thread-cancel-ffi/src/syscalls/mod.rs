//! The C library's system-call cancellation points, each one system call through
//! `thread_cancel::c_abi::syscall_point`: either the call ran and its result is returned (with
//! `errno`), or it had no effect and the thread acts on its cancellation (R10). One file per
//! family: files and descriptors (`fd.rs`), sockets (`socket.rs`), waits on several descriptors
//! (`poll.rs`), signals and signal masks (`signal.rs`), sleeps (`sleep.rs`), child processes
//! (`process.rs`), System V and POSIX message queues (`ipc.rs`).
//!
//! # Safety (every exported function of these files)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use crate::threads;
use libc::c_long;
use thread_cancel::c_abi::{self, calls};

/// The system call's raw result, or act if the call was canceled without effect.
///
/// # Safety
/// The arguments must be valid for system call `nr`.
unsafe fn call(nr: calls::Call, a: [c_long; 6]) -> c_long {
    threads::enter_point();
    // SAFETY: forwarded from the caller.
    match unsafe { c_abi::syscall_point(nr, a) } {
        None => threads::act(),
        Some(r) => r,
    }
}

/// `call` with the C convention: -1 and `errno` on failure.
///
/// # Safety
/// As [`call`].
unsafe fn c(nr: calls::Call, a: [c_long; 6]) -> c_long {
    // SAFETY: forwarded from the caller.
    let r = unsafe { call(nr, a) };
    if (-4095..0).contains(&r) {
        crate::set_errno(-r as i32);
        -1
    } else {
        r
    }
}

macro_rules! args {
    ($($a:expr),*) => {{
        let mut v = [0 as ::libc::c_long; 6];
        let given = [$($a as ::libc::c_long),*];
        v[..given.len()].copy_from_slice(&given);
        v
    }};
}

/// The size of a kernel signal set, as the `rt_sig*` and `p*` calls take it.
const SIGSET_SIZE: c_long = calls::SIGSET_SIZE as c_long;

mod fd;
mod ipc;
mod poll;
pub(crate) mod process;
mod signal;
mod sleep;
mod socket;
