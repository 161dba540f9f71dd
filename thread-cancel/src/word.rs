//! The cancellation state word: one `AtomicU32` per thread, every transition one atomic operation.
//!
//! The home of the word: its bits, its transitions and the argument for each invariant
//! (ARCHITECTURE.md links here and does not copy them). Bits:
//!
//! | bit | name | set by | cleared by |
//! |---|---|---|---|
//! | 0 | `DISABLED` | owner | owner (never after `CANCELING`/`EXITING`) |
//! | 1 | `ASYNC` | owner | owner |
//! | 2 | `PENDING` | any thread (`request`) | never |
//! | 3 | `CANCELING` | owner, when it acts on a request | never |
//! | 4 | `EXITING` | owner, in `exit()` | never |
//! | 5 | `SCOPE_UNWIND` | owner, when it acts on a scope request | owner, at the `run` that catches it |
//! | 6 | `ROOT` | owner, when the unwind reached the thread's root | never |
//! | 7 | `FINISHED` | owner, last thing it does | never |
//! | 8 | `SCOPE` | any thread (`scope_request`), while the owner runs the canceled scope | owner, when a `run` ends |
//! | 9 | `SET_DISABLED` | owner, when the program disables (`set_state`) | owner, when it enables |
//!
//! Invariants:
//!
//! - **I1 (ownership)**: only the owner thread changes any bit but `PENDING` and `SCOPE`; other
//!   threads only `fetch_or` those two. Owner transitions are `fetch_or`/`fetch_and` on their
//!   own bits, so a concurrent request is never lost, and no CAS loop is needed.
//! - **I2 (monotonic)**: `PENDING`, `CANCELING`, `EXITING`, `ROOT` and `FINISHED` are never
//!   cleared. Several requests are one request.
//! - **I3 (act once)**: `CANCELING` and `EXITING` are set together with `DISABLED`, and a thread
//!   with either bit never acts on a request again.
//! - **I4 (no such thread)**: a request that observes `FINISHED` fails; one that does not was
//!   queued before the owner's final transition.
//! - **I5 (fast path)**: a cancellation point with nothing to do sees `word & SLOW == 0` and does
//!   nothing else; the trampoline's whole test is `word & (BLOCK | REQUEST) == 0`.
//! - **I6 (a scope request stays in its run)**: a canceler sets `SCOPE` only while the owner is
//!   registered in a `run` of the canceled scope, and only inside a *delivery* the owner can
//!   wait for (`ScopeRuns::deliveries`). A `run` that ends deregisters, waits until no
//!   delivery is under way, and then clears `SCOPE` (setting it again if an enclosing run's
//!   scope is canceled): after `run` returns, no request of its scope is left in the word, and
//!   no signal of one is still on its way.
//! - **I8 (the state as set)**: `SET_DISABLED` is the state the thread last set, which acting
//!   on a request, `exit()` and the root do not change (they set `DISABLED` only): the C ABI's
//!   `pthread_setcancelstate` reports it as the old state, as glibc, which marks a thread as
//!   exiting without changing its visible state. Nothing decides on it (it is in no mask).
//! - **I7 (the thread cancel wins)**: a point decides a thread request before a scope request
//!   (`classify`), and `SCOPE_UNWIND` never hides `PENDING`: a scope's unwind in progress ends
//!   at its `run`, and the next point acts on the thread's request.

use crate::atomic::{AtomicU32, Ordering};

pub(crate) const DISABLED: u32 = 1 << 0;
pub(crate) const ASYNC: u32 = 1 << 1;
pub(crate) const PENDING: u32 = 1 << 2;
pub(crate) const CANCELING: u32 = 1 << 3;
pub(crate) const EXITING: u32 = 1 << 4;
pub(crate) const SCOPE_UNWIND: u32 = 1 << 5;
pub(crate) const ROOT: u32 = 1 << 6;
pub(crate) const FINISHED: u32 = 1 << 7;
pub(crate) const SCOPE: u32 = 1 << 8;
pub(crate) const SET_DISABLED: u32 = 1 << 9;

/// A request to act on: the thread's own (`PENDING`) or a scope's (`SCOPE`).
pub(crate) const REQUEST: u32 = PENDING | SCOPE;
/// Bits that keep a request from being acted on: disabled, already unwinding, at the root.
pub(crate) const BLOCK: u32 = DISABLED | CANCELING | EXITING | SCOPE_UNWIND | ROOT;

/// Bits that make a cancellation point leave its fast path.
pub(crate) const SLOW: u32 = REQUEST | CANCELING | EXITING | SCOPE_UNWIND;
/// The thread is acting on a cancellation or an exit (its unwind has begun).
pub(crate) const TERMINATING: u32 = CANCELING | EXITING;
/// An unwind of ours has begun and has not reached its end: the thread's termination, or a
/// scope's. All these bits are below `ROOT` (the trampoline's test relies on it).
pub(crate) const UNWINDING: u32 = TERMINATING | SCOPE_UNWIND;
const _: () = assert!(UNWINDING < ROOT);

/// Whether a point, the trampoline or the signal handler acts on a request in word `s`: one is
/// pending and nothing blocks it (the test the trampoline and the signal handler make).
#[inline(always)]
pub(crate) const fn acts(s: u32) -> bool {
    s & BLOCK == 0 && s & REQUEST != 0
}

/// What the system-call trampoline decides from word `s` (the assembly of each architecture
/// encodes this test; the portable layer calls it): a request that nothing blocks, or an
/// unwind under way that has not reached the thread's root (a cancellation that `catch_unwind`
/// swallowed: it is raised again).
#[inline(always)]
#[cfg_attr(
    all(
        any(target_os = "linux", target_os = "android"),
        not(thread_cancel_portable)
    ),
    allow(dead_code)
)]
pub(crate) const fn trampoline_acts(s: u32) -> bool {
    if s & (BLOCK | REQUEST) == 0 {
        return false;
    }
    if s & BLOCK == 0 {
        return true;
    }
    let u = s & (UNWINDING | ROOT);
    u != 0 && u < ROOT
}

/// Whether the thread's own request (not a scope's) is acted on in word `s` (C points).
#[inline(always)]
#[cfg(feature = "c-abi")]
pub(crate) const fn thread_acts(s: u32) -> bool {
    s & BLOCK == 0 && s & PENDING != 0
}

/// What a cancellation point must do, decided from one load of the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Nothing: carry on.
    None,
    /// Act on the pending request now (start the cancellation unwind).
    Act,
    /// The thread is already terminating but its unwind was swallowed (`catch_unwind`):
    /// raise it again.
    Resume,
    /// Act on a scope's request: unwind to the outermost canceled scope's `run`.
    ActScope,
    /// A scope's unwind was swallowed (`catch_unwind`): raise it again.
    ResumeScope,
}

/// Result of [`StateWord::request`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    /// The request was queued; `prev` is the word just before.
    Queued { prev: u32 },
    /// A request was already pending; this one merges with it.
    Merged,
    /// The thread has finished: there is no such thread.
    Finished,
}

/// The per-thread state word.
#[derive(Debug)]
pub(crate) struct StateWord(AtomicU32);

impl StateWord {
    /// ENABLED + DEFERRED, nothing pending: a new thread's word.
    pub(crate) fn new() -> Self {
        Self(AtomicU32::new(0))
    }

    /// A word for a thread that has already gone (used when a thread is torn down).
    pub(crate) fn finished() -> Self {
        Self(AtomicU32::new(FINISHED | ROOT | DISABLED))
    }

    /// The word's address, for the system-call trampoline (which reads it in assembly).
    #[cfg(not(loom))]
    pub(crate) fn as_ptr(&self) -> *const u32 {
        self.0.as_ptr()
    }

    #[inline(always)]
    pub(crate) fn load(&self) -> u32 {
        self.0.load(Ordering::Acquire)
    }

    /// Any thread: queue a cancellation request. One `fetch_or`.
    pub(crate) fn request(&self) -> Request {
        // SeqCst: pairs with the owner's SeqCst store of `in_syscall` (`control/mod.rs`).
        let prev = self.0.fetch_or(PENDING, Ordering::SeqCst);
        if prev & FINISHED != 0 {
            Request::Finished
        } else if prev & PENDING != 0 {
            Request::Merged
        } else {
            Request::Queued { prev }
        }
    }

    /// Owner: set or clear `DISABLED`; returns whether it was set. Once the thread acts on a
    /// cancellation it stays disabled (I3): enabling then has no effect.
    pub(crate) fn set_disabled(&self, disabled: bool) -> bool {
        let prev = if disabled {
            self.0.fetch_or(DISABLED, Ordering::AcqRel)
        } else if self.load() & TERMINATING != 0 {
            self.load()
        } else {
            self.0.fetch_and(!DISABLED, Ordering::AcqRel)
        };
        prev & DISABLED != 0
    }

    /// Owner: the program sets its cancel state (`set_cancel_state`, `pthread_setcancelstate`):
    /// `DISABLED` as [`set_disabled`](Self::set_disabled) (enabling once the thread acts has no
    /// effect, I3), and `SET_DISABLED` always (I8). Returns whether each was set. (The
    /// library's own holds, disabled for the length of a call and restored, use `set_disabled`
    /// alone: they leave the state the program set as it is.)
    pub(crate) fn set_state(&self, disabled: bool) -> (bool, bool) {
        let was = self.set_disabled(disabled);
        let prev = if disabled {
            self.0.fetch_or(SET_DISABLED, Ordering::AcqRel)
        } else {
            self.0.fetch_and(!SET_DISABLED, Ordering::AcqRel)
        };
        (was, prev & SET_DISABLED != 0)
    }

    /// Owner: set or clear `ASYNC`; returns whether it was set.
    pub(crate) fn set_async(&self, asynchronous: bool) -> bool {
        let prev = if asynchronous {
            self.0.fetch_or(ASYNC, Ordering::AcqRel)
        } else {
            self.0.fetch_and(!ASYNC, Ordering::AcqRel)
        };
        prev & ASYNC != 0
    }

    /// Owner: start acting on a request, disabled from now on. Returns the previous word.
    pub(crate) fn begin_cancel(&self) -> u32 {
        self.0.fetch_or(CANCELING | DISABLED, Ordering::AcqRel)
    }

    /// Any thread, while the owner is registered in a `run` of a scope it cancels (I6): queue
    /// a scope request. Returns the previous word (the caller wakes the owner if `SCOPE` was
    /// not set yet).
    pub(crate) fn scope_request(&self) -> u32 {
        // SeqCst: pairs with the owner's store of `in_syscall`, as `request`.
        self.0.fetch_or(SCOPE, Ordering::SeqCst)
    }

    /// Owner: drop the scope request (a `run` ends; I6). Returns the previous word.
    pub(crate) fn clear_scope_request(&self) -> u32 {
        self.0.fetch_and(!SCOPE, Ordering::SeqCst)
    }

    /// Owner: start acting on a scope request (its unwind). Returns the previous word.
    pub(crate) fn begin_scope_unwind(&self) -> u32 {
        self.0.fetch_or(SCOPE_UNWIND, Ordering::AcqRel)
    }

    /// Owner: a scope's unwind reached its `run`.
    pub(crate) fn end_scope_unwind(&self) -> u32 {
        self.0.fetch_and(!SCOPE_UNWIND, Ordering::AcqRel)
    }

    /// Owner: start `exit()`. Returns the previous word.
    pub(crate) fn begin_exit(&self) -> u32 {
        self.0.fetch_or(EXITING | DISABLED, Ordering::AcqRel)
    }

    /// Owner: the unwind reached the thread's root; destructors run from here on, and no
    /// cancellation point acts or resumes any more.
    pub(crate) fn enter_root(&self) -> u32 {
        self.0.fetch_or(ROOT | DISABLED, Ordering::AcqRel)
    }

    /// Owner: the thread is gone; later requests fail. Returns the previous word.
    pub(crate) fn finish(&self) -> u32 {
        self.0
            .fetch_or(FINISHED | ROOT | DISABLED, Ordering::AcqRel)
    }
}

/// The decision of a cancellation point for the word `s` (pure; the slow path of I5).
#[inline]
pub(crate) fn classify(s: u32) -> Action {
    if s & SLOW == 0 || s & ROOT != 0 {
        Action::None
    } else if s & TERMINATING != 0 {
        Action::Resume
    } else if s & SCOPE_UNWIND != 0 {
        Action::ResumeScope
    } else if s & DISABLED != 0 {
        Action::None
    } else if s & PENDING != 0 {
        Action::Act
    } else {
        Action::ActScope
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! Model checks of the state machine: cancel vs set_cancel_state vs testcancel vs exit.
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// The owner's view of a cancellation point: act (and record it) if the word says so.
    /// Returns whether it acted and the word it saw.
    fn point_seen(w: &StateWord) -> (bool, u32) {
        let s = w.load();
        if classify(s) == Action::Act {
            assert_eq!(s & DISABLED, 0, "acted while disabled");
            let prev = w.begin_cancel();
            assert_eq!(prev & TERMINATING, 0, "acted twice");
            (true, s)
        } else {
            (false, s)
        }
    }

    fn point(w: &StateWord) -> bool {
        point_seen(w).0
    }

    #[test]
    fn loom_cancel_vs_disabled_region_vs_exit() {
        loom::model(|| {
            let w = Arc::new(StateWord::new());
            let w2 = w.clone();
            let canceler = thread::spawn(move || w2.request());
            // Owner: a disabled region with a point inside, enable, a point, finish.
            assert!(!w.set_disabled(true));
            assert!(!point(&w), "a disabled point acted");
            w.set_disabled(false);
            let (acted, seen) = point_seen(&w);
            w.enter_root();
            w.finish();
            let r = canceler.join().unwrap();
            // The enabled point acts exactly when it saw the request.
            assert_eq!(acted, seen & PENDING != 0);
            match r {
                // Queued before the owner finished: acted on, unless it landed after the point.
                Request::Queued { prev } => assert_eq!(prev & FINISHED, 0),
                Request::Merged => unreachable!("only one request was made"),
                // Refused: the owner had finished, so it cannot have acted on it.
                Request::Finished => assert!(!acted),
            }
        });
    }

    #[test]
    fn loom_two_requests_count_as_one() {
        loom::model(|| {
            let w = Arc::new(StateWord::new());
            w.set_disabled(true);
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let w = w.clone();
                    thread::spawn(move || w.request())
                })
                .collect();
            let rs: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
            let queued = rs
                .iter()
                .filter(|r| matches!(r, Request::Queued { .. }))
                .count();
            assert_eq!(queued, 1);
            assert!(rs.contains(&Request::Merged));
            assert!(!point(&w));
            w.set_disabled(false);
            assert!(point(&w));
            // R19: once acting, it never acts again, even if enabled again.
            w.set_disabled(false);
            assert_eq!(classify(w.load()), Action::Resume);
        });
    }

    #[test]
    fn loom_exit_races_cancel() {
        loom::model(|| {
            let w = Arc::new(StateWord::new());
            let w2 = w.clone();
            let canceler = thread::spawn(move || w2.request());
            let prev = w.begin_exit();
            // Whether or not the request arrived, an exiting thread never acts on it.
            assert_eq!(prev & TERMINATING, 0);
            assert_ne!(classify(w.load()), Action::Act);
            w.enter_root();
            assert_eq!(classify(w.load()), Action::None);
            w.finish();
            let r = canceler.join().unwrap();
            assert_ne!(r, Request::Merged);
            assert_eq!(classify(w.load()), Action::None);
        });
    }
}
