//! Linux: futex waits, the cancel signal and the system-call trampolines.

pub mod calls;
pub(crate) mod fence;
pub(crate) mod futex;
pub(crate) mod region;
pub(crate) mod syscall_cp;

/// The architecture, chosen here once: the trampoline, the region's entry and exit, and the
/// signal context's accessors, in assembly (`arch/x86_64.rs`, `arch/aarch64.rs`,
/// `arch/riscv64.rs`: the same items in each).
#[cfg_attr(target_arch = "x86_64", path = "arch/x86_64.rs")]
#[cfg_attr(target_arch = "aarch64", path = "arch/aarch64.rs")]
#[cfg_attr(target_arch = "riscv64", path = "arch/riscv64.rs")]
mod arch;

#[cfg(thread_cancel_tls_slot)]
pub(crate) use arch::{current_slot, set_current_slot};

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
compile_error!("thread-cancel: no system-call trampoline for this architecture yet");
