//! The calling thread's own control block: a `const`-initialised thread-local raw pointer
//! without a destructor, so a cancellation point reads it with one TLS load and no
//! lazy-initialisation check; and the signal handler's per-thread decisions, which read it.
//!
//! The pointer is owned by `current.rs` (the link that keeps the block alive): it sets it when it
//! links a block to the thread and clears it before the block can be released.

use super::Control;
use crate::word;

use std::sync::atomic::Ordering;

#[cfg(not(thread_cancel_tls_slot))]
thread_local! {
    /// Non-null exactly while the thread's link (`current.rs`) holds the `Arc` it points into,
    /// or (a thread created for the C ABI) while the thread's root holds it.
    static CURRENT: std::cell::Cell<*const Control> = const { std::cell::Cell::new(std::ptr::null()) };
}

/// The calling thread's `CURRENT`.
#[cfg(not(thread_cancel_tls_slot))]
#[inline(always)]
fn get() -> *const Control {
    CURRENT.with(std::cell::Cell::get)
}

#[cfg(not(thread_cancel_tls_slot))]
fn set(p: *const Control) {
    CURRENT.with(|c| c.set(p));
}

/// Feature `interpose` on x86_64 Linux: `CURRENT` is the platform's initial-exec thread-local
/// slot instead (`sys::current_slot`), read with no call, so that an interposed function's
/// fast path keeps its arguments in their registers (the cost of an interposed call over the
/// raw system call). Same meaning, same rules.
#[cfg(thread_cancel_tls_slot)]
#[inline(always)]
fn get() -> *const Control {
    crate::sys::current_slot() as *const Control
}

#[cfg(thread_cancel_tls_slot)]
fn set(p: *const Control) {
    crate::sys::set_current_slot(p as usize);
}

/// Links (or, with null, unlinks) the calling thread's control block. The caller keeps the
/// block alive until it unlinks it.
pub(crate) fn set_current(p: *const Control) {
    keep_interposed_linked();
    // SAFETY: a block being linked to this thread, alive while linked (the caller's contract).
    if let Some(c) = unsafe { p.as_ref() } {
        // Every caller has run `sys::prepare` (the process-wide set-up) before linking.
        c.fence_asymmetric
            .store(crate::sys::fence_asymmetric(), Ordering::Relaxed);
    }
    set(p);
}

/// Feature `interpose`: keeps the interposed definitions (module `interpose`, and the C shims'
/// object) in the link, by naming their symbols from code that is always linked — as symbols,
/// through the C library's declarations, not as items of that module (which sits above this
/// layer). The linker takes a member of an archive (this crate's rlib, with the shims' object
/// bundled in it) only for a symbol undefined when it reaches it, and `std`, which calls
/// `read` & co., comes after this crate on the link line: without this reference the C
/// library's definitions would be the ones used.
#[cfg(thread_cancel_interpose)]
#[inline(never)]
fn keep_interposed_linked() {
    #[allow(unused_imports)] // the C types of the table's signatures
    use crate::sys::points::ctypes::*;
    use std::hint::black_box;
    extern "C" {
        /// Defined by the shims' object (`interpose/shim.c`).
        fn thread_cancel_interpose_shim_anchor() -> c_int;
    }
    /// Made from the table of points (`sys/points.rs`): every row the crate interposes,
    /// declared here as the C library declares it and named by address (the reference is what
    /// the linker needs; the code runs once).
    macro_rules! keep_face {
        (row [$rs:ident no $tc:ident] $($row:tt)*) => {};
        (row [$rs:ident never $tc:ident] $($row:tt)*) => {};
        (row [$rs:ident $ip:ident $tc:ident] $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty
            = $($call:tt)*) => {{
            extern "C" {
                fn $name($(_: $t),*) -> $ret;
            }
            black_box($name as *const ());
        }};
        (chk $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty = $($call:tt)*) => {{
            extern "C" {
                fn $name($(_: $t),*) -> $ret;
            }
            black_box($name as *const ());
        }};
        ($($other:tt)*) => {};
    }
    static NAMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if NAMED.swap(true, Ordering::Relaxed) {
        return;
    }
    crate::sys::points::table!(keep_face);
    black_box(thread_cancel_interpose_shim_anchor as *const ());
}

#[cfg(not(thread_cancel_interpose))]
#[inline(always)]
fn keep_interposed_linked() {}

/// The calling thread's control block if it has one (no adoption), as a raw pointer: valid
/// until the thread's thread-local destructors run, so for any borrow that ends before the
/// caller returns.
#[inline(always)]
pub(crate) fn current_ptr() -> Option<*const Control> {
    let p = get();
    (!p.is_null()).then_some(p)
}

/// Runs `f` on the calling thread's control block if it has one (no adoption). The fast path of
/// every cancellation point.
#[inline(always)]
pub(crate) fn with_current<R>(f: impl FnOnce(&Control) -> R) -> Option<R> {
    // SAFETY: `CURRENT` is set (`set_current`) to `Arc::as_ptr` of an `Arc` that its setter keeps
    // alive until it resets it to null (a spawned thread's root or an adopted thread's link,
    // `current.rs`, or a C thread's root).
    // It is only read on this thread, so the pointee is alive for the whole of `f`.
    current_ptr().map(|p| f(unsafe { &*p }))
}

/// Whether `c` is the calling thread's control block.
pub(crate) fn is_current(c: &Control) -> bool {
    with_current(|me| std::ptr::eq(me, c)).unwrap_or(false)
}

/// The signal handler's questions about the thread it interrupted, answered from the thread's
/// word (registered with the platform layer once, by the first control block: `sys` does not
/// know the control block). Each is async-signal-safe: a `const` thread-local read and atomic
/// loads.
pub(crate) static DECISIONS: crate::sys::Decisions = crate::sys::Decisions {
    cp_must_act,
    async_must_act,
    in_call_must_act,
};

/// Whether the calling thread must act on a request now (the trampoline's test).
fn cp_must_act() -> bool {
    with_current(|c| word::acts(c.word.load())).unwrap_or(false)
}

/// The calling thread's current asynchronous region, if it must leave it now (type
/// asynchronous, enabled, a request pending, not terminating, not panicking).
fn async_must_act() -> Option<*mut crate::sys::RegionCtx> {
    with_current(|c| {
        let s = c.word.load();
        if s & word::ASYNC == 0 || !word::acts(s) {
            return None;
        }
        let r = c.region.load(Ordering::Relaxed);
        (!r.is_null() && !std::thread::panicking()).then_some(r)
    })
    .flatten()
}

/// Whether the calling thread is inside one of our calls (`in_syscall`) and must act on a
/// request: the signal arrived outside the trampoline while the thread is in a call, so in a
/// handler of the user's that interrupted it (or in the few instructions around the
/// trampoline).
fn in_call_must_act() -> bool {
    with_current(|c| c.in_syscall.load(Ordering::Relaxed) && word::acts(c.word.load()))
        .unwrap_or(false)
}
