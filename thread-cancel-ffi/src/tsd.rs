//! Thread-specific data for C: keys with destructors (R20), on top of `thread_cancel::Key`.
//!
//! A key's number is a key of the C library's own, created with it and deleted with it (and
//! never given a value): so keys are bounded as the C library's (`PTHREAD_KEYS_MAX`, counting
//! the keys that it and other code hold), `EAGAIN` when they are used up, and a deleted key's
//! number is reused as the C library reuses it. The table below is indexed by those numbers,
//! so it never grows past the C library's bound.

use crate::{oom, SendPtr};
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};
use thread_cancel::Key;

/// Live keys by number (`pthread_key_t`, the C library's key reserved for each); `None` once
/// deleted (or for a number that is not ours).
static KEYS: Mutex<Vec<Option<Arc<Key<SendPtr>>>>> = Mutex::new(Vec::new());

fn keys() -> MutexGuard<'static, Vec<Option<Arc<Key<SendPtr>>>>> {
    crate::lock(&KEYS)
}

fn key(k: libc::pthread_key_t) -> Option<Arc<Key<SendPtr>>> {
    keys().get(k as usize).cloned().flatten()
}

thread_local! {
    /// The calling thread's values have their thread-local storage (whose first use registers a
    /// thread-local destructor with glibc, which aborts if `malloc` fails).
    static STORAGE_READY: Cell<bool> = const { Cell::new(false) };
}

/// What a thread's first value costs the system's `malloc` (glibc's destructor registration),
/// with room to spare.
const FIRST_VALUE_HEAP: usize = 1024;

/// `pthread_key_create`: `destructor` (if any) runs with a thread's non-null value when the
/// thread ends, after its cleanup handlers, the slot cleared first; at most 4 rounds.
/// `ENOMEM` if memory runs out (no key is created), `EAGAIN` when the C library's keys are used
/// up (`PTHREAD_KEYS_MAX` in use, ours and everyone else's). A deleted key's number is reused.
///
/// # Safety
/// `out` must be valid for a write; `destructor` a C function.
#[no_mangle]
pub unsafe extern "C" fn tc_key_create(
    out: *mut libc::pthread_key_t,
    destructor: Option<unsafe extern "C" fn(*mut c_void)>,
) -> i32 {
    let mut n: libc::pthread_key_t = 0;
    // SAFETY: a writable key, no destructor (no value is ever set on it: it only reserves the
    // number).
    let e = unsafe { libc::pthread_key_create(&mut n, None) };
    if e != 0 {
        return e;
    }
    let memory = oom::Watch::new();
    let k = Key::new(move |v: SendPtr| {
        if let Some(d) = destructor {
            if !v.0.is_null() {
                // SAFETY: the C destructor, with the value the thread stored.
                unsafe { d(v.0) };
            }
        }
    });
    let mut ks = keys();
    let index = n as usize;
    let missing = (index + 1).saturating_sub(ks.len());
    if missing > 0 {
        // At most the C library's bound: its key numbers are below `PTHREAD_KEYS_MAX`.
        if ks.try_reserve(missing).is_ok() {
            ks.resize(index + 1, None);
        }
    }
    if ks.len() > index {
        ks[index] = Some(Arc::new(k));
        if !memory.ran_out() {
            drop(ks);
            // SAFETY: the caller passes a writable key.
            unsafe { *out = n };
            return 0;
        }
        ks[index] = None; // deletes the key: memory back to the reserve
    }
    drop(ks);
    // SAFETY: the number reserved above, not yet given to anyone.
    unsafe { libc::pthread_key_delete(n) };
    libc::ENOMEM
}

/// `pthread_key_delete`: `EINVAL` for a key that does not exist. Destructors are not run; its
/// number may be given to the next key created.
#[no_mangle]
pub extern "C" fn tc_key_delete(k: libc::pthread_key_t) -> i32 {
    let mut ks = keys();
    match ks.get_mut(k as usize) {
        Some(slot @ Some(_)) => {
            let key = slot.take();
            // The number goes back to the C library while the table is locked, so a key
            // created meanwhile never finds its slot still taken.
            // SAFETY: the C library's key reserved for this one, deleted once (its slot is
            // emptied under the same lock).
            unsafe { libc::pthread_key_delete(k) };
            drop(ks);
            drop(key);
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

/// `pthread_setspecific`: `EINVAL` for a key that does not exist; `ENOMEM` if memory runs out
/// (the value is then not set, as glibc).
#[no_mangle]
pub extern "C" fn tc_setspecific(k: libc::pthread_key_t, value: *const c_void) -> i32 {
    let Some(k) = key(k) else {
        return libc::EINVAL;
    };
    if value.is_null() {
        k.take();
        return 0;
    }
    if !STORAGE_READY.get() {
        if !oom::system_has(FIRST_VALUE_HEAP) {
            return libc::ENOMEM;
        }
        STORAGE_READY.set(true);
    }
    let memory = oom::Watch::new();
    k.set(SendPtr(value.cast_mut()));
    if memory.ran_out() {
        k.take();
        return libc::ENOMEM;
    }
    0
}
