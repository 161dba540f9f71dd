//! Benchmarks of `thread-cancel` beside the system's glibc, measured in the same run.
//!
//! The benchmarks live in `benches/` (`cargo bench -p thread-cancel-bench`); `compare`
//! runs every timing target of SPEC §4 in one process and writes `docs/compare.md` and
//! `docs/compare.svg` ([`compare`]). This library holds the drivers they share: the glibc side
//! (small C functions in `csrc/*.c`, compiled by `build.rs`, and safe wrappers over them:
//! below and in [`glibc`], [`p6`], [`r10`]); the scenarios of P1/P2/P5 ([`micro`]), P3
//! ([`p3`]), P4 ([`p4`]), P4c ([`p4c`]: a C driver through the C ABI, built at run time from
//! `csrc-p4c/` and run as a program of its own), P6 ([`p6`]), P7 ([`micro`]) and P8
//! ([`p8`]: operation-level cancellation and deadlines); the R10 races beside glibc
//! ([`r10`]); the interleaved sampling ([`rounds`]), the statistics ([`stats`]), the SPEC targets
//! ([`target`]), the latency benches' table ([`table`]), the chart ([`chart`]) and the
//! machine's description ([`machine`]).
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

pub mod async_cancel;
pub mod chart;
pub mod compare;
pub mod glibc;
pub mod machine;
pub mod micro;
pub mod p3;
pub mod p4;
pub mod p4c;
pub mod p6;
pub mod p8;
pub mod r10;
pub mod rounds;
pub mod stats;
pub mod table;
pub mod target;

mod ffi {
    use libc::{c_int, c_ulong};

    extern "C" {
        pub(crate) fn glibc_testcancel();
        pub(crate) fn glibc_testcancel_n(n: c_ulong);
        pub(crate) fn glibc_spawn_join() -> c_int;
    }
}

/// The object a C `*_start(.., &out)` function returned: `out` if `rc` is 0, else the error
/// number `rc`; `what` names the function in the error for a null `out`.
pub(crate) fn c_started<T>(rc: c_int, out: *mut T, what: &str) -> io::Result<std::ptr::NonNull<T>> {
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    std::ptr::NonNull::new(out).ok_or_else(|| io::Error::other(format!("{what} returned nothing")))
}

/// A C result that is a time in ns when non-negative, else a negated error number.
pub(crate) fn ns_or_errno(r: i64) -> io::Result<std::time::Duration> {
    match u64::try_from(r) {
        Ok(ns) => Ok(std::time::Duration::from_nanos(ns)),
        Err(_) => Err(io::Error::from_raw_os_error(
            i32::try_from(-r).unwrap_or(libc::EINVAL),
        )),
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
