//! A counting semaphore whose `acquire` is a cancellation point (like C's `sem_wait`).

use super::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A counting semaphore. `acquire` blocks while the count is zero; a cancel request wakes it,
/// and a permit it took is never lost to the cancellation.
///
/// ```
/// let s = thread_cancel::sync::Semaphore::new(1);
/// s.acquire();
/// assert!(!s.try_acquire());
/// s.release();
/// assert!(s.try_acquire());
/// ```
#[derive(Debug, Default)]
pub struct Semaphore {
    count: Mutex<usize>,
    cv: Condvar,
}

impl Semaphore {
    /// A semaphore with `permits` permits.
    pub const fn new(permits: usize) -> Self {
        Self {
            count: Mutex::new(permits),
            cv: Condvar::new(),
        }
    }

    /// Takes a permit, waiting for one; a cancellation point (`sem_wait`).
    ///
    /// ```
    /// let s = std::sync::Arc::new(thread_cancel::sync::Semaphore::new(0));
    /// let s2 = s.clone();
    /// let h = thread_cancel::spawn(move || s2.acquire());
    /// h.cancel().unwrap();
    /// assert!(h.join().is_canceled());
    /// ```
    pub fn acquire(&self) {
        crate::testcancel();
        let mut n = lock(&self.count);
        while *n == 0 {
            n = self.cv.wait(n).unwrap_or_else(|p| p.into_inner());
        }
        *n -= 1;
    }

    /// Takes a permit, waiting at most `dur` (`sem_timedwait`); returns whether it got one.
    ///
    /// ```
    /// let s = thread_cancel::sync::Semaphore::new(0);
    /// assert!(!s.acquire_timeout(std::time::Duration::from_millis(5)));
    /// ```
    pub fn acquire_timeout(&self, dur: Duration) -> bool {
        crate::testcancel();
        let deadline = Instant::now().checked_add(dur);
        let mut n = lock(&self.count);
        while *n == 0 {
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            if left.is_zero() {
                return false;
            }
            n = match self.cv.wait_timeout(n, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        *n -= 1;
        true
    }

    /// Takes a permit if one is free; never blocks, not a cancellation point.
    pub fn try_acquire(&self) -> bool {
        let mut n = lock(&self.count);
        if *n == 0 {
            return false;
        }
        *n -= 1;
        true
    }

    /// Returns a permit and wakes one waiter.
    pub fn release(&self) {
        *lock(&self.count) += 1;
        self.cv.notify_one();
    }

    /// The number of free permits now.
    ///
    /// ```
    /// assert_eq!(thread_cancel::sync::Semaphore::new(3).available(), 3);
    /// ```
    pub fn available(&self) -> usize {
        *lock(&self.count)
    }
}

fn lock(m: &Mutex<usize>) -> super::MutexGuard<'_, usize> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
