//! The calling thread's cancelability: `tc_setcancelstate`, `tc_setcanceltype`, and
//! `tc_testcancel`.

use crate::threads;
use thread_cancel::c_abi;

/// `pthread_testcancel`.
#[no_mangle]
pub extern "C-unwind" fn tc_testcancel() {
    threads::point();
}

/// `pthread_setcancelstate`: `EINVAL` for a value other than ENABLE (0) / DISABLE (1). The old
/// state is the one the thread last set, as glibc: in a cleanup handler or a destructor run by a
/// cancellation or `pthread_exit`, the state it had then (acting disables cancellation for
/// good, so no second cancel acts there, without changing what it reports).
///
/// # Safety
/// `old` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_setcancelstate(state: i32, old: *mut i32) -> i32 {
    let Ok(new) = thread_cancel::CancelState::try_from(state) else {
        return libc::EINVAL;
    };
    let was = c_abi::set_cancel_state(new == thread_cancel::CancelState::Disabled);
    if !old.is_null() {
        // SAFETY: the caller passes null or a writable int.
        unsafe { *old = i32::from(was) };
    }
    if new == thread_cancel::CancelState::Enabled && c_abi::is_async() {
        threads::point(); // enabled with a request pending, asynchronous: at once (R03)
    }
    0
}

/// `pthread_setcanceltype`: `EINVAL` for a value other than DEFERRED (0) / ASYNCHRONOUS (1).
///
/// # Safety
/// `old` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_setcanceltype(kind: i32, old: *mut i32) -> i32 {
    let Ok(new) = thread_cancel::CancelType::try_from(kind) else {
        return libc::EINVAL;
    };
    let asynchronous = new == thread_cancel::CancelType::Asynchronous;
    let was = c_abi::set_async(asynchronous);
    if !old.is_null() {
        // SAFETY: the caller passes null or a writable int.
        unsafe { *old = i32::from(was) };
    }
    if asynchronous {
        threads::point();
    }
    0
}
