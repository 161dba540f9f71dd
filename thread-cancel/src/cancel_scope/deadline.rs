//! The process-wide deadline timer: one thread that cancels scopes whose deadline passed.
//!
//! Two kinds of registration, read by the same thread:
//! - a scope with a deadline that others may hold (`CancelScope::with_deadline`, ...)
//!   registers `(deadline, key) -> Weak<scope>` in a map here when it is made and removes it
//!   when it is dropped (one short lock each);
//! - a private deadline run (`with_timeout`, `with_deadline`: nobody else holds its scope,
//!   which lives on the caller's stack) registers in its thread's `TimedSlot`
//!   (`control::ScopeRuns::timed`): no lock, no allocation. The timer scans the slots of the
//!   threads that run scopes each time it wakes.
//!
//! The thread sleeps until the earliest registered deadline ([`NEXT`] holds that time for the
//! slots' owners to read), then cancels every scope whose deadline passed. A registration
//! wakes it (a system call) only when its deadline is earlier than the time it sleeps until,
//! which it keeps after the registration that set it is gone: in a loop of `with_timeout`s with
//! one timeout, about one wake-up per timeout period. It exists for threads blocked where only
//! a request can reach them (a system call): a thread in one of the crate's own waits bounds
//! its sleep by its innermost deadline and cancels the scope itself (`cancel_scope::expire`),
//! without this thread.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, Weak};
use std::time::Instant;

use crate::cancel_scope::private::Private;
use crate::cancel_scope::Inner;
use crate::control::{Control, Timed};

/// What a registered deadline does.
enum Due {
    /// Cancels (times out) the scope, if it is still alive.
    Scope(Weak<Inner>),
    /// Runs callbacks kept on a scope that was dropped before its deadline
    /// (`cancelled::bequeath`), made in this fork generation (in a forked child, a parent
    /// process's are forgotten, never run).
    Owed(u32, Box<dyn FnOnce() + Send>),
}

pub(crate) struct Timer {
    /// Registered deadlines, earliest first.
    map: BTreeMap<(Instant, u64), Due>,
    next_key: u64,
    /// When the timer thread wakes next (`None`: it waits for a registration).
    wake_at: Option<Instant>,
    /// The fork generation the timer thread was started in (`None`: not started). A forked
    /// child has no timer thread: the first registration there starts one.
    started_in: Option<u32>,
}

static TIMER: Mutex<Timer> = Mutex::new(Timer {
    map: BTreeMap::new(),
    next_key: 0,
    wake_at: None,
    started_in: None,
});
static WAKE: Condvar = Condvar::new();

/// The fork generation the timer thread runs in, plus one (0: none started). Read without the
/// lock by [`marks_deadlines`].
static RUNNING_IN: AtomicU32 = AtomicU32::new(0);

/// When the timer thread wakes next, as nanoseconds on the scopes' clock (`u64::MAX`: not
/// before a registration wakes it, or it is scanning the slots). A slot's owner that registers
/// an earlier deadline wakes it ([`publish`]).
static NEXT: AtomicU64 = AtomicU64::new(u64::MAX);

/// Whether a timer thread runs in this process: then every registered deadline is acted on by
/// it (the scope is marked and its runs receive a request), and a query need not read the
/// clock. Two relaxed loads.
#[inline(always)]
pub(crate) fn marks_deadlines() -> bool {
    RUNNING_IN.load(Ordering::Relaxed) == crate::control::fork::fork_generation().wrapping_add(1)
}

crate::control::fork::fork_safe_lock! {
    /// Locks the timer's state (held across `fork`).
    fn lock() -> Timer = TIMER;
}

/// A registration, removed by [`unregister`].
#[derive(Debug)]
pub(crate) struct Key(Instant, u64);

/// Registers `scope` to be canceled (timed out) at `at`.
pub(crate) fn register(at: Instant, scope: Weak<Inner>) -> Key {
    insert(at, Due::Scope(scope))
}

/// Runs `f` (callbacks a dropped scope still owes) on the crate's callback thread at `at`.
pub(super) fn owe(at: Instant, f: Box<dyn FnOnce() + Send>) {
    let _ = insert(at, Due::Owed(crate::control::fork::fork_generation(), f));
}

fn insert(at: Instant, due: Due) -> Key {
    let mut t = lock();
    let key = t.next_key;
    t.next_key += 1;
    t.map.insert((at, key), due);
    let generation = crate::control::fork::fork_generation();
    if t.started_in != Some(generation) {
        // Started under the lock, which the new thread takes first thing: it waits until this
        // registration is complete. If it cannot start, the next registration tries again.
        t.started_in = start().then_some(generation);
        if t.started_in.is_some() {
            RUNNING_IN.store(generation.wrapping_add(1), Ordering::Relaxed);
        }
        t.wake_at = Some(at);
    } else if t.wake_at.is_none_or(|w| at < w) {
        t.wake_at = Some(at);
        NEXT.fetch_min(super::to_nanos(at), Ordering::SeqCst);
        WAKE.notify_one();
    }
    Key(at, key)
}

/// A private run's registration in its thread's slot, withdrawn by [`withdraw`].
pub(crate) struct Published {
    /// The fork generation it was made in: in a forked child, a claim of the parent's timer
    /// thread is never released.
    generation: u32,
}

/// Owner: whether its slot is free for a private run ([`publish`]); if not (a private run
/// encloses this one), the caller registers in the map instead. Only the owner fills the slot.
#[inline(always)]
pub(crate) fn can_publish(c: &Control) -> bool {
    !c.runs.timed.in_use()
}

/// Owner: registers its private run of `scope` (deadline `at`) in its slot (free:
/// [`can_publish`]), and wakes the timer thread if it sleeps past `at` (or starts it: none runs
/// in this process yet).
#[inline]
pub(super) fn publish(c: &Control, scope: &Private, at: u64) -> Published {
    c.runs
        .timed
        .publish(scope.id(), at, c.fence_asymmetric.load(Ordering::Relaxed));
    if at < NEXT.load(Ordering::SeqCst) || !marks_deadlines() {
        kick(at);
    }
    Published {
        generation: crate::control::fork::fork_generation(),
    }
}

/// Owner, after its private run ended: withdraws the registration (waiting for the timer, if
/// it is canceling the scope right now).
#[inline]
pub(crate) fn withdraw(c: &Control, p: Published) {
    c.runs
        .timed
        .withdraw(c.fence_asymmetric.load(Ordering::Relaxed), || {
            crate::control::fork::fork_generation() != p.generation
        });
}

/// Wakes the timer thread at `at` at the latest (starting it if none runs here).
#[cold]
#[inline(never)]
fn kick(at: u64) {
    let Some(when) = super::from_nanos(at) else {
        return;
    };
    let mut t = lock();
    let generation = crate::control::fork::fork_generation();
    if t.started_in != Some(generation) {
        t.started_in = start().then_some(generation);
        if t.started_in.is_some() {
            RUNNING_IN.store(generation.wrapping_add(1), Ordering::Relaxed);
        }
        t.wake_at = Some(when);
    } else if t.wake_at.is_none_or(|w| when < w) {
        t.wake_at = Some(when);
        NEXT.fetch_min(at, Ordering::SeqCst);
        WAKE.notify_one();
    }
}

/// Timer: cancels the private runs whose deadline passed at `now`; returns the earliest
/// deadline still ahead, and adds the callbacks owed to `owed`.
fn scan_slots(now: u64, owed: &mut super::Reached) -> Option<u64> {
    let mut next: Option<u64> = None;
    for t in super::delivery::scoped_threads() {
        match t.runs.timed.claim_due(now) {
            Timed::Nothing => {}
            Timed::Ahead(at) => next = Some(next.map_or(at, |n| n.min(at))),
            Timed::Due(addr) => {
                // SAFETY: `addr` is the address of a live `Private` on its owner's stack: the
                // owner published it before its run and withdraws it after, and `withdraw`
                // waits while the slot is claimed (until `release` below), so the scope
                // outlives this use. Only shared access is made (as any canceler's).
                let scope = unsafe { &*(addr as *const Private) };
                owed.append(scope.expire_by_timer());
                t.runs.timed.release();
            }
        }
    }
    next
}

/// Removes a registration (the scope is dropped).
pub(crate) fn unregister(key: &Key) {
    let removed = lock().map.remove(&(key.0, key.1));
    drop(removed);
}

/// Starts the timer thread; false if the system refused a thread. Called with the timer's lock
/// held (so it must not take it). Without the thread, deadlines still end the crate's own waits
/// (they bound their sleep by the deadline and check the clock), but not a run blocked in a
/// system call: that one ends when the call returns.
fn start() -> bool {
    std::thread::Builder::new()
        .name("thread-cancel-deadlines".into())
        .spawn(run)
        .is_ok()
}

/// Runs the `on_cancel` callbacks a deadline owes on a thread of their own, so that a slow (or
/// blocked) callback never delays the other deadlines; in this thread if none can be created.
fn run_callbacks_elsewhere(owed: super::Reached) {
    let owed = std::sync::Arc::new(Mutex::new(Some(owed)));
    let take =
        |o: &Mutex<Option<super::Reached>>| o.lock().unwrap_or_else(PoisonError::into_inner).take();
    let theirs = owed.clone();
    let spawned = std::thread::Builder::new()
        .name("thread-cancel-callbacks".into())
        .spawn(move || super::run_callbacks(take(&theirs).unwrap_or_default()));
    if spawned.is_err() {
        super::run_callbacks(take(&owed).unwrap_or_default());
    }
}

fn run() {
    let mut t = lock();
    loop {
        let now = Instant::now();
        let mut due = Vec::new();
        while let Some(entry) = t.map.first_entry() {
            if entry.key().0 > now {
                break;
            }
            due.push(entry.remove());
        }
        // The time it was asked to wake at, kept if still ahead (below); cleared while the
        // slots are scanned, so that an owner that wakes it now sets its deadline here.
        let kept = t.wake_at.take().filter(|&w| w > now);
        drop(t);
        // Before the scan: an owner that registers after the scan read its slot finds
        // `u64::MAX` (or the later time stored below) and wakes this thread if it sleeps past
        // its deadline (`TimedSlot::publish`).
        NEXT.store(u64::MAX, Ordering::SeqCst);
        // The heavy side of the slots' asymmetric fence (`TimedSlot`): an owner whose
        // registration this scan does not see sees `u64::MAX` after it.
        crate::control::heavy_fence();
        let mut owed = super::Reached::default();
        let slots_next = scan_slots(super::to_nanos(now), &mut owed);
        let generation = crate::control::fork::fork_generation();
        for d in due {
            match d {
                Due::Scope(w) => {
                    if let Some(s) = w.upgrade() {
                        owed.append(s.expire_by_timer());
                    }
                }
                Due::Owed(made_in, f) if made_in == generation => owed.hooks.push(f),
                Due::Owed(_, f) => std::mem::forget(f),
            }
        }
        if !owed.is_empty() {
            run_callbacks_elsewhere(owed);
        }
        t = lock();
        // With nothing registered, keep the time this thread was last asked to wake at if it
        // is still ahead: a scope made and dropped at once, or a private run that ended (a
        // `with_timeout` that finished), leaves nothing registered, and the next one, due
        // later, then needs no wake-up (no system call, no switch to this thread). It wakes at
        // that time once, finds nothing, and only then waits for a registration.
        let now = Instant::now();
        let next = [
            t.map.first_key_value().map(|(k, _)| k.0),
            slots_next.and_then(super::from_nanos),
            kept.filter(|&w| w > now),
            t.wake_at,
        ]
        .into_iter()
        .flatten()
        .min();
        t.wake_at = next;
        if next.is_some_and(|at| at <= now) {
            continue;
        }
        NEXT.store(next.map_or(u64::MAX, super::to_nanos), Ordering::SeqCst);
        t = match next {
            Some(at) => {
                let d = at.saturating_duration_since(now);
                WAKE.wait_timeout(t, d)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => WAKE.wait(t).unwrap_or_else(PoisonError::into_inner),
        };
    }
}
