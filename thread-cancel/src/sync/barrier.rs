//! A barrier whose `wait` is a cancellation point; a canceled wait does not count.

use super::condvar::Condvar;
use super::mutex::{Mutex, MutexGuard};
use crate::point::wait::{act_current, Wake};
use std::ops::DerefMut;
use std::sync::PoisonError;

/// Arrivals at the current generation (under `Barrier::state`).
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Threads waiting at the barrier now.
    pub(crate) count: usize,
    /// Bumped each time the barrier trips: a waiter whose generation changed was released.
    pub(crate) generation: u64,
}

/// A barrier, like [`std::sync::Barrier`]: `n` threads calling [`wait`](Self::wait) all
/// return once the `n`-th arrives, one of them as the leader; then it starts over.
///
/// `wait` is a cancellation point (POSIX's `pthread_barrier_wait` is not one). A canceled
/// wait had no effect: the waiter is withdrawn, its arrival no longer counts, and the others
/// keep waiting for a replacement. A wait that completed (the barrier tripped) returns
/// normally, even if a request came meanwhile: the request is acted on at the next point.
///
/// ```
/// use std::sync::Arc;
/// use thread_cancel::sync::Barrier;
/// let b = Arc::new(Barrier::new(2));
/// let b2 = b.clone();
/// let quitter = thread_cancel::spawn(move || { b2.wait(); });
/// quitter.cancel().unwrap(); // it leaves the barrier without counting
/// assert!(quitter.join().is_canceled());
/// let b3 = b.clone();
/// let replacement = thread_cancel::spawn(move || b3.wait().is_leader());
/// let me = b.wait().is_leader();
/// assert!(me != replacement.join().unwrap()); // exactly one leader
/// ```
pub struct Barrier {
    state: Mutex<State>,
    cv: Condvar,
    n: usize,
}

impl std::fmt::Debug for Barrier {
    /// The number of threads the barrier waits for, and how many wait now.
    ///
    /// ```
    /// let b = thread_cancel::sync::Barrier::new(3);
    /// assert_eq!(format!("{b:?}"), "Barrier { n: 3, waiting: 0 }");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Barrier")
            .field("n", &self.n)
            .field("waiting", &self.state().count)
            .finish()
    }
}

/// What [`Barrier::wait`] returns: whether this thread is the leader (exactly one of the
/// threads released by each trip is).
///
/// ```
/// let r = thread_cancel::sync::Barrier::new(1).wait();
/// assert!(r.is_leader());
/// assert_eq!(format!("{r:?}"), "BarrierWaitResult { is_leader: true }");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// True for the one thread of each trip that is the leader (the last to arrive).
    ///
    /// ```
    /// assert!(thread_cancel::sync::Barrier::new(0).wait().is_leader());
    /// ```
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl std::fmt::Debug for BarrierWaitResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BarrierWaitResult")
            .field("is_leader", &self.0)
            .finish()
    }
}

impl Barrier {
    /// A barrier for `n` threads. As with `std`, `n` of 0 or 1 never blocks: every `wait` is
    /// the leader.
    ///
    /// ```
    /// let b = thread_cancel::sync::Barrier::new(1);
    /// assert!(b.wait().is_leader());
    /// ```
    pub const fn new(n: usize) -> Self {
        Self {
            state: Mutex::new(State {
                count: 0,
                generation: 0,
            }),
            cv: Condvar::new(),
            n,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state's mutex is never held across user code: its poison means nothing.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until `n` threads wait, then releases them all; the last to arrive is the leader.
    /// A cancellation point, at entry and while it waits: a canceled wait is withdrawn and does
    /// not count towards the `n`; a wait released by the barrier is never canceled.
    ///
    /// ```
    /// use std::sync::Arc;
    /// let b = Arc::new(thread_cancel::sync::Barrier::new(3));
    /// let hs: Vec<_> = (0..3)
    ///     .map(|_| {
    ///         let b = b.clone();
    ///         thread_cancel::spawn(move || b.wait().is_leader())
    ///     })
    ///     .collect();
    /// let leaders = hs.into_iter().map(|h| h.join().unwrap()).filter(|&l| l).count();
    /// assert_eq!(leaders, 1);
    /// ```
    pub fn wait(&self) -> BarrierWaitResult {
        crate::testcancel();
        let wait = |s| {
            let (g, wake) = self.cv.wait_unacted(s, None);
            (g.unwrap_or_else(PoisonError::into_inner), wake)
        };
        match arrive(self.n, self.state(), wait, || self.cv.notify_all()) {
            Some(leader) => BarrierWaitResult(leader),
            None => act_current(),
        }
    }
}

/// The protocol of [`Barrier::wait`] after its entry point, over the barrier's locked state `s`
/// (a guard), `wait` (a condition wait on it: unlocks, waits, locks again, never acts) and
/// `notify_all` (wakes every `wait`): the barrier passes its `Mutex` and `Condvar`, the loom
/// model (`sync/loom_tests.rs`) loom's mutex and the condition variable's protocol on a loom
/// queue. Returns whether this thread leads its trip, or `None` if its wait was canceled: it
/// was withdrawn (its arrival no longer counts) and the lock released; the caller acts.
#[inline]
pub(crate) fn arrive<G: DerefMut<Target = State>>(
    n: usize,
    mut s: G,
    mut wait: impl FnMut(G) -> (G, Wake),
    notify_all: impl FnOnce(),
) -> Option<bool> {
    s.count += 1;
    if s.count >= n {
        s.count = 0;
        s.generation = s.generation.wrapping_add(1);
        drop(s);
        notify_all();
        return Some(true);
    }
    let generation = s.generation;
    loop {
        let (g, wake) = wait(s);
        s = g;
        // The trip is checked first: a released waiter returns, whatever the requests.
        if s.generation != generation {
            return Some(false);
        }
        if wake == Wake::Cancel {
            // Withdraw: this arrival no longer counts. Nobody needs a wake-up for that
            // (the others wait for `n` arrivals, one fewer is now there).
            s.count -= 1;
            drop(s);
            return None;
        }
    }
}
