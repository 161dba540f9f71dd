//! A mutex whose guard is not poisoned by a cancellation (only by a panic).
//!
//! Why: a thread canceled while it holds the lock is terminating in an orderly way — its
//! cleanup handlers are how it restores shared invariants, exactly as in POSIX — and the most
//! common case, a thread canceled in `Condvar::wait`, holds the lock only to give it back. A
//! panic still poisons, as with `std`. (A `std::sync::Mutex` guard held across a canceled point
//! does poison: its `Drop` only knows that the thread is unwinding.)

use super::poison::{self, Flag};
use crate::sys;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{LockResult, TryLockError, TryLockResult};

const UNLOCKED: u32 = 0;
const LOCKED: u32 = 1;
const CONTENDED: u32 = 2;

/// A mutual-exclusion lock, like [`std::sync::Mutex`], usable with [`Condvar`](super::Condvar).
///
/// A panic poisons it, as `std`'s; the unwind of a cancellation does not (a canceled thread
/// terminates in order: its cleanup handlers restore what the lock protects). A thread that
/// caught a cancellation's unwind (`catch_unwind`) and keeps its payload alive is still taken
/// to be canceling until it drops the payload: see [`CancelPayload`](crate::CancelPayload).
///
/// ```
/// let m = thread_cancel::sync::Mutex::new(1);
/// *m.lock().unwrap() += 1;
/// assert_eq!(m.into_inner().unwrap(), 2);
/// ```
#[derive(Default)]
pub struct Mutex<T: ?Sized> {
    state: AtomicU32,
    poisoned: Flag,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands out access to `data` to one thread at a time (the `state` word is
// acquired before and released after every access), so sharing the mutex only needs `T: Send`,
// exactly as for `std::sync::Mutex`.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: see above.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.try_lock() {
            Ok(g) => f.debug_struct("Mutex").field("data", &&*g).finish(),
            Err(_) => f.debug_struct("Mutex").finish_non_exhaustive(),
        }
    }
}

impl<T> Mutex<T> {
    /// A new unlocked mutex.
    pub const fn new(value: T) -> Self {
        Self {
            state: AtomicU32::new(UNLOCKED),
            poisoned: Flag::new(),
            data: UnsafeCell::new(value),
        }
    }

    /// Consumes the mutex and returns the data.
    ///
    /// # Errors
    /// A [`PoisonError`](std::sync::PoisonError) holding the data if the mutex is poisoned: a
    /// panic (not a cancellation) unwound through a holder of its guard.
    pub fn into_inner(self) -> LockResult<T> {
        let Self { poisoned, data, .. } = self;
        poisoned.result(data.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Acquires the lock, blocking; not a cancellation point.
    ///
    /// # Errors
    /// A [`PoisonError`](std::sync::PoisonError) holding the guard if the mutex is poisoned: a
    /// panic (not a cancellation) unwound through a holder of its guard. The lock is held either
    /// way ([`PoisonError::into_inner`](std::sync::PoisonError::into_inner) gives the guard).
    ///
    /// ```
    /// let m = thread_cancel::sync::Mutex::new(vec![1]);
    /// m.lock().unwrap().push(2);
    /// assert_eq!(*m.lock().unwrap(), [1, 2]);
    /// ```
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        if self
            .state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        self.guard()
    }

    /// Acquires the lock if it is free.
    ///
    /// # Errors
    /// - [`TryLockError::WouldBlock`] if the mutex is locked;
    /// - [`TryLockError::Poisoned`] holding the guard if it was free but is poisoned (see
    ///   [`lock`](Self::lock)); the lock is then held.
    ///
    /// ```
    /// let m = thread_cancel::sync::Mutex::new(0);
    /// let g = m.lock().unwrap();
    /// assert!(m.try_lock().is_err());
    /// drop(g);
    /// assert!(m.try_lock().is_ok());
    /// ```
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        if self
            .state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(TryLockError::WouldBlock);
        }
        Ok(self.guard()?)
    }

    /// Whether a panic (not a cancellation) left the data possibly inconsistent.
    ///
    /// ```
    /// assert!(!thread_cancel::sync::Mutex::new(()).is_poisoned());
    /// ```
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.get()
    }

    /// Clears the poison flag.
    ///
    /// ```
    /// thread_cancel::sync::Mutex::new(()).clear_poison();
    /// ```
    pub fn clear_poison(&self) {
        self.poisoned.clear();
    }

    /// Mutable access without locking (the borrow proves exclusivity).
    ///
    /// # Errors
    /// A [`PoisonError`](std::sync::PoisonError) holding the reference if the mutex is poisoned
    /// (see [`lock`](Self::lock)).
    ///
    /// ```
    /// let mut m = thread_cancel::sync::Mutex::new(1);
    /// *m.get_mut().unwrap() = 2;
    /// ```
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.poisoned.result(self.data.get_mut())
    }

    fn guard(&self) -> LockResult<MutexGuard<'_, T>> {
        let g = MutexGuard {
            lock: self,
            panicking: poison::Guard::new(),
            _not_send: PhantomData,
        };
        self.poisoned.result(g)
    }

    #[cold]
    fn lock_contended(&self) {
        for _ in 0..100 {
            if self.state.load(Ordering::Relaxed) == UNLOCKED
                && self
                    .state
                    .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            std::hint::spin_loop();
        }
        while self.state.swap(CONTENDED, Ordering::Acquire) != UNLOCKED {
            sys::futex_wait(&self.state, CONTENDED, None);
        }
    }

    pub(crate) fn unlock(&self) {
        if self.state.swap(UNLOCKED, Ordering::Release) == CONTENDED {
            sys::futex_wake(&self.state);
        }
    }
}

/// Holds the lock of a [`Mutex`]; unlocks on drop.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct MutexGuard<'a, T: ?Sized> {
    pub(crate) lock: &'a Mutex<T>,
    panicking: poison::Guard,
    _not_send: PhantomData<*const ()>,
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// Releases the lock without the poison check (for `Condvar::wait`, which re-locks).
    pub(crate) fn unlock_for_wait(self) -> &'a Mutex<T> {
        let lock = self.lock;
        std::mem::forget(self);
        lock.unlock();
        lock
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a guard exists only while this thread holds the lock, so no other reference to
        // the data is live; the shared borrow of the guard bounds this one.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; the exclusive borrow of the guard makes this the only access.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.poisoned.done(self.panicking);
        self.lock.unlock();
    }
}
