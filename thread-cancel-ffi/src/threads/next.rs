//! glibc (64-bit Linux): the C library's own cancellation calls, for a thread whose
//! cancellation is the C library's (see `crate::plain`) and where the library must not reach its
//! own definitions of the same names (`pthread_exit` ending a thread the C library created).

use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The next definition of `name` after this object's (the C library's, or a preloaded
/// interposer's that forwards to it), in `slot` once found; aborts if there is none (no C
/// library below: nothing could create, cancel or run a thread).
pub(crate) fn next(slot: &AtomicUsize, name: &std::ffi::CStr) -> usize {
    let p = slot.load(Ordering::Relaxed);
    if p != 0 {
        return p;
    }
    // SAFETY: `RTLD_NEXT` is a valid handle; the name is nul-terminated.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize;
    if p == 0 {
        eprintln!("thread-cancel: the C library has no {name:?}; aborting");
        std::process::abort();
    }
    slot.store(p, Ordering::Relaxed);
    p
}

/// The C library's definition of `$name` (a `&CStr`), as a function of type `$ty` (its C
/// signature), found once ([`next`]) in a slot of the expansion's own.
macro_rules! system_fn {
    ($name:expr => $ty:ty) => {{
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        // SAFETY: the C library's function of that name, of this C signature (the caller's
        // `$ty`).
        unsafe { std::mem::transmute::<usize, $ty>($crate::threads::next::next(&NEXT, $name)) }
    }};
}
pub(crate) use system_fn;

/// The C library's `pthread_cancel`: for a thread whose cancellation is the C library's (a
/// `pthread_t` is 64 bits on the targets of this file).
pub(crate) fn system_cancel(thread: u64) -> c_int {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let p = next(&NEXT, c"pthread_cancel");
    // SAFETY: the C library's `pthread_cancel`, of this C signature.
    let f = unsafe { std::mem::transmute::<usize, extern "C-unwind" fn(u64) -> c_int>(p) };
    f(thread)
}

/// The C library's `pthread_exit`.
pub(crate) fn system_exit(value: *mut std::ffi::c_void) -> ! {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let p = next(&NEXT, c"pthread_exit");
    // SAFETY: the C library's `pthread_exit`, of this C signature; it unwinds the caller's
    // frames (the callers' contract: they hold nothing to drop).
    let f = unsafe {
        std::mem::transmute::<usize, extern "C-unwind" fn(*mut std::ffi::c_void) -> !>(p)
    };
    f(value)
}

pub(crate) type StateFn = unsafe extern "C-unwind" fn(c_int, *mut c_int) -> c_int;

/// The C library's `pthread_setcancelstate`: for a thread whose cancellation is the C library's.
///
/// # Safety
/// `old` must be null or valid for a write. The C library may act here (an asynchronous
/// cancel pending when enabled): its unwind passes the caller's frames.
pub(crate) unsafe fn system_setcancelstate(state: c_int, old: *mut c_int) -> c_int {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    // SAFETY: the C library's `pthread_setcancelstate`, of this C signature.
    let f =
        unsafe { std::mem::transmute::<usize, StateFn>(next(&NEXT, c"pthread_setcancelstate")) };
    // SAFETY: the caller's contract.
    unsafe { f(state, old) }
}

/// The C library's `pthread_testcancel`: it acts on a cancel the C library holds for the caller
/// (its own unwind, through the callers' frames, which hold nothing to drop). Also where a
/// thread of the C library's becomes the library's (`foreign.rs`): a cancel sent to it before
/// is the C library's, acted on there, at the point it is entering.
pub(crate) fn system_testcancel() {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    // SAFETY: the C library's `pthread_testcancel`, of this C signature.
    let f = unsafe {
        std::mem::transmute::<usize, extern "C-unwind" fn()>(next(&NEXT, c"pthread_testcancel"))
    };
    f();
}
