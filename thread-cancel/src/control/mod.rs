//! The per-thread control block, shared (`Arc`) by the thread and every handle that can cancel it.

mod callbacks;
pub(crate) mod fork;
#[cfg(thread_cancel_interpose)]
pub(crate) mod handlers;
pub(crate) mod parker;
mod payload;
mod scope_runs;
mod tls;

pub(crate) use callbacks::{contain, contained};
pub(crate) use callbacks::{resume_own, Callback, Payload};
use callbacks::{run_callback, Callbacks};
pub(crate) use payload::own_unwind_live;
pub use payload::{CancelPayload, ScopeUnwind};

pub(crate) use scope_runs::{heavy_fence, ScopeRuns, Timed};
pub(crate) use tls::{current_ptr, is_current, set_current, with_current};

use crate::word::{Request, StateWord};
use parker::Parker;
use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Once, PoisonError};

/// The process-wide set-up the first control block makes: the fork handlers and the signal
/// handler's decisions.
static SETUP: Once = Once::new();

/// Everything another thread may touch of a thread: its state word and its wake-up token.
#[derive(Debug)]
pub(crate) struct Control {
    pub(crate) word: StateWord,
    pub(crate) parker: Parker,
    /// The threads blocked in `join`/`wait` on this one, each woken when this one finishes.
    /// Each waiter adds and removes its own entry (`add_waiter`/`remove_waiter`).
    waiters: Mutex<Vec<Arc<Control>>>,
    /// The fork generation this block belongs to (see `FORK_GENERATION`).
    generation: AtomicU32,
    /// The value passed to `exit()`, taken by the thread's root.
    exit_value: Mutex<Option<Box<dyn Any + Send>>>,
    /// For threads spawned by the crate: the type `exit()` must be given.
    pub(crate) exit_type: Option<TypeId>,
    /// The `std` handle of the thread, to wake it from `std::thread::park`.
    thread: std::sync::OnceLock<std::thread::Thread>,
    /// `on_cancel` callbacks, run by the first request.
    callbacks: Mutex<Callbacks>,
    /// Notified when a scope cancel has run the callbacks it took from this thread's runs.
    callbacks_done: std::sync::Condvar,
    /// Owner: inside a cancellable system call (published before the trampoline reads the
    /// word; a request `fetch_or`s `PENDING` before observing this, with an asymmetric fence
    /// between the two sides: `sys::publish_in_syscall` / `observe_in_syscall`). So either the
    /// trampoline sees the request, or the request sees the flag and sends the signal.
    pub(crate) in_syscall: std::sync::atomic::AtomicBool,
    /// Owner: its copy of `sys::fence_asymmetric()`, taken when the block is linked to the
    /// thread (after the process-wide set-up): which store [`Self::in_syscall`] is published
    /// with, read from this block rather than from a static.
    pub(crate) fence_asymmetric: std::sync::atomic::AtomicBool,
    /// The thread's pthread and kernel ids while it is alive (cleared under the lock by
    /// `finish`), so the cancel signal is never sent to a thread that has gone.
    pthread: Mutex<Option<crate::sys::Target>>,
    /// Owner: the innermost asynchronous region the thread is in, or null (`async_region.rs`). Set
    /// with `SeqCst` before the region's entry reads the word, read with `SeqCst` by a request
    /// after its `fetch_or`: either the entry sees the request or the request sends the signal.
    pub(crate) region: std::sync::atomic::AtomicPtr<crate::sys::RegionCtx>,
    /// Set by `finish` from the word it replaced: `IGNORED_NO` or `IGNORED_YES` (the thread
    /// finished with a request pending that it never acted on); `IGNORED_UNKNOWN` before.
    ignored: std::sync::atomic::AtomicU8,
    /// The thread's registration in `CancelScope` runs, which cancelers of a scope read (only
    /// `cancel_scope` uses it).
    pub(crate) runs: ScopeRuns,
    /// The signal handlers the thread is running (feature `interpose`: a call made from one
    /// behaves as the plain call).
    #[cfg(thread_cancel_interpose)]
    pub(crate) handlers: handlers::Frames,
}

const IGNORED_UNKNOWN: u8 = 0;
const IGNORED_NO: u8 = 1;
const IGNORED_YES: u8 = 2;

impl Control {
    pub(crate) fn new(exit_type: Option<TypeId>) -> Self {
        // Registered before the first control block exists, so every fork after any block was
        // made runs the handler.
        SETUP.call_once(|| {
            crate::sys::set_decisions(&tls::DECISIONS);
            // SAFETY: registers plain `extern "C"` functions that stay valid for the life of
            // the process.
            unsafe {
                libc::pthread_atfork(
                    Some(fork::before_fork),
                    Some(fork::after_fork_in_parent),
                    Some(fork::after_fork_in_child),
                )
            };
        });
        Self {
            word: StateWord::new(),
            parker: Parker::new(),
            waiters: Mutex::new(Vec::new()),
            generation: AtomicU32::new(fork::fork_generation()),
            exit_value: Mutex::new(None),
            exit_type,
            thread: std::sync::OnceLock::new(),
            callbacks: Mutex::new(Callbacks::default()),
            callbacks_done: std::sync::Condvar::new(),
            in_syscall: std::sync::atomic::AtomicBool::new(false),
            fence_asymmetric: std::sync::atomic::AtomicBool::new(false),
            pthread: Mutex::new(None),
            region: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
            ignored: std::sync::atomic::AtomicU8::new(IGNORED_UNKNOWN),
            runs: ScopeRuns::default(),
            #[cfg(thread_cancel_interpose)]
            handlers: handlers::Frames::default(),
        }
    }

    /// A control block for a thread that is already gone.
    pub(crate) fn finished() -> Self {
        Self {
            word: StateWord::finished(),
            ignored: std::sync::atomic::AtomicU8::new(IGNORED_NO),
            ..Self::new(None)
        }
    }

    /// Whether this block belongs to this process: false for a thread of the parent process,
    /// seen from a forked child (it does not exist here; its pthread id may name another
    /// thread of the child).
    pub(crate) fn in_this_process(&self) -> bool {
        self.generation.load(Relaxed) == fork::fork_generation()
    }

    /// Queues a cancellation request, wakes the thread if it waits, and runs the `on_cancel`
    /// callbacks. Returns the payload of a termination the caller began in a callback (see
    /// [`resume_own`]), which it resumes once it holds no lock: `canceler::cancel` does that,
    /// with the caller's own cancellation held meanwhile if it is in an asynchronous region.
    ///
    /// The callbacks are contained: a panic in one is reported by the panic hook and caught,
    /// and the others still run.
    pub(crate) fn request(&self) -> Result<Option<Payload>, crate::NoSuchThread> {
        if !self.in_this_process() {
            return Err(crate::NoSuchThread);
        }
        match self.word.request() {
            Request::Finished => Err(crate::NoSuchThread),
            Request::Merged => Ok(None),
            Request::Queued { prev } => {
                let _ = self.wake(prev, false);
                let run = std::mem::take(&mut lock(&self.callbacks).list);
                let mut own = None;
                for (_, _, f) in run {
                    own = own.or(run_callback(f));
                }
                Ok(own)
            }
        }
    }

    /// A scope cancel's delivery to this thread, registered in a `run` of the canceled scope
    /// (the caller has counted itself in `ScopeRuns::deliveries`; I6): queue the scope request and
    /// wake the thread as a request does, except the futex wake-up of a thread found parked,
    /// which is left to the caller (`true`): it calls [`wake_parked`](Self::wake_parked) after
    /// it has counted itself out, so that the run's end never waits for that system call (it
    /// changes no state: the token is already set).
    #[must_use]
    pub(crate) fn scope_request(&self) -> bool {
        if !self.in_this_process() {
            return false;
        }
        let prev = self.word.scope_request();
        prev & (crate::word::FINISHED | crate::word::SCOPE) == 0 && self.wake(prev, true)
    }

    /// Ends a wake-up that [`scope_request`](Self::scope_request) left to its caller.
    pub(crate) fn wake_parked(&self) {
        self.parker.wake_parked();
    }

    /// Wakes the thread for the request that changed the word from `prev`: the signal if it is
    /// in one of our calls or an asynchronous region, the parker, `std`'s park token. For a
    /// scope's request (`scope`), a signal is recorded in `ScopeRuns::signaled` before it is sent,
    /// and the futex wake-up of a parked thread is not made here: `true` says it is owed.
    fn wake(&self, prev: u32, scope: bool) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        // Only a thread inside our system calls or in a region with the type
        // asynchronous needs the signal, and never the caller itself (it acts when it
        // leaves `cancel`). `ASYNC` is read from the same word as the request: a thread
        // that turns it on after this request sees the request when it does.
        let in_async_region = prev & crate::word::ASYNC != 0 && !self.region.load(SeqCst).is_null();
        // A disabled thread is never signalled: it acts only after it enables, an owner
        // read-modify-write that sees this request, and its next point acts on it. (A
        // signal now would only make its calls fail with EINTR.)
        let me = tls::is_current(self) || prev & crate::word::DISABLED != 0;
        // A thread blocked in a call has published the flag long ago: signal it first.
        let signalled = in_async_region || self.in_syscall.load(SeqCst);
        if signalled && !me {
            self.interrupt(scope);
        }
        let parked = self.parker.notify();
        if parked && !scope {
            self.parker.wake_parked();
        }
        // An adopted thread may record its handle only when it first parks through `std`
        // (`record_std_thread`): not seen yet, look again after a fence that pairs with that
        // one (either it sees this request at its next point, or this sees its handle).
        let t = self.thread.get().or_else(|| {
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            self.thread.get()
        });
        if let Some(t) = t {
            t.unpark();
        }
        // The flag looked clear: make sure (the fence's heavy side), after the wake-ups
        // so that it never delays them. Not needed for a thread we found parked: it is
        // not in a system call, and it leaves `park` through an acquiring read of our
        // token, after which every load of its word (the trampoline's included) sees
        // this request. That spares a blocked waiter the fence's interrupt (P3).
        if !signalled && !me && !parked && crate::sys::observe_in_syscall(&self.in_syscall) {
            self.interrupt(scope);
        }
        parked && scope
    }

    /// Owner: records its `std` handle (for `park`) and its pthread id (for the signal).
    /// `std`'s handle of the thread, once the thread has linked this block (never for a
    /// thread created for the C ABI).
    pub(crate) fn std_thread(&self) -> Option<&std::thread::Thread> {
        self.thread.get()
    }

    /// Owner, before it parks through `std` (`thread_cancel::park`): records its `std` handle
    /// if it was adopted without one (`current::adopt_without_std_handle`), then a fence that
    /// pairs with `wake`'s: a request made from here on unparks it, and one made before is
    /// seen by its next point (which the caller makes before it parks).
    pub(crate) fn record_std_thread(&self) {
        if self.thread.get().is_none() {
            let _ = self.thread.set(std::thread::current());
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        }
    }

    pub(crate) fn set_thread(&self, t: std::thread::Thread) {
        let _ = self.thread.set(t);
        self.set_pthread();
    }

    /// Owner: records its pthread id only (a thread created for the C ABI, which never parks
    /// through `std` and must not make `std` register a thread-local destructor).
    pub(crate) fn set_pthread(&self) {
        *lock(&self.pthread) = Some(crate::sys::Target::current());
    }

    /// Sends `sig` to the thread if it is alive: `pthread_kill`'s result, or `None` if the
    /// thread has finished. The id is read and used under the lock that `finish` clears it
    /// under, so it never names a gone thread.
    pub(crate) fn send_signal(&self, sig: i32) -> Option<i32> {
        if !self.in_this_process() {
            return None;
        }
        let t = lock(&self.pthread);
        // SAFETY: as in `interrupt`.
        t.map(|t| unsafe { libc::pthread_kill(t.id.0, sig) })
    }

    /// Sends the cancel signal to the thread, blocked in a cancellable system call (for a
    /// scope's request: recorded first, see `ScopeRuns::signaled`).
    fn interrupt(&self, scope: bool) {
        let Some(sig) = crate::sys::signal() else {
            return;
        };
        if scope {
            self.runs
                .signaled
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        let t = lock(&self.pthread);
        if let Some(t) = *t {
            // SAFETY: the id is cleared (under this lock) by `finish` before the thread ends,
            // so it names a live thread while we hold the lock.
            unsafe { crate::sys::kill(t, sig) };
        }
    }

    /// Registers a callback run by the first request; runs it at once (and returns `None`) if a
    /// request is already pending. Exactly once either way: the request's `fetch_or` precedes
    /// its drain under the same mutex that this check-and-push holds. Run here, `f` is
    /// contained as in a request (see [`cancel`](Self::cancel)).
    ///
    /// A callback registered inside `CancelScope::run`s (`runs` of them) is also run by a cancel
    /// of one of those runs' scopes ([`run_scope_callbacks`](Self::run_scope_callbacks)), or at
    /// once if one is already canceled.
    pub(crate) fn add_callback(
        &self,
        f: Box<dyn FnOnce() + Send>,
        runs: usize,
        canceled_run_depth: impl FnOnce() -> Option<usize>,
    ) -> Option<u64> {
        let mut cbs = lock(&self.callbacks);
        if self.word.load() & crate::word::PENDING != 0
            || canceled_run_depth().is_some_and(|d| d < runs)
        {
            drop(cbs);
            resume_own(run_callback(f));
            return None;
        }
        let id = cbs.next_id;
        cbs.next_id += 1;
        cbs.list.push((id, runs, f));
        Some(id)
    }

    /// Removes a callback that has not run: returns it with the number of runs it was
    /// registered in, or `None` if a request took it (it ran, or runs now).
    pub(crate) fn remove_callback(&self, id: u64) -> Option<(usize, Box<dyn FnOnce() + Send>)> {
        let mut cbs = lock(&self.callbacks);
        let i = cbs.list.iter().position(|(i, _, _)| *i == id)?;
        let (_, runs, f) = cbs.list.remove(i);
        Some((runs, f))
    }

    /// A scope's delivery to the owner's run at `depth` (the run cannot end meanwhile: the
    /// delivery is counted in `runs.deliveries`, I6): takes the callbacks registered inside
    /// that run, for [`run_taken_callbacks`](Self::run_taken_callbacks) to run once every
    /// delivery is done. Taken here, while the run is the one the cancel reached, so that a
    /// callback is never run for a later run (a scope's address is reused); and counted, so
    /// that the run's end waits until they have run (`wait_for_callbacks`).
    ///
    /// The scope is marked canceled before this takes the lock, and `add_callback` checks it
    /// under the lock: each such callback runs exactly once — taken here, at its registration,
    /// or at the run's end if its guard is dropped first (`on_cancel.rs`).
    pub(crate) fn take_scope_callbacks(&self, depth: usize) -> Vec<Callback> {
        let mut cbs = lock(&self.callbacks);
        if !cbs.list.iter().any(|(_, runs, _)| *runs > depth) {
            return Vec::new();
        }
        let (run, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut cbs.list)
            .into_iter()
            .partition(|(_, runs, _)| *runs > depth);
        cbs.list = keep;
        cbs.running.push(depth);
        self.runs
            .callbacks_running
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        run.into_iter().map(|(_, _, f)| f).collect()
    }

    /// Runs (in the caller, contained) the callbacks [`take_scope_callbacks`] took from the
    /// run at `depth`, then lets the run's end go on. The owner itself (a wait of its own found
    /// the deadline passed) does not run them here, where its run may hold what they wait
    /// for: they run at the end of that run, as a dropped guard's do.
    ///
    /// [`take_scope_callbacks`]: Self::take_scope_callbacks
    pub(crate) fn run_taken_callbacks(&self, depth: usize, taken: Vec<Callback>) {
        if taken.is_empty() {
            return;
        }
        if is_current(self) {
            let mut cbs = lock(&self.callbacks);
            if let Some(i) = cbs.running.iter().position(|&d| d == depth) {
                cbs.running.remove(i);
            }
            cbs.deferred.extend(taken.into_iter().map(|f| (depth, f)));
            // One count for the whole take, as `running` had: `wait_for_callbacks` runs them.
            return;
        }
        for f in taken {
            // A termination the caller began in a callback is not resumed here (a cancel of a
            // scope returns normally); the caller's next point acts on it.
            drop(run_callback(f));
        }
        {
            let mut cbs = lock(&self.callbacks);
            if let Some(i) = cbs.running.iter().position(|&d| d == depth) {
                cbs.running.remove(i);
            }
            self.runs
                .callbacks_running
                .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
        self.callbacks_done.notify_all();
    }

    /// The owner's own cancel of its run at `depth` (a shield ending with an outer cancel
    /// queued): runs the callbacks registered inside that run, here.
    pub(crate) fn run_own_scope_callbacks(&self, depth: usize) {
        let run: Vec<_> = {
            let mut cbs = lock(&self.callbacks);
            let (run, keep) = std::mem::take(&mut cbs.list)
                .into_iter()
                .partition(|(_, runs, _)| *runs > depth);
            cbs.list = keep;
            run
        };
        for (_, _, f) in run {
            drop(run_callback(f));
        }
    }

    /// Owner: a callback whose guard is dropped while a cancel of its run at `depth` (or an
    /// enclosing one) is decided but has not taken it: run at the end of that run (by
    /// [`wait_for_callbacks`](Self::wait_for_callbacks), which the count sends it to), never in
    /// the guard's drop, where the run may still hold what the callback waits for.
    pub(crate) fn defer_callback(&self, depth: usize, f: Box<dyn FnOnce() + Send>) {
        let mut cbs = lock(&self.callbacks);
        cbs.deferred.push((depth, f));
        self.runs
            .callbacks_running
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// A scope's delivery, to the owner's run at `depth` (counted in the delivery, so that run
    /// cannot end meanwhile): a callback registered on the scope fires with its cancel. The
    /// end of that run (and of the runs inside it) reports the cancel as acted on
    /// ([`wait_for_callbacks`](Self::wait_for_callbacks), which the count sends it to).
    pub(crate) fn scope_hooks_fired(&self, depth: usize) {
        let mut cbs = lock(&self.callbacks);
        cbs.hooked.push(depth);
        self.runs
            .callbacks_running
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Owner, at the end of its run at `depth`, when `callbacks_running` was non-zero after the
    /// run's fence: runs the callbacks deferred to this run, then waits until no other thread
    /// runs callbacks it took from a run at `depth` or deeper. The run's closure has returned:
    /// nothing it held is held any more. Returns whether a callback registered on a scope
    /// fired for this run or one around it ([`scope_hooks_fired`](Self::scope_hooks_fired)).
    #[cold]
    #[inline(never)]
    pub(crate) fn wait_for_callbacks(&self, depth: usize) -> bool {
        let mine: Vec<_> = {
            let mut cbs = lock(&self.callbacks);
            let (mine, keep) = std::mem::take(&mut cbs.deferred)
                .into_iter()
                .partition(|(d, _)| *d >= depth);
            cbs.deferred = keep;
            mine
        };
        for (_, f) in mine {
            // As a cancel's callbacks: a termination begun in one is acted on at the next point.
            drop(run_callback(f));
        }
        let mut cbs = lock(&self.callbacks);
        while cbs.running.iter().any(|&d| d >= depth) {
            cbs = self
                .callbacks_done
                .wait(cbs)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let hooked = cbs.hooked.iter().any(|&d| d <= depth);
        cbs.hooked.retain(|&d| d < depth);
        // The count is a hint for the fast path of a run's end: exact again here, under the
        // lock (what remains belongs to runs further out).
        let left = cbs.running.len() + cbs.deferred.len() + cbs.hooked.len();
        self.runs
            .callbacks_running
            .store(left as u32, std::sync::atomic::Ordering::SeqCst);
        hooked
    }

    pub(crate) fn set_exit_value(&self, v: Box<dyn Any + Send>) {
        *lock(&self.exit_value) = Some(v);
    }

    pub(crate) fn take_exit_value(&self) -> Option<Box<dyn Any + Send>> {
        lock(&self.exit_value).take()
    }

    /// Registers `waiter` (a thread about to block in `join`/`wait`) to be woken when this one
    /// finishes. Any number of threads may wait at once.
    pub(crate) fn add_waiter(&self, waiter: Arc<Control>) {
        lock(&self.waiters).push(waiter);
    }

    /// Removes `waiter`'s own registration, if `finish` has not taken it already; the others
    /// stay registered.
    pub(crate) fn remove_waiter(&self, waiter: &Control) {
        let mut ws = lock(&self.waiters);
        if let Some(i) = ws.iter().position(|w| std::ptr::eq(&**w, waiter)) {
            ws.swap_remove(i);
        }
    }

    /// Owner, last step: mark finished and wake every waiter.
    ///
    /// Whether the thread finished with a request pending that it never acted on; `None` while
    /// it has not finished.
    pub(crate) fn request_ignored(&self) -> Option<bool> {
        if self.word.load() & crate::word::FINISHED == 0 {
            return None;
        }
        // `finish` stores the verdict just after setting `FINISHED`: a few instructions.
        loop {
            match self.ignored.load(std::sync::atomic::Ordering::Acquire) {
                IGNORED_UNKNOWN => std::thread::yield_now(),
                v => return Some(v == IGNORED_YES),
            }
        }
    }

    /// Ordering: `FINISHED` is set before the waiters are taken under their mutex; a waiter
    /// registers under the same mutex before it reads `FINISHED`. So either a waiter sees
    /// `FINISHED`, or this sees (and wakes) the waiter.
    pub(crate) fn finish(&self) {
        let prev = self.word.finish();
        // Decided from the word `FINISHED` replaced: a request that sees `FINISHED` fails (and
        // is no request), one that does not is in `prev`.
        let ignored = prev & crate::word::PENDING != 0 && prev & crate::word::CANCELING == 0;
        self.ignored.store(
            if ignored { IGNORED_YES } else { IGNORED_NO },
            std::sync::atomic::Ordering::Release,
        );
        *lock(&self.pthread) = None;
        let waiters = std::mem::take(&mut *lock(&self.waiters));
        for w in waiters {
            w.parker.unpark();
        }
    }
}

/// Locks a mutex that protects plain data; a poisoned lock still holds valid data.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
