//! The control block's part for `CancelScope` runs: which runs of which scopes the thread is
//! in, read by the cancelers of a scope. Only `cancel_scope` reads or writes it; it lives in
//! the block because a canceler reaches a thread through its block. Its protocol (invariant
//! I6, `word.rs`) is argued in `cancel_scope/mod.rs`.

use super::lock;
use crate::atomic::{fence, yield_now, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// `CancelScope::run`s nested deeper than this are registered under a lock.
pub(crate) const RUN_SLOTS: usize = 8;

/// A thread's registration in the runs of scopes.
#[derive(Debug)]
pub(crate) struct ScopeRuns {
    /// Owner: the scopes of the `CancelScope::run`s the thread is in, by nesting depth (the
    /// address of each scope's shared state; 0 for none), read by cancelers (invariant I6).
    /// Depths from [`RUN_SLOTS`] on are in `deep`.
    pub(crate) slots: [AtomicUsize; RUN_SLOTS],
    pub(crate) deep: Mutex<Vec<usize>>,
    /// How many scope cancels are delivering to this thread right now (each one counts
    /// itself before reading `slots`); a `run` that ends waits for zero (I6).
    pub(crate) deliveries: AtomicU32,
    /// Non-zero while `on_cancel` callbacks of this thread's runs are owed: taken by a scope's
    /// delivery (counted during the delivery, which the run's end waits for) and not yet run,
    /// or handed to the end of a run (`Callbacks::deferred`). A run's end reads it after its
    /// fence and, if non-zero, runs or waits for the ones of its depth
    /// (`Control::wait_for_callbacks`): a callback a cancel decided to run has run to its end
    /// before the run returns. Changed under the callbacks' lock; a hint, made exact there.
    pub(crate) callbacks_running: AtomicU32,
    /// Owner: whether the thread is in the registry of threads that run scopes.
    pub(crate) registered: AtomicBool,
    /// How many interposed calls of the thread have failed because of a cancel (feature
    /// `interpose`): the diagnostic tells a thread that keeps making them (a retry loop that
    /// ignores the error spins: every call fails at once) from one that makes none.
    pub(crate) failed_calls: std::sync::atomic::AtomicU64,
    /// Set by a scope's delivery before it sends the cancel signal; a run's end that finds it
    /// set (after waiting for the deliveries) takes back what may still be pending. Without it
    /// the common case, a thread woken from a wait, costs no system call at the end of its run.
    pub(crate) signaled: AtomicBool,
    /// Who the thread is, for the diagnostic of cancels not acted on (recorded at its first
    /// run, only if the diagnostic is on).
    pub(crate) identity: Identity,
    /// The deadline of the thread's private deadline run (`with_timeout`), for the deadline
    /// timer: registered here, not in the timer's locked map.
    pub(crate) timed: TimedSlot,
}

/// A private deadline run's registration with the deadline timer: the address of its scope
/// and its deadline, written by the owner thread only, read by the timer thread, which claims
/// the slot (`busy`) while it cancels the scope. The owner's `withdraw` waits for such a claim
/// to end, so the scope (on the owner's stack) outlives every use the timer makes of it.
///
/// Both pairings (the owner's registration against the timer's wake-up time, its withdrawal
/// against the timer's claim) are store-then-load on each side, with an asymmetric fence: the
/// owner — every `with_timeout`, the fast path — makes a compiler fence only, and the timer —
/// once per wake-up, and once per deadline that passed — runs `membarrier`, which makes every
/// running thread of the process execute a full barrier ([`heavy_fence`]). Without
/// `membarrier` both sides make a real fence ([`light_fence`] with `asymmetric` false).
#[derive(Debug, Default)]
pub(crate) struct TimedSlot {
    /// The scope's address (0: none). Written by the owner only.
    scope: AtomicUsize,
    /// Its deadline (nanoseconds on the scopes' clock), stored before `scope`.
    at: AtomicU64,
    /// Set by the timer while it acts on the scope: the owner's withdrawal waits until it is
    /// clear again.
    busy: AtomicBool,
}

/// The owner's side of an asymmetric fence, between its store and its load: the timer's (see
/// [`TimedSlot`]) and the deliveries' (see [`ScopeRuns::leave`]). A compiler fence where the
/// process registered for `membarrier` (`asymmetric`: the thread's copy of
/// `sys::fence_asymmetric()`), a real one otherwise.
#[inline(always)]
fn light_fence(asymmetric: bool) {
    #[cfg(not(loom))]
    if asymmetric {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        return;
    }
    let _ = asymmetric;
    fence(Ordering::SeqCst);
}

/// The other side of the asymmetric fence, made by the timer and by a scope cancel's
/// deliveries between their store and their load: a real fence, and `membarrier` where the
/// process registered for it (then every thread running now executes a full barrier: an
/// owner's store before it is seen after it, and an owner's load after it sees what was stored
/// before). An owner uses the compiler fence only if the process had registered before its
/// block was linked, and the caller reads the registration after taking the registry's lock
/// that the owner's first run took after that (`scoped_threads`), or after acquiring the
/// owner's claim of the scope (whose block it then reads).
pub(crate) fn heavy_fence() {
    fence(Ordering::SeqCst);
    #[cfg(not(loom))]
    crate::sys::membarrier();
}

/// What the timer finds in a thread's [`TimedSlot`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Timed {
    /// Nothing registered.
    Nothing,
    /// A deadline still ahead.
    Ahead(u64),
    /// A deadline that passed: the slot is claimed; the timer cancels the scope at this
    /// address, then calls [`TimedSlot::release`].
    Due(usize),
}

impl TimedSlot {
    /// Owner: whether a run of the thread holds the slot (a private run nested in another
    /// registers with the timer's map instead).
    #[inline(always)]
    pub(crate) fn in_use(&self) -> bool {
        self.scope.load(Ordering::Relaxed) != 0
    }

    /// Owner: registers the scope at `scope` with deadline `at`, then the light side of the
    /// fence: the caller then reads the time the timer wakes at, against the timer's store of
    /// that time before its scan of the slots (and its heavy fence): either the scan sees this
    /// registration, or this sees the time the timer set before it and wakes it if that is
    /// later than `at`. The store releases the registration (and the run's registration in
    /// the thread's slots, made before) to the timer's claim, which acquires it.
    #[inline(always)]
    pub(crate) fn publish(&self, scope: usize, at: u64, asymmetric: bool) {
        debug_assert!(scope != 0);
        self.at.store(at, Ordering::Relaxed);
        self.scope.store(scope, Ordering::Release);
        light_fence(asymmetric);
    }

    /// Owner, after the run ended: withdraws the registration, then (light fence) waits while
    /// the timer has claimed it; it stops using the scope before it clears `busy`. Paired with
    /// the claim (`busy`, heavy fence, then the read of `scope`): either the timer sees the
    /// slot withdrawn, or this sees its claim. `orphaned` says that the claimer is gone (a
    /// forked child: the parent's timer thread does not exist here).
    #[inline(always)]
    pub(crate) fn withdraw(&self, asymmetric: bool, orphaned: impl Fn() -> bool) {
        self.scope.store(0, Ordering::Relaxed);
        light_fence(asymmetric);
        while self.busy.load(Ordering::Acquire) {
            if orphaned() {
                self.busy.store(false, Ordering::Relaxed);
                return;
            }
            yield_now();
        }
    }

    /// Timer: what the slot holds at time `now`; a deadline that passed is claimed (after its
    /// caller's [`heavy_fence`] of the scan, which orders this read of the slot after its
    /// store of the wake-up time).
    pub(crate) fn claim_due(&self, now: u64) -> Timed {
        let v = self.scope.load(Ordering::Acquire);
        if v == 0 {
            return Timed::Nothing;
        }
        let at = self.at.load(Ordering::Relaxed);
        if at > now {
            return Timed::Ahead(at);
        }
        self.busy.store(true, Ordering::Relaxed);
        heavy_fence();
        // Read again after the claim's fence: the owner may have withdrawn (then it never
        // waits for this claim) or registered its next run at the same address (its stack
        // frame is reused; that one's deadline, stored before it, is the one that counts).
        let v = self.scope.load(Ordering::Acquire);
        let at = self.at.load(Ordering::Relaxed);
        if v == 0 {
            self.release();
            return Timed::Nothing;
        }
        if at > now {
            self.release();
            return Timed::Ahead(at);
        }
        Timed::Due(v)
    }

    /// Timer, after canceling a claimed scope (or finding it gone): the owner's `withdraw`
    /// stops waiting.
    pub(crate) fn release(&self) {
        self.busy.store(false, Ordering::Release);
    }
}

/// What the diagnostic of cancels not acted on (`cancel_scope::diagnostic`) knows of a thread.
#[derive(Debug, Default)]
pub(crate) struct Identity {
    /// The kernel's thread id (0: unknown).
    pub(crate) tid: std::sync::atomic::AtomicI32,
    /// The thread's name at its first run.
    pub(crate) name: std::sync::OnceLock<Box<str>>,
}

impl Default for ScopeRuns {
    fn default() -> Self {
        Self {
            slots: std::array::from_fn(|_| AtomicUsize::new(0)),
            deep: Mutex::new(Vec::new()),
            deliveries: AtomicU32::new(0),
            callbacks_running: AtomicU32::new(0),
            registered: AtomicBool::new(false),
            failed_calls: std::sync::atomic::AtomicU64::new(0),
            signaled: AtomicBool::new(false),
            identity: Identity::default(),
            timed: TimedSlot::default(),
        }
    }
}

// The protocol of invariant I6, both sides. The loom model of `word.rs`
// (`loom_scope_cancel_races_the_end_of_run`) calls these functions in the order `CancelScope::run`
// and `cancel_scope::deliver` call them: a change of that order there changes the model too.
impl ScopeRuns {
    /// Owner, entering a run of scope `id` at `depth`: registers it. No fence: the caller's
    /// next step orders it for the cancelers of the scope (`CancelScope::run`'s claim of the
    /// scope, a private run's publication for the timer), which read the registration only
    /// after synchronizing with that step (or make the run see their mark).
    #[inline(always)]
    pub(crate) fn enter(&self, depth: usize, id: usize) {
        match self.slots.get(depth) {
            Some(slot) => slot.store(id, Ordering::Relaxed),
            None => lock(&self.deep).push(id),
        }
    }

    /// Owner, ending that run: unregisters it, then the light side of an asymmetric fence
    /// (`asymmetric`: the thread's copy of `sys::fence_asymmetric()`), whose heavy side the
    /// deliveries make between their [`count_in`](Self::count_in) and their read of the slots
    /// (`cancel_scope::deliver`). The caller then waits for the runner's deliveries (if it held
    /// its scope's runner slot), then calls [`settle`](Self::settle): afterwards no delivery can
    /// reach the run.
    ///
    /// Why the light side suffices: the heavy side is a real fence and `membarrier`, which makes
    /// every thread of the process that runs at that moment execute a full barrier (a thread
    /// that is not running has passed one, its context switch). Let B be this thread's barrier
    /// point during a canceler's `membarrier`. If the slot's clearing came before B, the
    /// canceler's read after `membarrier` sees it cleared and delivers nothing; if after, this
    /// thread's reads that follow it come after B, hence after the canceler's count, and it
    /// waits. Only a thread linked after the process registered for `membarrier` takes the light
    /// side (its flag says so); every other keeps a real fence, as a canceler without
    /// `membarrier` does.
    #[inline(always)]
    pub(crate) fn leave(&self, depth: usize, id: usize, asymmetric: bool) {
        match self.slots.get(depth) {
            Some(slot) => {
                slot.store(0, Ordering::Relaxed);
                light_fence(asymmetric);
            }
            None => self.leave_deep(id),
        }
    }

    #[cold]
    #[inline(never)]
    fn leave_deep(&self, id: usize) {
        let mut deep = lock(&self.deep);
        if let Some(i) = deep.iter().rposition(|&d| d == id) {
            deep.remove(i);
        }
        drop(deep);
        fence(Ordering::SeqCst);
    }

    /// Owner, after [`leave`](Self::leave) (and the wait for the runner's deliveries): waits
    /// until no delivery is under way. A delivery that counted itself in before the fence of
    /// `leave` is over; one after it sees the registration cleared.
    #[inline(always)]
    pub(crate) fn settle(&self) {
        if self.deliveries.load(Ordering::Acquire) != 0 {
            self.settle_slow();
        }
    }

    #[cold]
    #[inline(never)]
    fn settle_slow(&self) {
        while self.deliveries.load(Ordering::Acquire) != 0 {
            yield_now();
        }
    }

    /// Owner, entering a shield at `depth`: unregisters the runs outside it (every depth
    /// below), then (fence) waits until no delivery is under way, as [`leave`](Self::leave)
    /// does: afterwards no cancel of an outer run's scope reaches the thread. Returns their
    /// registrations, for [`unhide`](Self::unhide).
    pub(crate) fn hide_below(&self, depth: usize) -> Vec<usize> {
        let mut saved: Vec<usize> = self
            .slots
            .iter()
            .take(depth)
            .map(|s| s.swap(0, Ordering::Relaxed))
            .collect();
        if depth > RUN_SLOTS {
            saved.append(&mut lock(&self.deep));
        }
        fence(Ordering::SeqCst);
        while self.deliveries.load(Ordering::Acquire) != 0 {
            yield_now();
        }
        saved
    }

    /// Owner, leaving that shield: registers the outer runs again, then the fence (as
    /// [`enter`](Self::enter)); the caller then reads their scopes' states (a cancel that found
    /// them hidden is seen there).
    pub(crate) fn unhide(&self, saved: Vec<usize>) {
        for (depth, id) in saved.into_iter().enumerate() {
            match self.slots.get(depth) {
                Some(slot) => slot.store(id, Ordering::Relaxed),
                None => lock(&self.deep).push(id),
            }
        }
        fence(Ordering::SeqCst);
    }

    /// A delivery, first step: counts itself in (then, once for every thread it delivers to,
    /// [`heavy_fence`], then [`depth_of`](Self::depth_of), then [`count_out`](Self::count_out)).
    pub(crate) fn count_in(&self) {
        self.deliveries.fetch_add(1, Ordering::SeqCst);
    }

    /// A delivery, last step.
    pub(crate) fn count_out(&self) {
        self.deliveries.fetch_sub(1, Ordering::Release);
    }

    /// The depth of the outermost `run` of the scope `id` the thread is in, if any (a
    /// canceler's read, after its fence).
    pub(crate) fn depth_of(&self, id: usize) -> Option<usize> {
        self.slots
            .iter()
            .position(|r| r.load(Ordering::SeqCst) == id)
            .or_else(|| {
                let deep = lock(&self.deep);
                deep.iter().position(|&d| d == id).map(|i| RUN_SLOTS + i)
            })
    }
}

/// Model checks of invariant I6 and I7 on this protocol (`RUSTFLAGS="--cfg loom"`).
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::atomic::AtomicUsize;
    use crate::word::{classify, Action, StateWord, PENDING, SCOPE, SCOPE_UNWIND};
    use loom::sync::Arc;
    use loom::thread;

    /// A scope's run and a cancel of it, on the real registration ([`ScopeRuns`]) and the real
    /// word: the calls `CancelScope::run` (`register`, `leave`, `leave_slow`) and
    /// `cancel_scope::deliver` make, in their order, for one thread and one scope. `canceled`
    /// stands for the scope's own state (`SeqCst` store by `cancel`, load by `run`).
    struct ScopeModel {
        word: StateWord,
        runs: ScopeRuns,
        canceled: AtomicBool,
        /// The scope's `others`: the claim of a run that is not the scope's runner
        /// (`Inner::claim`), which orders the run's registration (no fence at entry).
        others: AtomicUsize,
    }

    const SCOPE_ID: usize = 1;

    impl ScopeModel {
        fn new() -> Self {
            Self {
                word: StateWord::new(),
                runs: ScopeRuns::default(),
                canceled: AtomicBool::new(false),
                others: AtomicUsize::new(0),
            }
        }

        /// `CancelScope::cancel` (the mark, a `SeqCst` read-modify-write), who runs the scope
        /// (`Inner::runs_of`: a read-modify-write of `others`), then `deliver` to the thread.
        fn cancel(&self) {
            self.canceled.swap(true, Ordering::SeqCst);
            if self
                .others
                .compare_exchange(0, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return;
            }
            self.runs.count_in();
            fence(Ordering::SeqCst);
            if self.runs.depth_of(SCOPE_ID).is_some() {
                self.word.scope_request();
            }
            self.runs.count_out();
        }

        /// A run's entry (`run_in`): the registration, then the claim (`SeqCst`), no fence.
        fn enter(&self, depth: usize) {
            self.runs.enter(depth, SCOPE_ID);
            self.others.fetch_add(1, Ordering::SeqCst);
        }

        /// `CancelScope::run` with one point inside: returns (started, acted on the scope).
        fn run(&self) -> (bool, bool) {
            self.enter(0);
            let started = !self.canceled.load(Ordering::SeqCst);
            let mut acted = false;
            if started {
                // The point inside `f`.
                let s = self.word.load();
                match classify(s) {
                    Action::ActScope => {
                        self.word.begin_scope_unwind();
                        acted = true;
                    }
                    Action::None => {}
                    a => panic!("unexpected {a:?}"),
                }
            }
            // `unclaim`, `leave` (under loom its light fence is a real one, as the heavy
            // side of the deliveries is a plain fence: the symmetric form), `settle`, then
            // `leave_slow`.
            self.others.fetch_sub(1, Ordering::Relaxed);
            self.runs.leave(0, SCOPE_ID, true);
            self.runs.settle();
            if acted {
                self.word.end_scope_unwind();
            }
            if self.word.load() & SCOPE != 0 {
                self.word.clear_scope_request();
            }
            (started, acted)
        }
    }

    /// I6 / C02: a scope cancel racing a run's entry, its point and its end. Whatever the
    /// interleaving, once `run` has returned the word holds no scope request and none can come
    /// (checked after the canceler finished too), and a run that acted saw the cancel.
    #[test]
    fn loom_scope_cancel_races_the_end_of_run() {
        loom::model(|| {
            let m = Arc::new(ScopeModel::new());
            let m2 = m.clone();
            let canceler = thread::spawn(move || m2.cancel());
            let (started, acted) = m.run();
            let after_run = m.word.load();
            assert_eq!(
                after_run & (SCOPE | SCOPE_UNWIND),
                0,
                "left behind: {after_run:#x}"
            );
            canceler.join().unwrap();
            let end = m.word.load();
            assert_eq!(
                end & (SCOPE | SCOPE_UNWIND),
                0,
                "arrived after run: {end:#x}"
            );
            assert!(!acted || started);
            // The point after the run does nothing.
            assert_eq!(classify(end), Action::None);
        });
    }

    /// Who runs a scope, as a cancel reads it to visit only those threads (`cancel_scope`:
    /// `Inner::{runner, others, delivering}`, `claim`, `release`, `deliver_to_runner`, and
    /// `propagate`). The run takes the runner's slot (or counts itself among the others),
    /// registers with the fence of [`ScopeRuns::enter`] and reads the scope's state; the
    /// cancel marks the state, fences, reads `others` and the slot, and delivers to the runner
    /// after counting itself in `delivering` and reading the slot again.
    struct Claims {
        m: ScopeModel,
        runner: AtomicUsize,
        others: AtomicUsize,
        delivering: AtomicUsize,
        /// The runner's block: true until the run has ended and given the slot back.
        alive: AtomicBool,
        /// A private run (`with_timeout`): the slot names the runner from the scope's making
        /// on and is never given back; its only canceler, the timer, holds the run's
        /// registration (`TimedSlot`), which keeps the block alive (not modelled here).
        private: bool,
    }

    impl Claims {
        fn new() -> Self {
            Self {
                m: ScopeModel::new(),
                runner: AtomicUsize::new(0),
                others: AtomicUsize::new(0),
                delivering: AtomicUsize::new(0),
                alive: AtomicBool::new(true),
                private: false,
            }
        }

        /// A private run's scope: its slot names the runner already.
        fn private() -> Self {
            let c = Self::new();
            c.runner.store(1, Ordering::Relaxed);
            Self { private: true, ..c }
        }

        /// The cancel: true if it delivered to no thread. The mark, then `runs_of`: `others`
        /// and the runner's slot read by read-modify-writes.
        fn cancel(&self) -> bool {
            self.m.canceled.swap(true, Ordering::SeqCst);
            assert_eq!(
                self.others
                    .compare_exchange(0, 0, Ordering::AcqRel, Ordering::Acquire)
                    .unwrap_or_else(|n| n),
                0,
                "no other run here"
            );
            if self
                .runner
                .compare_exchange(0, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return true;
            }
            self.delivering.fetch_add(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            // Taking a count of the block (`Arc::increment_strong_count`): it must still be
            // alive then; the count keeps it alive for the rest of the delivery.
            let held = self.runner.load(Ordering::Acquire) != 0;
            if held {
                assert!(
                    self.private || self.alive.load(Ordering::SeqCst),
                    "used the block of a run that ended"
                );
                // Counted in the thread's deliveries before `delivering` is given back: the
                // run's end waits for `delivering` before it reads `deliveries`, so one fence
                // (the heavy one) serves both.
                self.m.runs.count_in();
            }
            self.delivering.fetch_sub(1, Ordering::Release);
            if held {
                if self.m.runs.depth_of(SCOPE_ID).is_some() {
                    self.m.word.scope_request();
                }
                self.m.runs.count_out();
            }
            false
        }

        /// The run's entry (`run_in`): the registration, the claim (`SeqCst`; no fence), then
        /// the read of the state: whether it started.
        fn enter(&self) -> bool {
            self.m.runs.enter(0, SCOPE_ID);
            assert!(self
                .runner
                .compare_exchange(0, 1, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok());
            !self.m.canceled.load(Ordering::SeqCst)
        }

        /// The run's end: `unclaim`, `leave` (its fence), `unclaimed`, `settle`,
        /// `leave_slow`; the block may go after it.
        fn end(&self) {
            if !self.private {
                self.runner.store(0, Ordering::Relaxed);
            }
            self.m.runs.leave(0, SCOPE_ID, true);
            while self.delivering.load(Ordering::Relaxed) != 0 {
                thread::yield_now();
            }
            fence(Ordering::Acquire);
            self.m.runs.settle();
            if self.m.word.load() & SCOPE != 0 {
                self.m.word.clear_scope_request();
            }
            self.alive.store(false, Ordering::SeqCst);
        }
    }

    /// A cancel that skipped the delivery, or delivered to the runner alone, never leaves a
    /// run that started without its request: checked inside the run, after the cancel.
    #[test]
    fn loom_cancel_visits_only_the_threads_that_run_the_scope() {
        loom::model(|| {
            let c = Arc::new(Claims::new());
            let c2 = c.clone();
            let canceler = thread::spawn(move || c2.cancel());
            let started = c.enter();
            let skipped = canceler.join().unwrap();
            if started {
                assert!(!skipped, "the cancel skipped a run in progress");
                assert_eq!(classify(c.m.word.load()), Action::ActScope, "not delivered");
            }
            c.end();
        });
    }

    /// The runner's end racing a cancel that read the slot: the cancel never uses the block
    /// after the run ended (`alive`), and leaves no request behind in the word.
    #[test]
    fn loom_runner_end_races_a_cancel_reading_the_slot() {
        loom::model(|| {
            let c = Arc::new(Claims::new());
            c.enter();
            let c2 = c.clone();
            let canceler = thread::spawn(move || c2.cancel());
            c.end();
            let after = c.m.word.load();
            canceler.join().unwrap();
            assert_eq!(after & (SCOPE | SCOPE_UNWIND), 0, "left behind: {after:#x}");
            let end = c.m.word.load();
            assert_eq!(
                end & (SCOPE | SCOPE_UNWIND),
                0,
                "arrived after run: {end:#x}"
            );
        });
    }

    /// A private run's end racing its timer's delivery: the slot that names the runner is
    /// never given back, so only the run's registration tells the timer that the run is over.
    /// The run waits for `delivering` as a runner does, and no request is left behind.
    #[test]
    fn loom_private_run_end_races_the_timers_delivery() {
        loom::model(|| {
            let c = Arc::new(Claims::private());
            c.m.runs.enter(0, SCOPE_ID);
            let c2 = c.clone();
            let timer = thread::spawn(move || c2.cancel());
            c.end();
            let after = c.m.word.load();
            timer.join().unwrap();
            assert_eq!(after & (SCOPE | SCOPE_UNWIND), 0, "left behind: {after:#x}");
            let end = c.m.word.load();
            assert_eq!(
                end & (SCOPE | SCOPE_UNWIND),
                0,
                "arrived after run: {end:#x}"
            );
        });
    }

    /// The shield: an outer run's scope canceled while the thread enters a shield (inside
    /// that run), runs a point in it and leaves it — the calls `CancelScope::shield` makes
    /// (`hide_below`, clear the request; then `unhide`, read the scope, queue the request).
    /// Whatever the interleaving, no point inside the shield acts on the outer cancel, and
    /// once the shield has ended the request is queued (the cancel is never lost).
    #[test]
    fn loom_outer_cancel_races_a_shield() {
        loom::model(|| {
            let m = Arc::new(ScopeModel::new());
            m.enter(0); // the outer run
            let m2 = m.clone();
            let canceler = thread::spawn(move || m2.cancel());
            // Entering the shield at depth 1.
            let saved = m.runs.hide_below(1);
            if m.word.load() & SCOPE != 0 {
                m.word.clear_scope_request();
            }
            m.runs.enter(1, 2);
            // A point inside the shield sees only its own scope (never canceled here).
            assert_eq!(
                classify(m.word.load()),
                Action::None,
                "acted inside the shield"
            );
            // Leaving it.
            m.runs.leave(1, 2, true);
            m.runs.settle();
            m.runs.unhide(saved);
            if m.canceled.load(Ordering::SeqCst) && m.word.load() & SCOPE == 0 {
                m.word.scope_request();
            }
            canceler.join().unwrap();
            // After the canceler is done, the outer run's point acts.
            assert_eq!(
                classify(m.word.load()),
                Action::ActScope,
                "the cancel was lost"
            );
        });
    }

    /// I7: a thread cancel racing a scope cancel inside a run. The thread's request is never
    /// lost: if both are pending the point acts on the thread's; after the run the thread's
    /// request is still there to act on.
    /// The deadline timer's claim of a private run's slot races the owner's withdraw at the
    /// end of its run, and the owner's next run registered at the same address (its stack
    /// frame is reused): the timer never uses a scope after its run withdrew it, and never
    /// takes the next run, whose deadline is ahead, for the one that was due.
    #[test]
    fn loom_timer_claim_races_the_owner_withdraw_and_next_run() {
        loom::model(|| {
            let slot = Arc::new(TimedSlot::default());
            // Which run the address stands for (0: none; the scope is gone).
            let run = Arc::new(AtomicUsize::new(1));
            slot.publish(8, 5, false);
            let (s2, r2) = (slot.clone(), run.clone());
            let timer = thread::spawn(move || {
                // Time 10: the first run's deadline (5) passed, the second's (20) is ahead.
                if let Timed::Due(addr) = s2.claim_due(10) {
                    assert_eq!(addr, 8);
                    let r = r2.load(Ordering::Relaxed);
                    assert_ne!(r, 0, "the timer used a scope after its run withdrew it");
                    assert_eq!(r, 1, "the timer took the next run for the one due");
                    s2.release();
                }
            });
            slot.withdraw(false, || false);
            run.store(0, Ordering::Relaxed);
            run.store(2, Ordering::Relaxed);
            slot.publish(8, 20, false);
            slot.withdraw(false, || false);
            run.store(0, Ordering::Relaxed);
            timer.join().unwrap();
            assert!(!slot.in_use());
        });
    }

    #[test]
    fn loom_thread_cancel_races_a_scope_cancel() {
        loom::model(|| {
            let m = Arc::new(ScopeModel::new());
            m.enter(0);
            let (a, b) = (m.clone(), m.clone());
            let thread_canceler = thread::spawn(move || a.word.request());
            let scope_canceler = thread::spawn(move || b.cancel());
            let s = m.word.load();
            let decided = classify(s);
            if s & PENDING != 0 {
                assert_eq!(decided, Action::Act, "the scope request hid the thread's");
            }
            thread_canceler.join().unwrap();
            scope_canceler.join().unwrap();
            // The run ends (as `leave`): the thread's request survives it.
            m.runs.leave(0, SCOPE_ID, true);
            m.runs.settle();
            if m.word.load() & SCOPE != 0 {
                m.word.clear_scope_request();
            }
            let end = m.word.load();
            assert_ne!(end & PENDING, 0);
            assert_eq!(end & SCOPE, 0);
            assert_eq!(classify(end), Action::Act);
        });
    }
}
