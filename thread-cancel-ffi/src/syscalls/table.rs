//! The C ABI's face of the table of points (`thread-cancel/src/sys/points.rs`): `tc_NAME` for
//! each row whose `tc` column is `point`, made from the row (its C signature, its system call
//! and registers) as every other point of the C ABI: the call through
//! `thread_cancel::c_abi::syscall_point`, the C convention, acting on a cancel. The rows marked
//! `own` are written by hand in the family files beside this one.
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use super::c;
// The bases of the checked forms that the C ABI writes by hand (`own` rows).
use super::poll::{tc_poll as poll, tc_ppoll as ppoll};
use thread_cancel::c_abi::calls;
#[allow(unused_imports)] // the C types of the table's signatures
use thread_cancel::c_abi::points::ctypes::*;

macro_rules! tc_face {
    (row [$rs:ident $ip:ident point] $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty
        = $nr:ident ( $($reg:expr),* )) => {
        #[doc = concat!("`", stringify!($name), "` as a cancellation point.")]
        #[export_name = concat!("tc_", stringify!($name))]
        pub unsafe extern "C-unwind" fn $name($($arg: $t),*) -> $ret {
            // SAFETY: the caller's arguments (module docs).
            unsafe { c(calls::$nr, args!($($reg),*)) as $ret }
        }
    };
    (chk $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty
        = $base:ident ( $($barg:expr),* ) if $cond:block) => {
        #[doc = concat!("`", stringify!($name), "`: `tc_", stringify!($base), "` as C code built \
            with `_FORTIFY_SOURCE` calls it (the compatibility header redirects it here).")]
        #[export_name = concat!("tc_", stringify!($name))]
        pub unsafe extern "C-unwind" fn $name($($arg: $t),*) -> $ret {
            thread_cancel::c_abi::conv::fortify_check($cond);
            // SAFETY: the caller's arguments (module docs), checked as glibc checks them.
            unsafe { $base($($barg),*) }
        }
    };
    ($($other:tt)*) => {};
}

thread_cancel::__thread_cancel_points!(tc_face);
