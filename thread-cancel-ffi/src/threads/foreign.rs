//! Threads not created here (by libstdc++'s `std::thread`, another library, the C library) and
//! their system ids: a program may pass such a thread's `pthread_t` (`native_handle()`) to the
//! mapped calls, as on glibc.
//!
//! A system id is first looked up among the threads not created here that are known, those
//! that have called a mapped function. Such a thread gets an id of ours the first
//! time it calls one (`pthread_self`, or a cancellation point: [`enter`]), with its system id,
//! freed when it ends; until then kill, names, scheduling and the rest pass its system id to
//! the system as it is, as the program would without the header (`native.rs`): what glibc does
//! with a stale one is glibc's (our own ids never take that path). Join and detach of a system id are `ESRCH`: the thread's id dies with it, so a
//! join after its end could not tell its system id from a made-up one; its creator joins it
//! with the C library's own call (`std::thread::join` does). A cancel of a system id that no known thread has is queued: the thread whose
//! system id it is takes it when it first calls a mapped function, and acts on it there (glibc
//! too acts only at a point). The queued cancel keeps the thread ids alive when it was sent
//! (`/proc/self/task`): the C library often gives a later thread the system id of one that has
//! ended, and a thread that did not exist then is not the one it was for (it drops it). A stale
//! id of a thread created here is never taken for a system id no thread of the library has
//! (`Registry::stale`: on glibc it lies in a stack of the library's, elsewhere it has the top
//! bit set): it stays `ESRCH`.

use super::ids::is_main_thread;
#[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
use super::ids::Pending;
use super::ids::{give_id, system_id, try_registry, Registry, MY_ID, PENDING};
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

thread_local! {
    /// The main thread, which is not given an id at a point (by the header's constructor, or by
    /// `pthread_self`, see `threads::know_main_thread`): a point it reaches in a library
    /// destructor run by `dlclose` must not register thread-local destructors (`tc_self`'s).
    static MAIN: Cell<bool> = const { Cell::new(false) };
}

/// At the entry of each mapped cancellation point: a thread not created here that has no id yet
/// gets one (as from `pthread_self`), so that its system id reaches it from now on, and it takes
/// a cancel queued for it. The main thread only takes a queued cancel. One thread-local read
/// once the thread has an id.
#[inline]
pub(crate) fn enter() {
    if MY_ID.get() == 0 {
        first_point();
    }
}

#[cold]
fn first_point() {
    if MAIN.get() || is_main_thread() {
        MAIN.set(true);
        if PENDING.load(Ordering::Relaxed) == 0 {
            return;
        }
        // SAFETY: no preconditions.
        let me = system_id(unsafe { libc::pthread_self() });
        if !try_registry().is_some_and(|reg| reg.pending.iter().any(|p| p.native == me)) {
            return;
        }
    }
    // A cancel sent to this thread before it was the library's was the C library's (glibc,
    // `cancel_unknown`): acted on here, at the point it is entering, by the C library.
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    if !MAIN.get() {
        super::next::system_testcancel();
    }
    // Never waits for the registry lock: a signal handler's point may have interrupted this
    // very thread while it held it (in `pthread_kill`, say); the id then waits for its next
    // point.
    give_id(try_registry, true);
}

/// `tc_cancel` of `thread`, which names no known thread (registry lock held): `ESRCH` for one of
/// our ids (stale) and for what cannot be a system id. Otherwise, on glibc, the thread is the C
/// library's (it has not called the library: every function the library defines forwards its
/// calls to the C library's own), and so is its cancel: the C library's `pthread_cancel`, which
/// reaches it at once; for a thread that code built without the header created, the library's
/// wake-up follows (`system_owned.rs`). Elsewhere the request is queued for the thread
/// whose system id it is (0), which takes it at its first mapped call.
pub(super) fn cancel_unknown(reg: MutexGuard<'_, Registry>, thread: u64) -> i32 {
    if reg.stale(thread) || !plausible(thread) {
        return libc::ESRCH;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    return super::system_owned::cancel(reg, thread);
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    queue(reg, thread)
}

/// Queues a cancel of the system id `thread` (see [`cancel_unknown`]).
#[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
fn queue(mut reg: MutexGuard<'_, Registry>, thread: u64) -> i32 {
    let alive = threads_alive();
    match reg.pending.iter_mut().find(|p| p.native == thread) {
        // A cancel queued for the same system id earlier, maybe for a thread that has gone
        // since: this one is for a thread alive now.
        Some(p) => p.alive = alive,
        None => {
            if reg.pending.try_reserve(1).is_err() {
                return libc::ESRCH; // out of memory: it cannot be queued
            }
            reg.pending.push(Pending {
                native: thread,
                alive,
            });
            PENDING.fetch_add(1, Ordering::Relaxed);
        }
    }
    0
}

/// The thread ids of the process (`/proc/self/task`), if they can be read.
#[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
fn threads_alive() -> Option<Vec<libc::pid_t>> {
    // The library's own reads: not cancellation points of the calling thread.
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    let _own = thread_cancel::c_abi::LibraryCode::enter();
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    Some(
        tasks
            .flatten()
            .filter_map(|t| t.file_name().to_str()?.parse().ok())
            .collect(),
    )
}

/// `thread` as the system's `pthread_t`, if it may be one (not one of our ids, [`plausible`]):
/// for the calls that pass a system id no known thread has to the system (`native.rs`).
pub(super) fn system_id_of_unknown(reg: &Registry, thread: u64) -> Option<libc::pthread_t> {
    if reg.stale(thread) || !plausible(thread) {
        return None;
    }
    // A system id came from a `pthread_t` of the same width (64-bit targets only).
    Some(thread as libc::pthread_t)
}

/// Whether `thread` may be a system `pthread_t`: on glibc, musl and bionic it is the address of
/// the thread's descriptor, aligned, never in the first page.
fn plausible(thread: u64) -> bool {
    thread >= 4096 && thread.is_multiple_of(16)
}
