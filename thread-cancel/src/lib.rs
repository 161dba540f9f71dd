//! POSIX thread cancellation, done right, for Rust threads.
//!
//! A thread spawned with [`spawn`] (or adopted with [`current`]) can be canceled: a request
//! queued with [`JoinHandle::cancel`] or a [`Canceler`] is acted on when the thread is at a
//! cancellation point ([`testcancel`], [`JoinHandle::join`], ...) with cancellation enabled.
//! Acting on it unwinds the thread's stack (every `Drop` runs, the panic hook stays quiet),
//! runs the [cleanup handlers](cleanup_push) last-pushed-first, then the [thread-specific data
//! destructors](Key), and the thread's join reports [`Outcome::Canceled`].
//!
//! **Platforms**: Linux on x86_64, aarch64 and riscv64, with glibc or musl: the complete
//! implementation, whose test suite runs on each (x86_64 natively with glibc and with musl,
//! aarch64 and riscv64 under emulation). Android uses the same code and compiles, untested (no
//! device). Other targets (macOS, FreeBSD, ...) get a *portable fallback*,
//! which Linux also uses when built with `RUSTFLAGS="--cfg thread_cancel_portable"`. In that
//! mode every wait of the crate (sleep, park, join, scopes, the `sync` module) is fully
//! cancelable, but:
//!
//! - a system-call point acts before and after the call, not during it: a request made while
//!   a thread blocks in [`io::read`] is acted on when the call returns (at once if it failed,
//!   at the next point if it completed, whose result is returned);
//! - [`async_region`] is not supported: it panics, saying so, before running anything;
//! - [`io::set_signal`] does nothing (no signal is used); the `io` functions that only Linux
//!   has exist only on Linux;
//! - the C ABI (`thread-cancel-ffi`) is Linux and Android only; its C test programs run
//!   with glibc, and with musl and Android's bionic it compiles (its C programs do not run
//!   there yet).
//!
//! The minimum Rust version is 1.87.
//!
//! ```
//! use thread_cancel::{cleanup_push, spawn, testcancel};
//!
//! let h = spawn(|| {
//!     let _g = cleanup_push(|| eprintln!("cleanup ran"));
//!     loop {
//!         testcancel(); // a cancellation point
//!     }
//! });
//! h.cancel().unwrap(); // queued; returns at once
//! assert!(h.join().is_canceled());
//! ```
//!
//! To give up on one operation and keep the thread, run it in a [`CancelScope`], or with a
//! deadline: the same points interrupt it, its `Drop`s run, and the thread goes on.
//!
//! ```
//! use std::time::Duration;
//! use thread_cancel::{sync::channel, with_timeout};
//!
//! let (tx, rx) = channel::<u32>();
//! // Nothing is sent: the blocked recv is interrupted at the deadline and took nothing.
//! let e = with_timeout(Duration::from_millis(20), || rx.recv()).unwrap_err();
//! assert!(e.acted() && e.value().is_none()); // stopped, and it never returned
//! // The thread carries on, and so does the channel.
//! tx.send(7).unwrap();
//! assert_eq!(with_timeout(Duration::from_secs(5), || rx.recv()), Ok(Ok(7)));
//! ```
//!
//! ## What is a cancellation point
//!
//! A request is acted on only at a cancellation point (or anywhere inside an
//! [`async_region`]). A thread blocked in anything else finishes that call and acts at its next
//! point.
//!
//! | | cancellation points | not cancellation points |
//! |---|---|---|
//! | waits | [`sleep`], [`park`], [`park_timeout`]; [`JoinHandle::join`], `wait`, `wait_timeout` (and [`ScopedJoinHandle`]'s); in [`sync`]: `Receiver::recv`, `recv_timeout`, `iter`, `SyncSender::send`, `Condvar::wait` and its variants, `Semaphore::acquire`, `acquire_timeout`, `RwLock::read`, `write`, `Barrier::wait` | `std::thread::sleep` and `park`, `std::sync` (`mpsc`, `Condvar`, `Barrier`, ...), `std::thread::JoinHandle::join`; locking a mutex (this crate's [`sync::Mutex`] or `std`'s) |
//! | system calls | the functions of [`io`] (`read`, `write`, `accept`, `poll`, `open`, `close`, ...: every system call POSIX makes a point that Linux has), [`io::Cancelable`]'s `Read` and `Write` (so [`io::stdout()`]), [`net`], [`process::wait`] | `std::io`, `std::net`, `std::fs`, `std::process` calls, `println!`; third-party clients (database drivers, HTTP clients, ...) |
//! | other | [`testcancel`]; anywhere inside an [`async_region`] | calls that never block: `try_recv`, `try_lock`, `try_read`, `try_write`, an unbounded `Sender::send`, `notify_*`, `release`, [`JoinHandle::cancel`] |
//!
//! For a blocking call that is not a point, [`on_cancel`] runs a callback when the request
//! comes, which can make the call return (shut a socket down, close a connection). The guide
//! [cancellation safety](guide::cancellation_safety) says more.
//!
//! Where to look:
//!
//! - blocking calls a request interrupts: [`sleep`], [`park`], [`sync`] (channels, `Condvar`,
//!   `Semaphore`, `RwLock`, `Barrier`; its `Mutex` is the one a `Condvar` waits with), [`JoinHandle::join`], [`io`] (every system-call point of POSIX,
//!   with the guarantee that a canceled call either completed or had no effect), [`net`],
//!   [`process`]; [`on_cancel`] for anything else;
//! - state and type: [`set_cancel_state`], [`set_cancel_type`], [`disable`],
//!   [`enable_and_test`]; asynchronous cancellation of a compute loop: [`async_region`];
//! - cancel an operation, not the thread: [`CancelScope`] (its `run` returns `Err` when the
//!   scope is canceled), [`with_timeout`] and [`with_deadline`], [`cancel_requested`] for
//!   cooperative code; the guide [deadlines and scopes](guide::deadlines_and_scopes);
//! - the guides: [coming from `pthread_cancel`](guide::coming_from_pthread_cancel), [coming
//!   from flag polling](guide::coming_from_flag_polling), [cancellation
//!   safety](guide::cancellation_safety), [deadlines and scopes](guide::deadlines_and_scopes);
//! - C programs: the `thread-cancel-ffi` crate (`libthread_cancel`, `include/thread_cancel.h`,
//!   `include/thread_cancel/pthread_compat.h`).
//!
//! ## Decisions
//!
//! - **`panic = "abort"`**: acting on a cancellation needs an unwind. In an abort build, a
//!   thread that acts on a request prints a message and aborts the process. Requests that are
//!   never acted on (disabled, or no cancellation point reached) cost nothing.
//! - **A panicking cleanup handler**: the panic is reported by the panic hook and caught; the
//!   other handlers and the destructors still run and the join reports `Canceled`.
//! - **Cancellation points inside `Drop` during a panic** do not act (an unwind cannot start
//!   inside another); the request stays pending.
//! - **`std::sync::Mutex`**: a `MutexGuard` held across a point where the thread is canceled is
//!   dropped during the unwind and poisons the mutex, exactly as a panic would.
//! - **`catch_unwind`** may catch the cancellation's [`CancelPayload`]; the next cancellation
//!   point raises it again, and the join still reports `Canceled`.
//! - **Threads the crate did not spawn** (main, `std`, rayon) are adopted on first use. When
//!   such a thread acts on a cancellation, the unwind ends at that thread's own root: a `std`
//!   join returns `Err` whose payload is a [`CancelPayload`]; on the main thread the process
//!   exits with status 101. Its thread-specific data destructors run from a thread-local
//!   destructor.
#![deny(unsafe_op_in_unsafe_fn)]
// docs.rs builds with `--cfg docsrs`: feature-gated items show the feature they need.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]
// Under `--cfg loom` only the state word is modelled: the platform layer is built but unused.
#![cfg_attr(loom, allow(dead_code, unused_imports))]
// Under the portable layer the C ABI's support (`c_abi`) is not built: what only it uses is unused.
#![cfg_attr(
    any(
        thread_cancel_portable,
        not(any(target_os = "linux", target_os = "android"))
    ),
    allow(dead_code)
)]

mod async_region;
mod atomic;
mod cancel_scope;
mod cancelability;
mod canceler;
mod cleanup;
mod control;
mod current;
// Feature `interpose` with musl: refused, not silently off. A static musl program resolves every
// call at link time (nothing to find the C library's own definition for the threads that never
// met the crate), and musl's own functions make their system calls directly.
#[cfg(all(
    feature = "interpose",
    target_os = "linux",
    not(target_env = "gnu"),
    not(loom)
))]
compile_error!(
    "thread-cancel: the feature `interpose` needs glibc (Linux, 64-bit); this target's C library \
     is not glibc. Without the feature, the crate's own points (`thread_cancel::io`, `net`, \
     `process`, `sync`) are cancellation points on every target."
);

// Feature `interpose`: the C library's blocking functions defined as points that fail with
// `ECANCELED`/`ETIMEDOUT` (docs/interpose.md). No public items: its API is the C symbols.
#[cfg(thread_cancel_interpose)]
mod interpose;
// The C ABI's support needs the complete Linux layer (regions, the forced unwind, the signal).
#[cfg(all(
    feature = "c-abi",
    not(loom),
    any(target_os = "linux", target_os = "android"),
    not(thread_cancel_portable)
))]
#[doc(hidden)]
pub mod c_abi;
pub mod guide;
#[cfg(not(loom))]
pub mod io;
#[cfg(not(loom))]
pub mod net;
mod on_cancel;
mod point;
#[cfg(not(loom))]
pub mod process;
mod sleep;
pub mod sync;
mod sys;
mod thread;
/// The table of points as data (its rows), for the tests that check the linked symbols and
/// the user docs against it. Not public API: hidden, outside semver.
#[doc(hidden)]
pub use sys::points as __points;
#[cfg(all(feature = "tokio", not(loom)))]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod tokio;
mod tsd;
mod word;

#[cfg(not(loom))]
pub use async_region::async_region;
pub use cancel_scope::{
    cancel_requested, current_deadline, with_deadline, with_timeout, CancelScope, Canceled, Cause,
    DropGuard, Generation, Nursery, OnCancel, Task, TimedOut, WaitForCancel,
};
pub use cancelability::{
    disable, enable_and_test, set_cancel_state, set_cancel_type, CancelState, CancelType,
    DisableGuard, InvalidValue,
};
pub use canceler::{current, Canceler};
pub use cleanup::{cleanup_push, CleanupGuard};
pub use control::{CancelPayload, ScopeUnwind};
pub use on_cancel::{on_cancel, OnCancelGuard};
pub use point::{exit, testcancel};
pub use sleep::{park, park_timeout, sleep};
pub use thread::scoped::{scope, Scope, ScopedJoinHandle};
pub use thread::{spawn, Builder, JoinHandle, Outcome};
pub use tsd::{Key, DESTRUCTOR_ITERATIONS};

// The crate's README (its page on crates.io): its example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The error of canceling a thread that does not exist: it finished, was joined, or its
/// handle is otherwise stale (C: `ESRCH`).
///
/// ```
/// let h = thread_cancel::spawn(|| ());
/// let c = h.canceler();
/// h.join();
/// let e = c.cancel().unwrap_err();
/// assert_eq!(std::io::Error::from(e).raw_os_error(), Some(libc::ESRCH));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NoSuchThread;

impl std::fmt::Display for NoSuchThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no such thread")
    }
}

impl std::error::Error for NoSuchThread {}

impl From<NoSuchThread> for std::io::Error {
    fn from(_: NoSuchThread) -> Self {
        std::io::Error::from_raw_os_error(libc::ESRCH)
    }
}
