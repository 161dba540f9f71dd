//! The poison flag of [`Mutex`](super::Mutex) and [`RwLock`](super::RwLock): set when a guard is
//! dropped by a panic's unwind, never by a cancellation's (see the `mutex` module).

use crate::point::terminating;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LockResult, PoisonError};

#[derive(Default)]
pub(crate) struct Flag(AtomicBool);

/// Taken when a guard is made: whether the thread was already panicking then (a guard made
/// inside a `Drop` run by a panic does not poison when that same unwind drops it).
#[derive(Clone, Copy)]
pub(crate) struct Guard {
    panicking: bool,
}

impl Guard {
    pub(crate) fn new() -> Self {
        Self {
            panicking: std::thread::panicking(),
        }
    }
}

impl Flag {
    pub(crate) const fn new() -> Self {
        Self(AtomicBool::new(false))
    }

    pub(crate) fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }

    /// `v`, as `Err` if the flag is set.
    pub(crate) fn result<V>(&self, v: V) -> LockResult<V> {
        if self.get() {
            Err(PoisonError::new(v))
        } else {
            Ok(v)
        }
    }

    /// A guard made with `guard` is dropped: a panic that began since poisons; the unwind of a
    /// cancellation (or `exit`) does not.
    pub(crate) fn done(&self, guard: Guard) {
        if !guard.panicking && std::thread::panicking() && !terminating() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}
