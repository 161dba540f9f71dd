//! The calls of P1, P2, P5 and P7 one at a time — ours, glibc's, and the baselines — shared by the
//! criterion benches (`p2_io`) and `compare`, and [`batch`], which times a batch of calls.
//!
//! ```
//! use std::fs::File;
//! use std::os::fd::AsFd;
//! use thread_cancel_bench::micro;
//! let zero = File::open("/dev/zero").unwrap();
//! let mut b = [0xffu8; 1];
//! assert_eq!(micro::read_ours(zero.as_fd(), &mut b), 1);
//! assert_eq!(micro::read_raw(zero.as_fd(), &mut b), 1);
//! assert_eq!(micro::read_glibc(zero.as_fd(), &mut b), 1);
//! assert_eq!(b, [0]);
//! let per_call = micro::batch(100, || {
//!     micro::testcancel_ours();
//!     Ok(())
//! })
//! .unwrap();
//! assert!(per_call >= 0.0);
//! let scope = thread_cancel::CancelScope::new();
//! assert_eq!(micro::scope_run(&scope), 1);
//! assert_eq!(micro::with_timeout_5s(), 1);
//! assert_eq!(micro::catch_unwind_alone(), 1);
//! ```

use std::hint::black_box;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::{Duration, Instant};

/// Runs `f` `n` times (at least once) and returns the mean time of one call in nanoseconds
/// (fractions kept).
///
/// # Errors
///
/// The first error of `f`.
pub fn batch(n: u32, mut f: impl FnMut() -> io::Result<()>) -> io::Result<f64> {
    let n = n.max(1);
    let start = Instant::now();
    for _ in 0..n {
        f()?;
    }
    Ok(ns(start.elapsed()) / f64::from(n))
}

/// `d` in nanoseconds.
pub fn ns(d: Duration) -> f64 {
    d.as_secs_f64() * 1e9
}

/// P1, ours: one `thread_cancel::testcancel()`, then an opaque `black_box(())`, which the
/// compiler must assume reads and writes any memory (the thread-locals included), so no call
/// is merged with or hoisted out of the next.
#[inline]
pub fn testcancel_ours() {
    thread_cancel::testcancel();
    black_box(());
}

/// P1, glibc: the mean time in nanoseconds of one `pthread_testcancel()` in a C loop of `n`
/// (one FFI call for all `n`, so the time is glibc's own).
pub fn testcancel_glibc_batch(n: u32) -> f64 {
    let n = n.max(1);
    let start = Instant::now();
    crate::glibc_testcancel_n(black_box(u64::from(n)));
    ns(start.elapsed()) / f64::from(n)
}

/// P2, ours: `thread_cancel::io::read` of 1 byte (panics on error: `fd` must not fail).
#[inline]
pub fn read_ours(fd: BorrowedFd<'_>, buf: &mut [u8; 1]) -> usize {
    thread_cancel::io::read(black_box(fd), black_box(buf)).expect("io::read")
}

/// P2, ours: `thread_cancel::io::write` of 1 byte (panics on error).
#[inline]
pub fn write_ours(fd: BorrowedFd<'_>, buf: &[u8; 1]) -> usize {
    thread_cancel::io::write(black_box(fd), black_box(buf)).expect("io::write")
}

/// `syscall(nr, fd, buf, 1)`.
///
/// # Safety
///
/// `nr` is `SYS_read` and `buf` is valid for writing 1 byte, or `SYS_write` and `buf` is valid
/// for reading 1 byte.
#[inline]
unsafe fn syscall_1(nr: libc::c_long, fd: BorrowedFd<'_>, buf: *mut u8) -> libc::c_long {
    // SAFETY: `fd` is open (it is borrowed for the call); the caller vouches for `buf` in the
    // direction `nr` moves the 1 byte passed as the length.
    unsafe { libc::syscall(nr, black_box(fd.as_raw_fd()), buf, 1usize) }
}

/// The floor of P2: `syscall(SYS_read, fd, buf, 1)`; the bytes read, or -1.
#[inline]
pub fn read_raw(fd: BorrowedFd<'_>, buf: &mut [u8; 1]) -> libc::c_long {
    // SAFETY: `SYS_read` into `buf`, a writable buffer of 1 byte.
    unsafe { syscall_1(libc::SYS_read, fd, black_box(buf).as_mut_ptr()) }
}

/// The floor of P2: `syscall(SYS_write, fd, buf, 1)`; the bytes written, or -1.
#[inline]
pub fn write_raw(fd: BorrowedFd<'_>, buf: &[u8; 1]) -> libc::c_long {
    // SAFETY: `SYS_write` from `buf`, a readable buffer of 1 byte (the kernel only reads it).
    unsafe { syscall_1(libc::SYS_write, fd, black_box(buf).as_ptr().cast_mut()) }
}

/// P2, glibc: its `read` wrapper (a cancellation point in a multi-threaded process).
#[inline]
pub fn read_glibc(fd: BorrowedFd<'_>, buf: &mut [u8; 1]) -> isize {
    let buf = black_box(buf);
    // SAFETY: as for `read_raw`.
    unsafe { libc::read(black_box(fd.as_raw_fd()), buf.as_mut_ptr().cast(), 1) }
}

/// P2, glibc: its `write` wrapper.
#[inline]
pub fn write_glibc(fd: BorrowedFd<'_>, buf: &[u8; 1]) -> isize {
    let buf = black_box(buf);
    // SAFETY: as for `write_raw`.
    unsafe { libc::write(black_box(fd.as_raw_fd()), buf.as_ptr().cast(), 1) }
}

/// P5, ours: `thread_cancel::spawn` of an empty closure, then `join`.
///
/// # Errors
///
/// If the thread did not return (it cannot be canceled: nobody has its handle).
pub fn spawn_join_ours() -> io::Result<()> {
    match thread_cancel::spawn(|| ()).join().value() {
        Some(()) => Ok(()),
        None => Err(io::Error::other("the empty thread did not return")),
    }
}

/// P5, ours: a [lightweight](thread_cancel::Builder::lightweight) thread (made with
/// `pthread_create`, no `std` spawn) of an empty closure, then `join`.
///
/// # Errors
///
/// If the thread cannot be created, or did not return.
pub fn spawn_join_lightweight() -> io::Result<()> {
    let h = thread_cancel::Builder::new().lightweight().spawn(|| ())?;
    match h.join().value() {
        Some(()) => Ok(()),
        None => Err(io::Error::other("the empty thread did not return")),
    }
}

/// The floor of P5: `std::thread::spawn` of an empty closure, then `join`.
///
/// # Errors
///
/// If the thread panicked (it cannot).
pub fn spawn_join_std() -> io::Result<()> {
    std::thread::spawn(|| ())
        .join()
        .map_err(|_| io::Error::other("the empty thread panicked"))
}

/// P7, ours: `scope.run(|| black_box(1))` on a scope made once and reused (nothing canceled).
///
/// # Panics
///
/// If the run returns `Err` (the scope is canceled: it must not be).
#[inline]
pub fn scope_run(scope: &thread_cancel::CancelScope) -> i32 {
    black_box(scope).run(|| black_box(1)).expect("a live scope")
}

/// The floor of `with_timeout` where a clock read is dear: `Instant::now()` and a `run` on a
/// reused scope, what a `with_timeout` must do at the least (compute its deadline, run).
///
/// # Panics
///
/// Never: the scope is not canceled.
pub fn clock_and_scope_run(scope: &thread_cancel::CancelScope) -> i32 {
    black_box(std::time::Instant::now());
    scope_run(scope)
}

/// P7, ours: `with_timeout(5 s, || black_box(1))`: a scope on the stack whose deadline is
/// registered in the thread's slot (and withdrawn) each time.
///
/// # Panics
///
/// If it times out (5 s: it cannot).
#[inline]
pub fn with_timeout_5s() -> i32 {
    thread_cancel::with_timeout(black_box(Duration::from_secs(5)), || black_box(1))
        .expect("no timeout")
}

/// The floor of P7: `std::panic::catch_unwind(|| black_box(1))` alone, what any `run` must
/// do to catch the unwind.
///
/// # Panics
///
/// If the closure panicked (it cannot).
#[inline]
pub fn catch_unwind_alone() -> i32 {
    std::panic::catch_unwind(|| black_box(1)).expect("no panic")
}
