//! A condition variable whose waits are cancellation points and never lose a notification.

use super::mutex::{Mutex, MutexGuard};
use crate::atomic::{AtomicBool, Ordering};
use crate::control::Control;
use crate::current::current_control;
use crate::point::wait::{act_current, deadline_after, wait_until, Wake};
use std::collections::VecDeque;
use std::ops::DerefMut;
use std::sync::{Arc, LockResult, PoisonError};
use std::time::{Duration, Instant};

/// One waiting thread: woken through its control block's parker.
#[derive(Debug)]
pub(crate) struct Waiter {
    control: Arc<Control>,
    notified: AtomicBool,
}

/// The queue of a condition variable's waiters, longest waiting first.
pub(crate) type Queue = VecDeque<Arc<Waiter>>;

// The protocol of a condition variable (R22: a notification is never lost to a cancel), over
// the lock of its queue, which the caller passes locked (`Q`, a guard of the queue) or as the
// function that locks it: [`Condvar`] passes its `std` mutex, the loom model of this protocol
// (`sync/loom_tests.rs`) a loom one. Everything else is the crate's own: the waiter's
// `notified` flag, the wait loop (`wait_until`) on the thread's state word, the parker.

/// Wakes the longest waiting of the locked queue `q`, if any.
#[inline]
pub(crate) fn notify_one_queued<Q: DerefMut<Target = Queue>>(mut q: Q) {
    // Taken and marked under the queue lock, in one step: a canceled waiter decides under
    // the same lock, so it sees itself either still queued (it leaves, and the notification
    // goes to another) or marked (the notification is its own: it returns normally).
    let w = q.pop_front();
    if let Some(w) = &w {
        w.notified.store(true, Ordering::Release);
    }
    drop(q);
    if let Some(w) = w {
        w.control.parker.unpark();
    }
}

/// Wakes every waiter of the locked queue `q`.
#[inline]
pub(crate) fn notify_all_queued<Q: DerefMut<Target = Queue>>(mut q: Q) {
    for w in q.iter() {
        w.notified.store(true, Ordering::Release);
    }
    let all = std::mem::take(&mut *q);
    drop(q);
    for w in all {
        w.control.parker.unpark();
    }
}

/// The wait of the thread whose control block is `me`: queues it (under `queue()`), then
/// `release()` (the caller's mutex, unlocked once the thread is queued: a notifier that takes
/// that mutex after it sees it queued), waits, and decides under `queue()` what the wait
/// achieved. Returns `release`'s result and `Wake::Ready` if a notification was consumed
/// (whatever else happened), else why the wait ended. Never acts.
#[inline]
pub(crate) fn wait_queued<Q: DerefMut<Target = Queue>, R>(
    queue: impl Fn() -> Q,
    me: &Arc<Control>,
    release: impl FnOnce() -> R,
    deadline: Option<Instant>,
) -> (R, Wake) {
    let waiter = Arc::new(Waiter {
        control: me.clone(),
        notified: AtomicBool::new(false),
    });
    // Queue before unlocking: a notifier that takes the lock after us sees us.
    queue().push_back(waiter.clone());
    let released = release();
    let wake = wait_until(me, || waiter.notified.load(Ordering::Acquire), deadline);
    // Decide under the queue lock: either a notifier took us (it marks us under the same
    // lock: the notification is ours and the wait completed), or we leave the queue and no
    // notification can reach us.
    let consumed = {
        let mut q = queue();
        let consumed = waiter.notified.load(Ordering::Acquire);
        if !consumed {
            q.retain(|w| !Arc::ptr_eq(w, &waiter));
        }
        consumed
    };
    (released, if consumed { Wake::Ready } else { wake })
}

/// A condition variable for [`Mutex`]; `wait` is a cancellation point (as
/// `pthread_cond_wait` is).
///
/// A canceled wait re-acquires the mutex before the request is acted on (so before the
/// first cleanup handler runs), and a notification it consumed is never lost: a waiter that was
/// notified returns normally — the request is then acted on at its next point — and a waiter
/// that was not notified leaves the queue, so the notification goes to another waiter.
///
/// ```
/// use std::sync::Arc;
/// use thread_cancel::sync::{Condvar, Mutex};
/// let pair = Arc::new((Mutex::new(false), Condvar::new()));
/// let p = pair.clone();
/// let h = thread_cancel::spawn(move || {
///     let (m, cv) = &*p;
///     let _g = cv.wait_while(m.lock().unwrap(), |ready| !*ready).unwrap();
/// });
/// h.cancel().unwrap(); // nobody will ever set `ready`: cancel the waiter
/// assert!(h.join().is_canceled());
/// assert!(!pair.0.is_poisoned()); // a cancellation does not poison
/// ```
#[derive(Debug, Default)]
pub struct Condvar {
    waiters: std::sync::Mutex<Queue>,
}

/// Whether a timed wait timed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// True if the wait ended because its time ran out.
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

fn relock<'a, T: ?Sized>(m: &'a Mutex<T>) -> LockResult<MutexGuard<'a, T>> {
    m.lock()
}

impl Condvar {
    /// A condition variable with no waiters.
    pub const fn new() -> Self {
        Self {
            waiters: std::sync::Mutex::new(VecDeque::new()),
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.waiters.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Unlocks, waits for a notification, re-locks. A cancellation point; may wake spuriously.
    ///
    /// # Errors
    /// A [`PoisonError`] holding the re-acquired guard if the mutex is poisoned when it is locked
    /// again (a panic, not a cancellation, unwound through another holder of its guard meanwhile,
    /// or before). The mutex is held either way.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use thread_cancel::sync::{Condvar, Mutex};
    /// let pair = Arc::new((Mutex::new(0), Condvar::new()));
    /// let p = pair.clone();
    /// let h = thread_cancel::spawn(move || {
    ///     let mut g = p.0.lock().unwrap();
    ///     while *g == 0 { g = p.1.wait(g).unwrap(); }
    ///     *g
    /// });
    /// *pair.0.lock().unwrap() = 5;
    /// pair.1.notify_one();
    /// assert_eq!(h.join().unwrap(), 5);
    /// ```
    #[inline]
    pub fn wait<'a, T: ?Sized>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        self.wait_deadline(guard, None).0
    }

    /// Waits while `condition` holds.
    ///
    /// # Errors
    /// A [`PoisonError`] holding the re-acquired guard if the mutex is poisoned when it is locked
    /// again (a panic, not a cancellation, unwound through another holder of its guard meanwhile,
    /// or before). The mutex is held either way. The wait stops at the first poisoned re-lock.
    ///
    /// ```
    /// use thread_cancel::sync::{Condvar, Mutex};
    /// let (m, cv) = (Mutex::new(1), Condvar::new());
    /// let g = cv.wait_while(m.lock().unwrap(), |v| *v == 0).unwrap();
    /// assert_eq!(*g, 1);
    /// ```
    #[inline]
    pub fn wait_while<'a, T: ?Sized>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: impl FnMut(&mut T) -> bool,
    ) -> LockResult<MutexGuard<'a, T>> {
        while condition(&mut *guard) {
            guard = self.wait(guard)?;
        }
        Ok(guard)
    }

    /// Waits for a notification at most `dur`.
    ///
    /// # Errors
    /// A [`PoisonError`] holding the re-acquired guard, and the [`WaitTimeoutResult`], if the mutex
    /// is poisoned when it is locked again (a panic, not a cancellation, unwound through another
    /// holder of its guard meanwhile, or before). The mutex is held either way.
    ///
    /// ```
    /// use std::time::Duration;
    /// use thread_cancel::sync::{Condvar, Mutex};
    /// let (m, cv) = (Mutex::new(()), Condvar::new());
    /// let (_g, r) = cv.wait_timeout(m.lock().unwrap(), Duration::from_millis(5)).unwrap();
    /// assert!(r.timed_out());
    /// ```
    #[allow(clippy::type_complexity)]
    #[inline]
    pub fn wait_timeout<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        dur: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let (r, timed_out) = self.wait_deadline(guard, deadline_after(dur));
        match r {
            Ok(g) => Ok((g, WaitTimeoutResult(timed_out))),
            Err(p) => Err(PoisonError::new((
                p.into_inner(),
                WaitTimeoutResult(timed_out),
            ))),
        }
    }

    /// Waits while `condition` holds, for at most `dur` in all, like `std`'s
    /// `Condvar::wait_timeout_while`; each wait is a cancellation point. The result says
    /// whether the time ran out with the condition still true.
    ///
    /// # Errors
    /// A [`PoisonError`] holding the re-acquired guard, and the [`WaitTimeoutResult`] (whether
    /// `condition` still held), if the mutex is poisoned when it is locked again (a panic, not a
    /// cancellation, unwound through another holder of its guard meanwhile, or before). The mutex
    /// is held either way. The wait stops at the first poisoned re-lock.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use thread_cancel::sync::{Condvar, Mutex};
    /// let pair = Arc::new((Mutex::new(false), Condvar::new()));
    /// let p = pair.clone();
    /// std::thread::spawn(move || {
    ///     *p.0.lock().unwrap() = true;
    ///     p.1.notify_one();
    /// });
    /// let (m, cv) = &*pair;
    /// let (g, r) = cv
    ///     .wait_timeout_while(m.lock().unwrap(), Duration::from_secs(60), |ready| !*ready)
    ///     .unwrap();
    /// assert!(*g && !r.timed_out());
    /// drop(g);
    ///
    /// let (_g, r) = cv
    ///     .wait_timeout_while(m.lock().unwrap(), Duration::from_millis(5), |_| true)
    ///     .unwrap();
    /// assert!(r.timed_out());
    /// ```
    #[allow(clippy::type_complexity)]
    #[inline]
    pub fn wait_timeout_while<'a, T: ?Sized>(
        &self,
        mut guard: MutexGuard<'a, T>,
        dur: Duration,
        mut condition: impl FnMut(&mut T) -> bool,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let deadline = deadline_after(dur);
        while condition(&mut *guard) {
            if deadline.is_some_and(|d| d <= Instant::now()) {
                return Ok((guard, WaitTimeoutResult(true)));
            }
            let (r, _) = self.wait_deadline(guard, deadline);
            guard = match r {
                Ok(g) => g,
                Err(p) => {
                    let mut g = p.into_inner();
                    let timed_out = condition(&mut *g);
                    return Err(PoisonError::new((g, WaitTimeoutResult(timed_out))));
                }
            };
        }
        Ok((guard, WaitTimeoutResult(false)))
    }

    /// Wakes one waiter, the longest waiting.
    ///
    /// ```
    /// thread_cancel::sync::Condvar::new().notify_one(); // nobody waits: no effect
    /// ```
    pub fn notify_one(&self) {
        notify_one_queued(self.queue());
    }

    /// Wakes every waiter.
    ///
    /// ```
    /// thread_cancel::sync::Condvar::new().notify_all();
    /// ```
    pub fn notify_all(&self) {
        notify_all_queued(self.queue());
    }

    /// The wait is out of line and the act inlined: the unwind starts in the caller's frame.
    #[inline(always)]
    fn wait_deadline<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        deadline: Option<Instant>,
    ) -> (LockResult<MutexGuard<'a, T>>, bool) {
        match self.wait_deadline_unacted(guard, deadline) {
            Some(r) => r,
            None => act_current(),
        }
    }

    /// [`wait_deadline`](Self::wait_deadline)'s wait: `None` if a request must be acted on,
    /// which the caller does.
    #[inline(never)]
    fn wait_deadline_unacted<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        deadline: Option<Instant>,
    ) -> Option<(LockResult<MutexGuard<'a, T>>, bool)> {
        // Entering the point: act with the lock held (the guard unlocks as the unwind drops it).
        crate::testcancel();
        let (relocked, wake) = self.wait_unacted(guard, deadline);
        match wake {
            Wake::Cancel => {
                // R22: the mutex is held again before the request is acted on. The guard would
                // be the first thing the unwind drops; dropping it here instead is the same
                // (the mutex does not poison on a cancellation) and spares the unwind a
                // landing pad.
                drop(relocked);
                None
            }
            Wake::Timeout => Some((relocked, true)),
            Wake::Ready => Some((relocked, false)),
        }
    }

    /// The wait of [`wait`](Self::wait) for the library's own primitives: it never acts. It
    /// returns with the mutex held again and `Wake::Cancel` if a request must be acted on and
    /// no notification was consumed (`Wake::Timeout` likewise for the deadline; `Wake::Ready`
    /// otherwise, spurious wake-ups included). The caller then decides under the mutex what its
    /// wait achieved, undoes the rest, wakes whoever its undoing concerns, releases the mutex,
    /// and acts (`act_current`). Not a point at entry: a pending request returns `Cancel` at
    /// once (a fresh waiter cannot have been notified).
    ///
    /// Out of line: the caller acts in its own frame, and the unwind's personality routine
    /// scans that frame's call sites in both phases; inlined, this wait's many call sites made
    /// the table of every caller long (callgrind: ~3,500 instructions per cancel).
    #[inline(never)]
    pub(crate) fn wait_unacted<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        deadline: Option<Instant>,
    ) -> (LockResult<MutexGuard<'a, T>>, Wake) {
        let me = current_control();
        let (mutex, wake) = wait_queued(|| self.queue(), &me, || guard.unlock_for_wait(), deadline);
        drop(me);
        (relock(mutex), wake)
    }
}
