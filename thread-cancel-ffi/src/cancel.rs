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
/// # Safety
/// `buffer` must be the one the matching push was given.
#[no_mangle]
pub unsafe extern "C" fn tc_cleanup_pop_buffer(buffer: *mut CleanupBuffer, execute: i32) {
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
    loop {
        let top = TOP.get();
        if top.is_null() {
            return;
        }
        // SAFETY: buffers on the stack are alive: their frames have not been left (acting
        // runs below them, before the region is left).
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

/// Runs the cleanup handlers and leaves the C region (cancellation or exit already begun).
pub(crate) fn finish_in_region() -> ! {
    run_cleanup_handlers();
    // SAFETY: the frames between here and the region's boundary are C frames and this
    // library's extern "C" frames, none of which holds a value with a destructor at the points
    // that call this.
    unsafe { ffi::c_leave() }
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
