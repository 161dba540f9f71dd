//! A futex emulated with `std`: a wait blocks on the condition variable of one of a fixed set
//! of buckets, chosen by the word's address; a wake-up notifies every waiter of the bucket
//! (the waiters of other words that share it see a spurious wake-up and wait again). The
//! check of the word and the sleep happen under the bucket's lock, and a waker takes that lock
//! after changing the word, so no wake-up is lost.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Instant;

/// A bucket: its lock orders a waiter's check against a waker's notification.
struct Bucket {
    lock: Mutex<()>,
    cond: Condvar,
}

const BUCKETS: usize = 64;

#[allow(clippy::declare_interior_mutable_const)] // only used to initialise the table
const EMPTY: Bucket = Bucket {
    lock: Mutex::new(()),
    cond: Condvar::new(),
};

static TABLE: [Bucket; BUCKETS] = [EMPTY; BUCKETS];

fn bucket(word: &AtomicU32) -> &'static Bucket {
    // The low bits of an aligned `u32`'s address are always zero; a multiplicative hash mixes
    // the rest.
    let a = (word as *const AtomicU32 as usize) >> 2;
    &TABLE[a.wrapping_mul(0x9E37_79B9) % BUCKETS]
}

/// Blocks while `*word == expected`, until woken or `deadline` passes.
///
/// Returns `false` only if the deadline passed. Spurious returns are possible: callers loop.
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, deadline: Option<Instant>) -> bool {
    let b = bucket(word);
    let guard = b.lock.lock().unwrap_or_else(PoisonError::into_inner);
    if word.load(Ordering::SeqCst) != expected {
        return true;
    }
    match deadline {
        None => {
            drop(b.cond.wait(guard).unwrap_or_else(PoisonError::into_inner));
            true
        }
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let (_g, r) = b
                .cond
                .wait_timeout(guard, left)
                .unwrap_or_else(PoisonError::into_inner);
            !r.timed_out()
        }
    }
}

/// Wakes the threads blocked in [`futex_wait`] on `word` (and, spuriously, those on the other
/// words of its bucket). The caller changed the word first.
pub(crate) fn futex_wake(word: &AtomicU32) {
    let b = bucket(word);
    // Taking the lock orders this wake-up after a waiter's check of the word: a waiter that
    // saw the old value is asleep (and is notified) by the time the lock is free.
    drop(b.lock.lock().unwrap_or_else(PoisonError::into_inner));
    b.cond.notify_all();
}

/// `d` as a `timespec`, the seconds saturated at 68 years (a "forever" every system accepts,
/// whatever the width of `time_t`).
pub(crate) fn timespec(d: std::time::Duration) -> libc::timespec {
    // SAFETY: `timespec` is plain integers, for which all-zero is valid.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    ts.tv_sec = d.as_secs().min(i32::MAX as u64) as _;
    ts.tv_nsec = d.subsec_nanos() as _;
    ts
}
