//! Channels whose blocking operations are cancellation points: `recv` (and a full bounded
//! `send`) are woken by a request, and a message is never both taken and lost: a `recv` that
//! took a message returns it; a canceled `recv` took nothing.

use super::{Condvar, Mutex, MutexGuard};
use crate::point::wait::{act_current, Wake};
use std::collections::VecDeque;
use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Chan<T> {
    items: VecDeque<T>,
    senders: usize,
    receiver: bool,
    /// `None`: unbounded. `Some(0)`: rendezvous.
    bound: Option<usize>,
    /// Messages ever pushed / ever taken: a message's sequence number locates it in `items`.
    pushed: u64,
    taken: u64,
    /// Receivers blocked in `recv` (what a rendezvous `try_send` hands its message to).
    receivers_waiting: usize,
}

struct Shared<T> {
    chan: Mutex<Chan<T>>,
    not_empty: Condvar,
    not_full: Condvar,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Chan<T>> {
        self.chan.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn new_shared<T>(bound: Option<usize>) -> Arc<Shared<T>> {
    Arc::new(Shared {
        chan: Mutex::new(Chan {
            items: VecDeque::new(),
            senders: 1,
            receiver: true,
            bound,
            pushed: 0,
            taken: 0,
            receivers_waiting: 0,
        }),
        not_empty: Condvar::new(),
        not_full: Condvar::new(),
    })
}

/// An unbounded channel, like `std::sync::mpsc::channel`; `recv` is a cancellation point.
///
/// ```
/// let (tx, rx) = thread_cancel::sync::channel::<u32>();
/// let h = thread_cancel::spawn(move || rx.recv());
/// h.cancel().unwrap(); // blocked in recv: woken and canceled
/// assert!(h.join().is_canceled());
/// drop(tx);
/// ```
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let s = new_shared(None);
    (Sender { shared: s.clone() }, Receiver { shared: s })
}

/// A bounded channel of capacity `bound`, like `std::sync::mpsc::sync_channel` (0 is a
/// rendezvous: `send` returns once the message is received). A `send` that blocks is a
/// cancellation point; a canceled `send` did not send.
///
/// ```
/// let (tx, rx) = thread_cancel::sync::sync_channel::<u8>(1);
/// tx.send(1).unwrap();
/// let h = thread_cancel::spawn(move || tx.send(2)); // full: blocks
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// assert_eq!(rx.recv(), Ok(1));
/// assert!(rx.recv().is_err()); // 2 was never sent
/// ```
pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let s = new_shared(Some(bound));
    (SyncSender { shared: s.clone() }, Receiver { shared: s })
}

/// The sending half of [`channel`].
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The sending half of [`sync_channel`].
pub struct SyncSender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving half of a channel.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sender { .. }")
    }
}
impl<T> std::fmt::Debug for SyncSender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SyncSender { .. }")
    }
}
impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Receiver { .. }")
    }
}

fn push<T>(shared: &Shared<T>, c: &mut Chan<T>, v: T) -> u64 {
    c.items.push_back(v);
    c.pushed += 1;
    shared.not_empty.notify_one();
    c.pushed - 1
}

impl<T> Sender<T> {
    /// Sends; never blocks, not a cancellation point.
    ///
    /// # Errors
    /// [`SendError`] with the value, given back, if the [`Receiver`] is gone.
    ///
    /// ```
    /// let (tx, rx) = thread_cancel::sync::channel();
    /// tx.send(1).unwrap();
    /// assert_eq!(rx.recv(), Ok(1));
    /// ```
    pub fn send(&self, v: T) -> Result<(), SendError<T>> {
        let mut c = self.shared.lock();
        if !c.receiver {
            return Err(SendError(v));
        }
        push(&self.shared, &mut c, v);
        Ok(())
    }
}

impl<T> SyncSender<T> {
    /// Sends, blocking while the channel is full (and, for a rendezvous channel, until the
    /// message is received). A cancellation point (at entry and while it blocks). Either the
    /// message was sent (for a rendezvous channel: received) and `send` returns `Ok`, even if a
    /// request arrived meanwhile (it is acted on at the next point), or it was not and a
    /// canceled `send` had no effect (the value is dropped, no receiver ever gets it).
    ///
    /// # Errors
    /// [`SendError`] with the value, given back, if the [`Receiver`] is gone (for a rendezvous
    /// channel, also if it goes away before taking the message).
    ///
    /// ```
    /// let (tx, rx) = thread_cancel::sync::sync_channel(0);
    /// let h = thread_cancel::spawn(move || tx.send("hi"));
    /// assert_eq!(rx.recv(), Ok("hi"));
    /// h.join().unwrap().unwrap();
    /// ```
    pub fn send(&self, v: T) -> Result<(), SendError<T>> {
        crate::testcancel();
        let sh = &*self.shared;
        let mut c = sh.lock();
        let cap = c.bound.unwrap_or(usize::MAX).max(1);
        while c.receiver && c.items.len() >= cap {
            let (g, wake) = sh.not_full.wait_unacted(c, None);
            c = g.unwrap_or_else(|p| p.into_inner());
            if wake == Wake::Cancel {
                // Nothing pushed, nothing to undo.
                drop(c);
                act_current();
            }
        }
        if !c.receiver {
            return Err(SendError(v));
        }
        let seq = push(sh, &mut c, v);
        if c.bound != Some(0) {
            return Ok(());
        }
        // Rendezvous: wait until the receiver took message `seq`. Whether it did is decided
        // once, under the lock, after the wait: taken, the send completed (a request waits for
        // the next point); not taken, the message is withdrawn and the send had no effect.
        loop {
            if c.taken > seq {
                return Ok(());
            }
            if !c.receiver {
                return Err(SendError(withdraw(sh, &mut c, seq)));
            }
            let (g, wake) = sh.not_full.wait_unacted(c, None);
            c = g.unwrap_or_else(|p| p.into_inner());
            if wake == Wake::Cancel && c.taken <= seq {
                let unsent = withdraw(sh, &mut c, seq);
                drop(c);
                drop(unsent);
                act_current();
            }
        }
    }
}

impl<T> SyncSender<T> {
    /// Sends if it can without blocking, like `std`'s `SyncSender::try_send`; never blocks,
    /// not a cancellation point.
    ///
    /// A rendezvous message handed over this way is not withdrawn if the waiting receiver is
    /// canceled before it takes it: it stays for the next `recv`.
    ///
    /// # Errors
    /// The value is given back in:
    /// - [`TrySendError::Full`] if the channel is full (for a rendezvous channel: unless a
    ///   receiver is blocked in `recv`, which then gets the message);
    /// - [`TrySendError::Disconnected`] if the [`Receiver`] is gone.
    ///
    /// ```
    /// use std::sync::mpsc::TrySendError;
    /// let (tx, rx) = thread_cancel::sync::sync_channel(1);
    /// assert_eq!(tx.try_send(1), Ok(()));
    /// assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
    /// assert_eq!(rx.recv(), Ok(1));
    /// drop(rx);
    /// assert_eq!(tx.try_send(3), Err(TrySendError::Disconnected(3)));
    /// ```
    pub fn try_send(&self, v: T) -> Result<(), TrySendError<T>> {
        let sh = &*self.shared;
        let mut c = sh.lock();
        if !c.receiver {
            return Err(TrySendError::Disconnected(v));
        }
        let room = match c.bound {
            Some(0) => c.items.is_empty() && c.receivers_waiting > 0,
            Some(n) => c.items.len() < n,
            None => true,
        };
        if !room {
            return Err(TrySendError::Full(v));
        }
        push(sh, &mut c, v);
        Ok(())
    }
}

/// Takes back rendezvous message `seq`, which no receiver took, and wakes the senders waiting
/// for the space it held.
fn withdraw<T>(shared: &Shared<T>, c: &mut Chan<T>, seq: u64) -> T {
    // A rendezvous channel holds at most one message (a sender pushes only into an empty
    // channel), so the untaken message `seq` is the only one, and the last pushed.
    debug_assert!(c.taken == seq && c.pushed == seq + 1 && c.items.len() == 1);
    let v = c
        .items
        .pop_back()
        .expect("an untaken rendezvous message is queued");
    c.pushed -= 1;
    shared.not_full.notify_all();
    v
}

impl<T> Receiver<T> {
    /// Receives, blocking while the channel is empty; a cancellation point (at entry, and
    /// while it blocks; a message it took is returned, never lost to a cancellation).
    ///
    /// # Errors
    /// [`RecvError`] once every sender is gone and the channel is empty (messages sent before
    /// the senders went are received first).
    ///
    /// ```
    /// let (tx, rx) = thread_cancel::sync::channel();
    /// std::thread::spawn(move || tx.send(7).unwrap());
    /// assert_eq!(rx.recv(), Ok(7));
    /// assert!(rx.recv().is_err());
    /// ```
    #[inline]
    pub fn recv(&self) -> Result<T, RecvError> {
        self.recv_deadline(None).map_err(|_| RecvError)
    }

    /// [`recv`](Self::recv) with a time limit.
    ///
    /// # Errors
    /// - [`RecvTimeoutError::Timeout`] if no message arrived within `dur` (a `dur` too large for an
    ///   `Instant` waits forever);
    /// - [`RecvTimeoutError::Disconnected`] once every sender is gone and the channel is empty.
    ///
    /// ```
    /// use std::sync::mpsc::RecvTimeoutError;
    /// let (_tx, rx) = thread_cancel::sync::channel::<u8>();
    /// let r = rx.recv_timeout(std::time::Duration::from_millis(5));
    /// assert_eq!(r, Err(RecvTimeoutError::Timeout));
    /// ```
    #[inline]
    pub fn recv_timeout(&self, dur: Duration) -> Result<T, RecvTimeoutError> {
        self.recv_deadline(Instant::now().checked_add(dur))
    }

    /// Receives if a message is ready; never blocks, not a cancellation point.
    ///
    /// # Errors
    /// - [`TryRecvError::Empty`] if no message is ready and a sender remains;
    /// - [`TryRecvError::Disconnected`] once every sender is gone and the channel is empty.
    ///
    /// ```
    /// let (tx, rx) = thread_cancel::sync::channel::<u8>();
    /// assert!(rx.try_recv().is_err());
    /// tx.send(1).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let mut c = self.shared.lock();
        match self.take(&mut c) {
            Some(v) => Ok(v),
            None if c.senders == 0 => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    /// An iterator of [`recv`](Self::recv) until every sender is gone; each step is a
    /// cancellation point, as `recv` is.
    ///
    /// ```
    /// let (tx, rx) = thread_cancel::sync::channel();
    /// for i in 0..3 { tx.send(i).unwrap(); }
    /// drop(tx);
    /// assert_eq!(rx.iter().collect::<Vec<_>>(), [0, 1, 2]);
    /// ```
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { rx: self }
    }

    /// An iterator of the messages ready now ([`try_recv`](Self::try_recv) until it fails);
    /// never blocks, not a cancellation point.
    ///
    /// ```
    /// let (tx, rx) = thread_cancel::sync::channel();
    /// tx.send(1).unwrap();
    /// tx.send(2).unwrap();
    /// assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2]);
    /// assert_eq!(rx.try_iter().next(), None); // the sender is still there: nothing ready
    /// ```
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter { rx: self }
    }

    fn take(&self, c: &mut Chan<T>) -> Option<T> {
        let v = c.items.pop_front()?;
        c.taken += 1;
        if c.bound == Some(0) {
            self.shared.not_full.notify_all(); // rendezvous senders wait for their own message
        } else if c.bound.is_some() {
            self.shared.not_full.notify_one();
        }
        Some(v)
    }

    /// The wait is out of line and the act inlined: the unwind starts in the caller's frame.
    #[inline(always)]
    fn recv_deadline(&self, deadline: Option<Instant>) -> Result<T, RecvTimeoutError> {
        match self.recv_deadline_unacted(deadline) {
            Some(r) => r,
            None => act_current(),
        }
    }

    /// [`recv_deadline`](Self::recv_deadline)'s wait: `None` if a request must be acted on
    /// (nothing was taken), which the caller does.
    #[inline(never)]
    fn recv_deadline_unacted(
        &self,
        deadline: Option<Instant>,
    ) -> Option<Result<T, RecvTimeoutError>> {
        crate::testcancel();
        let sh = &*self.shared;
        let mut c = sh.lock();
        loop {
            if let Some(v) = self.take(&mut c) {
                return Some(Ok(v));
            }
            if c.senders == 0 {
                return Some(Err(RecvTimeoutError::Disconnected));
            }
            if deadline.is_some_and(|d| d <= Instant::now()) {
                return Some(Err(RecvTimeoutError::Timeout));
            }
            // Counted while blocked, for a rendezvous `try_send`.
            c.receivers_waiting += 1;
            let (g, wake) = sh.not_empty.wait_unacted(c, deadline);
            c = g.unwrap_or_else(|p| p.into_inner());
            c.receivers_waiting -= 1;
            if wake == Wake::Cancel {
                // Nothing taken, nothing to undo.
                return None;
            }
        }
    }
}

/// The iterator of [`Receiver::iter`] and of `&Receiver`'s `into_iter`: [`recv`](Receiver::recv)
/// until every sender is gone, each step a cancellation point.
///
/// ```
/// let (tx, rx) = thread_cancel::sync::channel();
/// tx.send('a').unwrap();
/// drop(tx);
/// for c in &rx {
///     assert_eq!(c, 'a');
/// }
/// ```
#[derive(Debug)]
pub struct Iter<'a, T> {
    rx: &'a Receiver<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

/// The iterator of [`Receiver::try_iter`]: the messages ready now, never blocking.
///
/// ```
/// let (tx, rx) = thread_cancel::sync::channel::<u8>();
/// let mut it = rx.try_iter();
/// assert_eq!(it.next(), None);
/// tx.send(3).unwrap();
/// assert_eq!(it.next(), Some(3));
/// ```
#[derive(Debug)]
pub struct TryIter<'a, T> {
    rx: &'a Receiver<T>,
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.rx.try_recv().ok()
    }
}

/// The iterator of `Receiver`'s `into_iter`: [`recv`](Receiver::recv) until every sender is
/// gone, each step a cancellation point; it owns the receiver.
///
/// ```
/// let (tx, rx) = thread_cancel::sync::channel();
/// let h = thread_cancel::spawn(move || rx.into_iter().sum::<i32>());
/// for i in 1..=3 { tx.send(i).unwrap(); }
/// drop(tx);
/// assert_eq!(h.join().unwrap(), 6);
/// ```
#[derive(Debug)]
pub struct IntoIter<T> {
    rx: Receiver<T>,
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

impl<'a, T> IntoIterator for &'a Receiver<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;
    fn into_iter(self) -> IntoIter<T> {
        IntoIter { rx: self }
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.lock().senders += 1;
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Clone for SyncSender<T> {
    fn clone(&self) -> Self {
        self.shared.lock().senders += 1;
        Self {
            shared: self.shared.clone(),
        }
    }
}

fn drop_sender<T>(shared: &Shared<T>) {
    let mut c = shared.lock();
    c.senders -= 1;
    if c.senders == 0 {
        shared.not_empty.notify_all();
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        drop_sender(&self.shared);
    }
}

impl<T> Drop for SyncSender<T> {
    fn drop(&mut self) {
        drop_sender(&self.shared);
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut c = self.shared.lock();
        c.receiver = false;
        // A rendezvous message still belongs to its sender, which waits for it to be taken:
        // the sender takes it back and returns it in its `SendError`. Buffered messages were
        // sent; they are dropped with the channel's last use, as with `std`.
        let left = if c.bound == Some(0) {
            VecDeque::new()
        } else {
            std::mem::take(&mut c.items)
        };
        self.shared.not_full.notify_all();
        drop(c);
        drop(left);
    }
}
