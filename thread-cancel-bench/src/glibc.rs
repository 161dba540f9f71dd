//! The glibc side of the latency scenarios (P3, P4) and the signal floors of P4: a C thread
//! created by glibc's `pthread_create` blocks in one of glibc's waits or system calls
//! ([`Kind`]) with a cleanup handler pushed that records `CLOCK_MONOTONIC`; it is canceled with
//! `pthread_cancel` (the floor: signalled with `pthread_kill`) and joined, all in C
//! (`csrc/glibc_latency.c`).
//!
//! ```
//! use thread_cancel_bench::glibc::{latency, Kind};
//! let d = latency(Kind::Nanosleep, None).unwrap();
//! assert!(d < std::time::Duration::from_secs(10));
//! ```

use crate::target::{target_cpu_c, wait_blocked, SETTLE};
use crate::{c_started, ns_or_errno};
use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::ptr::NonNull;
use std::time::Duration;

/// What a glibc target thread does when it is canceled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Blocked in `nanosleep` (1 h).
    Nanosleep,
    /// Blocked in `pthread_cond_wait`, never signalled.
    CondWait,
    /// Running a loop of `pthread_testcancel()`.
    TestcancelSpin,
    /// Blocked in `read` of 1 byte on the descriptor (an empty pipe whose writer stays open).
    Read,
    /// Blocked in `accept` on the descriptor (a listener nobody connects to).
    Accept,
    /// Blocked in `poll` for `POLLIN` on the descriptor (an empty pipe), no time limit.
    Poll,
    /// The signal floor: blocked in `read` as [`Kind::Read`], but sent a plain signal
    /// (`pthread_kill`) instead of a cancel; the time is that of the signal handler starting.
    SignalRead,
    /// Blocked in `pthread_join` of a thread that does not end before the sample is over.
    Join,
    /// The signal floor in `accept`, as [`Kind::SignalRead`] in `read`: the kernel's way out of
    /// `accept` for a signal costs more than `read`'s (it frees the socket and the file it made for
    /// the connection before it waited), for any cancel that takes a signal.
    SignalAccept,
    /// The signal floor in `poll`, as [`Kind::SignalRead`] in `read`.
    SignalPoll,
}

impl Kind {
    /// `enum glibc_lat_kind` in the C shim.
    fn c_kind(self) -> libc::c_int {
        match self {
            Kind::Nanosleep => 0,
            Kind::CondWait => 1,
            Kind::TestcancelSpin => 2,
            Kind::Read => 3,
            Kind::Accept => 4,
            Kind::Poll => 5,
            Kind::SignalRead => 6,
            Kind::Join => 7,
            Kind::SignalAccept => 8,
            Kind::SignalPoll => 9,
        }
    }

    /// Whether the target waits on a descriptor the caller passes.
    pub fn needs_fd(self) -> bool {
        matches!(
            self,
            Kind::Read
                | Kind::Accept
                | Kind::Poll
                | Kind::SignalRead
                | Kind::SignalAccept
                | Kind::SignalPoll
        )
    }

    /// The system calls the target blocks in (empty: it does not block). glibc picks
    /// `clock_nanosleep` or `nanosleep`, `accept` or `accept4`, `poll` or `ppoll` by
    /// architecture and version; either is accepted.
    pub fn syscalls(self) -> &'static [libc::c_long] {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kind::Nanosleep => &[libc::SYS_clock_nanosleep, libc::SYS_nanosleep],
            #[cfg(not(target_arch = "x86_64"))]
            Kind::Nanosleep => &[libc::SYS_clock_nanosleep],
            Kind::CondWait | Kind::Join => &[libc::SYS_futex],
            Kind::TestcancelSpin => &[],
            Kind::Read | Kind::SignalRead => &[libc::SYS_read],
            Kind::Accept | Kind::SignalAccept => &[libc::SYS_accept, libc::SYS_accept4],
            #[cfg(target_arch = "x86_64")]
            Kind::Poll | Kind::SignalPoll => &[libc::SYS_poll, libc::SYS_ppoll],
            #[cfg(not(target_arch = "x86_64"))]
            Kind::Poll | Kind::SignalPoll => &[libc::SYS_ppoll],
        }
    }
}

mod ffi {
    use libc::c_int;

    /// `struct glibc_lat_target`, opaque.
    #[repr(C)]
    pub(crate) struct Target {
        _private: [u8; 0],
    }

    extern "C" {
        pub(crate) fn glibc_lat_start(
            kind: c_int,
            fd: c_int,
            cpu: c_int,
            out: *mut *mut Target,
        ) -> c_int;
        pub(crate) fn glibc_lat_tid(t: *const Target) -> c_int;
        pub(crate) fn glibc_lat_fire(t: *mut Target) -> i64;
        pub(crate) fn glibc_lat_floor_signal() -> c_int;
    }
}

/// The signal number the floors ([`Kind::SignalRead`], [`Kind::SignalAccept`],
/// [`Kind::SignalPoll`]) are sent.
pub fn floor_signal() -> i32 {
    // SAFETY: a pure C function without arguments (it only reads glibc's SIGRTMIN).
    unsafe { ffi::glibc_lat_floor_signal() }
}

/// A C thread about to block (or spin) as its [`Kind`] says, on a descriptor it borrows for
/// the kinds that need one, with a cleanup handler pushed that records the time it starts.
/// Dropping it unmeasured still cancels (or signals) and joins the thread.
#[derive(Debug)]
pub struct GlibcTarget<'fd> {
    ptr: NonNull<ffi::Target>,
    kind: Kind,
    _fd: PhantomData<BorrowedFd<'fd>>,
}

impl<'fd> GlibcTarget<'fd> {
    /// Creates the thread (on [`crate::target::target_cpu`], if set); returns once it is about to
    /// block (or spin).
    ///
    /// # Errors
    ///
    /// `EINVAL` if `kind` needs a descriptor and `fd` is `None`; the error number of
    /// `pthread_create`, `pthread_setaffinity_np` or `sigaction` (or `ENOMEM`).
    pub fn start(kind: Kind, fd: Option<BorrowedFd<'fd>>) -> io::Result<Self> {
        if kind.needs_fd() && fd.is_none() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let raw_fd = fd.map_or(-1, |f| f.as_raw_fd());
        let mut out: *mut ffi::Target = std::ptr::null_mut();
        // SAFETY: `out` is a valid place for the C function to store a pointer; it only does
        // so (with a non-null pointer it allocated) when it returns 0. The thread it creates
        // runs C code only; the descriptor it may use stays open while the returned value lives
        // (the `'fd` borrow), and the value's `fire`/`Drop` join the thread.
        let rc = unsafe { ffi::glibc_lat_start(kind.c_kind(), raw_fd, target_cpu_c(), &mut out) };
        Ok(GlibcTarget {
            ptr: c_started(rc, out, "glibc_lat_start")?,
            kind,
            _fd: PhantomData,
        })
    }

    /// The kernel thread id of the target thread.
    pub fn tid(&self) -> i32 {
        // SAFETY: `ptr` came from `glibc_lat_start` and has not been passed to `glibc_lat_fire`
        // (which consumes `self`), so it points to a live target; the C side only reads an
        // atomic field.
        unsafe { ffi::glibc_lat_tid(self.ptr.as_ptr()) }
    }

    /// Waits until the target is asleep in its system call (see [`wait_blocked`]); for a
    /// target that does not block, lets it run for [`SETTLE`].
    ///
    /// # Errors
    ///
    /// As [`wait_blocked`].
    pub fn wait_blocked(&self) -> io::Result<()> {
        if self.kind.syscalls().is_empty() {
            std::thread::sleep(SETTLE);
            Ok(())
        } else {
            wait_blocked(self.tid(), self.kind.syscalls())
        }
    }

    /// Cancels the thread with `pthread_cancel` (the floor: signals it with `pthread_kill`),
    /// joins it, and returns the time from just before that call to the handler starting.
    ///
    /// # Errors
    ///
    /// The error number of `pthread_cancel`/`pthread_kill` or `pthread_join`; `EINVAL` if the
    /// thread did not end as expected or its handler did not run.
    pub fn fire(self) -> io::Result<Duration> {
        let ptr = self.ptr;
        std::mem::forget(self);
        // SAFETY: `ptr` came from `glibc_lat_start` and is passed to `glibc_lat_fire` exactly
        // once (`self` is forgotten, so `Drop` will not pass it again); the C side cancels and
        // joins a C-only thread (no Rust frames are unwound) and frees the target.
        ns_or_errno(unsafe { ffi::glibc_lat_fire(ptr.as_ptr()) })
    }
}

impl Drop for GlibcTarget<'_> {
    fn drop(&mut self) {
        // SAFETY: as in `fire`: `ptr` is live and is consumed here, once.
        unsafe {
            ffi::glibc_lat_fire(self.ptr.as_ptr());
        }
    }
}

/// One sample: start a target of `kind` (on `fd`, for the kinds that need one), wait until it
/// is blocked, cancel (or signal) it; the time from that call to its handler starting.
///
/// # Errors
///
/// As [`GlibcTarget::start`], [`GlibcTarget::wait_blocked`] and [`GlibcTarget::fire`].
pub fn latency(kind: Kind, fd: Option<BorrowedFd<'_>>) -> io::Result<Duration> {
    let target = GlibcTarget::start(kind, fd)?;
    target.wait_blocked()?; // on error, Drop cancels and joins
    target.fire()
}
