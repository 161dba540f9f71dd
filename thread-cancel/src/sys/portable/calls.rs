//! The calls of the portable layer, by the names the Linux layer gives them (`calls::READ`,
//! ...). On Linux (the fallback forced with `--cfg thread_cancel_portable`) they are the same
//! system-call numbers, made with `libc::syscall`; on other systems each one is a function over
//! the C library's call, taking the Linux call's arguments (`other.rs`).

#[cfg(any(target_os = "linux", target_os = "android"))]
#[path = "../linux/calls.rs"]
mod imp;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
#[path = "other.rs"]
mod imp;

pub use imp::*;
