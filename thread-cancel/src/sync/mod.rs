//! Synchronisation primitives whose waits are cancellation points: a request wakes a blocked
//! thread at once, and a wait that completed (a notification consumed, a message taken) is
//! never undone by the cancellation.
//!
//! Locking a [`Mutex`] is not a cancellation point (as in POSIX).

mod channel;
mod condvar;
mod mutex;
mod semaphore;

pub use channel::{channel, sync_channel, IntoIter, Iter, Receiver, Sender, SyncSender, TryIter};
pub use condvar::{Condvar, WaitTimeoutResult};
pub use mutex::{Mutex, MutexGuard};
pub use semaphore::Semaphore;
pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
