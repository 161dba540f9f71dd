//! The owner's side of a scope: [`CancelScope::run`], its registration in the thread's control
//! block and its end (invariant I6).

use super::*;
use delivery::register_thread;
use private::Private;
use std::cell::Cell;

impl CancelScope {
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
    /// - In a `Drop` that runs during an unwind (a panic's, a cancel's), a cancellation point
    ///   cannot act: a second unwind may not leave a destructor. A cancel or deadline of a run
    ///   there is not enforced by the crate's own points, and is reported as missed
    ///   ([`Canceled::acted`] false, the value kept). With the feature `interpose`, the C
    ///   library's blocking calls still act there, by an error.
    ///
    /// The thread needs no set-up: any thread (spawned by this crate, `std`, the main thread,
    /// a pool's) can run a scope.
    ///
    /// # Errors
    /// [`Canceled`] if the scope was canceled (by [`cancel`](Self::cancel), by a parent's
    /// cancel, or by its deadline: then [`Canceled::deadline_passed`] is true) before the run
    /// ended. A run never hides a cancel, and never reports completed work as undone:
    /// - canceled when `run` was entered: `f` did not start ([`Canceled::into_value`] is
    ///   `None`);
    /// - `f` was stopped at a cancellation point: the stack between that point and `run` was
    ///   unwound (`None`);
    /// - `f` returned: its value is kept (`Some`). [`Canceled::acted`] then tells whether
    ///   anything acted on the cancel (a point whose unwind `f` caught, an
    ///   [`on_cancel`](crate::on_cancel) callback of the run that ran, a callback registered on
    ///   the scope that fired while the run was in progress) or whether it was
    ///   missed: `f` met no cancellation point after the cancel.
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
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> Result<R, Canceled<R>> {
        self.run_as(f, false, true)
    }

    /// Runs `f` in this scope as [`run`](Self::run) does, shielded from every enclosing run:
    /// their cancels and deadlines are held while `f` runs (they act at the first cancellation
    /// point after the shield), while this scope's own cancel and deadline, and those of runs
    /// nested inside `f`, still act. It is how cleanup does I/O inside a canceled operation,
    /// bounded by a deadline of its own: `CancelScope::with_timeout(d).shield(|| rollback())`.
    ///
    /// A cancellation of the thread itself is not held by a shield (only
    /// [`disable`](crate::disable) holds it), and `disable` holds everything, the shield's own
    /// deadline included. While the thread unwinds (a shield in a `Drop` run by a cancel's
    /// unwind), no cancellation point can act by unwinding: the shield's deadline then bounds
    /// only waits that end by themselves.
    ///
    /// # Errors
    /// As [`run`](Self::run), for this scope's cancel or deadline only.
    ///
    /// # Panics
    /// As [`run`](Self::run).
    ///
    /// ```
    /// use std::time::Duration;
    /// use thread_cancel::CancelScope;
    ///
    /// let op = CancelScope::new();
    /// let r = op.run(|| {
    ///     op.cancel(); // the operation is canceled ...
    ///     // ... but its cleanup still sleeps (a cancellation point), bounded by its own deadline
    ///     let cleanup = CancelScope::with_timeout(Duration::from_millis(20))
    ///         .shield(|| thread_cancel::sleep(Duration::from_millis(5)));
    ///     assert!(cleanup.is_ok());
    ///     thread_cancel::testcancel(); // after the shield, the held cancel acts
    ///     unreachable!()
    /// });
    /// assert!(r.unwrap_err().acted());
    /// ```
    pub fn shield<R>(&self, f: impl FnOnce() -> R) -> Result<R, Canceled<R>> {
        self.run_as(f, true, true)
    }

    pub(super) fn run_as<R>(
        &self,
        f: impl FnOnce() -> R,
        shield: bool,
        check_clock: bool,
    ) -> Result<R, Canceled<R>> {
        run_in(&*self.inner, f, shield, check_clock, || {})
    }
}

/// Runs `f` under a deadline (`at`, on the scopes' clock) in a scope of its own that nobody
/// else can reach (`with_timeout`, `with_deadline`): the scope lives on this stack frame and its deadline is registered in the
/// thread's slot for the timer (`deadline::publish`), so the run allocates nothing and takes no
/// lock. A private run nested in another (the slot is taken), or one on a thread whose
/// thread-local destructors run, makes a shared scope instead. `check_clock`: whether the
/// deadline may have passed already (else it was just computed ahead of the clock).
pub(super) fn run_private<R>(
    at: u64,
    check_clock: bool,
    f: impl FnOnce() -> R,
) -> Result<R, Canceled<R>> {
    if let Some(c) = own_control() {
        // The slot is taken by an enclosing private run (only this thread fills it, so it
        // cannot be taken between this test and the registration below).
        if deadline::can_publish(c) {
            // Its runner is this thread, before anyone can see the scope: the run need not
            // claim the slot (no atomic read-modify-write), and the timer, the only one that
            // can cancel it, uses this block only while it holds the registration (`withdraw`
            // waits).
            let scope = Private::new(c, at);
            // Withdrawn however the run ends (a panic of `f` passes through `run_in`): the
            // timer must never find this stack frame's address after it.
            let published = Withdraw(c, Cell::new(None));
            // Published once the run is registered in the thread's slots: the timer, the only
            // canceler, acts on the scope only after claiming this registration, which its
            // claim synchronizes with (so it sees the run's registration, and the run needs no
            // fence of its own at its entry).
            return run_in(&scope, f, false, check_clock, || {
                published.1.set(Some(deadline::publish(c, &scope, at)));
            });
        }
    }
    let deadline = from_nanos(at).expect("a private run's deadline is one");
    CancelScope::with_deadline(deadline).run_as(f, false, check_clock)
}

/// A private run's registration with the deadline timer, withdrawn when dropped.
struct Withdraw<'a>(&'a Control, Cell<Option<deadline::Published>>);

impl Drop for Withdraw<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(p) = self.1.take() {
            deadline::withdraw(self.0, p);
        }
    }
}

/// What [`run_in`] needs of the scope it runs: a shared scope ([`Inner`]) or a private run's
/// ([`Private`]).
trait RunIn: RunScope + 'static {
    /// Its address: the registration of its runs in the threads' slots.
    fn id(&self) -> usize;
    /// Whether the scope may have a deadline (its own or a parent's): false means none.
    fn may_have_deadline(&self) -> bool;
    /// Owner, entering a run (after its registration): claims the scope (see `Inner::claim`).
    fn claim(&self, c: &Control) -> Claim;
    /// Owner, after the run's body: gives back what `claim` took.
    fn unclaim(&self, claim: Claim);
    /// Owner, after `leave`'s light fence: waits for the cancels that read the runner.
    fn unclaimed(&self, claim: Claim);
    /// The error of a canceled run.
    fn error<R>(&self, acted: bool, value: Option<R>) -> Canceled<R>;
}

impl RunIn for Inner {
    #[inline(always)]
    fn id(&self) -> usize {
        Inner::id(self)
    }
    #[inline(always)]
    fn may_have_deadline(&self) -> bool {
        Inner::may_have_deadline(self)
    }
    #[inline(always)]
    fn claim(&self, c: &Control) -> Claim {
        Inner::claim(self, c)
    }
    #[inline(always)]
    fn unclaim(&self, claim: Claim) {
        Inner::unclaim(self, claim);
    }
    #[inline(always)]
    fn unclaimed(&self, claim: Claim) {
        Inner::unclaimed(self, claim);
    }
    fn error<R>(&self, acted: bool, value: Option<R>) -> Canceled<R> {
        Canceled::new(self.cause(), acted, value)
    }
}

impl RunIn for Private {
    #[inline(always)]
    fn id(&self) -> usize {
        Private::id(self)
    }
    #[inline(always)]
    fn may_have_deadline(&self) -> bool {
        true
    }
    #[inline(always)]
    fn claim(&self, _: &Control) -> Claim {
        Claim::Preset
    }
    #[inline(always)]
    fn unclaim(&self, _: Claim) {}
    #[inline(always)]
    fn unclaimed(&self, _: Claim) {
        Private::unclaimed(self);
    }
    fn error<R>(&self, acted: bool, value: Option<R>) -> Canceled<R> {
        Private::error(self, acted, value)
    }
}

/// [`CancelScope::run`] on `inner` (see there), with `shield` for [`CancelScope::shield`], and
/// `check_clock` false for a scope whose deadline was just computed ahead of the clock, and
/// `registered` called once the run is registered in the thread's slots (a private run
/// publishes its deadline there; it is what orders that registration for its only canceler).
fn run_in<S: RunIn, R>(
    inner: &S,
    f: impl FnOnce() -> R,
    shield: bool,
    check_clock: bool,
    registered: impl FnOnce(),
) -> Result<R, Canceled<R>> {
    if if check_clock {
        inner.is_canceled()
    } else {
        inner.marked()
    } {
        return Err(inner.error(true, None));
    }
    let Some(c) = own_control() else {
        // The thread's link is gone: its thread-local destructors are running. A control
        // block is linked for this run alone, so that the scope is enforced here too.
        let _link = crate::current::link_for_teardown();
        return run_in(inner, f, shield, check_clock, registered);
    };
    assert!(
        c.region.load(Ordering::Relaxed).is_null(),
        "CancelScope::run inside an async_region: the region can abandon the run's frame"
    );
    let parent = runs::top();
    // SAFETY: see `any_frame`.
    let depth = unsafe { parent.as_ref() }.map_or(0, |p| p.depth + 1);
    #[cfg(thread_cancel_interpose)]
    if depth == 0 {
        // A new outermost run: an interposed failure of an earlier one is not this one's.
        crate::interpose::forget_failure();
    }
    let frame = Frame {
        scope: inner as *const S as *const dyn RunScope,
        parent,
        depth,
        acted: Cell::new(false),
        shield,
    };
    let hidden = shield.then(|| hide_outer(c, depth));
    runs::set_top(&frame);
    // The registration in the thread's slots (no fence), then the claim of the scope: a
    // sequentially consistent read-modify-write of its `runner` or `others`, which a cancel
    // reads by a read-modify-write after its mark (`Inner::runs_of`). The two are ordered on
    // that word: either the cancel comes later and sees the claim (and, through it, the
    // registration), or the claim reads what the cancel wrote and the state read below
    // sees the mark (I6). A private run's registration is ordered by its publication for
    // the timer (`registered`), the only one that can cancel it.
    register(c, depth, inner.id());
    registered();
    let claim = inner.claim(c);
    // Without a timer thread, a kernel timer of this thread's own stops a system call the
    // run blocks in when its deadline comes (finding out which deadline is the point's).
    // After a private run's publication, which starts the timer thread if none runs here.
    let tick = deadline_tick(inner);
    let result = if inner.marked() {
        None
    } else {
        Some(catch_run(f))
    };
    // Deleted inside the run: a tick it queued is discarded, never delivered after.
    drop(tick);
    inner.unclaim(claim);
    let caught = leave(c, &frame, inner, claim);
    if let Some(h) = hidden {
        unhide_outer(c, h);
    }
    match result {
        None => Err(inner.error(true, None)),
        Some(Ok(v)) if caught || inner.is_canceled() => {
            // Canceled before the run ended: reported, with the value (C08).
            Err(inner.error(caught || frame.acted.get(), Some(v)))
        }
        Some(Ok(v)) => Ok(v),
        Some(Err(p)) if caught && p.is::<ScopeUnwind>() => Err(inner.error(true, None)),
        Some(Err(p)) => resume_unwind(p),
    }
}

/// The run's `catch_unwind`, in a frame of its own: a scope's unwind stops in this frame, whose
/// table of call sites (what the unwinder's personality routine scans in each phase) has the
/// closure's call alone, not every call of `run_in` and of the code it is inlined into.
#[inline(never)]
fn catch_run<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

/// What a shield holds of the enclosing runs until it ends.
struct Hidden {
    /// Their registrations.
    runs: Vec<usize>,
    /// The scope unwind under way (a shield in a `Drop` it runs) or swallowed, and its target.
    unwind: Option<usize>,
}

/// Owner, entering a shield at `depth`: the outer runs leave the sight of cancelers (no
/// delivery reaches them now) and of points (`any_frame` stops at the shield); a request of
/// theirs already delivered is taken back (re-queued when the shield ends), and so is a scope
/// unwind of theirs under way or swallowed (put back when it ends: inside, only the shield's
/// own cancel acts, by an error where it cannot unwind).
#[cold]
fn hide_outer(c: &Control, depth: usize) -> Hidden {
    let runs = c.runs.hide_below(depth);
    if c.word.load() & word::SCOPE != 0 {
        c.word.clear_scope_request();
    }
    let unwind = (c.word.end_scope_unwind() & word::SCOPE_UNWIND != 0).then(runs::target);
    Hidden { runs, unwind }
}

/// Owner, leaving a shield (after its own run ended): the outer runs are registered again, and
/// a cancel of theirs that came meanwhile is queued now, with the `on_cancel` callbacks it
/// owes (registered outside the shield), run here.
#[cold]
fn unhide_outer(c: &Control, saved: Hidden) {
    if let Some(target) = saved.unwind {
        runs::set_target(target);
        c.word.begin_scope_unwind();
    }
    c.runs.unhide(saved.runs);
    if let Some(depth) = outermost_canceled() {
        if c.word.load() & word::SCOPE == 0 {
            c.word.scope_request();
        }
        c.run_own_scope_callbacks(depth);
    }
}

/// A deadline tick for a run of `inner` (`sys::arm_deadline_tick`), only where no timer thread
/// marks deadlines in this process and the scope has a deadline: three system calls per such
/// run, none otherwise.
#[inline]
fn deadline_tick(inner: &impl RunIn) -> Option<crate::sys::DeadlineTick> {
    // A scope with no deadline of its own or of a parent first (one load of its state, no
    // global), so that a run of a plain scope costs the same with or without a timer thread.
    if !inner.may_have_deadline() || deadline::marks_deadlines() {
        return None;
    }
    deadline_tick_cold(inner)
}

#[cold]
#[inline(never)]
fn deadline_tick_cold(inner: &dyn RunScope) -> Option<crate::sys::DeadlineTick> {
    let d = inner.deadline()?;
    crate::sys::set_deadline_due(runs::deadline_passed);
    crate::sys::arm_deadline_tick(d)
}

/// The calling thread's control block (adopting the thread), borrowed until the thread's
/// thread-local destructors: `None` if they have begun.
#[inline(always)]
fn own_control<'a>() -> Option<&'a Control> {
    let p = match crate::control::current_ptr() {
        Some(p) => p,
        None => adopt()?,
    };
    // SAFETY: the calling thread's control block stays alive until its thread-local
    // destructors run (see `current::with_current`); the borrow is used only by `run` in this
    // thread, which cannot outlive the thread.
    Some(unsafe { &*p })
}

/// The calling thread's first run (or a run in its thread-local destructors): adopts it.
#[cold]
#[inline(never)]
fn adopt() -> Option<*const Control> {
    let _ = crate::current::current_control();
    crate::control::current_ptr()
}

/// Owner: registers a run of scope `id` at `depth` in the thread's slots (no fence: the claim
/// that follows orders it, see `run_in`).
#[inline(always)]
fn register(c: &Control, depth: usize, id: usize) {
    if !c.runs.registered.load(Ordering::Relaxed) {
        register_thread(c);
    }
    c.runs.enter(depth, id);
}

/// Owner: ends a run of `inner` held by `claim` (every path: returned, unwound, never started),
/// after its `unclaim`. Unregisters (the light side of the deliveries' asymmetric fence), waits
/// for the cancels that read the scope's runner and for the deliveries under way, unlinks the
/// frame, and leaves the word as it was before the run (I6). Returns whether this run is the
/// one a scope unwind (in progress, or swallowed and never raised again) ends at.
#[inline(always)]
fn leave(c: &Control, frame: &Frame, inner: &impl RunIn, claim: Claim) -> bool {
    c.runs.leave(
        frame.depth,
        frame.scope_id(),
        c.fence_asymmetric.load(Ordering::Relaxed),
    );
    inner.unclaimed(claim);
    c.runs.settle();
    // After `settle`: a cancel that took callbacks of this run counted itself before it read
    // the registration; the run returns once they have run (W07: never lost).
    if c.runs.callbacks_running.load(Ordering::Relaxed) != 0 && c.wait_for_callbacks(frame.depth) {
        frame.acted.set(true);
    }
    runs::set_top(frame.parent);
    // The child processes the run started are its own no more (feature `interpose`).
    #[cfg(thread_cancel_interpose)]
    crate::interpose::forget_children(frame.depth);
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
