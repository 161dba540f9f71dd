//! The threads of the C ABI, by job: ids (`ids.rs`), creation and the end of a created thread
//! (`create.rs`), join and detach (`join.rs`), cancellation requests (`cancel.rs`), glibc's other
//! calls on a `pthread_t` (`native.rs`), `tc_exit` and acting on a cancellation (`exit.rs`), the
//! end of a thread not created here, main's included (`main_end.rs`), the system ids of
//! threads not created here (`foreign.rs`), and, on glibc, the `pthread_create` of the code built
//! without the header, whose threads are known from their start (`adopt.rs`).
//!
//! The main thread and threads the C library created act on a cancellation in C code too
//! (`c_abi::in_c_region`); they end in [`main_end::foreign_thread_ends`].

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod adopt;
mod cancel;
mod create;
mod exit;
mod foreign;
mod ids;
mod join;
mod main_end;
mod native;

use std::ffi::c_void;

pub(crate) use exit::{act, async_act, finish_in_region, point};
pub(crate) use foreign::enter as enter_point;
pub(crate) use main_end::note_threads_before_main;

/// Called by the header's constructor: keeps the definitions the library makes for the whole
/// process in a program linked with the static library (a static link takes an object of the
/// archive only for a symbol nothing before it defined).
pub(crate) fn keep_process_definitions() {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    std::hint::black_box(adopt::linked());
}

/// `PTHREAD_CANCELED`: `(void *)-1` in glibc, musl and bionic.
const CANCELED: *mut c_void = usize::MAX as *mut c_void;
