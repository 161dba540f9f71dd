//! A cancel's side of a scope: the registry of threads that run scopes, the delivery of a scope
//! request to every thread in a run of the canceled scope, and the `on_cancel` callbacks it owes.

use super::*;

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

/// The live threads of this process that have run a scope.
pub(super) fn scoped_threads() -> Vec<Arc<Control>> {
    let mut reg = lock_registry();
    retain_live(&mut reg);
    reg.iter().filter_map(Weak::upgrade).collect()
}

/// What a delivery does to each thread it finds in a run of the scope.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Delivery {
    /// A scope request (the cancel).
    Request,
    /// A scope request, and a callback registered on the scope (or on a parent it came
    /// through) fires with it: the run reports the cancel as acted on.
    RequestHooked,
    /// Only that: a callback registered on the scope after its cancel ran at once.
    Hooked,
}

/// Owner's side of a delivery, while the thread is counted in it (its run at `depth` cannot
/// end): the scope callbacks, the request, whether a wake-up is owed.
fn deliver_to(t: &Arc<Control>, depth: usize, how: Delivery, reached: &mut Reached) -> bool {
    if how != Delivery::Request {
        t.scope_hooks_fired(depth);
    }
    if how == Delivery::Hooked {
        return false;
    }
    // Taken before the request: a woken owner finds them gone (its guards then report the
    // cancel acted on, and its run's end waits for them).
    let taken = t.take_scope_callbacks(depth);
    let owed_wake = t.scope_request();
    reached.threads.push((t.clone(), depth, taken));
    owed_wake
}

/// Delivers a scope request for scope `id` to every thread registered in a run of it.
///
/// Each thread is counted in its `ScopeRuns::deliveries` before its registration is read, with
/// the heavy side of an asymmetric fence between; the owner clears its registration, then
/// (light side) reads the count and waits for zero (`ScopeRuns::leave`, `settle`). So either
/// this sees the registration cleared, or the run's end waits for this delivery (the signal
/// included) to be over (I6). A run's entry is paired with
/// the cancel's mark through the scope's `others` (see `Inner::claim`): this delivery is made
/// only after that read found the run, and acquired its registration.
pub(super) fn deliver(id: usize, reached: &mut Reached, how: Delivery) {
    let threads = scoped_threads();
    if threads.is_empty() {
        return;
    }
    for t in &threads {
        t.runs.count_in();
    }
    // The heavy side: the end of every run makes only the light one (a compiler fence), so
    // the cost of the pairing is paid here, once per cancel that found the scope run.
    crate::control::heavy_fence();
    for t in &threads {
        let owed_wake = t
            .runs
            .depth_of(id)
            .is_some_and(|depth| deliver_to(t, depth, how, reached));
        t.runs.count_out();
        // After counting out: a run that ends now never waits for this system call (on two
        // CPUs the woken thread can preempt this one and would spin in `leave` until it ran).
        if owed_wake {
            t.wake_parked();
        }
    }
}

/// How a run holds its scope's `runner` slot.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    /// It took the slot.
    Runner,
    /// Another run holds it: this one is counted in `others`.
    Other,
    /// A private run's scope (`Private`): it names this thread from its making on.
    Preset,
}

impl Inner {
    /// Owner, entering a run, after its registration in the thread's slots and before it
    /// reads the scope's state: takes the runner's slot if it is free, else counts the run
    /// among the others. Either is a read-modify-write (`SeqCst`) of a word a cancel reads by a
    /// read-modify-write after its mark ([`runs_of`](Self::runs_of)): the run's registration
    /// fence. Whichever comes first in that word's order, the other sees it: a cancel after
    /// the claim sees the run (and, acquiring the claim, its registration); a claim after
    /// the cancel's read acquires the mark, which the run's read of the state then sees.
    #[inline(always)]
    pub(super) fn claim(&self, c: &Control) -> Claim {
        let me = c as *const Control as *mut Control;
        if self
            .runner
            .compare_exchange(
                std::ptr::null_mut(),
                me,
                Ordering::SeqCst,
                Ordering::Relaxed,
            )
            .is_ok()
        {
            return Claim::Runner;
        }
        self.others.fetch_add(1, Ordering::SeqCst);
        Claim::Other
    }

    /// A cancel, after its mark: who runs the scope now — how many runs besides the runner
    /// (`others`), and whether a run holds the runner's slot. Each word is read by a
    /// compare-and-swap of its empty value with itself, the other side of a run's
    /// [`claim`](Self::claim): found empty, it is a read-modify-write (of the latest value),
    /// and a claim that comes after it acquires what this cancel did before (its mark); found
    /// taken, it acquires the claim it read (and the registration before it).
    #[inline]
    pub(super) fn runs_of(&self) -> (usize, bool) {
        let others = self
            .others
            .compare_exchange(0, 0, Ordering::AcqRel, Ordering::Acquire)
            .unwrap_or_else(|n| n);
        let null = std::ptr::null_mut();
        let runner = self
            .runner
            .compare_exchange(null, null, Ordering::AcqRel, Ordering::Acquire)
            .is_err();
        (others, runner)
    }

    /// Owner, when the run's body is over, before its registration is withdrawn (`leave`,
    /// whose fence follows): gives back what `claim` took. A cancel that no longer finds the
    /// run delivers nothing to it, which is harmless now: the run's result still reads the
    /// scope's mark, which that cancel made first.
    #[inline(always)]
    pub(super) fn unclaim(&self, claim: Claim) {
        match claim {
            Claim::Runner => self.runner.store(std::ptr::null_mut(), Ordering::Relaxed),
            Claim::Other => {
                self.others.fetch_sub(1, Ordering::Relaxed);
            }
            Claim::Preset => {}
        }
    }

    /// Owner, after `leave` (and its light fence), before `settle`: the runner waits until no
    /// cancel that may have read its block in the slot is still using it
    /// ([`deliver_to_runner`]; a private run's scope waits the same way, `Private::unclaimed`).
    #[inline(always)]
    pub(super) fn unclaimed(&self, claim: Claim) {
        if claim == Claim::Runner {
            wait_for_delivering(&self.delivering);
        }
    }

    /// [`deliver_to_runner`] for this scope.
    #[cold]
    pub(super) fn deliver_to_runner(&self, reached: &mut Reached, how: Delivery) {
        deliver_to_runner(&self.runner, &self.delivering, self.id(), reached, how);
    }
}

/// Owner, after `leave` (and its light fence), before `settle`: waits until no cancel that may
/// have read its block in its scope's runner slot is still using it ([`deliver_to_runner`]);
/// such a cancel counted itself in the thread's deliveries before it gave `delivering` back,
/// so the `settle` that follows waits for its delivery.
#[inline(always)]
pub(super) fn wait_for_delivering(delivering: &AtomicUsize) {
    if delivering.load(Ordering::Acquire) != 0 {
        wait_for_delivering_slow(delivering);
    }
}

#[cold]
#[inline(never)]
fn wait_for_delivering_slow(delivering: &AtomicUsize) {
    while delivering.load(Ordering::Acquire) != 0 {
        crate::atomic::yield_now();
    }
}

/// A cancel's delivery to the scope `id` when one thread runs it (it holds the scope's
/// `runner` slot, or the scope is its private run's) and no other run is in progress: that
/// thread alone, as `deliver` treats each thread. The slot is read again after counting this
/// cancel in `delivering` and the heavy side of an asymmetric fence (the run's end makes the
/// light one between giving the slot back, then clearing its registration, and reading
/// `delivering`: `ScopeRuns::leave`, [`wait_for_delivering`]). If the run's end cleared its
/// registration before its barrier point in this fence, this reads it cleared and delivers
/// nothing (its body is over); otherwise the run reads `delivering` after that point, sees this
/// cancel and waits for it: its block stays alive while used — and, this cancel having counted
/// itself in the thread's deliveries before giving `delivering` back, the run's `settle` waits
/// for the delivery too. One heavy fence serves both.
#[cold]
pub(super) fn deliver_to_runner(
    slot: &AtomicPtr<Control>,
    delivering: &AtomicUsize,
    id: usize,
    reached: &mut Reached,
    how: Delivery,
) {
    delivering.fetch_add(1, Ordering::Relaxed);
    crate::control::heavy_fence();
    let p = slot.load(Ordering::Acquire);
    let runner = (!p.is_null()).then(|| {
        // SAFETY: `p` is the block of a thread in a run of this scope (`claim` stored
        // `Arc::as_ptr` of its block, `CURRENT`, with release; a private run's is its own
        // thread's block); that run waits in `wait_for_delivering` until `delivering` is zero
        // before it ends (a private run's scope also stays alive until the timer is done,
        // `deadline::withdraw`), and the thread keeps its block alive while in a run: the
        // count taken above keeps it alive here. Incrementing the strong count of a live `Arc`
        // and taking that reference as an `Arc` is sound.
        unsafe {
            Arc::increment_strong_count(p);
            Arc::from_raw(p)
        }
    });
    // In a forked child the slot may name a thread of the parent (C09): never reached.
    let runner = runner.filter(|t| t.in_this_process());
    if let Some(t) = &runner {
        t.runs.count_in();
    }
    // The block is held by its own count from here, and the delivery by the thread's
    // `deliveries`: the run need not wait for `delivering` any more (on two CPUs the woken
    // runner would preempt this thread and spin in `wait_for_delivering` until it returned from
    // the wake-up's system call).
    delivering.fetch_sub(1, Ordering::Release);
    if let Some(t) = runner {
        let owed_wake = t
            .runs
            .depth_of(id)
            .is_some_and(|depth| deliver_to(&t, depth, how, reached));
        t.runs.count_out();
        if owed_wake {
            t.wake_parked();
        }
    }
}

/// What a cancel owes once its deliveries are done: the threads it reached, each with the
/// depth of its run of the canceled scope and the `on_cancel` callbacks registered inside that
/// run, taken from the thread during the delivery (`Control::take_scope_callbacks`), and the callbacks registered on the canceled scopes themselves
/// (`CancelScope::on_cancel`).
#[derive(Default)]
pub(crate) struct Reached {
    pub(crate) threads: Vec<(Arc<Control>, usize, Vec<crate::control::Callback>)>,
    pub(crate) hooks: Vec<Box<dyn FnOnce() + Send>>,
}

impl Reached {
    /// Whether it owes no callback (threads reached whose runs registered none need nothing
    /// more: their requests are delivered).
    pub(crate) fn is_empty(&self) -> bool {
        self.hooks.is_empty() && self.threads.iter().all(|(_, _, taken)| taken.is_empty())
    }

    pub(crate) fn append(&mut self, mut other: Reached) {
        self.threads.append(&mut other.threads);
        self.hooks.append(&mut other.hooks);
    }
}

/// Runs the `on_cancel` callbacks registered inside the canceled runs, and those registered on
/// the canceled scopes, after the deliveries (a callback must never hold up the end of a run).
/// Each is contained: a panic in one is reported by the panic hook and the others still run.
pub(crate) fn run_callbacks(reached: Reached) {
    for (t, depth, taken) in reached.threads {
        t.run_taken_callbacks(depth, taken);
    }
    for h in reached.hooks {
        if let Err(p) = crate::control::contain(h) {
            let _ = crate::control::contain(move || drop(p));
        }
    }
}

/// In the child of a `fork`, in the forking thread while it is the only thread: a delivery the
/// parent's other threads had under way to it (counted in its block, `ScopeRuns::deliveries`,
/// and in the scopes it runs, `delivering`) never ends here; forgotten, or the end of its run
/// would wait for it for ever (C09). Atomics and thread-local reads only.
extern "C" fn forget_parents_deliveries() {
    if let Some(c) = crate::control::current_ptr() {
        // SAFETY: the calling thread's control block, alive while it runs.
        unsafe { &*c }.runs.deliveries.store(0, Ordering::Relaxed);
    }
    runs::every_frame(|sc| sc.forget_parents_deliveries());
}

#[cold]
pub(super) fn register_thread(c: &Control) {
    static FORK_HANDLER: std::sync::Once = std::sync::Once::new();
    FORK_HANDLER.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function that stays valid for the life of the
        // process.
        unsafe { libc::pthread_atfork(None, None, Some(forget_parents_deliveries)) };
    });
    let arc = crate::current::current_control();
    debug_assert!(std::ptr::eq(&*arc, c));
    let mut reg = lock_registry();
    // The ended threads are dropped when the registry has doubled (and by every full
    // delivery): a thread's first run costs the same however many threads ran scopes before.
    if reg.len().is_power_of_two() {
        retain_live(&mut reg);
    }
    reg.push(Arc::downgrade(&arc));
    drop(reg);
    super::diagnostic::record_identity(c);
    c.runs.registered.store(true, Ordering::Relaxed);
}
