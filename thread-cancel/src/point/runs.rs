//! The runs of `CancelScope`s in progress on the calling thread, as points see them: a stack
//! of frames (each on the stack of its `run`, linked from a thread-local), the scope unwind that
//! ends at the outermost canceled run, and the innermost deadline a wait bounds its sleep by.
//!
//! The scope itself (its state, its delivery to the threads in its runs, the deadline timer)
//! is `cancel_scope`'s, above the points: a frame reaches it through [`RunScope`].

use crate::control::Control;
use std::cell::Cell;
use std::time::Instant;

/// What a point needs of the scope of a run in progress (implemented by `cancel_scope`).
pub(crate) trait RunScope {
    /// Whether canceled, without looking at the clock.
    fn marked(&self) -> bool;
    /// Whether canceled; a deadline that passed cancels the scope now.
    fn is_canceled(&self) -> bool;
    /// The effective deadline: the scope's own, or its parent's if earlier.
    fn deadline(&self) -> Option<Instant>;
    /// Its deadline passed (seen by a wait): cancels the scope, timed out.
    fn expire(&self);
    /// Whether it was canceled by a deadline (its own or a parent's), not by a cancel (what
    /// an interposed call fails with).
    #[cfg_attr(not(thread_cancel_interpose), allow(dead_code))]
    fn timed_out(&self) -> bool;
    /// In the child of a `fork`, in the forking thread (then the only thread): forgets the
    /// cancels of the parent's other threads that were delivering to its run (they never end
    /// there).
    fn forget_parents_deliveries(&self);
}

/// How many runs the calling thread is in (`on_cancel` records it with a callback).
pub(crate) fn run_count() -> usize {
    let p = TOP.with(Cell::get);
    // SAFETY: see `any_frame`.
    unsafe { p.as_ref() }.map_or(0, |f| f.depth + 1)
}

/// The depth of the outermost of the calling thread's runs whose scope is canceled.
pub(crate) fn own_canceled_run_depth() -> Option<usize> {
    outermost_canceled()
}

/// A run in progress on this thread: a frame on its stack, linked from `TOP` (owner-only).
pub(crate) struct Frame {
    /// The run's scope, alive for the whole run.
    pub(crate) scope: *const dyn RunScope,
    pub(crate) parent: *const Frame,
    pub(crate) depth: usize,
    /// Whether something acted on a cancel of this run's scope without unwinding to it (an
    /// `on_cancel` callback of the run ran): the run reports the cancel as acted on.
    pub(crate) acted: Cell<bool>,
    /// A shield (`CancelScope::shield`): the runs outside it are out of sight of the points
    /// inside it (their cancels and deadlines are held until it ends).
    pub(crate) shield: bool,
}

impl Frame {
    /// The scope's address: its id in the control block's run registration.
    pub(crate) fn scope_id(&self) -> usize {
        self.scope.cast::<()>() as usize
    }
}

/// The innermost run in progress on this thread, or null.
#[inline(always)]
pub(crate) fn top() -> *const Frame {
    TOP.with(Cell::get)
}

/// Links `frame` as the innermost run (entering a run) or, with its parent, unlinks it.
#[inline(always)]
pub(crate) fn set_top(frame: *const Frame) {
    TOP.with(|t| t.set(frame));
}

/// The depth of the run that the scope unwind in progress ends at.
pub(crate) fn target() -> usize {
    TARGET.with(Cell::get)
}

/// Sets the depth the scope unwind in progress ends at (a shield puts back the one it held).
pub(crate) fn set_target(depth: usize) {
    TARGET.with(|t| t.set(depth));
}

thread_local! {
    /// The innermost run in progress on this thread, or null.
    static TOP: Cell<*const Frame> = const { Cell::new(std::ptr::null()) };
    /// The depth of the run that the scope unwind in progress ends at.
    static TARGET: Cell<usize> = const { Cell::new(0) };
}

/// Calls `f` on each run in progress on this thread that a point sees, innermost first, until
/// it returns true: up to the innermost shield (included); the runs outside it are held.
pub(crate) fn any_frame(mut f: impl FnMut(&Frame, &dyn RunScope) -> bool) -> bool {
    let mut p = TOP.with(Cell::get);
    while !p.is_null() {
        // SAFETY: `TOP` and the `parent` links point at frames of runs in progress on this
        // thread: each lives on the stack of its `run` until that run unlinks it (LIFO), and
        // each holds its scope alive (a clone of the `Arc` in the `run` call's `self`).
        let (fr, sc) = unsafe { (&*p, &*(*p).scope) };
        if f(fr, sc) {
            return true;
        }
        if fr.shield {
            break;
        }
        p = fr.parent;
    }
    false
}

/// Calls `f` on each run in progress on this thread, shields and the runs they hold included.
pub(crate) fn every_frame(mut f: impl FnMut(&dyn RunScope)) {
    let mut p = TOP.with(Cell::get);
    while !p.is_null() {
        // SAFETY: as in `any_frame`.
        let (fr, sc) = unsafe { (&*p, &*(*p).scope) };
        f(sc);
        p = fr.parent;
    }
}

/// The depth of the outermost run on this thread whose scope is canceled.
pub(crate) fn outermost_canceled() -> Option<usize> {
    let mut found = None;
    any_frame(|fr, sc| {
        if sc.marked() {
            found = Some(fr.depth);
        }
        false
    });
    found
}

/// Something acted on the cancel of the calling thread's canceled runs without unwinding (an
/// `on_cancel` callback registered in them ran): each of them reports it (`Canceled::acted`).
pub(crate) fn mark_acted() {
    any_frame(|fr, sc| {
        if sc.marked() {
            fr.acted.set(true);
        }
        false
    });
}

/// Acting on a scope request (`begin`) or raising a swallowed scope unwind again, up to the
/// unwind: marks it begun (`begin`), sets its target (the outermost run whose scope is
/// canceled), and returns the payload to unwind with ([`unwind`](super::unwind), in the
/// caller's frame: a frame more would cost both phases of the unwind). Called by a point that
/// decided `ActScope`/`ResumeScope` (never while panicking).
#[inline(never)]
#[cold]
pub(crate) fn scope_payload(c: &Control, begin: bool) -> Box<dyn std::any::Any + Send> {
    if begin {
        c.word.begin_scope_unwind();
    }
    let target = match outermost_canceled() {
        Some(d) if begin => d,
        Some(d) => d.min(TARGET.with(Cell::get)),
        None => TARGET.with(Cell::get),
    };
    TARGET.with(|t| t.set(target));
    Box::new(crate::control::ScopeUnwind::raised())
}

/// Whether a deadline of a run on this thread (that its points see) has passed. For the signal
/// handler (a deadline tick, `sys::arm_deadline_tick`): thread-locals with constant
/// initializers, the frames, atomic loads and the clock — async-signal-safe.
pub(crate) fn deadline_passed() -> bool {
    if TOP.with(Cell::get).is_null() {
        return false;
    }
    let now = Instant::now();
    any_frame(|_, sc| sc.deadline().is_some_and(|d| d <= now))
}

/// Cancels (times out) the scopes of this thread's runs whose deadline passed: a cancel
/// delivered here as to any thread (a scope request in the word). Normal context only.
#[cold]
pub(crate) fn expire_deadlines() {
    any_frame(|_, sc| {
        sc.expire();
        false
    });
}

/// For a wait: the earliest deadline of the runs in progress on this thread that its points
/// see (up to the innermost shield), if any. Read from the scopes each time: a deadline can be
/// moved while a run is in progress.
#[inline]
pub(crate) fn wait_deadline() -> Option<Instant> {
    if TOP.with(Cell::get).is_null() {
        return None;
    }
    let mut earliest: Option<Instant> = None;
    any_frame(|_, sc| {
        if let Some(d) = sc.deadline() {
            earliest = Some(earliest.map_or(d, |e| e.min(d)));
        }
        false
    });
    earliest
}

/// For a wait whose scope deadline passed: cancels (times out) every scope of this thread's
/// runs whose deadline passed.
pub(crate) fn expire() {
    let now = Instant::now();
    any_frame(|_, sc| {
        if sc.deadline().is_some_and(|d| now >= d) {
            sc.expire();
        }
        false
    });
}

/// For the C ABI (`c_abi`): begins acting on a scope request in C code without raising yet.
/// There the unwind starts as a forced unwind of the C frames up to the scope's C region, and
/// only then is raised in Rust ([`raise_scope`], `begin == false`): the word says it has begun
/// from now on (so no point in a cleanup handler acts meanwhile), and its target is recorded
/// now, as [`raise_scope`] does when it begins.
#[cfg(feature = "c-abi")]
pub(crate) fn begin_scope_unwind_in_c(c: &Control) {
    c.word.begin_scope_unwind();
    if let Some(d) = outermost_canceled() {
        TARGET.with(|t| t.set(d));
    }
}
