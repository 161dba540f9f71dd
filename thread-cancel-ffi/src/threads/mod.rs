//! The threads of the C ABI, by job: ids (`ids.rs`), creation and the end of a created thread
//! (`create.rs`), join and detach (`join.rs`), cancellation requests (`cancel.rs`), glibc's other
//! calls on a `pthread_t` (`native.rs`), `tc_exit` and acting on a cancellation (`exit.rs`), the
//! end of a thread not created here, main's included (`main_end.rs`), the system ids of
//! threads not created here (`foreign.rs`), and, on glibc, the stacks of the threads created
//! here, which keep their ids from being reused (`stacks.rs`), and the C library's own
//! cancellation calls (`next.rs`), for the threads that are the C library's (see
//! `crate::plain`).
//!
//! The main thread and threads the C library created act on a cancellation in C code too
//! (`c_abi::in_c_region`); they end in [`main_end::foreign_thread_ends`].

mod cancel;
mod create;
mod exit;
mod foreign;
mod ids;
mod join;
mod main_end;
mod native;
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
pub(crate) mod next;
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod stacks;
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod system_owned;

use std::ffi::c_void;

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
pub(crate) use exit::resume_after_jump;
pub(crate) use exit::{act, async_act, finish_in_region, point};
pub(crate) use foreign::enter as enter_point;
pub(crate) use main_end::note_threads_before_main;
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
pub(crate) use {
    cancel::cancel_system_id, exit::tc_exit, ids::is_main_thread, system_owned::link_main_thread,
};

/// Before `main` (the header's constructor), on the main thread: gives it a control block and
/// its id, as its first `pthread_self` would, but with no thread-local destructor (registering
/// one from a plugin's constructor would keep the plugin loaded after `dlclose`; main's id and
/// block live as long as the process). Nothing on another thread (a plugin loaded later by
/// one), nor once it has an id.
pub(crate) fn know_main_thread() {
    if ids::MY_ID.get() == 0 && ids::is_main_thread() {
        thread_cancel::c_abi::link_for_the_process();
        #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
        system_owned::forget_main_thread();
        ids::give_id(|| Some(ids::registry()), false);
    }
}

/// `PTHREAD_CANCELED`: `(void *)-1` in glibc, musl and bionic.
const CANCELED: *mut c_void = usize::MAX as *mut c_void;
