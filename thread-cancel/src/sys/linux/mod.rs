//! Linux: futex waits, the cancel signal and the system-call trampolines.

#[cfg(target_arch = "aarch64")]
mod aarch64;
pub mod calls;
pub(crate) mod fence;
pub(crate) mod futex;
pub(crate) mod region;
#[cfg(target_arch = "riscv64")]
mod riscv64;
pub(crate) mod syscall_cp;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
compile_error!("thread-cancel: no system-call trampoline for this architecture yet");
