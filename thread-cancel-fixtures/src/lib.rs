//! C code that thread-cancel's tests of feature `interpose` link: a C library that blocks in
//! `read` and the C library's other blocking functions, built as a static library and as a
//! shared object (`build.rs`). Not published; a dev-dependency only.
#![cfg(target_os = "linux")]

use libc::{c_char, c_int, c_long, size_t};

extern "C" {
    /// `c/interpose_blocking_read.c`, from the static library: reads one byte from `fd` with
    /// `read`; the count, or `-errno`.
    pub fn interpose_test_c_read_one(fd: c_int) -> c_long;
    /// The same, from the same C code built into a shared object (`libinterpose_test_so.so`).
    pub fn interpose_test_so_read_one(fd: c_int) -> c_long;
    /// C threads of the static library, each blocked in an interposed function, canceled with
    /// the C library's `pthread_cancel`: a line per case in `out`; the number not canceled.
    pub fn interpose_test_c_glibc_cancels(
        fifo: *const c_char,
        out: *mut c_char,
        len: size_t,
    ) -> c_int;
    /// The same from the shared object.
    pub fn interpose_test_so_glibc_cancels(
        fifo: *const c_char,
        out: *mut c_char,
        len: size_t,
    ) -> c_int;
}
