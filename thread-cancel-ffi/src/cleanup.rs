//! The cleanup-handler stack of C threads: `tc_cleanup_push_buffer` / `tc_cleanup_pop_buffer`
//! (behind the header's `tc_cleanup_push` / `tc_cleanup_pop`), and running the handlers when a
//! thread acts on a cancellation or exits.

use std::cell::Cell;
use std::ffi::c_void;

/// The cleanup buffer of `tc_cleanup_push` (layout shared with `thread_cancel.h`).
#[repr(C)]
pub struct CleanupBuffer {
    routine: Option<unsafe extern "C-unwind" fn(*mut c_void)>,
    arg: *mut c_void,
    prev: *mut CleanupBuffer,
}

thread_local! {
    /// The top of the calling thread's cleanup stack (buffers live in the C frames).
    static TOP: Cell<*mut CleanupBuffer> = const { Cell::new(std::ptr::null_mut()) };
}

/// `tc_cleanup_push_buffer`: pushes `routine(arg)` with `buffer` (in the caller's frame).
///
/// # Safety
/// `buffer` must stay valid until the matching `tc_cleanup_pop_buffer` (the macros ensure it).
#[no_mangle]
pub unsafe extern "C" fn tc_cleanup_push_buffer(
    buffer: *mut CleanupBuffer,
    routine: Option<unsafe extern "C-unwind" fn(*mut c_void)>,
    arg: *mut c_void,
) {
    // SAFETY: the caller passes a writable buffer.
    unsafe {
        buffer.write(CleanupBuffer {
            routine,
            arg,
            prev: TOP.get(),
        })
    };
    // The buffer is complete before it is reachable (an asynchronous cancellation may run the
    // list at any instruction).
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
    TOP.set(buffer);
}

/// `tc_cleanup_pop_buffer`: pops `buffer` (the top) and runs it if `execute` is nonzero.
///
/// Tolerant, for the C++ form of the macros (a destructor pops): a buffer that is no longer on
/// the stack (its handler already ran) is ignored; entries above `buffer` (deeper on the stack:
/// left by an exception that passed C frames) are dropped without being read.
///
/// # Safety
/// `buffer` must be the one the matching push was given.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_cleanup_pop_buffer(buffer: *mut CleanupBuffer, execute: i32) {
    let top = TOP.get();
    // The stack grows down: a live buffer above (deeper than) `buffer` has a lower address.
    if top.is_null() || (top != buffer && (top as usize) > (buffer as usize)) {
        return; // already run and unlinked
    }
    // SAFETY: pushed by `tc_cleanup_push_buffer` and still in the caller's frame.
    let b = unsafe { &*buffer };
    TOP.set(b.prev);
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
    if execute != 0 {
        if let Some(r) = b.routine {
            // SAFETY: a C cleanup routine with the argument it was pushed with.
            unsafe { r(b.arg) };
        }
    }
}

/// Whether `buffer` is on the calling thread's cleanup stack.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
pub(crate) fn is_linked(buffer: *mut CleanupBuffer) -> bool {
    let mut p = TOP.get();
    // The stack grows down: the entries are in rising address order from the top.
    while !p.is_null() && (p as usize) <= (buffer as usize) {
        if p == buffer {
            return true;
        }
        // SAFETY: a pushed buffer, still in its C frame (entries are unlinked before their
        // frames end).
        p = unsafe { (*p).prev };
    }
    false
}

/// Runs and pops every cleanup handler of the calling thread, last pushed first.
pub(crate) fn run_cleanup_handlers() {
    run_cleanup_handlers_below(usize::MAX);
}

/// Runs and pops, last pushed first, the cleanup handlers whose buffers lie below `bound` on
/// the stack (in frames a forced unwind has left), stopping at the first that does not.
pub(crate) fn run_cleanup_handlers_below(bound: usize) {
    loop {
        let top = TOP.get();
        if top.is_null() || top as usize >= bound {
            return;
        }
        // SAFETY: buffers on the stack are alive: the frames the unwind has left are below
        // the unwinder's own frames, which run this (nothing has overwritten them), and the
        // others have not been left.
        let b = unsafe { &*top };
        TOP.set(b.prev);
        if let Some(r) = b.routine {
            // SAFETY: as in `tc_cleanup_pop_buffer`.
            unsafe { r(b.arg) };
        }
    }
}
