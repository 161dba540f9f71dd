//! Benchmarks of `thread-cancel` beside the system's glibc, measured in the same run.
//!
//! The benchmarks live in `benches/` (`cargo bench -p thread-cancel-bench`); `compare` runs
//! every timing target of REQUIREMENTS.md (P1–P8, P4c) in one process and writes
//! `docs/compare.md` and `docs/compare.svg` ([`compare`]). The ids (P1–P8, P4c, R06, R10) are
//! those of REQUIREMENTS.md. This library holds what the benches share, one module per
//! measurement:
//!
//! | module | measures |
//! |---|---|
//! | [`micro`] | the per-call costs: a cancellation point (P1), `io::read`/`write` (P2), spawn + join (P5), `CancelScope::run` (P7) |
//! | [`wait_latency`] | cancel latency of a thread blocked in a wait (P3) |
//! | [`syscall_latency`] | cancel latency of a thread blocked in a system call (P4) |
//! | [`c_thread_latency`] | cancel latency of a C thread through the C ABI (P4c; a C driver built at run time from `csrc-p4c/` and run as a program of its own) |
//! | [`async_cancel`] | cancel latency of a compute loop in an asynchronous region (R06) |
//! | [`mass_cancel`] | canceling and joining many blocked threads (P6) |
//! | [`scope_latency`] | a `CancelScope` cancel's latency and the deadlines' lateness (P8) |
//! | [`read_race`] | cancels racing a `read` that returns data, every byte counted (R10), beside glibc |
//!
//! and the machinery: the glibc side (small C functions in `csrc/*.c`, compiled by `build.rs`,
//! and safe wrappers over them: below, in [`glibc`] and in the modules above), the interleaved
//! sampling ([`rounds`]), the statistics ([`stats`]), the performance targets and their verdicts
//! ([`perf_targets`]), the latency benches' table ([`table`]), the chart ([`chart`]) and the
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
pub mod c_thread_latency;
pub mod chart;
pub mod compare;
pub mod glibc;
pub mod machine;
pub mod mass_cancel;
pub mod micro;
pub mod perf_targets;
pub mod read_race;
pub mod rounds;
pub mod scope_latency;
pub mod stats;
pub mod syscall_latency;
pub mod table;
pub mod target;
pub mod wait_latency;

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
