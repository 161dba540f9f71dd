//! Thread-specific data for C: keys with destructors (R20), on top of `thread_cancel::Key`.

use crate::SendPtr;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use thread_cancel::Key;

/// Live keys by number (`pthread_key_t`); `None` once deleted. Numbers are not reused.
static KEYS: Mutex<Vec<Option<Arc<Key<SendPtr>>>>> = Mutex::new(Vec::new());

fn keys() -> MutexGuard<'static, Vec<Option<Arc<Key<SendPtr>>>>> {
    KEYS.lock().unwrap_or_else(PoisonError::into_inner)
}

fn key(k: libc::pthread_key_t) -> Option<Arc<Key<SendPtr>>> {
    keys().get(k as usize).cloned().flatten()
}

/// `pthread_key_create`: `destructor` (if any) runs with a thread's non-null value when the
/// thread ends, after its cleanup handlers, the slot cleared first; at most 4 rounds.
///
/// # Safety
/// `out` must be valid for a write; `destructor` a C function.
#[no_mangle]
pub unsafe extern "C" fn tc_key_create(
    out: *mut libc::pthread_key_t,
    destructor: Option<unsafe extern "C" fn(*mut c_void)>,
) -> i32 {
    let k = Key::new(move |v: SendPtr| {
        if let Some(d) = destructor {
            if !v.0.is_null() {
                // SAFETY: the C destructor, with the value the thread stored.
                unsafe { d(v.0) };
            }
        }
    });
    let mut ks = keys();
    let Ok(n) = libc::pthread_key_t::try_from(ks.len()) else {
        return libc::EAGAIN;
    };
    ks.push(Some(Arc::new(k)));
    // SAFETY: the caller passes a writable key.
    unsafe { *out = n };
    0
}

/// `pthread_key_delete`: `EINVAL` for a key that does not exist. Destructors are not run.
#[no_mangle]
pub extern "C" fn tc_key_delete(k: libc::pthread_key_t) -> i32 {
    match keys().get_mut(k as usize) {
        Some(slot @ Some(_)) => {
            *slot = None;
            0
        }
        _ => libc::EINVAL,
    }
}

/// `pthread_getspecific`: the calling thread's value, or null.
#[no_mangle]
pub extern "C" fn tc_getspecific(k: libc::pthread_key_t) -> *mut c_void {
    key(k)
        .and_then(|k| k.get())
        .map_or(std::ptr::null_mut(), |v| v.0)
}

/// `pthread_setspecific`: `EINVAL` for a key that does not exist.
#[no_mangle]
pub extern "C" fn tc_setspecific(k: libc::pthread_key_t, value: *const c_void) -> i32 {
    let Some(k) = key(k) else {
        return libc::EINVAL;
    };
    if value.is_null() {
        k.take();
    } else {
        k.set(SendPtr(value.cast_mut()));
    }
    0
}
