//! The C library's system-call cancellation points, each one system call through
//! `thread_cancel::c_abi::syscall_point`: either the call ran and its result is returned (with
//! `errno`), or it had no effect and the thread acts on its cancellation (R10). The regular
//! ones are made from the table of points (`table.rs`); the ones written by hand (`own` in the
//! table), one file per family: files and descriptors (`fd.rs`), waits on several descriptors
//! (`poll.rs`), signals and signal masks (`signal.rs`), sleeps (`sleep.rs`), System V and POSIX
//! message queues (`ipc.rs`).
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
    c_abi::conv::c_result(unsafe { call(nr, a) })
}

/// The argument registers, as every face of the table makes them (`thread_cancel`'s `args!`).
macro_rules! args {
    ($($a:tt)*) => { thread_cancel::__thread_cancel_args!($($a)*) };
}

/// The size of a kernel signal set, as the `rt_sig*` and `p*` calls take it.
const SIGSET_SIZE: c_long = calls::SIGSET_SIZE as c_long;

mod fd;
// Bionic has no POSIX message queues.
#[cfg(not(target_os = "android"))]
mod ipc;
mod poll;
mod signal;
mod sleep;
pub(crate) mod table;
