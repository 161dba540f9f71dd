//! How a thread ends in C code: `tc_exit`, and acting on a cancellation (the cleanup handlers,
//! then the forced unwind of the C and C++ frames to the thread's C region).

use super::ids::is_main_thread;
use super::main_end::{end_main_thread, foreign_thread_ends};
use crate::{cleanup, SendPtr};
use std::ffi::c_void;
use thread_cancel::c_abi;

/// Acts on the request whose cancellation has begun (or begins it): cleanup handlers, then the
/// thread leaves its C region (the TSD destructors and the end of the thread follow there).
pub(crate) fn act() -> ! {
    c_abi::begin_cancel();
    finish_in_region()
}

/// At load (an `.init_array` entry, before any constructor of the program can make a call):
/// a blocking call of another library, reached by interposition, acts on the calling C
/// thread's cancellation as the library's own points do ([`act`]).
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
#[used]
#[link_section = ".init_array"]
static SET_FOREIGN_CALL_ACT: extern "C" fn() = {
    extern "C" fn set() {
        c_abi::set_foreign_call_act(act);
        #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
        c_abi::set_system_act(super::next::system_testcancel);
    }
    set
};

/// Unwinds the C and C++ frames, running the cleanup handlers and destructors, and leaves the
/// C region (cancellation or exit already begun); a thread the library did not create (no
/// region) is unwound to the end of its stack and ended by [`foreign_thread_ends`].
pub(crate) fn finish_in_region() -> ! {
    // SAFETY: the frames between here and the C frames are this library's, none of which
    // holds a value with a destructor or a `catch_unwind` at the points that call this; the C
    // and C++ frames up to the region's boundary (or the end of a foreign C thread's stack,
    // checked by `c_unwind`) are the thread's to unwind.
    unsafe { c_abi::c_unwind(cleanup::run_cleanup_handlers_below, foreign_thread_ends) }
}

/// Goes on with the unwind of [`finish_in_region`] after a cleanup handler registered with glibc's
/// macros (`plain.rs`) ran: the handler was reached by a jump back into the C frame that
/// registered it, which left the unwind.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
pub(crate) fn resume_after_jump() -> ! {
    // SAFETY: as `finish_in_region`; the unwind was left by the jump (the caller's check).
    unsafe { c_abi::c_unwind_resume(cleanup::run_cleanup_handlers_below, foreign_thread_ends) }
}

/// Acts if the calling thread (a C thread) must act now.
pub(crate) fn point() {
    super::foreign::enter();
    if c_abi::c_must_act() {
        act();
    }
}

/// The `act` of a thread's C region: reached from the cancel signal's handler when an
/// asynchronous request interrupts C code.
///
/// # Safety
/// Only as the region's `act` function.
pub(crate) unsafe extern "C-unwind" fn async_act(_region: *mut c_void) -> ! {
    act()
}

/// `pthread_exit`: cleanup handlers (last pushed first), thread-specific-data destructors,
/// then the thread ends; `tc_join` reports `value`. In a thread not created here whose
/// stack is C (the main thread of a C program, a thread the C library created) the same, its
/// C and C++ frames unwound, ended by [`foreign_thread_ends`]. In the main thread of a Rust
/// program, the cleanup handlers run, then [`end_main_thread`]. In any other thread it aborts
/// (such a thread cannot be ended without unwinding Rust frames).
#[no_mangle]
pub extern "C-unwind" fn tc_exit(value: *mut c_void) -> ! {
    if c_abi::in_c_region() {
        c_abi::begin_exit(SendPtr(value));
        finish_in_region();
    }
    if is_main_thread() {
        cleanup::run_cleanup_handlers();
        end_main_thread(value)
    }
    eprintln!("thread-cancel: tc_exit in a thread not created by tc_create; aborting");
    std::process::abort()
}
