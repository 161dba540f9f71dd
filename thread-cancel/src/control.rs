//! The per-thread control block, shared (`Arc`) by the thread and every handle that can cancel it.

use crate::parker::Parker;
use crate::state::{Request, StateWord};
use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex, PoisonError};

/// Everything another thread may touch of a thread: its state word and its wake-up token.
#[derive(Debug)]
pub(crate) struct Control {
    pub(crate) state: StateWord,
    pub(crate) parker: Parker,
    /// The thread blocked in `join` on this one, woken when this one finishes.
    joiner: Mutex<Option<Arc<Control>>>,
    /// The value passed to `exit()`, taken by the thread's root.
    exit_value: Mutex<Option<Box<dyn Any + Send>>>,
    /// For threads spawned by the crate: the type `exit()` must be given.
    pub(crate) exit_type: Option<TypeId>,
    /// The `std` handle of the thread, to wake it from `std::thread::park`.
    thread: std::sync::OnceLock<std::thread::Thread>,
    /// `on_cancel` callbacks, run by the first request.
    callbacks: Mutex<Callbacks>,
    /// Owner: inside a cancellable system call (published before the trampoline reads the
    /// word; a request `fetch_or`s `PENDING` before observing this, with an asymmetric fence
    /// between the two sides: `sys::publish_in_syscall` / `observe_in_syscall`). So either the
    /// trampoline sees the request, or the request sees the flag and sends the signal.
    pub(crate) in_syscall: std::sync::atomic::AtomicBool,
    /// The thread's pthread id while it is alive (cleared under the lock by `finish`), so the
    /// cancel signal is never sent to a thread that has gone.
    pthread: Mutex<Option<libc::pthread_t>>,
    /// Owner: the innermost asynchronous region the thread is in, or null (`region.rs`). Set
    /// with `SeqCst` before the region's entry reads the word, read with `SeqCst` by a request
    /// after its `fetch_or`: either the entry sees the request or the request sends the signal.
    pub(crate) region: std::sync::atomic::AtomicPtr<crate::sys::RegionCtx>,
}

#[derive(Default)]
struct Callbacks {
    next_id: u64,
    list: Vec<(u64, Box<dyn FnOnce() + Send>)>,
}

impl std::fmt::Debug for Callbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callbacks")
            .field("len", &self.list.len())
            .finish()
    }
}

impl Control {
    pub(crate) fn new(exit_type: Option<TypeId>) -> Self {
        Self {
            state: StateWord::new(),
            parker: Parker::new(),
            joiner: Mutex::new(None),
            exit_value: Mutex::new(None),
            exit_type,
            thread: std::sync::OnceLock::new(),
            callbacks: Mutex::new(Callbacks::default()),
            in_syscall: std::sync::atomic::AtomicBool::new(false),
            pthread: Mutex::new(None),
            region: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// A control block for a thread that is already gone.
    pub(crate) fn finished() -> Self {
        Self {
            state: StateWord::finished(),
            ..Self::new(None)
        }
    }

    /// Queues a cancellation request and wakes the thread if it waits (R01, R08).
    ///
    /// Async-cancel-safe: a caller inside an asynchronous region holds its own cancellation
    /// while this takes locks, and acts on it (if it canceled itself) once they are released.
    pub(crate) fn cancel(&self) -> Result<(), crate::NoSuchThread> {
        let shield = crate::region::shield();
        let r = self.request();
        crate::region::unshield(shield);
        r
    }

    fn request(&self) -> Result<(), crate::NoSuchThread> {
        use std::sync::atomic::Ordering::SeqCst;
        match self.state.request() {
            Request::Finished => Err(crate::NoSuchThread),
            Request::Merged => Ok(()),
            Request::Queued { prev } => {
                // Only a thread inside our system calls or in a region with the type
                // asynchronous needs the signal, and never the caller itself (it acts when it
                // leaves `cancel`). `ASYNC` is read from the same word as the request: a thread
                // that turns it on after this request sees the request when it does.
                let in_async_region =
                    prev & crate::state::ASYNC != 0 && !self.region.load(SeqCst).is_null();
                // A disabled thread is never signalled: it acts only after it enables, an owner
                // read-modify-write that sees this request, and its next point acts on it. (A
                // signal now would only make its calls fail with EINTR.)
                let me = crate::current::is_current(self) || prev & crate::state::DISABLED != 0;
                // A thread blocked in a call has published the flag long ago: signal it first.
                let signalled = in_async_region || self.in_syscall.load(SeqCst);
                if signalled && !me {
                    self.interrupt();
                }
                let parked = self.parker.unpark();
                if let Some(t) = self.thread.get() {
                    t.unpark();
                }
                // The flag looked clear: make sure (the fence's heavy side), after the wake-ups
                // so that it never delays them. Not needed for a thread we found parked: it is
                // not in a system call, and it leaves `park` through an acquiring read of our
                // token, after which every load of its word (the trampoline's included) sees
                // this request. That spares a blocked waiter the fence's interrupt (P3).
                if !signalled && !me && !parked && crate::sys::observe_in_syscall(&self.in_syscall)
                {
                    self.interrupt();
                }
                let run = std::mem::take(&mut lock(&self.callbacks).list);
                for (_, f) in run {
                    f();
                }
                Ok(())
            }
        }
    }

    /// Owner: records its `std` handle (for `park`) and its pthread id (for the signal).
    pub(crate) fn set_thread(&self, t: std::thread::Thread) {
        let _ = self.thread.set(t);
        self.set_pthread();
    }

    /// Owner: records its pthread id only (a thread created for the C ABI, which never parks
    /// through `std` and must not make `std` register a thread-local destructor).
    pub(crate) fn set_pthread(&self) {
        // SAFETY: `pthread_self` has no preconditions.
        *lock(&self.pthread) = Some(unsafe { libc::pthread_self() });
    }

    /// Sends `sig` to the thread if it is alive: `pthread_kill`'s result, or `None` if the
    /// thread has finished. The id is read and used under the lock that `finish` clears it
    /// under, so it never names a gone thread.
    pub(crate) fn send_signal(&self, sig: i32) -> Option<i32> {
        let t = lock(&self.pthread);
        // SAFETY: as in `interrupt`.
        t.map(|t| unsafe { libc::pthread_kill(t, sig) })
    }

    /// Sends the cancel signal to the thread, blocked in a cancellable system call.
    fn interrupt(&self) {
        let Some(sig) = crate::sys::signal() else {
            return;
        };
        let t = lock(&self.pthread);
        if let Some(t) = *t {
            // SAFETY: the id is cleared (under this lock) by `finish` before the thread ends,
            // so it names a live thread while we hold the lock.
            unsafe { crate::sys::kill(t, sig) };
        }
    }

    /// Registers a callback run by the first request; runs it at once (and returns `None`) if a
    /// request is already pending. Exactly once either way: the request's `fetch_or` precedes
    /// its drain under the same mutex that this check-and-push holds.
    pub(crate) fn add_callback(&self, f: Box<dyn FnOnce() + Send>) -> Option<u64> {
        let mut cbs = lock(&self.callbacks);
        if self.state.load() & crate::state::PENDING != 0 {
            drop(cbs);
            f();
            return None;
        }
        let id = cbs.next_id;
        cbs.next_id += 1;
        cbs.list.push((id, f));
        Some(id)
    }

    /// Removes a callback that has not run; returns whether it was still registered.
    pub(crate) fn remove_callback(&self, id: u64) -> bool {
        let mut cbs = lock(&self.callbacks);
        let before = cbs.list.len();
        cbs.list.retain(|(i, _)| *i != id);
        cbs.list.len() != before
    }

    pub(crate) fn set_exit_value(&self, v: Box<dyn Any + Send>) {
        *lock(&self.exit_value) = Some(v);
    }

    pub(crate) fn take_exit_value(&self) -> Option<Box<dyn Any + Send>> {
        lock(&self.exit_value).take()
    }

    /// Registers (or, with `None`, removes) the thread waiting for this one to finish.
    pub(crate) fn set_joiner(&self, joiner: Option<Arc<Control>>) {
        *lock(&self.joiner) = joiner;
    }

    /// Owner, last step: mark finished and wake the joiner.
    ///
    /// Ordering: `FINISHED` is set before the joiner slot is read under its mutex; a joiner
    /// registers under the same mutex before it reads `FINISHED`. So either the joiner sees
    /// `FINISHED`, or this sees the joiner.
    pub(crate) fn finish(&self) {
        self.state.finish();
        *lock(&self.pthread) = None;
        if let Some(j) = lock(&self.joiner).take() {
            j.parker.unpark();
        }
    }
}

/// Locks a mutex that protects plain data; a poisoned lock still holds valid data.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
