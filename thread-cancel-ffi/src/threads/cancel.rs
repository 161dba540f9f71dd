//! `tc_cancel`: a cancellation request to the thread an id names.

use super::ids::registry;
use super::{exit, foreign};
use thread_cancel::c_abi;

/// `pthread_cancel`: queues a request and returns at once; `ESRCH` for an id whose lifetime has ended
/// (never existed, joined, or detached and ended). A thread that has ended but is not yet
/// joined still has its id: 0, and nothing happens (POSIX; glibc >= 2.34); so does a thread a
/// forked child does not have (the parent's, other than its main thread, whose id has ended
/// there: `ESRCH`, as glibc). A system id (a thread not created here) is looked up among the
/// threads known so far; another is the C library's to cancel (`foreign.rs`).
///
/// Async-cancel-safe (POSIX): the caller's own cancellation is held while this takes locks, and
/// acted on afterwards, the C way, if the caller is asynchronous and canceled itself.
#[no_mangle]
pub extern "C-unwind" fn tc_cancel(thread: u64) -> i32 {
    let was = c_abi::set_disabled(true);
    let r = request(thread);
    c_abi::set_disabled(was);
    if !was && c_abi::is_async() {
        exit::point();
    }
    r
}

/// `pthread_cancel` of the code built without the header (`plain.rs`), of a system id: as
/// [`tc_cancel`] for a caller that is the library's. Another caller is not made the library's:
/// its own cancellation, the C library's, is held with the C library's call while this takes
/// locks (and acted on by the C library when it is let go, if it must).
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
pub(crate) fn cancel_system_id(thread: u64) -> i32 {
    if c_abi::has_control() {
        return tc_cancel(thread);
    }
    let mut old = 0;
    // SAFETY: `old` is writable.
    unsafe { super::next::system_setcancelstate(1, &mut old) }; // 1: PTHREAD_CANCEL_DISABLE
    let r = request(thread);
    // SAFETY: as above; the C library's unwind, if it acts, passes frames that hold nothing to
    // drop.
    unsafe { super::next::system_setcancelstate(old, &mut old) };
    r
}

/// The request itself, the caller's cancellation held.
fn request(thread: u64) -> i32 {
    let mut reg = registry();
    let target = reg
        .resolve(thread)
        .and_then(|id| reg.get(id))
        .map(|e| e.canceler.clone().filter(|_| !e.left_in_parent));
    match target {
        Some(canceler) => {
            drop(reg);
            // A thread that has finished reports `NoSuchThread`: its id still lives. One
            // left in the parent by a fork: 0 and nothing (it is not in this process).
            let _ = canceler.map(|c| c.cancel());
            0
        }
        None => foreign::cancel_unknown(reg, thread),
    }
}
