//! Structured threads: [`CancelScope::spawn`] and [`Nursery`].

use super::{lock, CancelScope, Canceled, Cause};
use crate::{JoinHandle, Outcome};
use std::io;
use std::sync::Mutex;

impl CancelScope {
    /// Starts a thread (as [`crate::spawn`] does) whose body runs inside this scope: a cancel
    /// of the scope (or its deadline) reaches it at its next cancellation point, and its join
    /// returns what [`run`](Self::run) returned there. A scope canceled before the thread
    /// starts its body keeps the body from starting: the thread is never orphaned in a
    /// canceled operation. (A thread started by plain [`crate::spawn`] inside a run is not in
    /// the run's scope: nothing of the scope reaches it.)
    ///
    /// The join is the thread's [`Outcome`] around its run's result;
    /// [`Outcome::flatten`] makes it one `Result` (`h.join().flatten()?`).
    ///
    /// # Errors
    /// The system's error if it refused a thread (the closure is dropped, not run).
    ///
    /// ```
    /// use std::time::Duration;
    /// let scope = thread_cancel::CancelScope::new();
    /// let h = scope.spawn(|| thread_cancel::sleep(Duration::from_secs(60))).unwrap();
    /// scope.cancel();
    /// let e = h.join().flatten().unwrap_err(); // the thread's run was canceled
    /// assert!(e.acted());
    /// ```
    pub fn spawn<F, T>(&self, f: F) -> io::Result<JoinHandle<Result<T, Canceled<T>>>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let s = self.clone();
        crate::Builder::new().spawn(move || s.run(f))
    }
}

/// Threads started in one scope and waited for together (Trio's nursery): a nursery owns a
/// child of the scope it was made from, starts threads in it ([`spawn`](Self::spawn)), and
/// [`join`](Self::join) waits for all of them. A thread that panics cancels the nursery (its
/// siblings stop at their next point) and `join` returns the panic. Dropping a nursery that
/// was not joined cancels it and waits for its threads: a canceled operation leaves no thread
/// behind.
///
/// ```
/// use std::time::Duration;
/// use thread_cancel::{CancelScope, Nursery};
/// let request = CancelScope::new();
/// let n = Nursery::new(&request);
/// for _ in 0..3 {
///     n.spawn(|| thread_cancel::sleep(Duration::from_secs(60))).unwrap();
/// }
/// request.cancel(); // every thread of the nursery stops
/// assert!(n.join().is_ok());
/// ```
#[derive(Debug)]
pub struct Nursery {
    scope: CancelScope,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Nursery {
    /// A nursery whose scope is a child of `parent`.
    ///
    /// ```
    /// let parent = thread_cancel::CancelScope::new();
    /// let n = thread_cancel::Nursery::new(&parent);
    /// parent.cancel();
    /// assert!(n.scope().is_canceled());
    /// ```
    pub fn new(parent: &CancelScope) -> Self {
        Self {
            scope: parent.child(),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// The nursery's scope: cancel it to stop every thread of the nursery.
    ///
    /// ```
    /// let n = thread_cancel::Nursery::new(&thread_cancel::CancelScope::new());
    /// n.scope().cancel();
    /// ```
    pub fn scope(&self) -> &CancelScope {
        &self.scope
    }

    /// Starts `f` on a new thread inside the nursery's scope. A panic of `f` cancels the
    /// nursery's scope and is returned by [`join`](Self::join). The returned [`Task`] gives
    /// what `f`'s run returned once the nursery has joined: its value, or the cancel that
    /// stopped it (or that it returned after).
    ///
    /// # Errors
    /// The system's error if it refused a thread (`f` is dropped, not run).
    ///
    /// ```
    /// use std::time::Duration;
    /// use thread_cancel::{CancelScope, Nursery};
    /// let n = Nursery::new(&CancelScope::new());
    /// let quick = n.spawn(|| 6 * 7).unwrap();
    /// let slow = n.spawn(|| thread_cancel::sleep(Duration::from_secs(60))).unwrap();
    /// n.scope().cancel(); // the slow one stops at its sleep
    /// n.join().unwrap();
    /// assert!(quick.result().is_some()); // 42, or canceled if the cancel came first
    /// assert!(slow.result().unwrap().unwrap_err().acted()); // which one was canceled
    /// ```
    pub fn spawn<F, T>(&self, f: F) -> io::Result<Task<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let scope = self.scope.clone();
        let slot: Slot<T> = std::sync::Arc::new(Mutex::new(None));
        let theirs = slot.clone();
        let h = crate::Builder::new().spawn(move || {
            let guard = CancelOnPanic(&scope);
            let r = scope.run(f);
            std::mem::forget(guard);
            *lock(&theirs) = Some(r);
        })?;
        lock(&self.threads).push(h);
        Ok(Task { slot })
    }

    /// Waits for every thread of the nursery (those started while it waits too).
    ///
    /// # Errors
    /// The payload of the first thread that panicked (the others were canceled by it and
    /// waited for).
    ///
    /// ```
    /// let n = thread_cancel::Nursery::new(&thread_cancel::CancelScope::new());
    /// n.spawn(|| -> () { std::panic::panic_any(7) }).unwrap();
    /// assert!(n.join().is_err());
    /// ```
    pub fn join(self) -> std::thread::Result<()> {
        self.join_all()
    }

    fn join_all(&self) -> std::thread::Result<()> {
        let mut first = Ok(());
        loop {
            let Some(h) = lock(&self.threads).pop() else {
                return first;
            };
            // The wait is a cancellation point: if the owner is canceled here, the handle goes
            // back to the nursery (whose drop cancels and joins it), never detached.
            let mut back = PutBack(&self.threads, Some(h));
            back.1.as_ref().expect("held").wait();
            let h = back.1.take().expect("held");
            match h.join() {
                Outcome::Panicked(p) if first.is_ok() => first = Err(p),
                // A thread cancel or exit of a nursery thread ends that thread only.
                _ => {}
            }
        }
    }
}

impl Drop for Nursery {
    fn drop(&mut self) {
        if !lock(&self.threads).is_empty() {
            self.scope.cancel();
            let _ = self.join_all();
        }
    }
}

/// Where a nursery thread leaves what its run returned.
type Slot<T> = std::sync::Arc<Mutex<Option<Result<T, Canceled<T>>>>>;

/// A thread of a [`Nursery`]: what its run returned, once the nursery has joined.
///
/// ```
/// let n = thread_cancel::Nursery::new(&thread_cancel::CancelScope::new());
/// let t = n.spawn(|| "done").unwrap();
/// n.join().unwrap();
/// assert_eq!(t.result(), Some(Ok("done")));
/// ```
#[derive(Debug)]
pub struct Task<T> {
    slot: Slot<T>,
}

impl<T> Task<T> {
    /// What the task's run returned — `Ok(value)`, or the nursery's cancel
    /// ([`Canceled`], with the value if the closure returned after it) — once its thread has
    /// ended (after [`Nursery::join`], or the nursery's drop). `None` before that, and for a
    /// task that panicked (the nursery's `join` returns the panic) or whose thread was ended by
    /// a thread cancel or `exit`.
    pub fn result(self) -> Option<Result<T, Canceled<T>>> {
        lock(&self.slot).take()
    }

    /// Whether the task's run has ended and left its result (which [`result`](Self::result)
    /// then returns); false while it runs, and for a task that panicked.
    ///
    /// ```
    /// let n = thread_cancel::Nursery::new(&thread_cancel::CancelScope::new());
    /// let t = n.spawn(|| 1).unwrap();
    /// while !t.is_done() {
    ///     std::thread::yield_now();
    /// }
    /// n.join().unwrap();
    /// ```
    pub fn is_done(&self) -> bool {
        lock(&self.slot).is_some()
    }
}

/// Puts a handle back into the nursery if the owner's wait for it is canceled.
struct PutBack<'a>(&'a Mutex<Vec<JoinHandle<()>>>, Option<JoinHandle<()>>);

impl Drop for PutBack<'_> {
    fn drop(&mut self) {
        if let Some(h) = self.1.take() {
            lock(self.0).push(h);
        }
    }
}

/// Cancels the nursery's scope if the thread's body panics.
struct CancelOnPanic<'a>(&'a CancelScope);

impl Drop for CancelOnPanic<'_> {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

// The join of a thread started in a scope as one `Result`: here, beside `CancelScope::spawn`,
// so that `thread` (where `Outcome` lives) does not import the scope's error types.
impl<T> Outcome<Result<T, Canceled<T>>> {
    /// The join of a thread started in a scope ([`CancelScope::spawn`](crate::CancelScope::spawn))
    /// as one `Result`: the thread's value, or the cancel that stopped it — so `?` passes it on
    /// (into `io::Error`, `Box<dyn Error>`, `anyhow::Error`, as any [`Canceled`]).
    ///
    /// Nothing is lost on the way: a cancel of the scope (or its deadline) is the run's own
    /// [`Canceled`], with its cause, whether it [acted](Canceled::acted), and the closure's
    /// value if it returned after the cancel (a late return stays an error; take the value by
    /// name: [`into_value`](Canceled::into_value)); a cancel of the thread itself (its
    /// [`JoinHandle::cancel`](crate::JoinHandle::cancel)) is a [`Canceled`] whose cause is
    /// [`Cause::Thread`]; a value given to [`exit`](crate::exit) is taken as the thread's
    /// return. Match on the `Outcome` instead to handle a panic as a value.
    ///
    /// # Errors
    /// The [`Canceled`] of the scope's cancel or deadline, if either came before the run ended,
    /// or one with cause [`Cause::Thread`] if the thread was canceled as a thread.
    ///
    /// # Panics
    /// If the thread panicked: its panic is resumed in the caller with the same payload (as
    /// [`unwrap`](Self::unwrap) and `std::thread::scope` do).
    ///
    /// ```
    /// use std::time::Duration;
    /// use thread_cancel::{CancelScope, Canceled};
    ///
    /// fn checksum(scope: &CancelScope, data: Vec<u8>) -> std::io::Result<u32> {
    ///     let h = scope.spawn(move || data.iter().map(|&b| u32::from(b)).sum::<u32>())?;
    ///     Ok(h.join().flatten()?)
    /// }
    /// let scope = CancelScope::new();
    /// assert_eq!(checksum(&scope, vec![1, 2, 3]).unwrap(), 6);
    ///
    /// // A scope's cancel stops a thread blocked in a cancellation point: one `Err`.
    /// let h = scope.spawn(|| thread_cancel::sleep(Duration::from_secs(60))).unwrap();
    /// scope.cancel();
    /// let e = h.join().flatten().unwrap_err();
    /// assert!(e.acted() && e.value().is_none());
    /// let e = checksum(&scope, vec![1]).unwrap_err(); // the scope is canceled: never started
    /// assert!(Canceled::from_io_error(&e).is_some());
    ///
    /// // A late return stays an error, its value kept.
    /// let late = CancelScope::new();
    /// let l = late.clone();
    /// let h = late.spawn(move || { l.cancel(); "done anyway" }).unwrap(); // no point after
    /// let e = h.join().flatten().unwrap_err();
    /// assert!(!e.acted());
    /// assert_eq!(e.into_value(), Some("done anyway"));
    /// ```
    pub fn flatten(self) -> Result<T, Canceled<T>> {
        match self {
            Outcome::Returned(r) | Outcome::Exited(r) => r,
            Outcome::Canceled => Err(Canceled::new(Cause::Thread, true, None)),
            Outcome::Panicked(p) => std::panic::resume_unwind(p),
        }
    }
}
