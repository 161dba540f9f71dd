//! Platform layer: everything that talks to the operating system lives below this module.
//!
//! The rest of the crate sees a narrow interface:
//!
//! - [`calls`]: the system calls the rest of the crate makes through [`syscall_cp`], by name
//!   (`calls::READ`, ...), and the kernel facts their callers need; the C ABI crate uses the
//!   same names (`thread_cancel::ffi::calls`). No code outside `sys/` names a system-call
//!   number.
//! - [`futex_wait`] / [`futex_wake`]: block on a 32-bit word until it changes or a deadline passes.
//! - [`syscall_cp`]: a system call that a cancellation request aborts only if it had no effect;
//!   [`kill`] sends the cancel signal to a thread blocked in one; [`set_signal`] / [`signal`];
//!   [`prepare`] installs the handler, once, before any thread can make such a call.
//! - [`publish_in_syscall`] / [`observe_in_syscall`]: the two sides of the asymmetric fence
//!   between a thread entering a cancellable call and a canceler deciding to signal it.
//! - [`drain_cancel_signal`]: takes back a cancel signal sent to the calling thread that is
//!   still pending, and unblocks it (a scope's `run` ends with nothing on its way).
//! - [`clock`]: the coarse monotonic clock, a cheap lower bound of `Instant::now()` for
//!   deadlines still far ahead.
//! - [`process`] (shared by every platform folder): a child process killed with its
//!   descendants (by pidfd, on Linux and Android; the direct child alone elsewhere), and the
//!   plain `poll`/`read` that collect what it left in its pipes.
//! - [`pthread`] (POSIX, shared by every platform folder): threads made with `pthread_create`
//!   directly (no `std` spawn), for `Builder::lightweight`.
//! - [`region_run`] / [`region_leave`]: run a function in an *asynchronous region* that the
//!   thread can leave from any instruction (abandoning the frames inside), by a call or, when
//!   the state word says so, by the cancel signal ([`RegionCtx`] describes one).
//!
//! Porting to another platform means adding one folder next to `linux/` that provides the same
//! functions. Targets without one get `portable/`, the fallback on `std` and POSIX (also chosen
//! on Linux with `--cfg thread_cancel_portable`): every own wait fully cancelable, system-call
//! points checked before and after the call only, no asynchronous regions (its module docs).

/// Whether a raw kernel result is a failure (`-4095..=-1`: `-errno`). A value below that range
/// is a result (`fcntl`'s `F_GETOWN` of a process group).
#[inline(always)]
pub const fn is_error(r: libc::c_long) -> bool {
    r < 0 && r >= -4095
}

pub(crate) mod clock;
pub mod points;
pub(crate) mod process;
pub(crate) mod pthread;

/// What the signal handler asks about the thread it interrupted. The answers come from the
/// thread's control block, which lives above this layer: the control layer registers its
/// table once ([`set_decisions`], before any thread can be signalled), so this layer depends on
/// nothing but the state word. Each function must be async-signal-safe.
pub(crate) struct Decisions {
    /// Whether the thread must act on a request now (the trampoline's test).
    pub(crate) cp_must_act: fn() -> bool,
    /// The thread's current asynchronous region, if it must leave it now.
    pub(crate) async_must_act: fn() -> Option<*mut RegionCtx>,
    /// Whether the thread is inside one of our system calls and must act on a request (the
    /// signal landed in a handler of the user's that interrupted the call).
    pub(crate) in_call_must_act: fn() -> bool,
}

#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
mod linux;
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
pub use linux::calls;
/// What only the C ABI's support (`c_abi`, feature `c-abi`) uses.
#[cfg(all(
    feature = "c-abi",
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
pub(crate) use linux::region::{
    abandoning_frames, boundary as region_boundary, has_act as region_has_act,
    leave as region_leave, resolve_sanitizer_hook,
};
#[cfg(all(
    feature = "c-abi",
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
pub(crate) use linux::syscall_cp::cancel_signal_set;
#[cfg(thread_cancel_interpose)]
pub(crate) use linux::syscall_cp::read_signal_from_environment;
/// The default cancel signal and the C library's own `SIGRTMIN`: for the C ABI's support and
/// for the interposed `__libc_current_sigrtmin`.
#[cfg(all(
    any(feature = "c-abi", thread_cancel_interpose),
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
pub(crate) use linux::syscall_cp::{default_signal, program_sigrtmin, sigrtmin};
#[cfg(thread_cancel_interpose)]
pub(crate) use linux::syscall_cp::{is_cancel_handler, own_signal_call};
/// Feature `interpose` on x86_64 Linux: the calling thread's control-block pointer in an
/// initial-exec thread-local slot (`control/tls.rs`).
#[cfg(thread_cancel_tls_slot)]
pub(crate) use linux::{current_slot, set_current_slot};
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
pub(crate) use linux::{
    fence::{
        asymmetric as fence_asymmetric, membarrier, observe as observe_in_syscall,
        publish as publish_in_syscall,
    },
    futex::{futex_wait, futex_wake, timespec},
    region::{run as region_run, Exit as RegionExit, RegionCtx, ASYNC_REGIONS},
    syscall_cp::{
        after_fork_in_child, arm_deadline_tick, drain as drain_cancel_signal, errno_location, kill,
        prepare, set_deadline_due, set_decisions, set_signal, signal, syscall_cp,
        without_cancel_signal, CpResult, DeadlineTick, SignalError, Target,
    },
};

#[cfg(any(
    not(any(target_os = "linux", target_os = "android")),
    thread_cancel_portable
))]
mod portable;
#[cfg(any(
    not(any(target_os = "linux", target_os = "android")),
    thread_cancel_portable
))]
pub use portable::calls;
#[cfg(any(
    not(any(target_os = "linux", target_os = "android")),
    thread_cancel_portable
))]
pub(crate) use portable::{
    fence::{
        asymmetric as fence_asymmetric, membarrier, observe as observe_in_syscall,
        publish as publish_in_syscall,
    },
    futex::{futex_wait, futex_wake, timespec},
    region::{run as region_run, Exit as RegionExit, RegionCtx, ASYNC_REGIONS},
    syscall_cp::{
        after_fork_in_child, arm_deadline_tick, drain as drain_cancel_signal, kill, prepare,
        set_deadline_due, set_decisions, set_signal, signal, syscall_cp, without_cancel_signal,
        CpResult, DeadlineTick, SignalError, Target,
    },
};
