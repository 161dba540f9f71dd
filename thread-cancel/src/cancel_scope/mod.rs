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

mod cancelled;
pub(crate) mod deadline;
mod delivery;
mod diagnostic;
mod error;
mod generation;
mod guard;
mod private;
mod run;
mod spawn;

pub use cancelled::{OnCancel, WaitForCancel};
use delivery::{deliver, Claim, Delivery};
pub(crate) use delivery::{run_callbacks, Reached};
pub use error::{Canceled, Cause, TimedOut};
pub use generation::Generation;
pub use guard::DropGuard;
pub use spawn::{Nursery, Task};

use crate::control::{lock, Control, ScopeUnwind};
use crate::point::runs::{self, any_frame, outermost_canceled, Frame, RunScope};
use crate::word;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

const LIVE: u8 = 0;
const CANCELED: u8 = 1;
const TIMED_OUT: u8 = 2;
/// The bits of `state` that say whether (and why) the scope is canceled.
const WHY: u8 = 0x7f;
/// In `state`, beside `WHY`: the scope has a deadline or parents, so a live reading must look
/// further (at the clock, at the parents). Set when it is made or given a deadline, never
/// cleared: a scope without either is answered by one load.
const LOOK_FURTHER: u8 = 0x80;

/// The shared state of a scope and its clones.
pub(crate) struct Inner {
    /// `LIVE`, or why it was canceled (`CANCELED`, `TIMED_OUT`; set once, after `cause`), in
    /// the bits `WHY`; and `LOOK_FURTHER`.
    state: AtomicU8,
    /// The first cancel's cause: set before `state` leaves `LIVE` (see `mark`).
    cause: OnceLock<Cause>,
    /// Its own deadline (`set_deadline` moves it), as nanoseconds since [`base`]; `NO_DEADLINE`
    /// for none. The effective deadline is the earliest of its own and its parents'.
    own_deadline: AtomicU64,
    /// A lower bound of its effective deadline (the earliest of its own and every ancestor's),
    /// on the same clock: `NO_DEADLINE` means none anywhere above. Made from the parents'
    /// bounds, so a live reading is one comparison however deep the scope is nested
    /// (`is_canceled`); a scope whose bound passed looks at its own deadline and its parents
    /// (the exact answer) and raises the bound again if the deadline that set it moved later.
    /// Lowered only by `fetch_min` (at its making, after each parent's registration, and by
    /// a `set_deadline` of an ancestor to an earlier time, which walks the descendants), and
    /// raised only by a compare-and-swap from the value the exact answer started from: a
    /// concurrent lowering is never undone.
    chain_deadline: AtomicU64,
    /// Kept alive by their children (to leave their lists when dropped): one for `child()`,
    /// several for `linked()`.
    parents: Vec<Arc<Inner>>,
    /// Scopes made by `child()` or `linked()`, canceled with this one.
    /// Keyed by each child's address, so that a child leaves in constant time however many
    /// siblings it has.
    children: Mutex<HashMap<usize, Weak<Inner>, BuildHasherDefault<AddressHasher>>>,
    /// Who runs it now, so that a cancel visits only those threads (see `propagate`):
    /// `runner`, the control block of the one thread whose run of it holds the slot (null:
    /// none), and `others`, how many runs of it are in progress besides (on other threads,
    /// or nested in the runner's). A run registers in its thread's slots, then takes the slot
    /// or counts itself (a `SeqCst` read-modify-write: the registration's fence), and gives
    /// them back after its end. A cancel reads both after its mark by a compare-and-swap of
    /// the empty value (`runs_of`): one that finds neither delivers to no thread; one that
    /// finds only the runner delivers to that thread alone; only `others` makes it visit
    /// every thread that ran a scope.
    runner: AtomicPtr<Control>,
    others: AtomicUsize,
    /// Cancels reading `runner` now: a run gives the slot back, then waits for none, so that
    /// a cancel that read the runner's block can use it (the block stays alive while its
    /// thread is in the run).
    delivering: AtomicUsize,
    /// The registration of its own deadline with the deadline timer, if any.
    timer: Mutex<Option<crate::cancel_scope::deadline::Key>>,
    /// What its cancel wakes or runs besides the runs: `cancelled()` futures' wakers and
    /// `on_cancel` callbacks registered on the scope.
    hooks: Mutex<cancelled::Hooks>,
}

/// `own_deadline` for none.
const NO_DEADLINE: u64 = u64::MAX;

/// The scopes' clock: the instant deadlines are counted from (nanoseconds, in an atomic), and
/// the coarse clock's reading of it.
struct Clock {
    base: Instant,
    /// `CLOCK_MONOTONIC` read just after `base` (0 if unknown).
    base_raw: u64,
    /// `base_raw` minus the same clock read just before `base`: `base` lies that much before
    /// `base_raw` at most.
    gap: u64,
    /// How far a coarse reading may lag the precise time, plus the gap between `base` and
    /// `base_raw` (0: no coarse clock; every check reads the precise one).
    lag: u64,
}

fn clock() -> &'static Clock {
    static CLOCK: OnceLock<Clock> = OnceLock::new();
    CLOCK.get_or_init(|| {
        let before = crate::sys::clock::monotonic_ns();
        let base = Instant::now();
        let after = crate::sys::clock::monotonic_ns();
        match (before, after, crate::sys::clock::coarse_lag_ns()) {
            (Some(b), Some(a), Some(lag)) => Clock {
                base,
                base_raw: a,
                gap: a - b,
                lag: lag + (a - b),
            },
            _ => Clock {
                base,
                base_raw: 0,
                gap: 0,
                lag: 0,
            },
        }
    })
}

fn base() -> Instant {
    clock().base
}

/// Whether the deadline `d` (nanoseconds since [`base`]) has passed. A deadline farther ahead
/// than the coarse clock's lag is ruled out on the coarse clock (a few nanoseconds, where
/// `Instant::now()` costs tens); a nearer one is read on the precise clock. Correct as long as
/// the coarse clock lags by no more than four of its ticks (the kernel advances it every tick
/// while a thread runs): the reading then is a lower bound of the time `Instant::now()` gives.
#[inline]
fn passed(d: u64) -> bool {
    if d == NO_DEADLINE {
        return false;
    }
    let c = clock();
    if c.lag != 0 {
        if let Some(raw) = crate::sys::clock::coarse_monotonic_ns() {
            if raw.saturating_sub(c.base_raw).saturating_add(c.lag) < d {
                return false;
            }
        }
    }
    Instant::now() >= c.base + Duration::from_nanos(d)
}

/// `to_nanos(Instant::now() + timeout)`, from one read of the clock `Instant` reads
/// (`CLOCK_MONOTONIC`), counted from the raw reading next to `base` plus the gap around it:
/// never earlier than that deadline, and later by at most the gap (tens of nanoseconds), with
/// no `Instant` arithmetic. `base` is read first, so that the reading is never before it.
#[inline]
fn deadline_after(timeout: Duration) -> u64 {
    let c = clock();
    let timeout = u64::try_from(timeout.as_nanos()).unwrap_or(NO_DEADLINE);
    let since_base = match crate::sys::clock::monotonic_ns() {
        Some(raw) if c.base_raw != 0 => raw.saturating_sub(c.base_raw) + c.gap,
        _ => u64::try_from(Instant::now().saturating_duration_since(c.base).as_nanos())
            .unwrap_or(NO_DEADLINE),
    };
    since_base.saturating_add(timeout).min(NO_DEADLINE - 1)
}

fn to_nanos(t: Instant) -> u64 {
    let n = t.saturating_duration_since(base()).as_nanos();
    u64::try_from(n)
        .unwrap_or(NO_DEADLINE - 1)
        .min(NO_DEADLINE - 1)
}

fn from_nanos(n: u64) -> Option<Instant> {
    (n != NO_DEADLINE).then(|| base() + Duration::from_nanos(n))
}

impl Inner {
    /// A live scope with these parents and its own deadline (`NO_DEADLINE`: none). Allocates
    /// nothing itself.
    fn new(parents: Vec<Arc<Inner>>, own_deadline: u64) -> Self {
        let chain = parents
            .iter()
            .map(|p| p.chain_deadline.load(Ordering::Acquire))
            .fold(own_deadline, u64::min);
        Inner {
            chain_deadline: AtomicU64::new(chain),
            state: AtomicU8::new(if parents.is_empty() && own_deadline == NO_DEADLINE {
                LIVE
            } else {
                LIVE | LOOK_FURTHER
            }),
            cause: OnceLock::new(),
            own_deadline: AtomicU64::new(own_deadline),
            parents,
            children: Mutex::new(HashMap::default()),
            runner: AtomicPtr::new(std::ptr::null_mut()),
            others: AtomicUsize::new(0),
            delivering: AtomicUsize::new(0),
            timer: Mutex::new(None),
            hooks: Mutex::new(cancelled::Hooks::default()),
        }
    }

    #[inline(always)]
    fn id(&self) -> usize {
        self as *const Inner as usize
    }

    /// Whether canceled, without looking at the clock.
    #[inline(always)]
    fn marked(&self) -> bool {
        self.state.load(Ordering::Acquire) & WHY != LIVE
    }

    /// Whether the scope or a parent may have a deadline (`LOOK_FURTHER`: it has a deadline or
    /// parents); false means neither.
    #[inline(always)]
    fn may_have_deadline(&self) -> bool {
        self.state.load(Ordering::Relaxed) & LOOK_FURTHER != 0
    }

    /// Whether canceled; a deadline that passed (its own or a parent's) cancels the scope
    /// (or that parent, and so this one) now. A scope with no deadline and no parent: one
    /// load, inlined.
    #[inline]
    fn is_canceled(&self) -> bool {
        let state = self.state.load(Ordering::Acquire);
        if state & WHY != LIVE {
            return true;
        }
        if state & LOOK_FURTHER == 0 {
            return false;
        }
        self.is_canceled_slow()
    }

    #[inline(never)]
    fn is_canceled_slow(&self) -> bool {
        let bound = self.chain_deadline.load(Ordering::Acquire);
        if !passed(bound) {
            // No deadline of its own or of an ancestor has passed (the bound is never later
            // than any of them); a parent's cancel has marked this scope already.
            return false;
        }
        if passed(self.own_deadline.load(Ordering::Acquire)) {
            let shield = crate::async_region::shield();
            let mut reached = Reached::default();
            let fired = self.fire_own_deadline(&mut reached);
            crate::async_region::unshield(shield);
            run_callbacks(reached);
            if fired {
                return true;
            }
        }
        if self.parents.iter().any(|p| p.is_canceled()) && self.marked() {
            return true;
        }
        // Nothing is due: a deadline that set the bound moved later. The parents' bounds are
        // fresh now (their `is_canceled` above).
        let fresh = self
            .parents
            .iter()
            .map(|p| p.chain_deadline.load(Ordering::Acquire))
            .fold(self.own_deadline.load(Ordering::Acquire), u64::min);
        if fresh > bound {
            let _ = self.chain_deadline.compare_exchange(
                bound,
                fresh,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
        self.marked()
    }

    /// `set_deadline` moved its own deadline earlier, to `d`: lowers the bound of the scope and
    /// of every descendant. Each scope's bound is lowered before its children are listed, under
    /// the lock a new child registers with: a child made meanwhile is either listed here or
    /// reads the lowered bound after its registration.
    /// A bound no later than `d` already needs no walk: a scope's bound is never later than its
    /// parents' (made from them, lowered with them, raised only to theirs).
    fn lower_chain(&self, d: u64) {
        if self.chain_deadline.fetch_min(d, Ordering::AcqRel) <= d {
            return;
        }
        let mut todo: Vec<Arc<Inner>> = lock(&self.children)
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        while let Some(c) = todo.pop() {
            if c.chain_deadline.fetch_min(d, Ordering::AcqRel) <= d {
                continue;
            }
            todo.extend(lock(&c.children).values().filter_map(Weak::upgrade));
        }
    }

    /// Cancels the scope by its own deadline if that deadline has passed; returns whether it
    /// had (the scope is then canceled). The check and the mark are made under the `timer`
    /// lock, which `set_deadline` holds while it moves the deadline: a deadline moved later
    /// before the mark is not due any more, and a mark made before the move is seen by
    /// `set_deadline`, whose caller then finds the scope canceled — never a cancel by the old
    /// deadline after `set_deadline` returned with the scope live.
    fn fire_own_deadline(&self, reached: &mut Reached) -> bool {
        let marked_here = {
            let _moving = lock(&self.timer);
            match self.own_deadline().filter(|&d| Instant::now() >= d) {
                Some(d) => self.mark(Cause::Deadline(d)),
                None => return self.marked(),
            }
        };
        if marked_here {
            self.propagate(reached);
        }
        true
    }

    /// Its own deadline, if any.
    fn own_deadline(&self) -> Option<Instant> {
        from_nanos(self.own_deadline.load(Ordering::Acquire))
    }

    /// The effective deadline: the earliest of its own and its parents'. Exact: it walks the
    /// ancestors, unless none has a deadline (one load).
    fn deadline(&self) -> Option<Instant> {
        if self.chain_deadline.load(Ordering::Acquire) == NO_DEADLINE {
            return None;
        }
        self.parents
            .iter()
            .filter_map(|p| p.deadline())
            .chain(self.own_deadline())
            .min()
    }

    /// The deadline timer cancels the scope. Returns the `on_cancel` callbacks it owes (the
    /// threads reached, each with the depth of its run), which the timer runs elsewhere: a slow
    /// callback must never hold up the other deadlines.
    pub(crate) fn expire_by_timer(&self) -> Reached {
        let shield = crate::async_region::shield();
        let mut reached = Reached::default();
        // A deadline moved later since it was due (`set_deadline`) is not due any more: its
        // new registration fires it.
        self.fire_own_deadline(&mut reached);
        crate::async_region::unshield(shield);
        reached
    }

    /// Marks the scope canceled (once), cancels its children, and delivers a scope request to
    /// every thread in a run of it.
    fn cancel(&self, cause: Cause) {
        // A canceler inside an asynchronous region holds its own cancellation while it takes
        // locks (as `Control::cancel`).
        let shield = crate::async_region::shield();
        let mut reached = Reached::default();
        self.cancel_shielded(cause, &mut reached);
        crate::async_region::unshield(shield);
        run_callbacks(reached);
    }

    /// Marks, cancels the children, delivers; adds the threads reached to `reached`.
    fn cancel_shielded(&self, cause: Cause, reached: &mut Reached) {
        self.cancel_under(cause, reached, false);
    }

    /// [`cancel_shielded`](Self::cancel_shielded); `hooked` says that a callback registered on
    /// a scope this cancel came through (a parent) fires with it.
    fn cancel_under(&self, cause: Cause, reached: &mut Reached, hooked: bool) {
        if self.mark(cause) {
            self.propagate_under(reached, hooked);
        }
    }

    /// After this thread marked the scope: cancels its children, delivers to the threads in a
    /// run of it, and fires its hooks; adds the threads reached to `reached`.
    fn propagate(&self, reached: &mut Reached) {
        self.propagate_under(reached, false);
    }

    /// [`propagate`](Self::propagate); `hooked` as in [`cancel_under`](Self::cancel_under).
    /// The runs of the scope in progress, and those of its children, are told when a callback
    /// registered on the scope (or a parent) fires with this cancel: it may be what ends their
    /// blocked call, so they report the cancel as acted on, as a run's own callback makes it.
    fn propagate_under(&self, reached: &mut Reached, hooked: bool) {
        let hooks = cancelled::take(&self.hooks);
        let hooked = hooked || hooks.has_calls();
        let cause = self.cause();
        let children = std::mem::take(&mut *lock(&self.children));
        for c in children.values().filter_map(Weak::upgrade) {
            c.cancel_under(cause.clone(), reached, hooked);
        }
        let first = reached.threads.len();
        // The mark (a `SeqCst` RMW), then who runs it, by read-modify-writes paired with a
        // run's claim (registered, claim, then read of the mark: `run_in`): either the run
        // sees the mark and does not start, or this sees the run and delivers (the model:
        // `loom_cancel_visits_only_the_threads_that_run_the_scope`).
        let how = if hooked {
            Delivery::RequestHooked
        } else {
            Delivery::Request
        };
        let (others, runner) = self.runs_of();
        if others != 0 {
            deliver(self.id(), reached, how);
        } else if runner {
            self.deliver_to_runner(reached, how);
        }
        diagnostic::watch(self.id(), &reached.threads[first..]);
        cancelled::fire(hooks, reached);
    }

    /// A callback registered on the scope after its cancel runs at once: the runs of it still
    /// in progress (which the cancel reached before) report the cancel as acted on.
    fn hooks_fired_late(&self) {
        let mut reached = Reached::default();
        let (others, runner) = self.runs_of();
        if others != 0 {
            deliver(self.id(), &mut reached, Delivery::Hooked);
        } else if runner {
            self.deliver_to_runner(&mut reached, Delivery::Hooked);
        }
    }

    /// Marks the scope canceled with `cause` if it is not yet; returns whether this call did.
    /// The cause is set first (the first one set wins; a second `set` waits for the first to
    /// finish), then `state`, from the cause that was set: a scope seen canceled always has its
    /// cause, and the two agree.
    fn mark(&self, cause: Cause) -> bool {
        if self.marked() {
            return false;
        }
        let _ = self.cause.set(cause);
        let why = match self.cause() {
            Cause::Deadline(_) => TIMED_OUT,
            _ => CANCELED,
        };
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & WHY != LIVE {
                return false;
            }
            match self.state.compare_exchange(
                state,
                why | (state & LOOK_FURTHER),
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
    }

    /// The cause of a cancel (`Cause::Cancel` if not canceled yet).
    fn cause(&self) -> Cause {
        self.cause.get().cloned().unwrap_or(Cause::Cancel)
    }
}

/// The hash of a key nobody outside chooses: one multiplication (a child's address, chosen by
/// the allocator; a callback's number, counted by its scope). No random state: a scope's maps
/// cost nothing to make (a `with_timeout` makes one per call).
#[derive(Default)]
pub(super) struct AddressHasher(u64);

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

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl RunScope for Inner {
    #[inline(always)]
    fn marked(&self) -> bool {
        Inner::marked(self)
    }

    #[inline(always)]
    fn is_canceled(&self) -> bool {
        Inner::is_canceled(self)
    }

    fn deadline(&self) -> Option<Instant> {
        Inner::deadline(self)
    }

    fn expire(&self) {
        let _ = Inner::is_canceled(self);
    }

    fn timed_out(&self) -> bool {
        self.state.load(Ordering::Acquire) & WHY == TIMED_OUT
    }

    fn forget_parents_deliveries(&self) {
        self.delivering.store(0, Ordering::Relaxed);
    }
}

impl Inner {
    /// What a scope's end does while its parents are still held: its deadline's registration
    /// withdrawn, kept callbacks handed on (`cancelled::bequeath`), its place in each parent's
    /// children given back. Idempotent.
    fn release(&mut self) {
        let timer = self
            .timer
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(k) = timer.take() {
            crate::cancel_scope::deadline::unregister(&k);
        }
        if !self.marked() {
            let own = self.own_deadline();
            let hooks = self
                .hooks
                .get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !hooks.is_empty() {
                cancelled::bequeath(hooks, &self.parents, own);
            }
        }
        let me = self as *const Inner as usize;
        for p in &self.parents {
            lock(&p.children).remove(&me);
        }
    }
}

impl Drop for Inner {
    /// Ancestors this was the last holder of end here, in a loop: a chain of nested children
    /// dropped from its deepest end never recurses (100,000 deep would overflow a stack).
    fn drop(&mut self) {
        self.release();
        let mut last = std::mem::take(&mut self.parents);
        while let Some(p) = last.pop() {
            if let Some(mut ancestor) = Arc::into_inner(p) {
                ancestor.release();
                last.append(&mut ancestor.parents);
            }
        }
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelScope")
            .field("canceled", &self.marked())
            .field("deadline", &self.deadline())
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
        Self::make(Vec::new(), None)
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
        Self::make(Vec::new(), Some(deadline))
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
        Self::make(vec![self.inner.clone()], None)
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
        Self::make(vec![self.inner.clone()], Some(deadline))
    }

    /// A new scope canceled when any of `parents` is (C#'s `CreateLinkedTokenSource`), and by
    /// the earliest of their deadlines; canceling it leaves them alone. Each parent holds it
    /// as it holds a child: a cancel's cost and a drop's do not depend on how many scopes are
    /// linked elsewhere. No parents: a scope like [`new`](Self::new).
    ///
    /// ```
    /// use thread_cancel::CancelScope;
    /// let (client_left, shutting_down) = (CancelScope::new(), CancelScope::new());
    /// let request = CancelScope::linked(&[&client_left, &shutting_down]);
    /// shutting_down.cancel();
    /// assert!(request.is_canceled());
    /// assert!(!client_left.is_canceled());
    /// ```
    pub fn linked(parents: &[&CancelScope]) -> Self {
        Self::make(parents.iter().map(|p| p.inner.clone()).collect(), None)
    }

    /// Moves the scope's own deadline, earlier or later, while runs of it are in progress
    /// (Trio's mutable `deadline`): a deadline already passed cancels the scope now; a later
    /// one lets the runs go on. A parent's or an enclosing run's deadline still applies (an
    /// inner deadline never extends an outer one); a scope already canceled stays canceled.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use thread_cancel::CancelScope;
    /// let s = CancelScope::with_timeout(Duration::from_millis(10));
    /// s.set_deadline(Instant::now() + Duration::from_secs(60)); // more time
    /// assert!(s.run(|| thread_cancel::sleep(Duration::from_millis(30))).is_ok());
    /// s.set_deadline(Instant::now()); // now
    /// assert!(s.is_canceled());
    /// ```
    pub fn set_deadline(&self, deadline: Instant) {
        let inner = &self.inner;
        let mut timer = lock(&inner.timer);
        inner
            .own_deadline
            .store(to_nanos(deadline), Ordering::Release);
        inner.state.fetch_or(LOOK_FURTHER, Ordering::SeqCst);
        // An earlier deadline lowers the bounds of the scope and its descendants (a walk of
        // them); a later one leaves them low, and the first reading that finds a bound passed
        // raises it (`is_canceled_slow`).
        inner.lower_chain(to_nanos(deadline));
        if let Some(k) = timer.take() {
            crate::cancel_scope::deadline::unregister(&k);
        }
        if inner.marked() {
            return;
        }
        if Instant::now() >= deadline {
            drop(timer);
            inner.cancel(Cause::Deadline(deadline));
            return;
        }
        *timer = Some(crate::cancel_scope::deadline::register(
            deadline,
            Arc::downgrade(inner),
        ));
    }

    fn make(parents: Vec<Arc<Inner>>, own: Option<Instant>) -> Self {
        let inner = Arc::new(Inner::new(
            parents.clone(),
            own.map_or(NO_DEADLINE, to_nanos),
        ));
        for p in &parents {
            // Registered before the parent's state is read, under the lock its cancel takes
            // its children with: either the cancel finds this child, or this sees the cancel.
            let mut ch = lock(&p.children);
            ch.insert(Arc::as_ptr(&inner) as usize, Arc::downgrade(&inner));
            let canceled = p.marked();
            // A `set_deadline` of an ancestor that lowered the parent's bound before this
            // registration did not list this child (`lower_chain`).
            inner
                .chain_deadline
                .fetch_min(p.chain_deadline.load(Ordering::Acquire), Ordering::AcqRel);
            drop(ch);
            if canceled {
                inner.mark(p.cause());
            }
        }
        // Only its own deadline is registered: a parent's cancels it through the parent.
        if let Some(d) = own {
            if passed(to_nanos(d)) {
                inner.mark(Cause::Deadline(d));
            } else if !inner.marked() {
                *lock(&inner.timer) = Some(crate::cancel_scope::deadline::register(
                    d,
                    Arc::downgrade(&inner),
                ));
            }
        }
        if !inner.marked() {
            // A parent whose deadline passed and that the timer has not canceled yet.
            let _ = inner.is_canceled();
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
        self.inner.cancel(Cause::Cancel);
    }

    /// Cancels the scope as [`cancel`](Self::cancel) does, with `cause` as the reason that
    /// runs report ([`Canceled::cause`]): Go's `CancelCauseFunc`. If the scope is already
    /// canceled, nothing changes (the first cause wins); its children carry the same cause.
    ///
    /// ```
    /// use thread_cancel::{CancelScope, Cause};
    /// let s = CancelScope::new();
    /// let child = s.child();
    /// s.cancel_with(std::io::Error::other("shutting down"));
    /// s.cancel(); // too late: the first cause stays
    /// let e = child.run(|| ()).unwrap_err();
    /// assert_eq!(e.cause().to_string(), "canceled: shutting down");
    /// ```
    pub fn cancel_with<E: std::error::Error + Send + Sync + 'static>(&self, cause: E) {
        self.inner.cancel(Cause::Error(Arc::new(cause)));
    }

    /// Whether the scope is canceled (by [`cancel`](Self::cancel), its parent, or its deadline).
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::with_timeout(std::time::Duration::ZERO);
    /// assert!(s.is_canceled());
    /// ```
    #[inline]
    pub fn is_canceled(&self) -> bool {
        let canceled = self.inner.is_canceled();
        if canceled {
            own_request_now();
        }
        canceled
    }

    /// The cause of its cancel (`Cause::Cancel` if it is not canceled).
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn cause(&self) -> Cause {
        self.inner.cause()
    }

    /// The scope's deadline (its own, or an enclosing scope's if earlier), if any.
    ///
    /// ```
    /// assert!(thread_cancel::CancelScope::new().deadline().is_none());
    /// ```
    pub fn deadline(&self) -> Option<Instant> {
        self.inner.deadline()
    }
}

/// How far ahead a deadline too far for an `Instant` is put.
const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// `now + d`, or far in the future if that overflows.
fn after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d).unwrap_or_else(|| now + CENTURY)
}

/// Runs `f` with a deadline `timeout` from now: `Ok` with its value if it finished in time. A
/// `timeout` too large for an `Instant` is a deadline about a century away.
///
/// # Errors
/// [`TimedOut`] if the deadline passed before the run ended. It says what happened:
/// - `f` was stopped at a cancellation point (its `Drop`s ran), or never started (a zero
///   `timeout`, or a very short one that passed before `f` could start, as on a loaded or
///   emulated machine): [`into_value`](TimedOut::into_value) is `None`;
/// - `f` returned after its deadline, because nothing in it was a cancellation point (a
///   missed deadline: [`acted`](Canceled::acted) is false) or because it caught the unwind:
///   its value is kept, `into_value` is `Some`.
///
/// # Panics
/// As [`CancelScope::run`]: inside an [`async_region`](crate::async_region); a panic of `f`
/// passes through.
///
/// ```
/// use std::time::Duration;
/// use thread_cancel::{sync::channel, with_timeout};
/// let (_tx, rx) = channel::<u32>();
/// let e = with_timeout(Duration::from_millis(10), || rx.recv()).unwrap_err();
/// assert!(e.acted() && e.value().is_none()); // the receive was interrupted
/// assert_eq!(with_timeout(Duration::from_secs(5), || 7), Ok(7));
/// ```
pub fn with_timeout<R>(timeout: Duration, f: impl FnOnce() -> R) -> Result<R, TimedOut<R>> {
    if timeout.is_zero() {
        return with_deadline(Instant::now(), f);
    }
    // The deadline was just computed from the clock and lies ahead: the run's entry need not
    // read the clock again (a deadline that passes now is seen by the first point, or by the
    // run's end).
    run::run_private(deadline_after(timeout), false, f).map_err(TimedOut)
}

/// Runs `f` with a deadline: see [`with_timeout`].
///
/// # Errors
/// [`TimedOut`] if `deadline` passed before the run ended: `f` was stopped at a cancellation
/// point, never started (a `deadline` already past), or returned late (its value kept; see
/// [`with_timeout`]).
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
/// assert!(r.unwrap_err().acted());
/// ```
pub fn with_deadline<R>(deadline: Instant, f: impl FnOnce() -> R) -> Result<R, TimedOut<R>> {
    run::run_private(to_nanos(deadline), true, f).map_err(TimedOut)
}

/// The deadline the calling thread's code runs under: the earliest deadline of its runs in
/// progress (up to the innermost [`shield`](CancelScope::shield), whose own deadline is the
/// one that counts inside it), if any. Code that passes a budget on to a client that takes a
/// timeout of its own (an HTTP client, a database driver) gives it the time left.
///
/// ```
/// use std::time::{Duration, Instant};
/// use thread_cancel::{current_deadline, with_timeout};
/// assert_eq!(current_deadline(), None);
/// with_timeout(Duration::from_secs(5), || {
///     let left = current_deadline().unwrap().saturating_duration_since(Instant::now());
///     assert!(left <= Duration::from_secs(5) && left > Duration::from_secs(1));
///     // e.g. client.timeout(left)
/// })
/// .unwrap();
/// ```
pub fn current_deadline() -> Option<Instant> {
    runs::wait_deadline()
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
/// // It finished its loop: no point acted, but it saw the cancel and stopped for it. The run
/// // reports the cancel as acted on, and keeps the value.
/// let e = r.unwrap_err();
/// assert!(e.acted());
/// assert_eq!(e.into_value(), Some(3));
/// ```
#[inline]
pub fn cancel_requested() -> bool {
    let Some(w) = crate::control::with_current(|c| c.word.load()) else {
        // No control block: no run (a run adopts its thread), no request.
        return false;
    };
    if w & word::PENDING != 0 {
        return true;
    }
    if w & (word::SCOPE | word::SCOPE_UNWIND) == 0 && deadline::marks_deadlines() {
        // Every cancel of a visible run's scope is delivered to this thread as `SCOPE` before
        // the `cancel` returns, a deadline's by the timer thread: no frame to walk, no clock.
        return false;
    }
    scope_canceled_now()
}

/// [`cancel_requested`] with a scope request in the word, or without a timer thread: whether a
/// run's scope is canceled, from the frames (a deadline read from the clock).
#[inline(never)]
fn scope_canceled_now() -> bool {
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
///
/// The caller saw the cancel (it may stop for it, as cooperative code does): its canceled runs
/// report the cancel as acted on.
#[cold]
fn own_request_now() {
    if outermost_canceled().is_some() {
        crate::point::runs::mark_acted();
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
