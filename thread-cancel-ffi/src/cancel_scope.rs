//! Operation-level cancellation for C (`tc_scope_*`): handles on `thread_cancel::CancelScope`.
//!
//! A `tc_scope_t *` is `Arc::into_raw` of an `Arc<CancelScope>`: each reference the caller
//! holds (from `tc_scope_new*`, `tc_scope_child`, `tc_scope_ref`) is one strong count, which
//! `tc_scope_free` drops. A run holds a clone of the scope of its own, so the handles may all be
//! freed while it runs.
//!
//! `tc_scope_run` runs the C function through `c_abi::c_scope_run`: inside the scope's `run`, in a
//! C region of its own whose boundary is the run, so that a C point that acts on the scope's
//! cancel unwinds the C frames (cleanup handlers, C++ destructors) only up to this run. A
//! thread's cancellation, `tc_exit`, or an enclosing scope's cancellation passes through: the
//! run reports it (`ScopeRun::Unwinding`) and this function goes on with the forced unwind of
//! its caller's C frames, from a frame that holds nothing to drop.

use crate::oom;
use std::ffi::{c_int, c_void};
use std::sync::Arc;
use std::time::Duration;
use thread_cancel::c_abi::{self, ScopeRun};
use thread_cancel::CancelScope;

/// `tc_scope_run`'s result when the scope was canceled by `tc_scope_cancel` (or a parent's).
const CANCELED: c_int = libc::ECANCELED;
/// `tc_scope_run`'s result when a deadline canceled the scope.
const TIMED_OUT: c_int = libc::ETIMEDOUT;

/// The C handle's target (opaque to C).
pub struct TcScope(CancelScope);

/// A new handle for `make()`, or null with `errno` `ENOMEM` if memory ran out meanwhile (the
/// scope is dropped: its memory goes back to the reserve).
fn new_handle(make: impl FnOnce() -> CancelScope) -> *const TcScope {
    let memory = oom::Watch::new();
    let handle = Arc::new(TcScope(make()));
    if memory.ran_out() {
        drop(handle);
        crate::set_errno(libc::ENOMEM);
        return std::ptr::null();
    }
    Arc::into_raw(handle)
}

/// The scope behind a non-null handle.
///
/// # Safety
/// `h` must be a live reference (not yet dropped by `tc_scope_free`).
unsafe fn scope<'a>(h: *const TcScope) -> &'a CancelScope {
    // SAFETY: forwarded from the caller: `h` came from `Arc::into_raw` and a strong count is
    // held for it, so the `TcScope` is alive while the caller uses it.
    unsafe { &(*h).0 }
}

/// `tc_scope_new`: a new scope, not canceled, without a deadline.
#[no_mangle]
pub extern "C" fn tc_scope_new() -> *const TcScope {
    new_handle(CancelScope::new)
}

/// `tc_scope_new_timeout_ns`: a new scope that cancels itself `ns` nanoseconds from now.
#[no_mangle]
pub extern "C" fn tc_scope_new_timeout_ns(ns: u64) -> *const TcScope {
    new_handle(|| CancelScope::with_timeout(Duration::from_nanos(ns)))
}

/// `tc_scope_child`: a new scope canceled with `parent`; null with `EINVAL` for a null parent.
///
/// # Safety
/// `parent` must be null or a live reference.
#[no_mangle]
pub unsafe extern "C" fn tc_scope_child(parent: *const TcScope) -> *const TcScope {
    if parent.is_null() {
        crate::set_errno(libc::EINVAL);
        return std::ptr::null();
    }
    // SAFETY: a live reference (the caller's contract).
    let p = unsafe { scope(parent) };
    new_handle(|| p.child())
}

/// `tc_scope_ref`: one more reference to `h` (the same pointer); null with `EINVAL` for null.
///
/// # Safety
/// `h` must be null or a live reference.
#[no_mangle]
pub unsafe extern "C" fn tc_scope_ref(h: *const TcScope) -> *const TcScope {
    if h.is_null() {
        crate::set_errno(libc::EINVAL);
        return std::ptr::null();
    }
    // SAFETY: `h` came from `Arc::into_raw` and the caller holds a strong count for it.
    unsafe { Arc::increment_strong_count(h) };
    h
}

/// `tc_scope_free`: drops one reference (null: nothing).
///
/// # Safety
/// `h` must be null or a live reference, not used by the caller afterwards.
#[no_mangle]
pub unsafe extern "C" fn tc_scope_free(h: *const TcScope) {
    if !h.is_null() {
        // SAFETY: `h` came from `Arc::into_raw` and the caller gives up the count it held.
        unsafe { Arc::decrement_strong_count(h) };
    }
}

/// `tc_scope_cancel`: cancels the scope (and its children): 0, or `EINVAL` for null.
///
/// # Safety
/// `h` must be null or a live reference.
#[no_mangle]
pub unsafe extern "C" fn tc_scope_cancel(h: *const TcScope) -> c_int {
    if h.is_null() {
        return libc::EINVAL;
    }
    // SAFETY: a live reference (the caller's contract).
    unsafe { scope(h) }.cancel();
    0
}

/// `tc_scope_is_canceled`: 1 or 0; -1 with `errno` `EINVAL` for null.
///
/// # Safety
/// `h` must be null or a live reference.
#[no_mangle]
pub unsafe extern "C" fn tc_scope_is_canceled(h: *const TcScope) -> c_int {
    if h.is_null() {
        crate::set_errno(libc::EINVAL);
        return -1;
    }
    // SAFETY: a live reference (the caller's contract).
    c_int::from(unsafe { scope(h) }.is_canceled())
}

/// What [`run`] leaves its caller to do.
enum Then {
    /// Return this.
    Return(c_int),
    /// Go on with the unwind under way (the thread's termination or an enclosing scope's).
    Unwind,
}

/// The body of `tc_scope_run`, in a frame of its own: everything it holds (the scope's clone)
/// is dropped when it returns, before its caller goes on with an unwind.
///
/// # Safety
/// As `tc_scope_run`.
#[inline(never)]
unsafe fn run(
    h: *const TcScope,
    f: Option<unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void>,
    arg: *mut c_void,
    result: *mut *mut c_void,
) -> Then {
    let (false, Some(f)) = (h.is_null(), f) else {
        return Then::Return(libc::EINVAL);
    };
    // A clone of its own: the caller's handles may all be freed while the run goes on.
    // SAFETY: a live reference (the caller's contract).
    let s = unsafe { scope(h) }.clone();
    // SAFETY: `f` is the caller's C function (it does not unwind); its frames may be unwound
    // by a forced unwind or abandoned, as a C thread's frames are.
    let r = unsafe { c_abi::c_scope_run(&s, f, arg, crate::threads::async_act) };
    drop(s);
    match r {
        ScopeRun::Returned(v) => {
            if !result.is_null() {
                // SAFETY: the caller passes null or a writable pointer.
                unsafe { *result = v };
            }
            Then::Return(0)
        }
        ScopeRun::Canceled(e) => {
            let code = if e.deadline_passed() {
                TIMED_OUT
            } else {
                CANCELED
            };
            // `f` returned after the cancel: its value is kept, and the run still reports the
            // cancel (never silent).
            if let (Some(&v), false) = (e.value(), result.is_null()) {
                // SAFETY: the caller passes null or a writable pointer.
                unsafe { *result = v };
            }
            Then::Return(code)
        }
        ScopeRun::Unwinding => Then::Unwind,
    }
}

/// `tc_scope_run`: `f(arg)` inside the scope; 0 (the value in `*result`), `ECANCELED` /
/// `ETIMEDOUT` if the scope was canceled before the run ended (`f` stopped, never started, or
/// returned after the cancel: then its value is in `*result`), `EINVAL` for a null scope or
/// function. A thread's cancellation or exit passes through (this does not return).
///
/// # Safety
/// `h` must be null or a live reference; `result` null or valid for a write; `f` a C function
/// that does not throw.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_scope_run(
    h: *const TcScope,
    f: Option<unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void>,
    arg: *mut c_void,
    result: *mut *mut c_void,
) -> c_int {
    // SAFETY: forwarded from the caller.
    let r = match unsafe { run(h, f, arg, result) } {
        Then::Return(r) => r,
        // From this frame, which holds nothing to drop: the forced unwind of the caller's C
        // frames up to the enclosing run or the thread's region.
        Then::Unwind => crate::threads::finish_in_region(),
    };
    if c_abi::is_async() {
        // With the type asynchronous, a request that came while the run's own frames were
        // outside any region (no signal diverts the thread there) is acted on now.
        crate::threads::point();
    }
    r
}
