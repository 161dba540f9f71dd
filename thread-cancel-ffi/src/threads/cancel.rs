//! `tc_cancel`: a cancellation request to the thread an id names.

use super::ids::registry;
use super::{exit, foreign};
use thread_cancel::c_abi;

/// `pthread_cancel`: queues a request and returns at once; `ESRCH` for an id whose lifetime has ended
/// (never existed, joined, or detached and ended). A thread that has ended but is not yet
/// joined still has its id: 0, and nothing happens (POSIX; glibc >= 2.34); so does a thread a
/// forked child does not have (the parent's, other than its main thread, whose id has ended
/// there: `ESRCH`, as glibc). A system id (a thread
/// not created here) is looked up among the threads known so far, else queued (`foreign.rs`).
///
/// Async-cancel-safe (POSIX): the caller's own cancellation is held while this takes locks, and
/// acted on afterwards, the C way, if the caller is asynchronous and canceled itself.
#[no_mangle]
pub extern "C-unwind" fn tc_cancel(thread: u64) -> i32 {
    let was = c_abi::set_disabled(true);
    // In a block: nothing of it is left to drop where this frame acts.
    let r = {
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
            None => foreign::cancel_unknown(&mut reg, thread),
        }
    };
    c_abi::set_disabled(was);
    if !was && c_abi::is_async() {
        exit::point();
    }
    r
}
