//! The process-wide deadline timer: one thread that cancels scopes whose deadline passed.
//!
//! A scope with a deadline registers `(deadline, key) -> Weak<scope>` here when it is made and
//! removes it when it is dropped (one short lock each; no system call: the timer thread is
//! woken only when a new deadline is earlier than the time it sleeps until, which it keeps
//! after the registration that set it is removed; started once).
//! The thread sleeps until the earliest registered deadline, then cancels every scope whose
//! deadline passed. It exists for threads blocked where only a request can reach them (a
//! system call): a thread in one of the crate's own waits bounds its sleep by its innermost
//! deadline and cancels the scope itself (`cancel_scope::expire`), without this thread.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, Weak};
use std::time::Instant;

use crate::cancel_scope::Inner;

pub(crate) struct Timer {
    /// Registered deadlines, earliest first.
    map: BTreeMap<(Instant, u64), Weak<Inner>>,
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
    let mut t = lock();
    let key = t.next_key;
    t.next_key += 1;
    t.map.insert((at, key), scope);
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
        WAKE.notify_one();
    }
    Key(at, key)
}

/// Removes a registration (the scope is dropped).
pub(crate) fn unregister(key: &Key) {
    lock().map.remove(&(key.0, key.1));
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
        if !due.is_empty() {
            drop(t);
            let mut owed = super::Reached::default();
            for s in due.into_iter().filter_map(|w| w.upgrade()) {
                owed.append(s.expire_by_timer());
            }
            if !owed.is_empty() {
                run_callbacks_elsewhere(owed);
            }
            t = lock();
            continue;
        }
        // With nothing registered, keep the time this thread was last asked to wake at if it
        // is still ahead: a scope made and dropped at once (a `with_timeout` that finished)
        // leaves the map empty, and the next one, due later, then needs no wake-up (no system
        // call, no switch to this thread). It wakes at that time once, finds nothing, and only
        // then waits for a registration.
        let next = match (t.map.first_key_value(), t.wake_at) {
            (Some((k, _)), _) => Some(k.0),
            (None, Some(w)) if w > now => Some(w),
            (None, _) => None,
        };
        t.wake_at = next;
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
