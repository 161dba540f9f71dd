//! The C convention of a point, once: the arguments as the six registers of a system call
//! ([`args!`](crate::__thread_cancel_args)), the kernel's `-errno` result told apart
//! ([`is_error`]) and made the C library's `-1` and errno ([`c_result`]), errno itself
//! ([`errno`], [`set_errno`]), and the plain call in both conventions ([`plain_c`],
//! [`plain_raw`]). The Rust points (`point/raw.rs`), the interposed functions and the C ABI's
//! points all use these; none writes its own.
// The C-convention half serves the interposed functions and the C ABI only.
#![cfg_attr(not(any(feature = "c-abi", thread_cancel_interpose)), allow(dead_code))]

#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
use libc::{c_int, c_long};

/// The six registers of a system call from up to six arguments, each converted with `as
/// c_long`, the rest zero. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __thread_cancel_args {
    () => {
        [0 as ::libc::c_long; 6]
    };
    ($a:expr $(,)?) => {
        [$a as ::libc::c_long, 0, 0, 0, 0, 0]
    };
    ($a:expr, $b:expr $(,)?) => {
        [$a as ::libc::c_long, $b as ::libc::c_long, 0, 0, 0, 0]
    };
    ($a:expr, $b:expr, $c:expr $(,)?) => {
        [
            $a as ::libc::c_long,
            $b as ::libc::c_long,
            $c as ::libc::c_long,
            0,
            0,
            0,
        ]
    };
    ($a:expr, $b:expr, $c:expr, $d:expr $(,)?) => {
        [
            $a as ::libc::c_long,
            $b as ::libc::c_long,
            $c as ::libc::c_long,
            $d as ::libc::c_long,
            0,
            0,
        ]
    };
    ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr $(,)?) => {
        [
            $a as ::libc::c_long,
            $b as ::libc::c_long,
            $c as ::libc::c_long,
            $d as ::libc::c_long,
            $e as ::libc::c_long,
            0,
        ]
    };
    ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr, $f:expr $(,)?) => {
        [
            $a as ::libc::c_long,
            $b as ::libc::c_long,
            $c as ::libc::c_long,
            $d as ::libc::c_long,
            $e as ::libc::c_long,
            $f as ::libc::c_long,
        ]
    };
}
pub(crate) use __thread_cancel_args as args;

pub use crate::sys::is_error;

/// A raw kernel result as the C library returns it: `-1` and errno on failure.
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
#[inline(always)]
pub fn c_result(r: c_long) -> c_long {
    if is_error(r) {
        set_errno(-r as c_int);
        -1
    } else {
        r
    }
}

/// The calling thread's errno (the C library's).
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
#[inline(always)]
pub fn errno() -> c_int {
    // SAFETY: the calling thread's errno slot, valid for reads for the thread's life.
    unsafe { *crate::sys::errno_location() }
}

/// Sets the calling thread's errno (the C library's).
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
#[inline(always)]
pub fn set_errno(e: c_int) {
    // SAFETY: the calling thread's errno slot, valid for writes for the thread's life.
    unsafe { *crate::sys::errno_location() = e };
}

/// The size check of a `_FORTIFY_SOURCE` checking function (`__read_chk`, ...): where
/// `overflow` (the length asked for exceeds the buffer's size the compiler passed), the C
/// library's failure report, which aborts the process, as its own checking functions do.
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
#[inline]
pub fn fortify_check(overflow: bool) {
    extern "C" {
        fn __chk_fail() -> !;
    }
    if overflow {
        // SAFETY: the C library's fortify failure report: no arguments; it aborts the process.
        unsafe { __chk_fail() }
    }
}

/// System call `nr` without cancellation, C-style (`-1` and errno on failure), through the C
/// library's generic `syscall` (no function the crate defines: it cannot recurse).
///
/// # Safety
/// The arguments must be valid for system call `nr`.
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
#[inline(always)]
pub unsafe fn plain_c(nr: c_long, a: [c_long; 6]) -> c_long {
    let [a1, a2, a3, a4, a5, a6] = a;
    // SAFETY: forwarded from the caller.
    unsafe { libc::syscall(nr, a1, a2, a3, a4, a5, a6) }
}

/// System call `nr` without cancellation, with the kernel's convention (`-errno` on failure).
///
/// # Safety
/// As [`plain_c`].
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
#[inline(always)]
pub unsafe fn plain_raw(nr: c_long, a: [c_long; 6]) -> c_long {
    // SAFETY: forwarded from the caller.
    match unsafe { plain_c(nr, a) } {
        -1 => -(errno() as c_long),
        r => r,
    }
}
