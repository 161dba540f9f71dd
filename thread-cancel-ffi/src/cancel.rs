//! Cancel state and type, `tc_testcancel`, the cleanup-handler stack, and acting on a request.

use std::cell::Cell;
use std::ffi::c_void;
use thread_cancel::ffi;

/// The cleanup buffer of `tc_cleanup_push` (layout shared with `thread_cancel.h`).
#[repr(C)]
pub struct CleanupBuffer {
    routine: Option<unsafe extern "C" fn(*mut c_void)>,
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
    routine: Option<unsafe extern "C" fn(*mut c_void)>,
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
pub unsafe extern "C" fn tc_cleanup_pop_buffer(buffer: *mut CleanupBuffer, execute: i32) {
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

/// Runs and pops every cleanup handler of the calling thread, last pushed first (R07).
pub(crate) fn run_cleanup_handlers() {
    run_cleanup_handlers_below(usize::MAX);
}

/// Runs and pops, last pushed first, the cleanup handlers whose buffers lie below `bound` on
/// the stack (in frames a forced unwind has left), stopping at the first that does not.
fn run_cleanup_handlers_below(bound: usize) {
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

/// Acts on the request whose cancellation has begun (or begins it): cleanup handlers, then the
/// thread leaves its C region (the TSD destructors and the end of the thread follow there).
pub(crate) fn act() -> ! {
    ffi::begin_cancel();
    finish_in_region()
}

/// Unwinds the C and C++ frames, running the cleanup handlers and destructors, and leaves the
/// C region (cancellation or exit already begun); a thread the library did not create (no
/// region) is unwound to the end of its stack and ended by `threads::foreign_thread_ends`.
pub(crate) fn finish_in_region() -> ! {
    // SAFETY: the frames between here and the C frames are this library's, none of which
    // holds a value with a destructor or a `catch_unwind` at the points that call this; the C
    // and C++ frames up to the region's boundary (or the end of a foreign C thread's stack,
    // checked by `c_unwind`) are the thread's to unwind.
    unsafe {
        ffi::c_unwind(
            run_cleanup_handlers_below,
            crate::threads::foreign_thread_ends,
        )
    }
}

/// Acts if the calling thread (a C thread) must act now.
pub(crate) fn point() {
    if ffi::c_must_act() {
        act();
    }
}

/// The `act` of a thread's C region: reached from the cancel signal's handler when an
/// asynchronous request interrupts C code.
///
/// # Safety
/// Only as the region's `act` function.
pub(crate) unsafe extern "C" fn async_act(_region: *mut c_void) -> ! {
    act()
}

/// `pthread_testcancel`.
#[no_mangle]
pub extern "C" fn tc_testcancel() {
    point();
}

/// `pthread_setcancelstate`: `EINVAL` for a value other than ENABLE (0) / DISABLE (1).
///
/// # Safety
/// `old` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_setcancelstate(state: i32, old: *mut i32) -> i32 {
    let Ok(new) = thread_cancel::CancelState::try_from(state) else {
        return libc::EINVAL;
    };
    let was = ffi::set_disabled(new == thread_cancel::CancelState::Disabled);
    if !old.is_null() {
        // SAFETY: the caller passes null or a writable int.
        unsafe { *old = i32::from(was) };
    }
    if new == thread_cancel::CancelState::Enabled && ffi::is_async() {
        point(); // enabled with a request pending, asynchronous: at once (R03)
    }
    0
}

/// `pthread_setcanceltype`: `EINVAL` for a value other than DEFERRED (0) / ASYNCHRONOUS (1).
///
/// # Safety
/// `old` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_setcanceltype(kind: i32, old: *mut i32) -> i32 {
    let Ok(new) = thread_cancel::CancelType::try_from(kind) else {
        return libc::EINVAL;
    };
    let asynchronous = new == thread_cancel::CancelType::Asynchronous;
    let was = ffi::set_async(asynchronous);
    if !old.is_null() {
        // SAFETY: the caller passes null or a writable int.
        unsafe { *old = i32::from(was) };
    }
    if asynchronous {
        point();
    }
    0
}
