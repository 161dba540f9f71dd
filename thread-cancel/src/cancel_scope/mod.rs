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

use crate::control::{lock, Control, ScopeUnwind};
use crate::point::runs::{self, any_frame, outermost_canceled, Frame, RunScope};
use crate::word;
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
    children: Mutex<Vec<Weak<Inner>>>,
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
        for c in children.iter().filter_map(Weak::upgrade) {
            c.cancel_shielded(why, reached);
        }
        deliver(self.id(), reached);
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
            lock(&p.children).retain(|w| w.as_ptr() != me && w.strong_count() > 0);
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

/// The threads that have run a scope (each registers once, at its first `run`).
static SCOPED_THREADS: Mutex<Vec<Weak<Control>>> = Mutex::new(Vec::new());

crate::control::fork::fork_safe_lock! {
    /// Locks the registry (held across `fork`).
    fn lock_registry() -> Vec<Weak<Control>> = SCOPED_THREADS;
}

/// Drops from the registry the threads that have ended and, in a forked child, the parent's
/// threads (they do not exist here: a scope never runs code in, or takes a lock of, a thread of
/// another process, C09; the forking thread's own block belongs to the child's generation).
fn retain_live(reg: &mut Vec<Weak<Control>>) {
    reg.retain(|w| w.upgrade().is_some_and(|c| c.in_this_process()));
}

/// Delivers a scope request for scope `id` to every thread registered in a run of it.
///
/// Each thread is counted in its `ScopeRuns::deliveries` before its registration is read, with a
/// `SeqCst` fence between; the owner clears its registration, then (fence) reads the count and
/// waits for zero. So either this sees the registration cleared, or the run's end
/// waits for this delivery (the signal included) to be over (I6). The same fence pairs the
/// scope's state (stored before) with a run's entry, which registers and then reads it.
fn deliver(id: usize, reached: &mut Reached) {
    let threads: Vec<Arc<Control>> = {
        let mut reg = lock_registry();
        retain_live(&mut reg);
        reg.iter().filter_map(Weak::upgrade).collect()
    };
    if threads.is_empty() {
        return;
    }
    for t in &threads {
        t.runs.count_in();
    }
    // A plain fence, no `membarrier`: the owner's side is a real fence too (two of them per
    // run cost about 4 ns; a `membarrier` here would sit between the cancel and the wake-up).
    crate::atomic::fence(Ordering::SeqCst);
    for t in &threads {
        let mut owed_wake = false;
        if let Some(depth) = t.runs.depth_of(id) {
            owed_wake = t.scope_request();
            reached.push((t.clone(), depth));
        }
        t.runs.count_out();
        // After counting out: a run that ends now never waits for this system call (on two
        // CPUs the woken thread can preempt this one and would spin in `leave` until it ran).
        if owed_wake {
            t.wake_parked();
        }
    }
}

/// The threads a cancel reached, each with the depth of its run of the canceled scope: whose
/// `on_cancel` callbacks registered inside that run are owed.
pub(crate) type Reached = Vec<(Arc<Control>, usize)>;

/// Runs the `on_cancel` callbacks registered inside the canceled runs, after the deliveries (a
/// callback must never hold up the end of a run).
pub(crate) fn run_callbacks(reached: Reached) {
    for (t, depth) in reached {
        t.run_scope_callbacks(depth);
    }
}

/// The error of a [`CancelScope::run`] whose scope was canceled: `f` was stopped at a
/// cancellation point (or never started).
///
/// ```
/// let e = thread_cancel::Canceled::default();
/// assert_eq!(std::io::Error::from(e).kind(), std::io::ErrorKind::Interrupted);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Canceled {
    timed_out: bool,
}

impl Canceled {
    /// Whether the scope was canceled by its deadline (its own or an enclosing scope's)
    /// rather than by [`CancelScope::cancel`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = thread_cancel::CancelScope::with_timeout(Duration::ZERO);
    /// assert!(s.run(|| ()).unwrap_err().deadline_passed());
    /// ```
    pub fn deadline_passed(&self) -> bool {
        self.timed_out
    }
}

impl std::fmt::Display for Canceled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.timed_out {
            "operation canceled: its deadline passed"
        } else {
            "operation canceled"
        })
    }
}

impl std::error::Error for Canceled {}

impl From<Canceled> for std::io::Error {
    fn from(e: Canceled) -> Self {
        std::io::Error::new(std::io::ErrorKind::Interrupted, e)
    }
}

/// The error of [`with_timeout`] / [`with_deadline`]: the deadline passed before `f` finished,
/// and `f` was stopped at a cancellation point (or never started).
///
/// ```
/// let e = thread_cancel::TimedOut;
/// assert_eq!(std::io::Error::from(e).kind(), std::io::ErrorKind::TimedOut);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TimedOut;

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("operation timed out")
    }
}

impl std::error::Error for TimedOut {}

impl From<TimedOut> for std::io::Error {
    fn from(e: TimedOut) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, e)
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
            children: Mutex::new(Vec::new()),
            timer: OnceLock::new(),
        });
        if let Some(p) = &parent {
            // Registered before the parent's state is read, under the lock its cancel takes
            // its children with: either the cancel finds this child, or this sees the cancel.
            let mut ch = lock(&p.children);
            if ch.len() >= 8 && ch.len().is_power_of_two() {
                ch.retain(|w| w.strong_count() > 0);
            }
            ch.push(Arc::downgrade(&inner));
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

    /// Runs `f` in the calling thread inside this scope: `Ok` with its value if it finished
    /// (see Errors for the rest).
    ///
    /// The contract:
    ///
    /// - A cancel is acted on where a thread cancellation would be: at every cancellation point
    ///   (the crate's blocking waits, the system calls of [`io`](crate::io), [`testcancel`](crate::testcancel),
    ///   anywhere in an [`async_region`](crate::async_region)), with cancellation enabled. A
    ///   call that completed is never undone: the cancel is acted on at the next point.
    /// - Every `Drop` and cleanup handler between that point and `run` runs; then `run` returns
    ///   `Err`. The thread's state afterwards is what it was before: no request left, no
    ///   signal on its way. A cancel that comes after `run` returned changes nothing.
    /// - Runs nest: a cancel of an outer scope unwinds through the inner runs to the outer
    ///   one. A cancellation of the thread itself passes through every run to the thread's
    ///   end (`run` never swallows it), as does a panic.
    /// - [`disable`](crate::disable) holds a scope's cancel as it holds the thread's.
    ///   A `catch_unwind` inside `f` that swallows the unwind does not stop it: the next point
    ///   raises it again, and if `f` returns first, `run` still returns `Err`.
    /// - If the scope is canceled when `run` is entered, `f` does not start.
    ///
    /// The thread needs no set-up: any thread (spawned by this crate, `std`, the main thread,
    /// a pool's) can run a scope.
    ///
    /// # Errors
    /// [`Canceled`] if the scope was canceled (by [`cancel`](Self::cancel), by a parent's
    /// cancel, or by its deadline: then [`Canceled::deadline_passed`] is true) and
    /// - it was canceled when `run` was entered: `f` did not start;
    /// - `f` was stopped at a cancellation point: the stack between that point and `run` was
    ///   unwound;
    /// - or `f` swallowed that unwind (a `catch_unwind`) and returned: its value is dropped.
    ///
    /// A cancel of an enclosing scope is not this run's error: it unwinds through this run to
    /// that scope's `run`.
    ///
    /// # Panics
    /// If called inside an [`async_region`](crate::async_region) (whose frames can be
    /// abandoned at any instruction: a run there could not unregister). A panic of `f` is not
    /// caught: it passes through `run` (after the run is left), as does a cancellation of the
    /// thread.
    ///
    /// ```
    /// use thread_cancel::{sync::channel, CancelScope};
    /// let (tx, rx) = channel::<u32>();
    /// let scope = CancelScope::new();
    /// let s = scope.clone();
    /// let h = std::thread::spawn(move || s.run(|| rx.recv()));
    /// scope.cancel();
    /// assert!(h.join().unwrap().is_err());
    /// drop(tx);
    /// ```
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> Result<R, Canceled> {
        let inner: &Inner = &self.inner;
        if inner.is_canceled() {
            return Err(self.error());
        }
        let Some(c) = own_control() else {
            // The thread is being torn down (thread-local destructors): it has no control
            // block to register in, and nothing can be delivered to it.
            return Ok(f());
        };
        assert!(
            c.region.load(Ordering::Relaxed).is_null(),
            "CancelScope::run inside an async_region: the region can abandon the run's frame"
        );
        let parent = runs::top();
        // SAFETY: see `any_frame`.
        let (depth, outer_deadline) = match unsafe { parent.as_ref() } {
            Some(p) => (p.depth + 1, p.deadline),
            None => (0, None),
        };
        let frame = Frame {
            scope: inner as *const Inner as *const dyn RunScope,
            parent,
            depth,
            deadline: match (inner.deadline, outer_deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        };
        runs::set_top(&frame);
        register(c, depth, inner.id());
        // Registered (and fenced) before reading the state: a cancel that this misses sees
        // the registration and delivers (I6).
        let result = if inner.marked() {
            None
        } else {
            Some(catch_unwind(AssertUnwindSafe(f)))
        };
        let caught = leave(c, &frame);
        match result {
            None => Err(self.error()),
            Some(Ok(v)) if !caught => Ok(v),
            Some(Ok(_)) => Err(self.error()),
            Some(Err(p)) if caught && p.is::<ScopeUnwind>() => Err(self.error()),
            Some(Err(p)) => resume_unwind(p),
        }
    }

    fn error(&self) -> Canceled {
        Canceled {
            timed_out: self.inner.state.load(Ordering::Acquire) == TIMED_OUT,
        }
    }
}

/// `now + d`, or far in the future if that overflows.
fn after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}

/// The calling thread's control block (adopting the thread), borrowed until the thread's
/// thread-local destructors: `None` if they have begun.
fn own_control<'a>() -> Option<&'a Control> {
    let p = match crate::control::current_ptr() {
        Some(p) => p,
        None => {
            let _ = crate::current::current_control();
            crate::control::current_ptr()?
        }
    };
    // SAFETY: the calling thread's control block stays alive until its thread-local
    // destructors run (see `current::with_current`); the borrow is used only by `run` in this
    // thread, which cannot outlive the thread.
    Some(unsafe { &*p })
}

/// Owner: registers a run of scope `id` at `depth`, then the fence (paired with `deliver`'s).
#[inline(always)]
fn register(c: &Control, depth: usize, id: usize) {
    if !c.runs.registered.load(Ordering::Relaxed) {
        register_thread(c);
    }
    c.runs.enter(depth, id);
}

#[cold]
fn register_thread(c: &Control) {
    let arc = crate::current::current_control();
    debug_assert!(std::ptr::eq(&*arc, c));
    let mut reg = lock_registry();
    retain_live(&mut reg);
    reg.push(Arc::downgrade(&arc));
    c.runs.registered.store(true, Ordering::Relaxed);
}

/// Owner: ends a run (every path: returned, unwound, never started). Unregisters, waits for
/// the deliveries under way, unlinks the frame, and leaves the word as it was before the run
/// (I6). Returns whether this run is the one a scope unwind (in progress, or swallowed and
/// never raised again) ends at.
#[inline(always)]
fn leave(c: &Control, frame: &Frame) -> bool {
    c.runs.leave(frame.depth, frame.scope_id());
    runs::set_top(frame.parent);
    let s = c.word.load();
    if s & (word::SCOPE | word::SCOPE_UNWIND) == 0 {
        return false;
    }
    leave_slow(c, frame.depth)
}

#[cold]
#[inline(never)]
fn leave_slow(c: &Control, depth: usize) -> bool {
    let mut caught = false;
    if c.word.load() & word::SCOPE_UNWIND != 0 && runs::target() == depth {
        c.word.end_scope_unwind();
        caught = true;
    }
    if c.word.load() & word::SCOPE != 0 {
        // Drop the request, then look again: a cancel of an enclosing run's scope that
        // delivered before the `fetch_and` is seen as canceled here and re-queued.
        c.word.clear_scope_request();
        if outermost_canceled().is_some() {
            c.word.scope_request();
        }
    }
    // Every delivery is over (the wait in `leave`): a signal one of them sent is recorded.
    if c.runs.signaled.swap(false, Ordering::AcqRel) {
        crate::sys::drain_cancel_signal();
    }
    caught
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
