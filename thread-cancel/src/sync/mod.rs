//! Synchronisation primitives whose waits are cancellation points: a request wakes a blocked
//! thread at once, and a wait that completed (a notification consumed, a message taken) is
//! never undone by the cancellation.
//!
//! Locking a [`Mutex`] is not a cancellation point (as in POSIX). Waiting for an [`RwLock`]
//! and at a [`Barrier`] are points, where a canceled wait had no effect: it holds no lock, and
//! its arrival at the barrier no longer counts.

mod barrier;
mod channel;
mod condvar;
mod mutex;
mod poison;
mod rwlock;
mod semaphore;

pub use barrier::{Barrier, BarrierWaitResult};
pub use channel::{channel, sync_channel, IntoIter, Iter, Receiver, Sender, SyncSender, TryIter};
pub use condvar::{Condvar, WaitTimeoutResult};
pub use mutex::{Mutex, MutexGuard};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use semaphore::Semaphore;
pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};

#[cfg(all(test, loom))]
mod loom_tests;
