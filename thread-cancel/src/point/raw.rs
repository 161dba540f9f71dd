//! The Rust face of the table of points (`sys/points.rs`): for each row whose `rust` column is
//! `point`, an `unsafe fn` of the row's C signature that makes its system call as a point
//! ([`cp`]): the raw result, or the kernel's error as an [`io::Error`]; a cancel is acted on by
//! unwinding. The safe functions of `io`, `net` and `process` call these; the rows marked `own`
//! are written by hand there (named as such).
//!
//! # Safety (every function here)
//! The arguments must be valid for the C library function of the same name: every pointer
//! valid for the reads and writes that call makes, for the sizes passed.
#![allow(dead_code)] // a row the Rust face has on one platform only is unused on others

use super::conv::args;
use super::syscall::cp;
use crate::sys::calls;
#[allow(unused_imports)] // each row names the C types of its own signature
use crate::sys::points::ctypes::*;
use std::io;

macro_rules! rust_face {
    (row [point $ip:ident $tc:ident] $($row:tt)*) => { rust_face!(@define $($row)*); };
    (row [linux $ip:ident $tc:ident] $($row:tt)*) => {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        rust_face!(@define $($row)*);
    };
    (@define $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty = $nr:ident ( $($reg:expr),* )) => {
        #[doc = concat!("`", stringify!($name), "` as a point (module documentation).")]
        #[inline(always)]
        pub(crate) unsafe fn $name($($arg: $t),*) -> io::Result<c_long> {
            // SAFETY: the caller's arguments, valid for the call (module documentation).
            unsafe { cp(calls::$nr, args!($($reg),*)) }
        }
    };
    ($($other:tt)*) => {};
}

crate::sys::points::table!(rust_face);
