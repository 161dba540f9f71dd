//! Benchmarks of `thread-cancel` beside the system's glibc, measured in the same run.
//!
//! The benchmarks live in `benches/` (`cargo bench -p thread-cancel-bench`). This library
//! holds the glibc side: small C functions in `csrc/glibc_shim.c` (compiled by `build.rs`)
//! that call glibc directly, and safe wrappers over them. The [`p3`] module holds the P3
//! cancellation-latency scenarios (ours, the futex floor, glibc's), shared by the `p3_latency`
//! and `p3_latency_criterion` benches; [`p4`] the P4 ones (blocked in `read`/`accept`/`poll`,
//! the `p4_latency` bench); [`r10`] the cancel-against-read races beside glibc (the
//! `r10_glibc_race` bench); [`stats`] the summary statistics of the latency tables.
//!
//! ```
//! thread_cancel_bench::glibc_testcancel();
//! thread_cancel_bench::glibc_testcancel_n(1000);
//! thread_cancel_bench::glibc_spawn_join().unwrap();
//! ```
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use libc::{c_int, c_ulong};
use std::io;

pub mod p3;
pub mod p4;
pub mod r10;
pub mod stats;

mod ffi {
    use libc::{c_int, c_ulong};

    extern "C" {
        pub(crate) fn glibc_testcancel();
        pub(crate) fn glibc_testcancel_n(n: c_ulong);
        pub(crate) fn glibc_spawn_join() -> c_int;
    }
}

/// Calls glibc's `pthread_testcancel()` once (one FFI call per glibc call).
///
/// With no cancellation request pending, as in every benchmark here, it returns.
#[inline]
pub fn glibc_testcancel() {
    // SAFETY: `glibc_testcancel` takes no arguments and only calls `pthread_testcancel()`. No
    // one ever calls `pthread_cancel` on a thread of this process, so no request is pending and
    // the call returns (it cannot unwind or terminate the thread through Rust frames).
    unsafe { ffi::glibc_testcancel() }
}

/// Calls glibc's `pthread_testcancel()` `n` times in a C loop, so the FFI call is amortised
/// over `n` glibc calls.
///
/// `n` is clamped to what fits in a C `unsigned long` (all of `u64` on 64-bit Linux).
#[inline]
pub fn glibc_testcancel_n(n: u64) {
    let n = c_ulong::try_from(n).unwrap_or(c_ulong::MAX);
    // SAFETY: `glibc_testcancel_n` takes a plain integer and only calls `pthread_testcancel()`
    // `n` times; as for `glibc_testcancel`, no request is ever pending, so each call returns.
    unsafe { ffi::glibc_testcancel_n(n) }
}

/// Creates a pthread with default attributes and an empty start routine through glibc's
/// `pthread_create`, then joins it with `pthread_join`.
///
/// # Errors
///
/// The error number of `pthread_create` or `pthread_join` if either fails (e.g. `EAGAIN` when
/// the system is out of threads).
#[inline]
pub fn glibc_spawn_join() -> io::Result<()> {
    // SAFETY: `glibc_spawn_join` takes no arguments, touches no Rust memory, and always joins
    // the thread it created before returning (so nothing outlives the call); the start routine
    // is empty and cannot unwind.
    let rc: c_int = unsafe { ffi::glibc_spawn_join() };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}
