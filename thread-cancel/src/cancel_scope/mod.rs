//! Operation-level cancellation: [`CancelScope`], [`with_timeout`], [`cancel_requested`].
//!
//! A scope is a token shared by every thread that runs code in it. `run` registers the calling
//! thread (the scope's address in the thread's control block, `ScopeRuns::slots`, at the run's
//! nesting depth) and links a frame on the thread's stack of runs (`point::runs`). `cancel`
//! marks the scope, then delivers a scope request (`SCOPE` in the state word, plus the same
//! wake-ups as a thread request) to every thread registered in a run of it. A point that acts
//! on `SCOPE` unwinds with a [`ScopeUnwind`] payload to the outermost run whose scope is
//! canceled, where `run` catches it and returns `Err(Canceled)`. Invariant I6 (argued in
//! `word.rs`) is what makes the end of a run clean; both sides of its protocol are methods of
//! `control::ScopeRuns`, model-checked by loom.

pub(crate) mod deadline;
mod delivery;
mod error;
mod run;

use delivery::deliver;
pub(crate) use delivery::{run_callbacks, Reached};
pub use error::{Canceled, TimedOut};

use crate::control::{lock, Control, ScopeUnwind};
use crate::point::runs::{self, any_frame, outermost_canceled, Frame, RunScope};
use crate::word;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

const LIVE: u8 = 0;
const CANCELED: u8 = 1;
const TIMED_OUT: u8 = 2;

/// The shared state of a scope and its clones.
pub(crate) struct Inner {
    /// `LIVE`, or why it was canceled (`CANCELED`, `TIMED_OUT`); set once.
    state: AtomicU8,
    /// The effective deadline: its own, or its parent's if earlier.
    deadline: Option<Instant>,
    /// Kept alive by its children (to leave the parent's list when dropped).
    parent: Option<Arc<Inner>>,
    /// Scopes made by `child()`, canceled with this one.
    /// Keyed by each child's address, so that a child leaves in constant time however many
    /// siblings it has.
    children: Mutex<HashMap<usize, Weak<Inner>, BuildHasherDefault<AddressHasher>>>,
    /// The registration with the deadline timer, if the scope has a deadline.
    timer: OnceLock<crate::cancel_scope::deadline::Key>,
}

impl Inner {
    fn id(&self) -> usize {
        self as *const Inner as usize
    }

    /// Whether canceled, without looking at the clock.
    fn marked(&self) -> bool {
        self.state.load(Ordering::Acquire) != LIVE
    }

    /// Whether canceled; a deadline that passed cancels the scope now.
    fn is_canceled(&self) -> bool {
        if self.marked() {
            return true;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.cancel(TIMED_OUT);
            return true;
        }
        false
    }

    /// The deadline timer cancels the scope. Returns the `on_cancel` callbacks it owes (the
    /// threads reached, each with the depth of its run), which the timer runs elsewhere: a slow
    /// callback must never hold up the other deadlines.
    pub(crate) fn expire_by_timer(&self) -> Reached {
        let shield = crate::async_region::shield();
        let mut reached = Vec::new();
        self.cancel_shielded(TIMED_OUT, &mut reached);
        crate::async_region::unshield(shield);
        reached
    }

    /// Marks the scope canceled (once), cancels its children, and delivers a scope request to
    /// every thread in a run of it.
    fn cancel(&self, why: u8) {
        // A canceler inside an asynchronous region holds its own cancellation while it takes
        // locks (as `Control::cancel`).
        let shield = crate::async_region::shield();
        let mut reached = Vec::new();
        self.cancel_shielded(why, &mut reached);
        crate::async_region::unshield(shield);
        run_callbacks(reached);
    }

    /// Marks, cancels the children, delivers; adds the threads reached to `reached`.
    fn cancel_shielded(&self, why: u8, reached: &mut Reached) {
        if self
            .state
            .compare_exchange(LIVE, why, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let children = std::mem::take(&mut *lock(&self.children));
        for c in children.values().filter_map(Weak::upgrade) {
            c.cancel_shielded(why, reached);
        }
        deliver(self.id(), reached);
    }
}

/// The hash of a child's address: one multiplication (the keys are distinct addresses, chosen by
/// the allocator, not by anyone who could make them collide).
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl RunScope for Inner {
    fn marked(&self) -> bool {
        Inner::marked(self)
    }

    fn is_canceled(&self) -> bool {
        Inner::is_canceled(self)
    }

    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    fn expire(&self) {
        self.cancel(TIMED_OUT);
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(k) = self.timer.get() {
            crate::cancel_scope::deadline::unregister(k);
        }
        if let Some(p) = &self.parent {
            let me = self as *const Inner;
            lock(&p.children).remove(&(me as usize));
        }
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelScope")
            .field("canceled", &self.marked())
            .field("deadline", &self.deadline)
            .finish()
    }
}

/// A cancellation scope: cancel an operation, not the thread.
///
/// [`run`](Self::run) runs a closure in the calling thread inside the scope. [`cancel`](Self::cancel)
/// (from any thread) stops every run of the scope in progress at its next cancellation point
/// — the same points where a thread cancellation is acted on, blocking system calls and waits
/// included, with the same guarantee: a canceled call either completed or had no effect. The
/// stack unwinds (every `Drop` and cleanup handler runs) to the `run`, which returns
/// `Err(Canceled)`; the thread then carries on as before the run. A canceled scope stays
/// canceled: a later `run` does not start its closure.
///
/// A scope is a cheap handle (`Clone`, `Send`, `Sync`): clones are the same scope, so one
/// `cancel` stops a whole group of workers. [`child`](Self::child) makes a scope that is also
/// canceled with its parent; [`with_timeout`](Self::with_timeout) and
/// [`with_deadline`](Self::with_deadline) make one that cancels itself when time is up.
///
/// ```
/// use std::time::Duration;
/// use thread_cancel::{io, CancelScope};
///
/// let (r, _w) = std::io::pipe().unwrap(); // nothing will ever be written
/// let scope = CancelScope::new();
/// let s = scope.clone();
/// let stopper = std::thread::spawn(move || {
///     std::thread::sleep(Duration::from_millis(20));
///     s.cancel();
/// });
/// let mut buf = [0u8; 16];
/// use std::os::fd::AsFd;
/// let res = scope.run(|| io::read(r.as_fd(), &mut buf));
/// assert!(res.is_err()); // the blocked read was interrupted, and had no effect
/// stopper.join().unwrap();
/// // The thread goes on: nothing is pending any more.
/// assert!(!thread_cancel::cancel_requested());
/// ```
#[derive(Clone, Debug)]
pub struct CancelScope {
    inner: Arc<Inner>,
}

impl Default for CancelScope {
    fn default() -> Self {
        Self::new()
    }
}

impl CancelScope {
    /// A new scope, not canceled, without a deadline.
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::new();
    /// assert_eq!(s.run(|| 1 + 1), Ok(2));
    /// ```
    pub fn new() -> Self {
        Self::make(None, None)
    }

    /// A scope that cancels itself at `deadline` (a `run` in progress then returns
    /// `Err(Canceled)` with [`Canceled::deadline_passed`]).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// let s = thread_cancel::CancelScope::with_deadline(Instant::now() + Duration::from_millis(10));
    /// let r = s.run(|| thread_cancel::sleep(Duration::from_secs(10)));
    /// assert!(r.unwrap_err().deadline_passed());
    /// ```
    pub fn with_deadline(deadline: Instant) -> Self {
        Self::make(None, Some(deadline))
    }

    /// A scope that cancels itself `timeout` from now (see [`with_deadline`](Self::with_deadline)).
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = thread_cancel::CancelScope::with_timeout(Duration::from_millis(10));
    /// assert!(s.run(|| thread_cancel::sleep(Duration::from_secs(10))).is_err());
    /// ```
    pub fn with_timeout(timeout: Duration) -> Self {
        Self::with_deadline(after(timeout))
    }

    /// A new scope canceled with this one (and with its deadline, if earlier than its own):
    /// canceling the child leaves the parent alone.
    ///
    /// ```
    /// let parent = thread_cancel::CancelScope::new();
    /// let child = parent.child();
    /// child.cancel();
    /// assert!(!parent.is_canceled());
    /// parent.child().cancel();
    /// let other = parent.child();
    /// parent.cancel();
    /// assert!(other.is_canceled());
    /// ```
    pub fn child(&self) -> Self {
        Self::make(Some(self.inner.clone()), None)
    }

    /// A child (see [`child`](Self::child)) that also cancels itself at `deadline`.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// let parent = thread_cancel::CancelScope::new();
    /// let c = parent.child_with_deadline(Instant::now());
    /// assert!(c.is_canceled());
    /// assert!(!parent.is_canceled());
    /// ```
    pub fn child_with_deadline(&self, deadline: Instant) -> Self {
        Self::make(Some(self.inner.clone()), Some(deadline))
    }

    fn make(parent: Option<Arc<Inner>>, own: Option<Instant>) -> Self {
        let deadline = match (own, parent.as_ref().and_then(|p| p.deadline)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let inner = Arc::new(Inner {
            state: AtomicU8::new(LIVE),
            deadline,
            parent: parent.clone(),
            children: Mutex::new(HashMap::default()),
            timer: OnceLock::new(),
        });
        if let Some(p) = &parent {
            // Registered before the parent's state is read, under the lock its cancel takes
            // its children with: either the cancel finds this child, or this sees the cancel.
            let mut ch = lock(&p.children);
            ch.insert(Arc::as_ptr(&inner) as usize, Arc::downgrade(&inner));
            let why = p.state.load(Ordering::Acquire);
            drop(ch);
            if why != LIVE {
                inner.state.store(why, Ordering::Release);
            }
        }
        if let Some(d) = deadline {
            if Instant::now() >= d {
                let _ = inner.state.compare_exchange(
                    LIVE,
                    TIMED_OUT,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            } else if !inner.marked() {
                let _ = inner.timer.set(crate::cancel_scope::deadline::register(
                    d,
                    Arc::downgrade(&inner),
                ));
            }
        }
        Self { inner }
    }

    /// Cancels the scope: every [`run`](Self::run) of it in progress, in any thread, is
    /// stopped at its next cancellation point, and every later one does not start. Children
    /// are canceled too. Canceling twice is canceling once; `cancel` never blocks on the
    /// threads it cancels.
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::new();
    /// s.cancel();
    /// assert!(s.is_canceled());
    /// assert!(s.run(|| unreachable!()).is_err()); // a canceled scope does not start
    /// ```
    pub fn cancel(&self) {
        self.inner.cancel(CANCELED);
    }

    /// Whether the scope is canceled (by [`cancel`](Self::cancel), its parent, or its deadline).
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::with_timeout(std::time::Duration::ZERO);
    /// assert!(s.is_canceled());
    /// ```
    pub fn is_canceled(&self) -> bool {
        let canceled = self.inner.is_canceled();
        if canceled {
            own_request_now();
        }
        canceled
    }

    /// The scope's deadline (its own, or an enclosing scope's if earlier), if any.
    ///
    /// ```
    /// assert!(thread_cancel::CancelScope::new().deadline().is_none());
    /// ```
    pub fn deadline(&self) -> Option<Instant> {
        self.inner.deadline
    }
}

/// `now + d`, or far in the future if that overflows.
fn after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}

/// Runs `f` with a deadline `timeout` from now: `Ok` with its value if it finished in time. A
/// `timeout` too large for an `Instant` is a deadline about a century away.
///
/// # Errors
/// [`TimedOut`] if the deadline passed before `f` finished and `f` was stopped at a
/// cancellation point (its `Drop`s ran), or never started (a zero `timeout`); also if `f`
/// swallowed that unwind and returned (see [`CancelScope::run`]).
///
/// # Panics
/// As [`CancelScope::run`]: inside an [`async_region`](crate::async_region); a panic of `f`
/// passes through.
///
/// ```
/// use std::time::Duration;
/// use thread_cancel::{sync::channel, with_timeout};
/// let (_tx, rx) = channel::<u32>();
/// assert!(with_timeout(Duration::from_millis(10), || rx.recv()).is_err());
/// assert_eq!(with_timeout(Duration::from_secs(5), || 7), Ok(7));
/// ```
pub fn with_timeout<R>(timeout: Duration, f: impl FnOnce() -> R) -> Result<R, TimedOut> {
    with_deadline(after(timeout), f)
}

/// Runs `f` with a deadline: see [`with_timeout`].
///
/// # Errors
/// [`TimedOut`] if `deadline` passed before `f` finished and `f` was stopped at a cancellation
/// point, or never started (a `deadline` already past); also if `f` swallowed that unwind and
/// returned.
///
/// # Panics
/// As [`CancelScope::run`]: inside an [`async_region`](crate::async_region); a panic of `f`
/// passes through.
///
/// ```
/// use std::time::{Duration, Instant};
/// let r = thread_cancel::with_deadline(Instant::now() + Duration::from_millis(5), || {
///     thread_cancel::sleep(Duration::from_secs(10))
/// });
/// assert_eq!(r, Err(thread_cancel::TimedOut));
/// ```
pub fn with_deadline<R>(deadline: Instant, f: impl FnOnce() -> R) -> Result<R, TimedOut> {
    CancelScope::with_deadline(deadline)
        .run(f)
        .map_err(|_| TimedOut)
}

/// Whether the calling thread has a cancellation request pending, or runs inside a canceled
/// scope (a deadline that passed counts). A query only: it never acts, so cooperative code can
/// finish what it is doing and stop cleanly.
///
/// ```
/// let s = thread_cancel::CancelScope::new();
/// let r = s.run(|| {
///     let mut done = 0;
///     while !thread_cancel::cancel_requested() {
///         done += 1;
///         if done == 3 {
///             s.cancel();
///         }
///     }
///     done
/// });
/// assert_eq!(r, Ok(3)); // it finished its loop: no point acted
/// ```
pub fn cancel_requested() -> bool {
    if crate::control::with_current(|c| c.word.load() & word::PENDING != 0).unwrap_or(false) {
        return true;
    }
    let canceled = any_frame(|_, sc| sc.is_canceled());
    if canceled {
        own_request_now();
    }
    canceled
}

/// A thread that saw one of its runs' scopes canceled must find the request at its next point,
/// even if the canceler has not delivered it yet (its `cancel` marks the scope first, then
/// delivers): the thread queues it for itself. The owner setting `SCOPE` while it is in the
/// run is what a delivery would do, and its run's end comes later in its own program order (I6).
#[cold]
fn own_request_now() {
    if outermost_canceled().is_some() {
        crate::control::with_current(|c| {
            if c.word.load() & word::SCOPE == 0 {
                c.word.scope_request();
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_never_extends_the_parents() {
        let now = Instant::now();
        let p = CancelScope::with_deadline(now + Duration::from_secs(5));
        let c = p.child_with_deadline(now + Duration::from_secs(50));
        assert_eq!(c.deadline(), p.deadline());
    }
}
