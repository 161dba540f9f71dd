//! Blocking tasks on a tokio runtime whose abort really stops them (Cargo feature `tokio`).
//!
//! Tokio's own [`tokio::task::spawn_blocking`][tokio-spawn-blocking] cannot stop a closure that
//! is running: its [`JoinHandle::abort`][tokio-abort] only keeps a task that has not started
//! from starting ([tokio issue 4853][tokio-4853]), so an aborted request keeps its blocking
//! thread, its descriptors and its locks until the blocking call returns by itself, perhaps
//! never.
//!
//! [`spawn_blocking`] here runs the closure in a [`CancelScope`] on the runtime's blocking pool.
//! [`BlockingHandle::abort`] cancels that scope: the closure is stopped at its next cancellation
//! point (a blocked [`io::read`](crate::io::read), [`sync`](crate::sync) channel receive,
//! [`sleep`](crate::sleep), ... returns by unwinding, and every `Drop` between that point and
//! the closure runs), and the handle's await yields a [`BlockingError`] whose
//! [`is_cancelled`](BlockingError::is_cancelled) is true. A call that completed is never undone:
//! a read that returned its bytes is kept, and the abort is acted on at the next point. The
//! blocking thread itself survives, clean, and takes the runtime's next blocking task.
//!
//! What is interrupted is what a [`CancelScope`] interrupts: this crate's cancellation points.
//! A closure blocked in `std::io`, `std::net` or a third-party client finishes that call first
//! (see the crate's table of cancellation points; [`on_cancel`](crate::on_cancel) can make such a
//! call return, e.g. by shutting its socket down).
//!
//! Cancel the task, not the pool's thread: a cancellation of the thread itself (from
//! [`current`](crate::current)`().cancel()` or [`exit`](crate::exit) in the closure) unwinds to
//! tokio's `catch_unwind`, which reports it as a panic, and the request stays pending on that
//! thread, so its later tasks fail at their first cancellation point.
//!
//! ```
//! use std::os::fd::AsFd;
//! use thread_cancel::io;
//!
//! let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
//! let (r, _w) = std::io::pipe().unwrap(); // nothing is ever written
//! let (started_tx, started) = std::sync::mpsc::channel();
//! let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), move || {
//!     started_tx.send(()).unwrap();
//!     let mut buf = [0u8; 64];
//!     io::read(r.as_fd(), &mut buf) // blocks: no data, the writer is open
//! });
//! started.recv().unwrap(); // the closure runs (and blocks in the read)
//! task.abort();
//! let err = rt.block_on(task).unwrap_err();
//! assert!(err.is_cancelled());
//! ```
//!
//! Dropping the handle stops the task too, as dropping a future stops its work in async Rust:
//! `tokio::time::timeout(d, handle)` that times out, the losing branch of a `select!`, a
//! request's future dropped when its client leaves, all stop the blocking closure. Work that
//! should run on without anyone waiting for it says so: [`BlockingHandle::detach`].
//!
//! ```
//! use std::time::Duration;
//! let rt = tokio::runtime::Builder::new_multi_thread().enable_time().build().unwrap();
//! rt.block_on(async {
//!     let work = thread_cancel::tokio::spawn_blocking(|| {
//!         thread_cancel::sleep(Duration::from_secs(60)) // a cancellation point
//!     });
//!     let scope = work.scope().clone();
//!     // The timeout drops the handle: the sleep is stopped, the blocking thread is free.
//!     assert!(tokio::time::timeout(Duration::from_millis(10), work).await.is_err());
//!     assert!(scope.is_canceled());
//! });
//! ```
//!
//! A deadline: [`spawn_blocking_with_timeout`], or [`spawn_blocking_in`] with a scope of your
//! own (a [`CancelScope::with_deadline`], or a request's scope: the task is then canceled with
//! it).
//!
//! [tokio-spawn-blocking]: https://docs.rs/tokio/1/tokio/task/fn.spawn_blocking.html
//! [tokio-abort]: https://docs.rs/tokio/1/tokio/task/struct.JoinHandle.html#method.abort
//! [tokio-4853]: https://github.com/tokio-rs/tokio/issues/4853

use crate::{CancelScope, Canceled};
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Runs `f` on the current tokio runtime's blocking pool, inside a new [`CancelScope`]: like
/// [`tokio::task::spawn_blocking`][tokio-spawn-blocking], except that [`BlockingHandle::abort`]
/// stops `f` while it runs (at its next cancellation point; its `Drop`s run).
///
/// Unlike tokio's `JoinHandle`, dropping the handle stops the task too (a timeout, a `select!`,
/// a dropped request); [`BlockingHandle::detach`] lets it run on.
///
/// # Panics
/// If called outside a tokio runtime (as `tokio::task::spawn_blocking`); see
/// [`spawn_blocking_on`].
///
/// ```
/// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
/// rt.block_on(async {
///     let task = thread_cancel::tokio::spawn_blocking(|| 6 * 7);
///     assert_eq!(task.await.unwrap(), 42);
/// });
/// ```
///
/// [tokio-spawn-blocking]: https://docs.rs/tokio/1/tokio/task/fn.spawn_blocking.html
pub fn spawn_blocking<F, R>(f: F) -> BlockingHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    start(&::tokio::runtime::Handle::current(), CancelScope::new(), f)
}

/// [`spawn_blocking`] on the runtime of `handle` (callable from any thread, inside a runtime or
/// not).
///
/// ```
/// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
/// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || "done");
/// assert_eq!(rt.block_on(task).unwrap(), "done");
/// ```
pub fn spawn_blocking_on<F, R>(handle: &::tokio::runtime::Handle, f: F) -> BlockingHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    start(handle, CancelScope::new(), f)
}

/// [`spawn_blocking`] with a deadline `timeout` from now: when it passes, `f` is stopped at its
/// next cancellation point and the await yields an error whose
/// [`deadline_passed`](BlockingError::deadline_passed) (and `is_cancelled`) is true.
///
/// The time counts from this call: time spent waiting for a free blocking thread counts, and a
/// task whose deadline passed before it started never runs `f`.
///
/// # Panics
/// If called outside a tokio runtime.
///
/// ```
/// use std::time::Duration;
/// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
/// rt.block_on(async {
///     let task = thread_cancel::tokio::spawn_blocking_with_timeout(Duration::from_millis(10), || {
///         thread_cancel::sleep(Duration::from_secs(60)) // a cancellation point
///     });
///     let err = task.await.unwrap_err();
///     assert!(err.is_cancelled() && err.deadline_passed());
/// });
/// ```
pub fn spawn_blocking_with_timeout<F, R>(timeout: Duration, f: F) -> BlockingHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    start(
        &::tokio::runtime::Handle::current(),
        CancelScope::with_timeout(timeout),
        f,
    )
}

/// [`spawn_blocking`] in a [`child`](CancelScope::child) of `scope`: the task is canceled when
/// `scope` is (or when its deadline passes), and [`BlockingHandle::abort`] cancels this task
/// only, not `scope`.
///
/// # Panics
/// If called outside a tokio runtime.
///
/// ```
/// use std::time::Duration;
/// use thread_cancel::CancelScope;
///
/// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
/// rt.block_on(async {
///     let request = CancelScope::new(); // e.g. canceled when the client leaves
///     let a = thread_cancel::tokio::spawn_blocking_in(&request, || {
///         thread_cancel::sleep(Duration::from_secs(60))
///     });
///     let b = thread_cancel::tokio::spawn_blocking_in(&request, || {
///         thread_cancel::sleep(Duration::from_secs(60))
///     });
///     request.cancel(); // both tasks stop
///     assert!(a.await.unwrap_err().is_cancelled());
///     assert!(b.await.unwrap_err().is_cancelled());
/// });
/// ```
pub fn spawn_blocking_in<F, R>(scope: &CancelScope, f: F) -> BlockingHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    start(&::tokio::runtime::Handle::current(), scope.child(), f)
}

/// Starts `f` in `scope` on `handle`'s blocking pool, with its shutdown guard: an async task
/// on the same runtime that waits for the blocking task to end, and cancels its scope if it is
/// dropped first. Tokio has no shutdown hook, but a runtime that shuts down drops its async
/// tasks (its workers do) before it waits for its blocking threads: so shutdown cancels the
/// crate's blocking tasks still running, and does not wait for them. It relies on that order
/// (tokio 1's `Runtime::drop` and `shutdown_timeout`), and costs one small async task per
/// blocking task.
fn start<F, R>(handle: &::tokio::runtime::Handle, scope: CancelScope, f: F) -> BlockingHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let (ended, ended_rx) = ::tokio::sync::oneshot::channel::<()>();
    let s = scope.clone();
    // (`run` adopts the pool's thread on first use, and leaves it as it found it, nothing
    // pending and no signal on its way, whatever `f` did: the thread takes its next task clean.)
    let task = handle.spawn_blocking(move || {
        let r = s.run(f);
        drop(ended);
        r
    });
    drop(handle.spawn(ShutdownGuard {
        scope: Some(scope.clone()),
        ended: ended_rx,
    }));
    BlockingHandle {
        scope,
        task,
        abort_on_drop: true,
    }
}

/// See [`start`]: cancels the blocking task's scope if dropped before the task ended (the
/// runtime shuts down).
struct ShutdownGuard {
    /// `None` once the task ended.
    scope: Option<CancelScope>,
    /// Closed when the blocking closure has returned (or was dropped unstarted).
    ended: ::tokio::sync::oneshot::Receiver<()>,
}

impl Future for ShutdownGuard {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match Pin::new(&mut self.ended).poll(cx) {
            Poll::Ready(_) => {
                self.scope = None;
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for ShutdownGuard {
    fn drop(&mut self) {
        if let Some(s) = self.scope.take() {
            s.cancel_with(RuntimeShutdown);
        }
    }
}

/// The cause of a blocking task's cancel when its runtime shut down while it ran
/// ([`Canceled::cause`](crate::Canceled::cause) is a [`Cause::Error`](crate::Cause::Error)
/// holding it).
///
/// ```
/// use std::time::Duration;
/// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
/// let (started_tx, started) = std::sync::mpsc::channel();
/// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), move || {
///     started_tx.send(()).unwrap();
///     thread_cancel::sleep(Duration::from_secs(60))
/// });
/// let scope = task.scope().clone();
/// started.recv().unwrap();
/// rt.shutdown_timeout(Duration::from_secs(10)); // returns at once: the task is canceled
/// assert!(scope.is_canceled());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuntimeShutdown;

impl std::fmt::Display for RuntimeShutdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the tokio runtime shut down")
    }
}

impl std::error::Error for RuntimeShutdown {}

/// A `tokio_util` [`CancellationToken`](tokio_util::sync::CancellationToken) canceled with
/// `scope` (by its cancel, a parent's, or its deadline — also once every handle of `scope` is
/// dropped, which is often all async code keeps of it): for async code that takes a token.
/// It needs no runtime and no thread: the scope cancels the token from a callback registered
/// on it ([`CancelScope::on_cancel`]). Canceling the token does not cancel the scope (see
/// [`linked_with_token`] for both directions).
///
/// ```
/// let scope = thread_cancel::CancelScope::new();
/// let token = thread_cancel::tokio::token_for(&scope);
/// scope.cancel();
/// assert!(token.is_cancelled());
/// ```
pub fn token_for(scope: &CancelScope) -> ::tokio_util::sync::CancellationToken {
    let token = ::tokio_util::sync::CancellationToken::new();
    let t = token.clone();
    scope.on_cancel(move || t.cancel()).keep();
    token
}

/// A child of `scope` canceled with `token` too, and whose cancel cancels `token`: the two
/// are canceled together, whichever is canceled first. The direction from the token needs a
/// task on the current runtime (a token has no callback to register): a small async task
/// that waits for either and ends with the first; it relies on that runtime running until
/// then (a runtime that shuts down drops the task, and the direction from the token with it).
/// No thread per conversion.
///
/// # Panics
/// If called outside a tokio runtime (see [`linked_with_token_on`]).
///
/// ```
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     let token = tokio_util::sync::CancellationToken::new();
///     let scope = thread_cancel::tokio::linked_with_token(&thread_cancel::CancelScope::new(), &token);
///     token.cancel();
///     scope.cancelled().await; // the task canceled it
/// });
/// ```
pub fn linked_with_token(
    scope: &CancelScope,
    token: &::tokio_util::sync::CancellationToken,
) -> CancelScope {
    linked_with_token_on(&::tokio::runtime::Handle::current(), scope, token)
}

/// [`linked_with_token`], its task on the runtime of `handle`.
///
/// ```
/// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
/// let token = tokio_util::sync::CancellationToken::new();
/// let scope = thread_cancel::tokio::linked_with_token_on(rt.handle(), &thread_cancel::CancelScope::new(), &token);
/// scope.cancel();
/// assert!(token.is_cancelled());
/// ```
pub fn linked_with_token_on(
    handle: &::tokio::runtime::Handle,
    scope: &CancelScope,
    token: &::tokio_util::sync::CancellationToken,
) -> CancelScope {
    let child = scope.child();
    let t = token.clone();
    child.on_cancel(move || t.cancel()).keep();
    let (s, t) = (child.clone(), token.clone());
    drop(handle.spawn(async move {
        let from_token = t.cancelled();
        let from_scope = s.cancelled();
        let mut from_token = std::pin::pin!(from_token);
        let mut from_scope = std::pin::pin!(from_scope);
        std::future::poll_fn(|cx| {
            if from_token.as_mut().poll(cx).is_ready() {
                return Poll::Ready(true);
            }
            from_scope.as_mut().poll(cx).map(|()| false)
        })
        .await
        .then(|| s.cancel());
    }));
    child
}

/// The handle of a task started by [`spawn_blocking`]: await it for the closure's value,
/// [`abort`](Self::abort) it, or drop it to stop it.
///
/// It is a `Future` with output `Result<R, BlockingError<R>>`. **Dropping it before the task
/// ended aborts the task** (as tokio-util's `AbortOnDropHandle` and smol's `Task`; unlike
/// tokio's own `JoinHandle`, which detaches): `tokio::time::timeout(d, handle)` that times out,
/// the losing branch of a `select!`, an async request dropped when its client leaves, all stop
/// the blocking work instead of leaving it running on a pool thread. To let the task run on
/// unwatched, say so with [`detach`](Self::detach); to stop waiting without stopping the task,
/// await it by reference (`timeout(d, &mut handle)`: the handle stays yours). A handle whose
/// task has ended (awaited, or [finished](Self::is_finished)) cancels nothing when dropped.
///
/// A cancel by a drop is the same cancel as [`abort`](Self::abort): the closure stops at its
/// next cancellation point. A closure in a call that is not one (std's I/O, a third-party
/// client) finishes that call first and its value is dropped with the task; the cancel stays
/// visible on the task's [scope](Self::scope) (`is_canceled`), and the crate's diagnostic
/// (`THREAD_CANCEL_REPORT_MS`) reports a run still going after it.
///
/// When the runtime shuts down, a task still running is canceled (its scope's cause is
/// [`RuntimeShutdown`]): the shutdown does not wait for it.
///
/// # Errors
/// The await yields a [`BlockingError`] if
/// - [`is_cancelled`](BlockingError::is_cancelled): the task was [aborted](Self::abort), its
///   [scope](Self::scope) was canceled or its deadline passed
///   ([`deadline_passed`](BlockingError::deadline_passed)) before it ended: the closure was
///   stopped at a cancellation point, never started (also when the runtime shut down before it
///   started), or returned after the cancel — then its value is kept
///   ([`into_value`](BlockingError::into_value)), as [`CancelScope::run`] keeps it;
/// - [`is_panic`](BlockingError::is_panic): the closure panicked, or canceled or exited its
///   own (pool) thread, which tokio reports as a panic.
///
/// ```
/// use std::time::Duration;
/// let rt = tokio::runtime::Builder::new_multi_thread().enable_time().build().unwrap();
/// rt.block_on(async {
///     let task = thread_cancel::tokio::spawn_blocking(|| 1);
///     let r: Result<i32, thread_cancel::tokio::BlockingError<i32>> = task.await;
///     assert_eq!(r.unwrap(), 1);
///
///     // The losing branch of a `select!` is dropped: its blocking work is stopped.
///     let slow = thread_cancel::tokio::spawn_blocking(|| {
///         thread_cancel::sleep(Duration::from_secs(60))
///     });
///     let scope = slow.scope().clone();
///     tokio::select! {
///         _ = slow => unreachable!("it sleeps for a minute"),
///         () = std::future::ready(()) => {}
///     }
///     assert!(scope.is_canceled());
/// });
/// ```
#[must_use = "dropping a `BlockingHandle` cancels its task: await it, or `.detach()` it to let it run"]
#[derive(Debug)]
pub struct BlockingHandle<R> {
    scope: CancelScope,
    task: ::tokio::task::JoinHandle<Result<R, Canceled<R>>>,
    /// Whether a drop aborts the task: false once the await returned, or after `detach`.
    abort_on_drop: bool,
}

impl<R> BlockingHandle<R> {
    /// Stops the task: a closure that runs is stopped at its next cancellation point (the
    /// blocking call it is in returns by unwinding, its `Drop`s run), and a task that has not
    /// started never runs its closure. The await then yields an error whose
    /// [`is_cancelled`](BlockingError::is_cancelled) is true; if the closure had already
    /// returned, its value is kept in it ([`BlockingError::into_value`]). Returns at once;
    /// aborting twice is aborting once.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || {
    ///     thread_cancel::sleep(Duration::from_secs(60))
    /// });
    /// task.abort();
    /// assert!(rt.block_on(task).unwrap_err().is_cancelled());
    /// ```
    pub fn abort(&self) {
        self.scope.cancel();
        self.task.abort();
    }

    /// Whether the task has finished (returned, stopped, or panicked): an await would not wait.
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || ());
    /// while !task.is_finished() {
    ///     std::thread::yield_now();
    /// }
    /// assert!(rt.block_on(task).is_ok());
    /// ```
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// The task's scope. Canceling it is [`abort`](Self::abort) minus the tokio abort (a task
    /// that has not started still starts, and returns at once without running the closure): a
    /// clone can be kept to stop the task while the handle is being awaited elsewhere. Its
    /// [`deadline`](CancelScope::deadline) is the task's, if any.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || {
    ///     thread_cancel::sleep(Duration::from_secs(60))
    /// });
    /// let stop = task.scope().clone();
    /// let waiter = rt.spawn(task); // awaited by another task
    /// stop.cancel();
    /// assert!(rt.block_on(waiter).unwrap().unwrap_err().is_cancelled());
    /// ```
    pub fn scope(&self) -> &CancelScope {
        &self.scope
    }

    /// Lets the task run to its end with nobody waiting for it: the handle goes, the task
    /// stays (what dropping tokio's `JoinHandle` does). Its value is dropped when it returns;
    /// a panic is reported by the panic hook only. The task can still be stopped by its scope
    /// (keep a clone of [`scope`](Self::scope) first), by the scope it was started in, by its
    /// deadline, and by the runtime's shutdown.
    ///
    /// To let it run on and still collect its result, hand the handle to an async task
    /// instead: `tokio::spawn(handle)` gives tokio's `JoinHandle`, which detaches when dropped.
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let (done_tx, done) = std::sync::mpsc::channel();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), move || {
    ///     done_tx.send("flushed").unwrap(); // e.g. writing a log file out
    /// });
    /// let scope = task.scope().clone();
    /// task.detach(); // the handle goes, the work goes on
    /// assert_eq!(done.recv().unwrap(), "flushed");
    /// assert!(!scope.is_canceled());
    /// ```
    pub fn detach(mut self) {
        self.abort_on_drop = false;
    }
}

/// Aborts the task if it has not ended (see [`BlockingHandle`]): a handle awaited to its end,
/// finished, or [detached](BlockingHandle::detach) cancels nothing.
impl<R> Drop for BlockingHandle<R> {
    fn drop(&mut self) {
        if self.abort_on_drop && !self.task.is_finished() {
            self.abort();
        }
    }
}

impl<R> Future for BlockingHandle<R> {
    type Output = Result<R, BlockingError<R>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let r = match Pin::new(&mut self.task).poll(cx) {
            Poll::Ready(r) => r,
            Poll::Pending => return Poll::Pending,
        };
        // The task has ended: nothing left for a drop to stop.
        self.abort_on_drop = false;
        Poll::Ready(match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(c)) => Err(BlockingError::cancelled(c)),
            // Aborted before it started (by `abort`, or the runtime's shutdown).
            Err(e) if e.is_cancelled() => Err(BlockingError::cancelled(Canceled::new(
                self.scope.cause(),
                true,
                None,
            ))),
            Err(e) => Err(BlockingError {
                repr: Repr::Panic(e),
            }),
        })
    }
}

/// Why a [`BlockingHandle`]'s task did not simply return its value: it was canceled
/// ([`is_cancelled`](Self::is_cancelled); the closure's value kept if it returned after the
/// cancel: [`into_value`](Self::into_value)), or its closure panicked
/// ([`is_panic`](Self::is_panic)), reported as tokio reports it.
///
/// As an [`io::Error`](std::io::Error), as a [`Canceled`] converts: `Other`
/// if canceled, `TimedOut` if its deadline passed (never `Interrupted`, which std's retry loops
/// retry); `Other` for a panic. [`Canceled::from_io_error`](crate::Canceled::from_io_error)
/// tells a cancellation from a panic.
///
/// ```
/// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
/// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || thread_cancel::sleep(std::time::Duration::from_secs(60)));
/// task.abort();
/// let e = std::io::Error::from(rt.block_on(task).unwrap_err());
/// assert_eq!(e.kind(), std::io::ErrorKind::Other);
/// assert!(thread_cancel::Canceled::from_io_error(&e).is_some());
/// ```
#[derive(Debug)]
pub struct BlockingError<R = ()> {
    repr: Repr<R>,
}

#[derive(Debug)]
enum Repr<R> {
    Cancelled(Canceled<R>),
    Panic(::tokio::task::JoinError),
}

impl<R> BlockingError<R> {
    fn cancelled(c: Canceled<R>) -> Self {
        Self {
            repr: Repr::Cancelled(c),
        }
    }

    /// The cancel, if the task was canceled: its cause, whether it acted, the closure's value
    /// if it returned (see [`Canceled`]).
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || {
    ///     thread_cancel::sleep(std::time::Duration::from_secs(60))
    /// });
    /// task.abort();
    /// let e = rt.block_on(task).unwrap_err();
    /// assert!(e.canceled().unwrap().acted());
    /// ```
    pub fn canceled(&self) -> Option<&Canceled<R>> {
        match &self.repr {
            Repr::Cancelled(c) => Some(c),
            Repr::Panic(_) => None,
        }
    }

    /// The closure's value, if it returned though the task was canceled before it ended.
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || 1);
    /// task.abort(); // too late, or just in time: never silent either way
    /// match rt.block_on(task) {
    ///     Ok(v) => assert_eq!(v, 1),
    ///     Err(e) => assert!(e.into_value().is_none_or(|v| v == 1)),
    /// }
    /// ```
    pub fn into_value(self) -> Option<R> {
        match self.repr {
            Repr::Cancelled(c) => c.into_value(),
            Repr::Panic(_) => None,
        }
    }

    /// The same error without the closure's value (dropped).
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || panic!("boom"));
    /// let e: std::io::Error = rt.block_on(task).unwrap_err().without_value().into();
    /// assert_eq!(e.kind(), std::io::ErrorKind::Other);
    /// ```
    pub fn without_value(self) -> BlockingError {
        BlockingError {
            repr: match self.repr {
                Repr::Cancelled(c) => Repr::Cancelled(c.without_value()),
                Repr::Panic(p) => Repr::Panic(p),
            },
        }
    }

    /// Whether the task was canceled: aborted, its scope canceled, or its deadline passed.
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || {
    ///     thread_cancel::sleep(std::time::Duration::from_secs(60))
    /// });
    /// task.scope().cancel(); // stops the sleep, or keeps it from starting
    /// let r = rt.block_on(task);
    /// assert!(r.unwrap_err().is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled(_))
    }

    /// Whether the task was canceled by its scope's deadline (see
    /// [`spawn_blocking_with_timeout`]).
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let _g = rt.enter();
    /// let task = thread_cancel::tokio::spawn_blocking_with_timeout(std::time::Duration::ZERO, || ());
    /// assert!(rt.block_on(task).unwrap_err().deadline_passed());
    /// ```
    pub fn deadline_passed(&self) -> bool {
        matches!(&self.repr, Repr::Cancelled(c) if c.deadline_passed())
    }

    /// Whether the closure panicked (the panic hook reported it, as for any panic).
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || panic!("boom"));
    /// let e = rt.block_on(task).unwrap_err();
    /// assert!(e.is_panic() && !e.is_cancelled());
    /// ```
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic's payload, to resume it with [`std::panic::resume_unwind`].
    ///
    /// # Errors
    /// The error itself, given back, if it is not a panic (the task was canceled).
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || panic!("boom"));
    /// let payload = rt.block_on(task).unwrap_err().try_into_panic().unwrap();
    /// assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    /// ```
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, BlockingError<R>> {
        match self.repr {
            Repr::Panic(e) => e.try_into_panic().map_err(|e| BlockingError {
                repr: Repr::Panic(e),
            }),
            repr @ Repr::Cancelled(_) => Err(BlockingError { repr }),
        }
    }

    /// The panic's payload.
    ///
    /// # Panics
    /// If the error is not a panic (as tokio's `JoinError::into_panic`); see
    /// [`try_into_panic`](Self::try_into_panic).
    ///
    /// ```
    /// let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    /// let task = thread_cancel::tokio::spawn_blocking_on(rt.handle(), || -> () { std::panic::panic_any(7u32) });
    /// let payload = rt.block_on(task).unwrap_err().into_panic();
    /// assert_eq!(payload.downcast_ref::<u32>(), Some(&7));
    /// ```
    #[track_caller]
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        match self.try_into_panic() {
            Ok(p) => p,
            Err(_) => panic!("`BlockingError` reason is not a panic."),
        }
    }
}

impl<R> std::fmt::Display for BlockingError<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.repr {
            Repr::Cancelled(c) => {
                f.write_str("task was cancelled")?;
                if c.deadline_passed() {
                    f.write_str(": its deadline passed")?;
                }
                if !c.acted() {
                    f.write_str(" (after it completed: nothing acted on the cancel)")?;
                }
                Ok(())
            }
            Repr::Panic(e) => std::fmt::Display::fmt(e, f),
        }
    }
}

impl<R: std::fmt::Debug> std::error::Error for BlockingError<R> {}

/// As [`Canceled`] converts (a cancelled task's error is the scope's, and
/// [`Canceled::from_io_error`] recognises it; the closure's value is dropped); a panic as
/// `ErrorKind::Other`.
impl<R> From<BlockingError<R>> for std::io::Error {
    fn from(e: BlockingError<R>) -> Self {
        match e.repr {
            Repr::Cancelled(c) => c.into(),
            Repr::Panic(p) => std::io::Error::other(BlockingError::<()> {
                repr: Repr::Panic(p),
            }),
        }
    }
}
