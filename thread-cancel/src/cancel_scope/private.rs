//! A private run's scope ([`with_timeout`], [`with_deadline`]): a scope nobody else can hold,
//! built on the caller's stack for one run, canceled only by its deadline. It is not an
//! [`Inner`]: it has no handle, no parents, no children, no callbacks and no registration in
//! the timer's map, so it keeps only what a run and its one canceler (the deadline timer, or
//! the run's own thread at a point that finds the deadline passed) use — a state byte, the
//! deadline, the runner (this thread, from the start) and the cancels delivering to it.

use super::*;

/// The scope of one private run.
pub(super) struct Private {
    /// `LIVE` or `TIMED_OUT` (the bits `WHY` of [`Inner::state`]'s encoding).
    state: AtomicU8,
    /// The deadline, on the scopes' clock (never `NO_DEADLINE`).
    at: u64,
    /// The running thread's control block, named from the making on (a run's claim of it is
    /// [`Claim::Preset`]); read by the delivery as a shared scope's runner slot is.
    runner: AtomicPtr<Control>,
    /// Cancels reading `runner` now (only the deadline's: the timer's, or this thread's own).
    delivering: AtomicUsize,
}

impl Private {
    /// The scope of a run of the thread `c` with deadline `at`.
    #[inline(always)]
    pub(super) fn new(c: &Control, at: u64) -> Self {
        debug_assert!(at != NO_DEADLINE);
        Private {
            state: AtomicU8::new(LIVE),
            at,
            runner: AtomicPtr::new(c as *const Control as *mut Control),
            delivering: AtomicUsize::new(0),
        }
    }

    #[inline(always)]
    pub(super) fn id(&self) -> usize {
        self as *const Private as usize
    }

    #[inline(always)]
    fn marked(&self) -> bool {
        self.state.load(Ordering::Acquire) & WHY != LIVE
    }

    /// Whether timed out; a deadline that passed times the scope out now.
    #[inline(always)]
    fn is_canceled(&self) -> bool {
        self.marked() || self.expire_if_due()
    }

    /// The deadline passed: times the scope out (delivering the request to its runner, this
    /// thread) and returns true; else false.
    #[cold]
    #[inline(never)]
    fn expire_if_due(&self) -> bool {
        if !passed(self.at) {
            return false;
        }
        let shield = crate::async_region::shield();
        let mut reached = Reached::default();
        self.fire(&mut reached);
        crate::async_region::unshield(shield);
        run_callbacks(reached);
        true
    }

    /// The deadline timer times the scope out if its deadline passed (the timer's clock may be
    /// ahead of the scopes' coarse reading, never behind the precise one). Returns the
    /// callbacks it owes (the runs reached register none with a private scope's cancel; a run
    /// inside it may).
    pub(crate) fn expire_by_timer(&self) -> Reached {
        let shield = crate::async_region::shield();
        let mut reached = Reached::default();
        if from_nanos(self.at).is_some_and(|d| Instant::now() >= d) {
            self.fire(&mut reached);
        }
        crate::async_region::unshield(shield);
        reached
    }

    /// Marks the scope timed out (once: the timer and the thread may both find it due) and
    /// delivers the request to its runner.
    fn fire(&self, reached: &mut Reached) {
        if self
            .state
            .compare_exchange(LIVE, TIMED_OUT, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        let first = reached.threads.len();
        delivery::deliver_to_runner(
            &self.runner,
            &self.delivering,
            self.id(),
            reached,
            Delivery::Request,
        );
        diagnostic::watch(self.id(), &reached.threads[first..]);
    }

    /// The error of a run of it: timed out at its deadline.
    pub(super) fn error<R>(&self, acted: bool, value: Option<R>) -> Canceled<R> {
        let at = from_nanos(self.at).expect("a private scope has a deadline");
        Canceled::new(Cause::Deadline(at), acted, value)
    }

    /// Owner, after its run's `leave`: waits for the cancels that read the runner
    /// ([`delivery::deliver_to_runner`]).
    #[inline(always)]
    pub(super) fn unclaimed(&self) {
        delivery::wait_for_delivering(&self.delivering);
    }
}

impl RunScope for Private {
    #[inline(always)]
    fn marked(&self) -> bool {
        Private::marked(self)
    }

    #[inline(always)]
    fn is_canceled(&self) -> bool {
        Private::is_canceled(self)
    }

    fn deadline(&self) -> Option<Instant> {
        from_nanos(self.at)
    }

    fn expire(&self) {
        let _ = Private::is_canceled(self);
    }

    fn timed_out(&self) -> bool {
        self.marked()
    }

    fn forget_parents_deliveries(&self) {
        self.delivering.store(0, Ordering::Relaxed);
    }
}
