//! P4: cancellation latency with the target blocked in a system-call cancellation point —
//! `read` on an empty pipe, `accept` on a listening TCP socket nobody connects to, `poll` on an
//! empty pipe — ours (`thread_cancel::io`) beside glibc's `pthread_cancel` of a C thread
//! blocked in glibc's own `read`, `accept`, `poll`. Target: ours <= glibc.
//!
//! The protocol is P3's (see [`crate::p3`]): every sample creates a fresh target that pushes
//! a cleanup handler recording `CLOCK_MONOTONIC`, waits until the kernel reports it asleep in
//! the expected system call ([`wait_blocked`]) and [`SETTLE`]s, takes the time, cancels, and
//! joins. The descriptors are created per sample and closed only after the join, so a target
//! never sees end-of-file or a closed socket: it leaves its call only through the cancellation.
//!
//! Where our threads block: `io::read` is `read`, `io::accept` is `accept4`, `io::poll` is
//! `ppoll`. Where glibc's do (x86_64): `read`, `accept` (aarch64: `accept`), `poll` (aarch64:
//! `ppoll`).
//!
//! ```
//! use thread_cancel_bench::p4::{sample, Scenario};
//! for s in Scenario::ALL {
//!     let d = sample(s).unwrap();
//!     assert!(d < std::time::Duration::from_secs(10), "{}: {d:?}", s.name());
//! }
//! ```
//!
//! [`SETTLE`]: crate::p3::SETTLE

use crate::p3::{ours_blocked, target_cpu_c, wait_blocked};
use std::io;
use std::marker::PhantomData;
use std::net::TcpListener;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::time::Duration;

/// Where the target blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// `read` of 1 byte on an empty pipe whose write end stays open.
    Read,
    /// `accept` on a TCP listener on 127.0.0.1 that nobody connects to.
    Accept,
    /// `poll` for `POLLIN` on an empty pipe, no time limit.
    Poll,
}

impl Call {
    /// The three calls of P4.
    pub const ALL: [Call; 3] = [Call::Read, Call::Accept, Call::Poll];

    /// `enum glibc_p4_kind` in the C shim.
    fn kind(self) -> libc::c_int {
        match self {
            Call::Read => 0,
            Call::Accept => 1,
            Call::Poll => 2,
        }
    }

    /// The system calls our target blocks in.
    fn ours_syscalls(self) -> &'static [libc::c_long] {
        match self {
            Call::Read => &[libc::SYS_read],
            Call::Accept => &[libc::SYS_accept4],
            Call::Poll => &[libc::SYS_ppoll],
        }
    }

    /// The system calls a glibc target blocks in (glibc picks `accept` or `accept4`, `poll` or
    /// `ppoll` by architecture and version; either is accepted).
    fn glibc_syscalls(self) -> &'static [libc::c_long] {
        match self {
            Call::Read => &[libc::SYS_read],
            Call::Accept => &[libc::SYS_accept, libc::SYS_accept4],
            #[cfg(target_arch = "x86_64")]
            Call::Poll => &[libc::SYS_poll, libc::SYS_ppoll],
            #[cfg(not(target_arch = "x86_64"))]
            Call::Poll => &[libc::SYS_ppoll],
        }
    }
}

/// One way of measuring a cancellation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// Ours: a `thread_cancel` thread blocked in `thread_cancel::io::*`.
    Ours(Call),
    /// glibc: a C thread blocked in glibc's own call, canceled with `pthread_cancel`.
    Glibc(Call),
    /// Diagnostic: as `Ours(call)`, but the target first writes to every page of its
    /// alternate signal stack (the one `std` gives each thread). The cancel signal's handler
    /// is installed with `SA_ONSTACK`, so in a fresh thread the kernel's signal frame is the
    /// first write to those pages: this row shows what those page faults cost.
    OursWarmAltstack(Call),
}

impl Scenario {
    /// The six scenarios of P4: ours then glibc's, for each call.
    pub const MAIN: [Scenario; 6] = [
        Scenario::Ours(Call::Read),
        Scenario::Ours(Call::Accept),
        Scenario::Ours(Call::Poll),
        Scenario::Glibc(Call::Read),
        Scenario::Glibc(Call::Accept),
        Scenario::Glibc(Call::Poll),
    ];

    /// Extra measurements that split the latency into its parts (for the analysis).
    pub const DIAGNOSTICS: [Scenario; 1] = [Scenario::OursWarmAltstack(Call::Read)];

    /// [`MAIN`](Self::MAIN) then [`DIAGNOSTICS`](Self::DIAGNOSTICS).
    pub const ALL: [Scenario; 7] = [
        Scenario::Ours(Call::Read),
        Scenario::Ours(Call::Accept),
        Scenario::Ours(Call::Poll),
        Scenario::Glibc(Call::Read),
        Scenario::Glibc(Call::Accept),
        Scenario::Glibc(Call::Poll),
        Scenario::OursWarmAltstack(Call::Read),
    ];

    /// A short label for tables and benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Ours(Call::Read) => "ours io::read (pipe)",
            Scenario::Ours(Call::Accept) => "ours io::accept (TCP)",
            Scenario::Ours(Call::Poll) => "ours io::poll (pipe)",
            Scenario::Glibc(Call::Read) => "glibc read (pipe)",
            Scenario::Glibc(Call::Accept) => "glibc accept (TCP)",
            Scenario::Glibc(Call::Poll) => "glibc poll (pipe)",
            Scenario::OursWarmAltstack(Call::Read) => "diag: ours read, warm altstk",
            Scenario::OursWarmAltstack(Call::Accept) => "diag: ours accept, warm altstk",
            Scenario::OursWarmAltstack(Call::Poll) => "diag: ours poll, warm altstk",
        }
    }

    /// The glibc scenario on the same call, for ours; `None` for glibc's own.
    pub fn glibc_counterpart(self) -> Option<Scenario> {
        match self {
            Scenario::Ours(c) | Scenario::OursWarmAltstack(c) => Some(Scenario::Glibc(c)),
            Scenario::Glibc(_) => None,
        }
    }
}

/// The descriptors of one sample: what the target blocks on, and what keeps it blocked (the
/// pipe's write end), closed only after the target was joined.
struct Fds {
    /// The pipe's read end or the listener.
    wait_on: OwnedFd,
    /// The pipe's write end (`None` for the listener).
    _keep: Option<OwnedFd>,
}

impl Fds {
    fn new(call: Call) -> io::Result<Self> {
        match call {
            Call::Read | Call::Poll => {
                let (r, w) = io::pipe()?;
                Ok(Fds {
                    wait_on: r.into(),
                    _keep: Some(w.into()),
                })
            }
            Call::Accept => Ok(Fds {
                wait_on: TcpListener::bind("127.0.0.1:0")?.into(),
                _keep: None,
            }),
        }
    }
}

/// Takes one sample of `scenario`: creates its descriptors and target, waits until the target
/// is blocked, measures one cancellation, joins the target.
///
/// # Errors
///
/// Descriptor or thread creation failing, the target not blocking within seconds, or the
/// target not ending as expected (not canceled, no handler run).
pub fn sample(scenario: Scenario) -> io::Result<Duration> {
    match scenario {
        Scenario::Ours(call) => ours(call, false),
        Scenario::Glibc(call) => glibc(call),
        Scenario::OursWarmAltstack(call) => ours(call, true),
    }
}

fn ours(call: Call, warm_altstack: bool) -> io::Result<Duration> {
    let fds = Fds::new(call)?;
    let fd = fds.wait_on.try_clone()?;
    let body = move || {
        if warm_altstack {
            touch_altstack();
        }
        block(call, fd.as_fd())
    };
    let r = ours_blocked(body, call.ours_syscalls());
    drop(fds); // only now: the target is joined
    r
}

/// Blocks in `call` on `fd` until canceled.
fn block(call: Call, fd: BorrowedFd<'_>) -> ! {
    match call {
        Call::Read => loop {
            let _ = thread_cancel::io::read(fd, &mut [0u8; 1]);
        },
        Call::Accept => loop {
            let _ = thread_cancel::io::accept(fd);
        },
        Call::Poll => loop {
            let mut p = [libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            let _ = thread_cancel::io::poll(&mut p, -1);
        },
    }
}

/// Writes to every page of the calling thread's alternate signal stack, if it has one.
fn touch_altstack() {
    // SAFETY: an all-zero `stack_t` is a valid value to be overwritten; `sigaltstack` with a
    // null new stack only reports the current one into `ss`.
    let ss = unsafe {
        let mut ss: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut ss) != 0 {
            return;
        }
        ss
    };
    if ss.ss_flags & (libc::SS_DISABLE | libc::SS_ONSTACK) != 0 || ss.ss_sp.is_null() {
        return;
    }
    let base = ss.ss_sp.cast::<u8>();
    for off in (0..ss.ss_size).step_by(4096) {
        // SAFETY: `[ss_sp, ss_sp + ss_size)` is this thread's alternate signal stack, mapped
        // readable and writable by whoever installed it (`std`), and not in use (the thread
        // is not running a handler on it: `SS_ONSTACK` is clear); `off < ss_size`.
        unsafe { std::ptr::write_volatile(base.add(off), 0) };
    }
}

fn glibc(call: Call) -> io::Result<Duration> {
    let fds = Fds::new(call)?;
    let target = GlibcTarget::start(call, fds.wait_on.as_fd())?;
    wait_blocked(target.tid(), call.glibc_syscalls())?; // on error, Drop cancels and joins
    let r = target.fire();
    drop(fds);
    r
}

// ---------------------------------------------------------------------------------------------
// glibc, through the C shim.

mod ffi {
    use libc::c_int;

    /// `struct glibc_p4_target`, opaque.
    #[repr(C)]
    pub(crate) struct Target {
        _private: [u8; 0],
    }

    extern "C" {
        pub(crate) fn glibc_p4_start(
            kind: c_int,
            fd: c_int,
            cpu: c_int,
            out: *mut *mut Target,
        ) -> c_int;
        pub(crate) fn glibc_p4_tid(t: *const Target) -> c_int;
        pub(crate) fn glibc_p4_fire(t: *mut Target) -> i64;
    }
}

/// A C thread created by glibc's `pthread_create`, about to block in glibc's `read`, `accept`
/// or `poll` on a descriptor it borrows, with a cleanup handler pushed that records the time it
/// starts. Dropping it unmeasured still cancels and joins the thread.
#[derive(Debug)]
pub struct GlibcTarget<'fd> {
    ptr: NonNull<ffi::Target>,
    _fd: PhantomData<BorrowedFd<'fd>>,
}

impl<'fd> GlibcTarget<'fd> {
    /// Creates the thread (on [`crate::p3::target_cpu`], if set) to block in `call` on `fd`;
    /// returns once it is about to block.
    ///
    /// # Errors
    ///
    /// The error number of `pthread_create` or `pthread_setaffinity_np` (or `ENOMEM`).
    pub fn start(call: Call, fd: BorrowedFd<'fd>) -> io::Result<Self> {
        let mut out: *mut ffi::Target = std::ptr::null_mut();
        // SAFETY: `out` is a valid place for the C function to store a pointer; it only does
        // so (with a non-null pointer it allocated) when it returns 0. The thread it creates
        // runs C code only; the descriptor it uses stays open while the returned value lives
        // (the `'fd` borrow), and the value's `fire`/`Drop` join the thread.
        let rc =
            unsafe { ffi::glibc_p4_start(call.kind(), fd.as_raw_fd(), target_cpu_c(), &mut out) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        NonNull::new(out)
            .map(|ptr| GlibcTarget {
                ptr,
                _fd: PhantomData,
            })
            .ok_or_else(|| io::Error::other("glibc_p4_start returned no target"))
    }

    /// The kernel thread id of the target thread.
    pub fn tid(&self) -> i32 {
        // SAFETY: `ptr` came from `glibc_p4_start` and has not been passed to `glibc_p4_fire`
        // (which consumes `self`), so it points to a live target; the C side only reads an
        // atomic field.
        unsafe { ffi::glibc_p4_tid(self.ptr.as_ptr()) }
    }

    /// Cancels the thread with `pthread_cancel`, joins it, and returns the time from just
    /// before `pthread_cancel` to the cleanup handler starting.
    ///
    /// # Errors
    ///
    /// The error number of `pthread_cancel` or `pthread_join`; `EINVAL` if the thread was not
    /// canceled or its handler did not run.
    pub fn fire(self) -> io::Result<Duration> {
        let ptr = self.ptr;
        std::mem::forget(self);
        // SAFETY: `ptr` came from `glibc_p4_start` and is passed to `glibc_p4_fire` exactly once
        // (`self` is forgotten, so `Drop` will not pass it again); the C side cancels and joins
        // a C-only thread (no Rust frames are unwound) and frees the target.
        let r = unsafe { ffi::glibc_p4_fire(ptr.as_ptr()) };
        match u64::try_from(r) {
            Ok(ns) => Ok(Duration::from_nanos(ns)),
            Err(_) => Err(io::Error::from_raw_os_error(
                i32::try_from(-r).unwrap_or(libc::EINVAL),
            )),
        }
    }
}

impl Drop for GlibcTarget<'_> {
    fn drop(&mut self) {
        // SAFETY: as in `fire`: `ptr` is live and is consumed here, once.
        unsafe {
            ffi::glibc_p4_fire(self.ptr.as_ptr());
        }
    }
}
