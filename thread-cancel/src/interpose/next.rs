//! The C library's own definitions of the interposed functions, for the threads that never met
//! the crate: such a thread calls the C library's function, so the C library's own cancellation
//! (`pthread_cancel` of a thread blocked in `read`, through the C library's cancellation points)
//! keeps working for threads the crate does not manage.
//!
//! Each definition is found once, at load (an `.init_array` entry per function calls
//! [`resolve`]: `dlsym(RTLD_NEXT, name)`, the next definition after this object's), never on
//! the call path: a call in a signal handler or in a forked child reads one atomic. Before the
//! entry ran (another object's constructor), or if nothing was found, the plain system call is
//! made, as before.
//!
//! Unwinding: the C library acts on its cancel by a forced unwind of the thread, through the
//! frame of the interposed function that called it. That function is `extern "C-unwind"`, and
//! nothing in it with a destructor is live across the call ([`next_for_foreign_threads`]), so
//! the unwind passes through it as through a C frame.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Stores in `slot` the next definition of `name` (nul-terminated) after this object's, or
/// nothing if there is none or it is `own` (this object's definition: calling it would
/// recurse).
pub(super) fn resolve(slot: &AtomicUsize, name: &str, own: usize) {
    debug_assert!(name.ends_with('\0'));
    // SAFETY: `name` is nul-terminated (the macro appends the nul); `RTLD_NEXT` is a valid
    // handle for `dlsym`, which only reads the name.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) } as usize;
    if p != own {
        slot.store(p, Ordering::Relaxed);
    }
}

/// Opens an interposed function: for a thread that never met the crate, calls the C library's
/// definition of the function (`$f`, with the arguments and C signature given) and returns its
/// result. Declares the function's slot (`NEXT`) and its `.init_array` entry.
///
/// With `$cur =>` first, binds `$cur` to the calling thread's control block
/// (`control::current_ptr()`), read once for the whole function: pass it on to
/// [`point_on`](super::point_on), so that the fast path reads the thread-local once.
macro_rules! next_for_foreign_threads {
    ($cur:ident => $f:ident($($arg:ident: $t:ty),*) -> $r:ty) => {
        static NEXT: ::std::sync::atomic::AtomicUsize = ::std::sync::atomic::AtomicUsize::new(0);
        #[used]
        #[link_section = ".init_array"]
        static RESOLVE: extern "C" fn() = {
            extern "C" fn resolve() {
                super::next::resolve(&NEXT, concat!(stringify!($f), "\0"), $f as *const () as usize)
            }
            resolve
        };
        // One thread-local read and, for a thread that never met the crate, one atomic load.
        let $cur = crate::control::current_ptr();
        if $cur.is_none() {
            let p = NEXT.load(::std::sync::atomic::Ordering::Relaxed);
            if p != 0 {
                // SAFETY: `p` is the C library's definition of this very function (found by
                // its name: the same C signature), called with the caller's arguments, whose
                // contract the caller met.
                let next: unsafe extern "C-unwind" fn($($t),*) -> $r = unsafe {
                    ::std::mem::transmute::<usize, unsafe extern "C-unwind" fn($($t),*) -> $r>(p)
                };
                // SAFETY: as above.
                return unsafe { next($($arg),*) };
            }
        }
    };
    ($f:ident($($arg:ident: $t:ty),*) -> $r:ty) => {
        super::next::next_for_foreign_threads!(_cur => $f($($arg: $t),*) -> $r);
    };
}
pub(super) use next_for_foreign_threads;

/// Declares the slot (`NEXT`) of the C library's definition of `$f` and its `.init_array`
/// entry, for an interposed function that every thread goes through (`sigaction`: the handlers
/// of every thread are installed behind the trampoline); `own_next!` reads it.
macro_rules! next_slot {
    ($f:ident) => {
        static NEXT: ::std::sync::atomic::AtomicUsize = ::std::sync::atomic::AtomicUsize::new(0);
        #[used]
        #[link_section = ".init_array"]
        static RESOLVE: extern "C" fn() = {
            extern "C" fn resolve() {
                super::next::resolve(
                    &NEXT,
                    concat!(stringify!($f), "\0"),
                    $f as *const () as usize,
                )
            }
            resolve
        };
    };
}
pub(super) use next_slot;

/// The C library's definition in `slot` for any thread (the interposed functions that are not
/// system calls of ours, `fork` and `posix_spawn`, always call it): found now with
/// [`resolve`] if the load-time entry has not run yet (another object's constructor calls the
/// function), `None` if there is none.
pub(super) fn definition(slot: &AtomicUsize, name: &str, own: usize) -> Option<usize> {
    let p = slot.load(Ordering::Relaxed);
    if p != 0 {
        return Some(p);
    }
    resolve(slot, name, own);
    let p = slot.load(Ordering::Relaxed);
    (p != 0).then_some(p)
}
