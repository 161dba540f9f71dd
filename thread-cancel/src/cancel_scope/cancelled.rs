//! What a scope's cancel wakes or runs besides its runs: the wakers of [`WaitForCancel`] futures
//! and the callbacks of [`CancelScope::on_cancel`], registered on the scope from any thread.
//!
//! Both live in the scope's `hooks` map under a lock. A registration checks the scope's state
//! under the lock; a cancel marks the scope first, then takes the map under the lock: either
//! the registration sees the cancel, or the cancel finds the registration.
//!
//! Each registration records the process's fork generation: in the child of a `fork`, a cancel
//! of the scope's copy neither wakes nor runs what a thread of the parent registered (that
//! thread does not exist in the child, and its callback would act on the parent's resources,
//! such as shutting down a socket the parent still reads); it forgets them, running no
//! destructor of theirs either.

use super::AddressHasher;
use super::{lock, CancelScope, Reached};
use std::collections::HashMap;
use std::future::Future;
use std::hash::BuildHasherDefault;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

/// Something a scope's cancel owes.
enum Hook {
    Waker(Waker),
    Call(Box<dyn FnOnce() + Send>),
    /// Callbacks a dropped descendant still owes ([`bequeath`]), shared with its other
    /// parents and its deadline: the first of them to fire takes them all.
    Owed(Bequest),
}

/// Callbacks kept on a scope dropped before its cancel: run once, by whichever cancel that
/// would have reached it comes first.
type Bequest = std::sync::Arc<Mutex<Vec<Box<dyn FnOnce() + Send>>>>;

/// The registrations of a scope, by key, each with the fork generation it was made in.
#[derive(Default)]
pub(crate) struct Hooks {
    next: u64,
    map: HashMap<u64, (u32, Hook), BuildHasherDefault<AddressHasher>>,
}

impl Hooks {
    pub(super) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Unregisters `key`, if still registered, and returns it: the caller drops it after
    /// releasing the lock (a callback may hold the last handle of a child scope, whose drop
    /// takes this lock, [`bequeath`]). A parent process's registration is forgotten, not
    /// returned.
    #[must_use = "dropped after the lock is released"]
    fn remove(&mut self, key: u64) -> Option<Hook> {
        match self.map.remove(&key) {
            Some((made_in, h)) if made_in == generation() => Some(h),
            Some((_, h)) => {
                std::mem::forget(h);
                None
            }
            None => None,
        }
    }
}

/// A scope is dropped uncanceled while callbacks kept on it ([`OnCancel::keep`]) have not run:
/// they are still owed to every cancel that would have reached the scope — each parent's (its
/// own cancel, deadline, or a parent of its own: the registration moves up again if that
/// parent is dropped in turn) and the scope's own deadline. They run once, for the first of
/// those (on the crate's callback thread for a deadline; a parent already canceled hands them
/// to it too: no callback runs inside a drop). A scope that nothing can cancel any more (no
/// parent, no deadline) drops them unrun.
pub(super) fn bequeath(
    hooks: &mut Hooks,
    parents: &[std::sync::Arc<super::Inner>],
    deadline: Option<std::time::Instant>,
) {
    let now = generation();
    let mut calls = Vec::new();
    // Bequests of its own descendants are passed on as they are (never wrapped in another:
    // a chain of any length runs and drops them without recursing).
    let mut bequests = Vec::new();
    for (_, (made_in, h)) in hooks.map.drain() {
        match h {
            // A parent process's registration: never run or dropped here.
            h if made_in != now => std::mem::forget(h),
            Hook::Call(f) => calls.push(f),
            Hook::Owed(b) => bequests.push(b),
            Hook::Waker(w) => drop(w),
        }
    }
    if !calls.is_empty() {
        bequests.push(std::sync::Arc::new(Mutex::new(calls)));
    }
    if parents.is_empty() && deadline.is_none() {
        return;
    }
    let run_later = |b: &Bequest| {
        let b = b.clone();
        Box::new(move || {
            let calls = std::mem::take(&mut *lock(&b));
            super::run_callbacks(Reached {
                threads: Vec::new(),
                hooks: calls,
            });
        }) as Box<dyn FnOnce() + Send>
    };
    for b in &bequests {
        for p in parents {
            let mut h = lock(&p.hooks);
            if p.marked() {
                drop(h);
                super::deadline::owe(std::time::Instant::now(), run_later(b));
            } else {
                let key = h.next;
                h.next += 1;
                h.map.insert(key, (now, Hook::Owed(b.clone())));
            }
        }
        if let Some(d) = deadline {
            super::deadline::owe(d, run_later(b));
        }
    }
}

/// The process's fork generation (bumped in the child of every `fork`).
fn generation() -> u32 {
    crate::control::fork::fork_generation()
}

/// The registrations a cancel took from its scope ([`take`]), fired after its deliveries.
pub(super) struct Taken(HashMap<u64, (u32, Hook), BuildHasherDefault<AddressHasher>>);

impl Taken {
    /// Whether a callback (not only wakers) fires with the cancel.
    pub(super) fn has_calls(&self) -> bool {
        let now = generation();
        self.0
            .values()
            .any(|(made_in, h)| *made_in == now && !matches!(h, Hook::Waker(_)))
    }
}

/// The cancel's side, after it marked the scope: takes every registration (a later one sees
/// the mark and runs at once).
pub(super) fn take(hooks: &Mutex<Hooks>) -> Taken {
    Taken(std::mem::take(&mut lock(hooks).map))
}

/// The cancel's side, after its deliveries: wakes the wakers now and adds the callbacks to
/// what the cancel runs once its deliveries are done (in the canceling thread, or for a
/// deadline on the crate's callback thread).
pub(super) fn fire(taken: Taken, reached: &mut Reached) {
    let now = generation();
    for (_, (made_in, h)) in taken.0 {
        if made_in != now {
            // A parent process's registration: never run, woken or dropped here.
            std::mem::forget(h);
            continue;
        }
        match h {
            Hook::Waker(w) => w.wake(),
            Hook::Call(f) => reached.hooks.push(f),
            Hook::Owed(b) => reached.hooks.append(&mut lock(&b)),
        }
    }
}

impl CancelScope {
    /// A future that completes when the scope is canceled (by a cancel, a parent's, or its
    /// deadline): await a cancel from async code, on any executor.
    ///
    /// Cost: the first poll that returns `Pending` registers the task's waker with the scope
    /// (a lock and a map insert); later polls with the same waker take the lock and compare;
    /// the cancel wakes it once. Dropping the future removes its registration (a lock and a
    /// map remove); a future that completed holds none. It holds a clone of the scope.
    ///
    /// ```
    /// use std::time::Duration;
    /// let scope = thread_cancel::CancelScope::new();
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// rt.block_on(async {
    ///     let s = scope.clone();
    ///     std::thread::spawn(move || {
    ///         std::thread::sleep(Duration::from_millis(10));
    ///         s.cancel();
    ///     });
    ///     scope.cancelled().await; // completes with the cancel
    /// });
    /// assert!(scope.is_canceled());
    /// ```
    pub fn cancelled(&self) -> WaitForCancel {
        WaitForCancel {
            scope: self.clone(),
            key: None,
        }
    }

    /// Registers `f` to run once when the scope is canceled, from any thread (C#'s
    /// `CancellationToken.Register`, Go's `context.AfterFunc`): in the thread that cancels
    /// it, after the cancel has reached its runs; for a deadline, on a thread the crate starts
    /// for the callbacks a deadline owes; at once, here, if the scope is already canceled.
    /// Dropping the returned guard unregisters `f` if it has not run ([`OnCancel::keep`] keeps
    /// it registered until it runs, even once the scope's handles are dropped).
    ///
    /// A run of the scope (or of a child) in progress when `f` fires reports the cancel as
    /// acted on ([`Canceled::acted`](crate::Canceled::acted)): `f` may be what ends its
    /// blocked call (shutting down the socket it reads, say).
    ///
    /// Keep `f` short and non-blocking (it runs inside a `cancel()`); a panic in it is
    /// reported by the panic hook and contained: the other callbacks still run.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::sync::Arc;
    /// let scope = thread_cancel::CancelScope::new();
    /// let ran = Arc::new(AtomicBool::new(false));
    /// let r = ran.clone();
    /// scope.on_cancel(move || r.store(true, Ordering::SeqCst)).keep();
    /// std::thread::spawn({ let s = scope.clone(); move || s.cancel() }).join().unwrap();
    /// assert!(ran.load(Ordering::SeqCst));
    /// ```
    pub fn on_cancel<F: FnOnce() + Send + 'static>(&self, f: F) -> OnCancel {
        let mut h = lock(&self.inner.hooks);
        if self.inner.marked() {
            drop(h);
            // It may be what ends a blocked call of a run in progress (reached by the cancel
            // before): that run reports the cancel as acted on.
            self.inner.hooks_fired_late();
            if let Err(p) = crate::control::contain(f) {
                let _ = crate::control::contain(move || drop(p));
            }
            return OnCancel {
                scope: None,
                key: 0,
            };
        }
        let key = h.next;
        h.next += 1;
        h.map.insert(key, (generation(), Hook::Call(Box::new(f))));
        OnCancel {
            scope: Some(self.clone()),
            key,
        }
    }
}

/// The future of [`CancelScope::cancelled`].
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct WaitForCancel {
    scope: CancelScope,
    /// Its registration in the scope's hooks, once it returned `Pending`.
    key: Option<u64>,
}

impl Future for WaitForCancel {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let inner = &this.scope.inner;
        if inner.is_canceled() {
            this.unregister();
            return Poll::Ready(());
        }
        let mut h = lock(&inner.hooks);
        if inner.marked() {
            drop(h);
            this.unregister();
            return Poll::Ready(());
        }
        match this.key {
            Some(k) => match h.map.get_mut(&k) {
                Some((made_in, Hook::Waker(w))) => {
                    let now = generation();
                    if *made_in != now {
                        // Polled in a forked child: its own waker replaces the parent's,
                        // which is forgotten (never woken or dropped here).
                        std::mem::forget(std::mem::replace(w, cx.waker().clone()));
                        *made_in = now;
                    } else if !w.will_wake(cx.waker()) {
                        *w = cx.waker().clone();
                    }
                }
                // Taken by the cancel (marked before it took the map).
                _ => {
                    drop(h);
                    this.key = None;
                    return Poll::Ready(());
                }
            },
            None => {
                let k = h.next;
                h.next += 1;
                h.map
                    .insert(k, (generation(), Hook::Waker(cx.waker().clone())));
                this.key = Some(k);
            }
        }
        Poll::Pending
    }
}

impl WaitForCancel {
    fn unregister(&mut self) {
        if let Some(k) = self.key.take() {
            let h = lock(&self.scope.inner.hooks).remove(k);
            drop(h);
        }
    }
}

impl Drop for WaitForCancel {
    fn drop(&mut self) {
        self.unregister();
    }
}

/// The registration of a [`CancelScope::on_cancel`] callback: dropping it unregisters the
/// callback if it has not run.
#[derive(Debug)]
#[must_use = "the callback is unregistered when the guard is dropped (`keep()` keeps it)"]
pub struct OnCancel {
    /// `None` if the callback already ran (the scope was canceled at registration).
    scope: Option<CancelScope>,
    key: u64,
}

impl OnCancel {
    /// Keeps the callback registered until it runs. The scope's handles may all be dropped
    /// first: the callback still runs for a cancel that would have reached the scope — a
    /// parent's cancel (or a parent's parent's), or the scope's deadline, on a thread the crate
    /// starts for such callbacks. Once nothing can cancel the scope any more (it has no
    /// parent and no deadline, and its handles are gone), the callback is dropped unrun.
    ///
    /// ```
    /// let scope = thread_cancel::CancelScope::new();
    /// scope.on_cancel(|| println!("canceled")).keep();
    /// scope.cancel(); // prints
    /// ```
    pub fn keep(mut self) {
        self.scope = None;
    }
}

impl Drop for OnCancel {
    fn drop(&mut self) {
        if let Some(s) = &self.scope {
            let h = lock(&s.inner.hooks).remove(self.key);
            drop(h);
        }
    }
}
