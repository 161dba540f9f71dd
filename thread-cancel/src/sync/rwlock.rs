//! A reader-writer lock whose blocking waits are cancellation points.
//!
//! Built on the crate's [`Mutex`] and [`Condvar`]: a small state (`readers`, `writer`,
//! `waiting_writers`) under the mutex, readers waiting on one condition variable and writers on
//! another. Every decision is made under that mutex after each wake-up, the condition first:
//! a lock that can be taken is taken (the wait completed; a request pending meanwhile is acted
//! on at the next point), otherwise a request is acted on after the waiter withdrew (a writer
//! stops counting as waiting and, if it was the last one, wakes the readers it held back).

use super::condvar::Condvar;
use super::mutex::{Mutex, MutexGuard};
use super::poison::{self, Flag};
use crate::point::wait::{act_current, Wake};
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

/// Who holds and who waits for the lock (under `RwLock::state`).
#[derive(Debug, Default)]
struct State {
    /// Read guards alive.
    readers: usize,
    /// A write guard is alive.
    writer: bool,
    /// Threads inside `write` waiting for the lock; while there are any, new readers wait.
    waiting_writers: usize,
}

impl State {
    fn readable(&self) -> bool {
        !self.writer && self.waiting_writers == 0
    }
    fn writable(&self) -> bool {
        !self.writer && self.readers == 0
    }
}

/// A reader-writer lock, like [`std::sync::RwLock`]: any number of readers or one writer.
/// Waiting in [`read`](Self::read) or [`write`](Self::write) is a cancellation point.
///
/// A canceled `read` or `write` had no effect: it returns no guard, never holds the lock
/// afterwards, and a writer that stops waiting wakes the readers it was holding back. A
/// `read` or `write` that got the lock returns its guard, even if a request came meanwhile
/// (the request is acted on at the next point).
///
/// Writers are preferred: while a writer waits, new readers wait too (so a steady stream of
/// readers cannot starve a writer). As with `std`, a thread that already holds a read guard
/// and calls `read` again while a writer waits deadlocks; here a cancel request ends that
/// wait.
///
/// Poisoning is the crate's [`Mutex`]'s: a panic while a write guard is held poisons the lock
/// (as with `std`; a read guard never poisons), a cancellation does not — a canceled thread's
/// cleanup handlers are how it restores shared invariants.
///
/// ```
/// use std::sync::Arc;
/// use thread_cancel::sync::RwLock;
/// let lock = Arc::new(RwLock::new(0));
/// let g = lock.read().unwrap(); // held: a writer must wait
/// let l = lock.clone();
/// let h = thread_cancel::spawn(move || *l.write().unwrap() += 1);
/// h.cancel().unwrap(); // the writer is canceled (at entry, or while it waits)
/// assert!(h.join().is_canceled());
/// drop(g);
/// assert_eq!(*lock.read().unwrap(), 0); // its write never happened
/// assert!(!lock.is_poisoned()); // and a cancellation does not poison
/// ```
pub struct RwLock<T: ?Sized> {
    state: Mutex<State>,
    /// Readers wait here (woken all at once).
    readers_cv: Condvar,
    /// Writers wait here (woken one at a time).
    writers_cv: Condvar,
    poisoned: Flag,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands out `&mut T` to one thread at a time, and `&T` to several only while
// no `&mut T` exists (the state under `state` decides both), as `std::sync::RwLock`: sending
// the lock needs `T: Send`, sharing it needs `T: Send + Sync` (readers on several threads see
// `&T` at once).
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: see above.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

impl<T: Default> Default for RwLock<T> {
    /// A lock around `T::default()`.
    ///
    /// ```
    /// let l: thread_cancel::sync::RwLock<u8> = Default::default();
    /// assert_eq!(*l.read().unwrap(), 0);
    /// ```
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> From<T> for RwLock<T> {
    /// A lock around `value`.
    ///
    /// ```
    /// let l = thread_cancel::sync::RwLock::from(3);
    /// assert_eq!(*l.read().unwrap(), 3);
    /// ```
    fn from(value: T) -> Self {
        Self::new(value)
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for RwLock<T> {
    /// The data if it can be read now (as `std`'s: `RwLock { data: .., poisoned: .. }`).
    ///
    /// ```
    /// let l = thread_cancel::sync::RwLock::new(1);
    /// assert_eq!(format!("{l:?}"), "RwLock { data: 1, poisoned: false, .. }");
    /// let _w = l.write().unwrap();
    /// assert_eq!(format!("{l:?}"), "RwLock { data: <locked>, poisoned: false, .. }");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("RwLock");
        match self.try_read() {
            Ok(g) => d.field("data", &&*g),
            Err(TryLockError::Poisoned(p)) => d.field("data", &&**p.get_ref()),
            Err(TryLockError::WouldBlock) => d.field("data", &format_args!("<locked>")),
        };
        d.field("poisoned", &self.is_poisoned())
            .finish_non_exhaustive()
    }
}

impl<T> RwLock<T> {
    /// A new unlocked lock around `value`.
    ///
    /// ```
    /// static CONFIG: thread_cancel::sync::RwLock<u32> = thread_cancel::sync::RwLock::new(7);
    /// assert_eq!(*CONFIG.read().unwrap(), 7);
    /// ```
    pub const fn new(value: T) -> Self {
        Self {
            state: Mutex::new(State {
                readers: 0,
                writer: false,
                waiting_writers: 0,
            }),
            readers_cv: Condvar::new(),
            writers_cv: Condvar::new(),
            poisoned: Flag::new(),
            data: UnsafeCell::new(value),
        }
    }

    /// Consumes the lock and returns the data.
    ///
    /// # Errors
    /// A [`PoisonError`] holding the data if the lock is poisoned: a panic (not a cancellation)
    /// unwound through a holder of a write guard.
    ///
    /// ```
    /// let l = thread_cancel::sync::RwLock::new(String::from("x"));
    /// l.write().unwrap().push('y');
    /// assert_eq!(l.into_inner().unwrap(), "xy");
    /// ```
    pub fn into_inner(self) -> LockResult<T> {
        let Self { poisoned, data, .. } = self;
        poisoned.result(data.into_inner())
    }
}

impl<T: ?Sized> RwLock<T> {
    fn state(&self) -> MutexGuard<'_, State> {
        // The state's mutex is never held across user code: its poison means nothing.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks for reading, waiting while a writer holds the lock or waits for it. A
    /// cancellation point, at entry and while it waits; a canceled `read` holds nothing.
    ///
    /// # Errors
    /// A [`PoisonError`] holding the guard if the lock is poisoned: a panic (not a cancellation)
    /// unwound through a holder of a write guard. The read lock is held either way.
    ///
    /// # Panics
    /// If `usize::MAX` read guards are alive at once (reachable only by leaking guards).
    ///
    /// ```
    /// let l = thread_cancel::sync::RwLock::new(5);
    /// let (a, b) = (l.read().unwrap(), l.read().unwrap()); // readers share the lock
    /// assert_eq!(*a + *b, 10);
    /// ```
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        crate::testcancel();
        let mut s = self.state();
        while !s.readable() {
            let (g, wake) = self.readers_cv.wait_unacted(s, None);
            s = g.unwrap_or_else(PoisonError::into_inner);
            if wake == Wake::Cancel && !s.readable() {
                // Nothing taken, nothing to give back: readers are woken all at once, so this
                // wait took no wake-up another thread needs.
                drop(s);
                act_current();
            }
        }
        s.readers = s.readers.checked_add(1).expect("too many read guards");
        drop(s);
        self.read_guard()
    }

    /// Locks for writing, waiting while the lock is held. A cancellation point, at entry and
    /// while it waits; a canceled `write` holds nothing, and if it was the last writer waiting
    /// it wakes the readers it held back.
    ///
    /// # Errors
    /// A [`PoisonError`] holding the guard if the lock is poisoned: a panic (not a cancellation)
    /// unwound through a holder of a write guard. The write lock is held either way.
    ///
    /// ```
    /// let l = thread_cancel::sync::RwLock::new(vec![1]);
    /// l.write().unwrap().push(2);
    /// assert_eq!(*l.read().unwrap(), [1, 2]);
    /// ```
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        crate::testcancel();
        let mut s = self.state();
        if !s.writable() {
            s.waiting_writers += 1;
            loop {
                let (g, wake) = self.writers_cv.wait_unacted(s, None);
                s = g.unwrap_or_else(PoisonError::into_inner);
                if s.writable() {
                    break;
                }
                if wake == Wake::Cancel {
                    // Withdraw. The lock is held (so there is no free lock to pass on to
                    // another writer); if a reader holds it and this was the last writer
                    // waiting, the readers held back by it can now share the lock.
                    s.waiting_writers -= 1;
                    let wake_readers = s.readable();
                    drop(s);
                    if wake_readers {
                        self.readers_cv.notify_all();
                    }
                    act_current();
                }
            }
            s.waiting_writers -= 1;
        }
        s.writer = true;
        drop(s);
        self.write_guard()
    }

    /// Locks for reading if that needs no wait (no writer holds the lock or waits for it).
    /// Not a cancellation point.
    ///
    /// # Errors
    /// - [`TryLockError::WouldBlock`] if a writer holds the lock or waits for it;
    /// - [`TryLockError::Poisoned`] holding the guard if the lock is poisoned (see
    ///   [`read`](Self::read)); the read lock is then held.
    ///
    /// # Panics
    /// If `usize::MAX` read guards are alive at once (reachable only by leaking guards).
    ///
    /// ```
    /// let l = thread_cancel::sync::RwLock::new(0);
    /// let w = l.write().unwrap();
    /// assert!(l.try_read().is_err());
    /// drop(w);
    /// assert!(l.try_read().is_ok());
    /// ```
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        let mut s = self.state();
        if !s.readable() {
            return Err(TryLockError::WouldBlock);
        }
        s.readers = s.readers.checked_add(1).expect("too many read guards");
        drop(s);
        Ok(self.read_guard()?)
    }

    /// Locks for writing if the lock is free. Not a cancellation point.
    ///
    /// # Errors
    /// - [`TryLockError::WouldBlock`] if the lock is held (for reading or writing);
    /// - [`TryLockError::Poisoned`] holding the guard if the lock is poisoned (see
    ///   [`write`](Self::write)); the write lock is then held.
    ///
    /// ```
    /// let l = thread_cancel::sync::RwLock::new(0);
    /// let r = l.read().unwrap();
    /// assert!(l.try_write().is_err());
    /// drop(r);
    /// *l.try_write().unwrap() = 1;
    /// ```
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        let mut s = self.state();
        if !s.writable() {
            return Err(TryLockError::WouldBlock);
        }
        s.writer = true;
        drop(s);
        Ok(self.write_guard()?)
    }

    /// Whether a panic (not a cancellation) while a write guard was held left the data
    /// possibly inconsistent.
    ///
    /// ```
    /// use std::sync::Arc;
    /// let l = Arc::new(thread_cancel::sync::RwLock::new(0));
    /// let l2 = l.clone();
    /// let _ = std::thread::spawn(move || {
    ///     let _w = l2.write().unwrap();
    ///     panic!("a panic while writing poisons");
    /// })
    /// .join();
    /// assert!(l.is_poisoned());
    /// ```
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.get()
    }

    /// Clears the poison flag.
    ///
    /// ```
    /// let l = thread_cancel::sync::RwLock::new(());
    /// l.clear_poison();
    /// assert!(!l.is_poisoned());
    /// ```
    pub fn clear_poison(&self) {
        self.poisoned.clear();
    }

    /// Mutable access without locking (the borrow proves exclusivity).
    ///
    /// # Errors
    /// A [`PoisonError`] holding the reference if the lock is poisoned (see
    /// [`write`](Self::write)).
    ///
    /// ```
    /// let mut l = thread_cancel::sync::RwLock::new(1);
    /// *l.get_mut().unwrap() = 2;
    /// assert_eq!(*l.read().unwrap(), 2);
    /// ```
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.poisoned.result(self.data.get_mut())
    }

    /// A guard for the read lock just counted in `state`.
    fn read_guard(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        let g = RwLockReadGuard {
            lock: self,
            _not_send: PhantomData,
        };
        self.poisoned.result(g)
    }

    /// A guard for the write lock just marked in `state`.
    fn write_guard(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        let g = RwLockWriteGuard {
            lock: self,
            panicking: poison::Guard::new(),
            _not_send: PhantomData,
        };
        self.poisoned.result(g)
    }

    fn read_unlock(&self) {
        let mut s = self.state();
        s.readers -= 1;
        let wake_writer = s.readers == 0 && s.waiting_writers > 0;
        drop(s);
        if wake_writer {
            self.writers_cv.notify_one();
        }
    }

    fn write_unlock(&self) {
        let mut s = self.state();
        s.writer = false;
        let wake_writer = s.waiting_writers > 0;
        drop(s);
        // A writer that this wakes and that is canceled before it re-checks still takes the
        // lock (the check comes first); one canceled before the wake-up left the writers'
        // queue, so the wake-up goes to another, and if none is left the readers are woken by
        // the last writer that withdraws.
        if wake_writer {
            self.writers_cv.notify_one();
        } else {
            self.readers_cv.notify_all();
        }
    }
}

/// Shared access to the data of an [`RwLock`]; the read lock is released on drop.
///
/// ```
/// let l = thread_cancel::sync::RwLock::new(String::from("hi"));
/// let g: thread_cancel::sync::RwLockReadGuard<'_, String> = l.read().unwrap();
/// assert_eq!(g.len(), 2);
/// assert_eq!(format!("{g:?}"), "\"hi\"");
/// ```
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    _not_send: PhantomData<*const ()>,
}

// SAFETY: a shared reference to the guard gives only `&T` (`Deref`), so sharing it between
// threads needs `T: Sync`, as for `std`'s guard. (The guard stays `!Send`: it must be dropped
// by the thread that locked.)
unsafe impl<T: ?Sized + Sync> Sync for RwLockReadGuard<'_, T> {}

/// Exclusive access to the data of an [`RwLock`]; the write lock is released on drop.
///
/// ```
/// let l = thread_cancel::sync::RwLock::new(1);
/// let mut g: thread_cancel::sync::RwLockWriteGuard<'_, i32> = l.write().unwrap();
/// *g += 1;
/// assert_eq!(format!("{g:?}"), "2");
/// ```
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    /// Whether the thread was already panicking when it locked (then no new panic poisons).
    panicking: poison::Guard,
    _not_send: PhantomData<*const ()>,
}

// SAFETY: a shared reference to the guard gives only `&T` (`Deref`; `DerefMut` needs
// `&mut`), so sharing it between threads needs `T: Sync`, as for `std`'s guard.
unsafe impl<T: ?Sized + Sync> Sync for RwLockWriteGuard<'_, T> {}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: while a read guard exists `state.readers > 0`, so no write guard exists and
        // none can be made: only shared references to the data are live, bounded by the guard.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.read_unlock();
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: while the write guard exists `state.writer` is set, so no other guard exists
        // and none can be made; the shared borrow of the guard bounds this one.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; the exclusive borrow of the guard makes this the only access.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.poisoned.done(self.panicking);
        self.lock.write_unlock();
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}
