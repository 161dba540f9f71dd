//! glibc's other calls that take a `pthread_t` (kill, sigqueue, attributes, names, scheduling,
//! affinity, CPU clock), passed on to the system thread an id names.

use super::ids::{is_me, registry, MY_ID};
use std::ffi::{c_char, c_void};

extern "C" {
    fn pthread_getattr_np(thread: libc::pthread_t, attr: *mut libc::pthread_attr_t) -> i32;
    fn pthread_setname_np(thread: libc::pthread_t, name: *const c_char) -> i32;
    fn pthread_getname_np(thread: libc::pthread_t, buf: *mut c_char, len: usize) -> i32;
    fn pthread_setschedparam(thread: libc::pthread_t, policy: i32, param: *const c_void) -> i32;
    fn pthread_getschedparam(thread: libc::pthread_t, policy: *mut i32, param: *mut c_void) -> i32;
    fn pthread_setschedprio(thread: libc::pthread_t, prio: i32) -> i32;
    #[cfg(not(target_os = "android"))] // bionic has neither
    fn pthread_setaffinity_np(thread: libc::pthread_t, size: usize, set: *const c_void) -> i32;
    #[cfg(not(target_os = "android"))]
    fn pthread_getaffinity_np(thread: libc::pthread_t, size: usize, set: *mut c_void) -> i32;
    fn pthread_getcpuclockid(thread: libc::pthread_t, clock: *mut libc::clockid_t) -> i32;
    #[cfg(not(target_env = "musl"))] // musl has none
    fn pthread_sigqueue(thread: libc::pthread_t, sig: i32, value: libc::sigval) -> i32;
}

/// Runs `f` with the system's id of `thread` (one of our ids, or the system id of a known thread
/// not created here, `foreign.rs`) if its id lives and the thread has not gone;
/// `ESRCH` if the id's lifetime has ended, `gone` for the main thread after its `tc_exit`.
/// `f` runs under the registry lock, which keeps the system's id valid (a slot is freed before
/// its system thread is joined, and a detached or foreign thread frees it before it ends);
/// except for the calling thread itself, which is alive, and runs `f` without the lock (a
/// signal it sends itself is handled before the call returns, and its handler may call here).
///
/// A system id that no known thread has (a thread created without the header that has not
/// called a mapped function yet) goes to the system as it is, as the program would give it to
/// the C library without the header: what the C library does with it is what glibc's call
/// does (for a thread that has been joined, undefined behaviour there as here). The ids of
/// threads created here never take that path (`Registry::stale`): a stale one is `ESRCH`.
fn with_native(thread: u64, gone: i32, f: impl FnOnce(libc::pthread_t) -> i32) -> i32 {
    if is_me(thread) {
        if registry().get(MY_ID.get()).is_none() {
            return libc::ESRCH;
        }
        // SAFETY: no preconditions.
        return f(unsafe { libc::pthread_self() });
    }
    let mut reg = registry();
    let Some(id) = reg.resolve(thread) else {
        let unknown = super::foreign::system_id_of_unknown(&reg, thread);
        drop(reg);
        return match unknown {
            Some(native) => f(native),
            None => libc::ESRCH,
        };
    };
    match reg.get(id).map(|e| e.live_native()) {
        Some(Some(native)) => f(native),
        Some(None) => gone,
        None => libc::ESRCH,
    }
}

/// `pthread_kill`: `EINVAL` for the cancel signal, which the program cannot send (as glibc's
/// for its own signals, before it looks at the thread; the library sends it itself, not
/// through here); `ESRCH` if the id's lifetime has ended; 0 and no signal for a thread that
/// has ended but whose id lives (glibc >= 2.34).
#[no_mangle]
pub extern "C" fn tc_kill(thread: u64, sig: i32) -> i32 {
    if sig == crate::cancel_signal() {
        return libc::EINVAL;
    }
    // SAFETY: a live system id (`with_native`).
    with_native(thread, 0, |t| unsafe { libc::pthread_kill(t, sig) })
}

/// The system's `pthread_t` of a live thread of ours, or 0 (a null pointer where `pthread_t`
/// is a pointer).
#[no_mangle]
pub extern "C" fn tc_native(thread: u64) -> libc::pthread_t {
    let mut reg = registry();
    let id = reg.resolve(thread).unwrap_or(0);
    reg.get(id)
        .and_then(|e| e.live_native())
        // SAFETY: `pthread_t` is an integer or a pointer, for both of which all-zero is valid.
        .unwrap_or_else(|| unsafe { std::mem::zeroed() })
}

/// `pthread_getattr_np` on one of our ids (`ESRCH` for an id that is not a live thread).
///
/// # Safety
/// As glibc's: `attr` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_getattr_np(thread: u64, attr: *mut libc::pthread_attr_t) -> i32 {
    // SAFETY: a live system id; the rest is the caller's contract.
    let r = with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getattr_np(t, attr)
    });
    // glibc: a thread on a stack of the library's reports the stack and guard glibc would
    // have given it (glibc reports a stack it was given as the caller's: no guard).
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    if r == 0 {
        let mut reg = registry();
        let id = reg.resolve(thread).unwrap_or(0);
        let (base, detached) = reg.get(id).map_or((None, false), |e| (e.stack, e.detached));
        if let Some((addr, size, guard)) = base.and_then(|b| reg.stacks.reported(b)) {
            // SAFETY: `attr` was initialised by the call (the caller's contract: writable).
            unsafe {
                libc::pthread_attr_setstack(attr, addr, size);
                libc::pthread_attr_setguardsize(attr, guard);
                // Detached for the program, joinable for the C library until joined here.
                if detached {
                    libc::pthread_attr_setdetachstate(attr, libc::PTHREAD_CREATE_DETACHED);
                }
            }
        }
    }
    r
}

/// `pthread_setname_np` on one of our ids.
///
/// # Safety
/// As glibc's: `name` must be a C string.
#[no_mangle]
pub unsafe extern "C" fn tc_setname_np(thread: u64, name: *const c_char) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_setname_np(t, name)
    })
}

/// `pthread_getname_np` on one of our ids.
///
/// # Safety
/// As glibc's: `buf` must be valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tc_getname_np(thread: u64, buf: *mut c_char, len: usize) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getname_np(t, buf, len)
    })
}

/// `pthread_setschedparam` on one of our ids.
///
/// # Safety
/// As glibc's: `param` must point to a `struct sched_param`.
#[no_mangle]
pub unsafe extern "C" fn tc_setschedparam(thread: u64, policy: i32, param: *const c_void) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_setschedparam(t, policy, param)
    })
}

/// `pthread_getschedparam` on one of our ids.
///
/// # Safety
/// As glibc's: `policy` and `param` must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tc_getschedparam(
    thread: u64,
    policy: *mut i32,
    param: *mut c_void,
) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getschedparam(t, policy, param)
    })
}

/// `pthread_setschedprio` on one of our ids.
#[no_mangle]
pub extern "C" fn tc_setschedprio(thread: u64, prio: i32) -> i32 {
    // SAFETY: a live system id.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_setschedprio(t, prio)
    })
}

/// `pthread_setaffinity_np` on one of our ids.
///
/// # Safety
/// As glibc's: `set` must be valid for `size` bytes.
#[cfg(not(target_os = "android"))]
#[no_mangle]
pub unsafe extern "C" fn tc_setaffinity_np(thread: u64, size: usize, set: *const c_void) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_setaffinity_np(t, size, set)
    })
}

/// `pthread_getaffinity_np` on one of our ids.
///
/// # Safety
/// As glibc's: `set` must be valid for `size` bytes.
#[cfg(not(target_os = "android"))]
#[no_mangle]
pub unsafe extern "C" fn tc_getaffinity_np(thread: u64, size: usize, set: *mut c_void) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getaffinity_np(t, size, set)
    })
}

/// `pthread_getcpuclockid` on one of our ids.
///
/// # Safety
/// As glibc's: `clock` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_getcpuclockid(thread: u64, clock: *mut libc::clockid_t) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getcpuclockid(t, clock)
    })
}

/// `pthread_sigqueue` on one of our ids: `EINVAL` for the cancel signal (as `tc_kill`);
/// `ESRCH` if the id's lifetime has ended; 0 and no signal for the main thread after its
/// `tc_exit` (as `tc_kill`).
#[cfg(not(target_env = "musl"))]
#[no_mangle]
pub extern "C" fn tc_pthread_sigqueue(thread: u64, sig: i32, value: libc::sigval) -> i32 {
    if sig == crate::cancel_signal() {
        return libc::EINVAL;
    }
    // SAFETY: a live system id.
    with_native(thread, 0, |t| unsafe { pthread_sigqueue(t, sig, value) })
}
