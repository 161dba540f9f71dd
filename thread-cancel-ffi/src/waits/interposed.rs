//! glibc (64-bit Linux): the library defines `pthread_cond_wait`, `pthread_cond_timedwait` and
//! `pthread_cond_clockwait` themselves, so that a condition wait made inside another library
//! (libstdc++'s `std::condition_variable::wait`, libuv's `uv_cond_wait`, glib's `GCond`) is a
//! cancellation point of a thread that acts in C code, as with glibc: its **own** cancellation
//! wakes it, and it acts with the mutex held again, its C and C++ frames unwound.
//!
//! A scope's cancel never wakes nor fails such a wait: POSIX gives a condition wait no error for
//! it, libuv aborts on any error from one, and a wake-up that a canceled scope (which stays
//! canceled) caused at every wait would make every predicate loop spin. The program's own
//! waits (`tc_cond_wait`, through the header) keep acting on a scope's cancel.
//!
//! The wait itself is the C library's (`dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2")`: the current
//! condition variable, never the pre-2003 one that `dlsym` may return; or a preloaded
//! interposer's, which forwards to it: [`next`]), so it stays one
//! condition variable with every `pthread_cond_signal` of the process. The library's own waits
//! (`tc_cond_wait`) call it too ([`system_cond_wait`]): its definition here would recurse. A
//! thread the library does not manage calls it at once, after one thread-local read.
//!
//! # Safety (every exported function)
//! As the C library's function of the same name.

use super::{cond_wait_with, valid_time, Limit, Wake};
use std::sync::atomic::{AtomicUsize, Ordering};
use thread_cancel::c_abi;

type WaitFn = unsafe extern "C" fn(*mut libc::pthread_cond_t, *mut libc::pthread_mutex_t) -> i32;
type TimedFn = unsafe extern "C" fn(
    *mut libc::pthread_cond_t,
    *mut libc::pthread_mutex_t,
    *const libc::timespec,
) -> i32;
type ClockFn = unsafe extern "C" fn(
    *mut libc::pthread_cond_t,
    *mut libc::pthread_mutex_t,
    libc::clockid_t,
    *const libc::timespec,
) -> i32;

/// The C library's definitions, found at load ([`RESOLVE`]) or at first use.
static WAIT: AtomicUsize = AtomicUsize::new(0);
static TIMEDWAIT: AtomicUsize = AtomicUsize::new(0);
static CLOCKWAIT: AtomicUsize = AtomicUsize::new(0);

/// The next definition of `name` after this object's: the C library's of `version` (glibc's
/// current condition variable: `dlsym` may return the pre-2003 one), unless an object between
/// this one and the C library defines `name` without a version (a preloaded interposer, which
/// forwards to the C library itself): then that one. In `slot` once found.
fn next(slot: &AtomicUsize, name: &std::ffi::CStr, version: &std::ffi::CStr) -> usize {
    let p = slot.load(Ordering::Relaxed);
    if p != 0 {
        return p;
    }
    // SAFETY: nul-terminated strings; `RTLD_NEXT` is a valid handle for these lookups, which
    // only read them.
    let versioned = unsafe { libc::dlvsym(libc::RTLD_NEXT, name.as_ptr(), version.as_ptr()) };
    // SAFETY: as above.
    let any = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    let object = |p: *mut libc::c_void| {
        // SAFETY: `dladdr` only reads the address and writes `info`, a local.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        (unsafe { libc::dladdr(p, &mut info) } != 0).then_some(info.dli_fbase)
    };
    let p = if versioned.is_null() || (!any.is_null() && object(any) != object(versioned)) {
        any
    } else {
        versioned
    };
    if p.is_null() {
        eprintln!("thread-cancel: the C library has no {name:?}; aborting");
        std::process::abort();
    }
    slot.store(p as usize, Ordering::Relaxed);
    p as usize
}

fn next_wait() -> WaitFn {
    let p = next(&WAIT, c"pthread_cond_wait", c"GLIBC_2.3.2");
    // SAFETY: glibc's `pthread_cond_wait`, of this C signature.
    unsafe { std::mem::transmute::<usize, WaitFn>(p) }
}

fn next_timedwait() -> TimedFn {
    let p = next(&TIMEDWAIT, c"pthread_cond_timedwait", c"GLIBC_2.3.2");
    // SAFETY: glibc's `pthread_cond_timedwait`, of this C signature.
    unsafe { std::mem::transmute::<usize, TimedFn>(p) }
}

fn next_clockwait() -> ClockFn {
    let p = next(&CLOCKWAIT, c"pthread_cond_clockwait", c"GLIBC_2.30");
    // SAFETY: glibc's `pthread_cond_clockwait`, of this C signature.
    unsafe { std::mem::transmute::<usize, ClockFn>(p) }
}

/// At load, before any constructor of the program can wait: the lookups (they take the
/// dynamic loader's lock, which a wait must not).
#[used]
#[link_section = ".init_array"]
static RESOLVE: extern "C" fn() = {
    extern "C" fn resolve() {
        next_wait();
        next_timedwait();
        next_clockwait();
    }
    resolve
};

/// The C library's own condition wait.
pub(super) fn system_cond_wait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    limit: Limit,
) -> i32 {
    // SAFETY: the caller's arguments, as for the C library's call.
    unsafe {
        match limit {
            Limit::None => next_wait()(cond, mutex),
            Limit::Timed(t) => next_timedwait()(cond, mutex, t),
            Limit::Clocked(c, t) => next_clockwait()(cond, mutex, c, t),
        }
    }
}

/// A condition wait of code the header did not compile: a cancellation point for the calling
/// thread's own cancellation where it acts in C code, the C library's wait otherwise.
fn foreign_cond_wait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    limit: Limit,
) -> i32 {
    if !c_abi::has_control() || !c_abi::in_c_region() {
        return system_cond_wait(cond, mutex, limit);
    }
    cond_wait_with(cond, mutex, limit, Wake::ThreadOnly)
}

/// `pthread_cond_wait` for code built without the header.
///
/// # Safety
/// As `pthread_cond_wait`: initialised `cond`, `mutex` locked by the caller.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_wait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
) -> i32 {
    foreign_cond_wait(cond, mutex, Limit::None)
}

/// `pthread_cond_timedwait` for code built without the header.
///
/// # Safety
/// As `pthread_cond_timedwait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_timedwait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    abstime: *const libc::timespec,
) -> i32 {
    foreign_cond_wait(cond, mutex, Limit::Timed(abstime))
}

/// `pthread_cond_clockwait` for code built without the header (a bad clock or time: the C
/// library's answer, before anything else).
///
/// # Safety
/// As `pthread_cond_clockwait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_cond_clockwait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> i32 {
    // SAFETY: a non-null `abstime` is readable (the caller's contract).
    if abstime.is_null() || !unsafe { valid_time(abstime) } || !super::supported_clock(clock) {
        // SAFETY: the caller's arguments: the C library reports them.
        return unsafe { next_clockwait()(cond, mutex, clock, abstime) };
    }
    foreign_cond_wait(cond, mutex, Limit::Clocked(clock, abstime))
}
