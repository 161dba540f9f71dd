//! A per-thread wake-up token on a futex word: the one place a canceled thread is woken from.
//!
//! Same protocol as std's futex parker: `unpark` leaves a token that the next `park` consumes,
//! so a wake-up that arrives before the thread sleeps is never lost.

#[cfg(loom)]
use crate::atomic::{futex_wait, futex_wake};
use crate::atomic::{AtomicU32, Ordering};
#[cfg(not(loom))]
use crate::sys::{futex_wait, futex_wake};
use std::time::Instant;

const EMPTY: u32 = 0;
const NOTIFIED: u32 = 1;
const PARKED: u32 = u32::MAX;

#[derive(Debug)]
pub(crate) struct Parker {
    state: AtomicU32,
}

impl Parker {
    pub(crate) fn new() -> Self {
        Self {
            state: AtomicU32::new(EMPTY),
        }
    }

    /// Owner only: sleeps until a token is available (consuming it) or `deadline` passes.
    /// May return spuriously; callers re-check their condition.
    pub(crate) fn park(&self, deadline: Option<Instant>) {
        // EMPTY -> PARKED, or NOTIFIED -> EMPTY (token consumed, no sleep).
        if self.state.fetch_sub(1, Ordering::Acquire) == NOTIFIED {
            return;
        }
        loop {
            let in_time = futex_wait(&self.state, PARKED, deadline);
            if self
                .state
                .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Acquire)
                .is_ok()
            {
                return;
            }
            if !in_time {
                // Timed out: leave PARKED (or take a token that raced in).
                self.state.swap(EMPTY, Ordering::Acquire);
                return;
            }
        }
    }

    /// Any thread: makes the token available and wakes the owner if it sleeps. Returns whether
    /// the owner was inside [`park`](Self::park): it then leaves `park` through an acquiring
    /// read of this token, so it sees everything the caller did before this call.
    pub(crate) fn unpark(&self) -> bool {
        let parked = self.notify();
        if parked {
            self.wake_parked();
        }
        parked
    }

    /// The first half of [`unpark`](Self::unpark): makes the token available (the owner can no
    /// longer sleep past it) and returns whether the owner was inside `park`; if so, it still
    /// sleeps until [`wake_parked`](Self::wake_parked).
    pub(crate) fn notify(&self) -> bool {
        self.state.swap(NOTIFIED, Ordering::Release) == PARKED
    }

    /// The second half of [`unpark`](Self::unpark), after [`notify`](Self::notify) returned
    /// `true`. Harmless at any later time: a wake-up of a futex nobody sleeps on (or a spurious
    /// one, which `park` absorbs).
    pub(crate) fn wake_parked(&self) {
        futex_wake(&self.state);
    }
}
