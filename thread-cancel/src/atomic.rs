//! The atomics the state machine is built on: `loom`'s under `--cfg loom`, so that its model
//! checks run the crate's own code (the state word, the scope-run registration, the parker,
//! the condition variable's and the barrier's wait protocols), and `std`'s otherwise (the
//! façade tokio uses for the same purpose). Under loom, the futex the parker sleeps on comes
//! from here too: a stand-in that loom can see block and wake (`sys`'s otherwise).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::thread::yield_now;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::thread::yield_now;

#[cfg(loom)]
pub(crate) use loom_futex::{futex_wait, futex_wake};

/// A futex for loom: one lock and one condition variable for every word (as the kernel's hash
/// buckets, and `sys/portable/futex.rs`, share one among many words). `futex_wait` compares the
/// word under the lock and sleeps there; `futex_wake` takes the lock (so a waiter that saw the
/// old value is asleep by then) and wakes every sleeper, which re-check (spurious wake-ups are
/// allowed of a futex). A wait that nothing wakes is a deadlock loom reports: a lost wake-up.
#[cfg(loom)]
mod loom_futex {
    use super::{AtomicU32, Ordering};
    use loom::sync::{Condvar, Mutex};
    use std::time::Instant;

    loom::lazy_static! {
        static ref FUTEX: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
    }

    /// As `sys::futex_wait`. The models have no clock: a deadline has passed at once.
    pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, deadline: Option<Instant>) -> bool {
        let (lock, cond) = &*FUTEX;
        let g = lock.lock().unwrap();
        // The kernel's comparison is ordered by full barriers (smp_mb in futex_wait and wake).
        if word.load(Ordering::SeqCst) != expected {
            return true;
        }
        if deadline.is_some() {
            return false;
        }
        drop(cond.wait(g).unwrap());
        true
    }

    /// As `sys::futex_wake`.
    pub(crate) fn futex_wake(_word: &AtomicU32) {
        let (lock, cond) = &*FUTEX;
        drop(lock.lock().unwrap());
        cond.notify_all();
    }
}
