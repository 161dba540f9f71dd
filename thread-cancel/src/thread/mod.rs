//! Spawning cancelable threads, their root, [`JoinHandle`] and [`Outcome`].

mod builder;
mod join_handle;
mod outcome;
pub(crate) mod scoped;

use crate::control::lock;
pub use builder::{spawn, Builder};
pub use join_handle::JoinHandle;
use join_handle::{Native, Packet};
pub use outcome::Outcome;

use crate::control::Control;
use crate::current::{current_control, link_spawned, try_current_control};
use crate::point::wait::Wake;
use crate::word::{self, CANCELING, EXITING};
use crate::{tsd, Canceler, NoSuchThread};
use std::any::TypeId;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

/// Runs `f` as the body of a spawned thread: link the control block, catch the termination
/// unwind, run the thread-specific-data destructors, mark finished (later requests fail).
pub(crate) fn root<T: 'static>(control: Arc<Control>, f: impl FnOnce() -> T) -> Outcome<T> {
    // Dropped before `control` (locals before parameters), also if the root unwinds.
    let link = link_spawned(&control);
    let outcome = outcome(&control, catch_body(f));
    tsd::run_destructors();
    control.finish();
    drop(link);
    outcome
}

/// The root's `catch_unwind`, in a frame of its own: a cancel's unwind stops in this frame,
/// whose table of call sites (what the unwinder's personality routine scans in each phase) has
/// the body's call alone, not the root's.
#[inline(never)]
fn catch_body<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    catch_unwind(AssertUnwindSafe(f))
}

/// A thread's root, once its body has returned or unwound (`result`): marks the word (the
/// root has been reached: no point acts any more) and decides how the thread ended, from the
/// word (a cancellation or an exit it acted on wins over what the body returned) and `result`.
/// For every thread the crate starts (Rust's and the C ABI's).
pub(crate) fn outcome<T: 'static>(control: &Control, result: std::thread::Result<T>) -> Outcome<T> {
    let s = control.word.enter_root();
    if s & CANCELING != 0 {
        Outcome::Canceled
    } else if s & EXITING != 0 {
        let v = control
            .take_exit_value()
            .and_then(|b| b.downcast::<T>().ok())
            .expect("exit() stores a value of the thread's type");
        Outcome::Exited(*v)
    } else {
        match result {
            Ok(v) => Outcome::Returned(v),
            Err(p) => Outcome::Panicked(p),
        }
    }
}

pub(crate) fn new_control<T: 'static>() -> Arc<Control> {
    // In the spawning thread, so that the process-wide set-up (the signal handler, the fence's
    // registration, which costs an RCU grace period once other threads exist) is usually done
    // while the process is still single-threaded, and never delays the new thread.
    crate::sys::prepare();
    Arc::new(Control::new(Some(TypeId::of::<T>())))
}

const JOIN_YIELDS: usize = 16;

/// A thread joining or waiting for itself: reported as `std` reports it.
#[cold]
#[inline(never)]
fn own_thread(what: &str) -> ! {
    panic!(
        "failed to {what} thread: {} (a thread cannot {what} itself)",
        io::Error::from_raw_os_error(libc::EDEADLK)
    )
}

/// Blocks until `target` has finished, as a cancellation point for the caller, or until
/// `deadline`; returns whether it finished. Any number of threads may wait for one target:
/// each registers itself, and the target's `finish` wakes them all.
///
/// For `join` (`then_std_join`), a caller that cannot act on a request during the wait (it has
/// no control block, so no one can cancel it, or its cancellation is disabled) is not
/// registered at all: `std`'s join that follows does the blocking.
///
/// # Panics
/// If `target` is the calling thread: it would wait for itself forever (a deadlock, which
/// `std` and `pthread_join` report as `EDEADLK`; `std`'s join panics with the same message).
pub(crate) fn wait_finished(
    target: &Arc<Control>,
    deadline: Option<Instant>,
    then_std_join: bool,
) -> bool {
    match wait_for_end(target, deadline, then_std_join) {
        Wake::Ready => true,
        Wake::Timeout => false,
        Wake::Cancel => crate::point::wait::act_current(),
    }
}

/// [`wait_finished`], leaving the act to the caller: `Wake::Cancel` when a request must be
/// acted on, which a `join` does once it has dropped its handle (the thread is detached, as
/// the unwind would have done), so that the unwind leaves the `join` with nothing to drop:
/// a landing pad and a restart of the unwind fewer on the way to the caller's cleanup.
/// `Wake::Timeout` means not finished (the deadline passed, or a caller that cannot act did
/// not wait).
pub(crate) fn wait_for_end(
    target: &Arc<Control>,
    deadline: Option<Instant>,
    then_std_join: bool,
) -> Wake {
    let done = |finished: bool| if finished { Wake::Ready } else { Wake::Timeout };
    if crate::control::is_current(target) {
        own_thread(if then_std_join { "join" } else { "wait for" });
    }
    // A cancellation point at entry too, even if the target has already finished.
    crate::testcancel();
    let finished = || target.word.load() & word::FINISHED != 0;
    let me = if then_std_join {
        match try_current_control() {
            Some(me) if me.word.load() & word::DISABLED == 0 => me,
            _ => return done(finished()),
        }
    } else {
        current_control()
    };
    if finished() {
        return Wake::Ready;
    }
    // A short thread is often about to finish: yielding a few times first saves a park/unpark
    // round trip on top of `std`'s own join (P5). Each round is also a point for the joiner.
    for _ in 0..JOIN_YIELDS {
        crate::testcancel();
        if finished() {
            return Wake::Ready;
        }
        std::thread::yield_now();
    }
    target.add_waiter(me.clone());
    struct Unregister<'a>(&'a Control, &'a Control);
    impl Drop for Unregister<'_> {
        fn drop(&mut self) {
            self.0.remove_waiter(self.1);
        }
    }
    let unregister = Unregister(target, &me);
    let wake = crate::point::wait::wait_until(&me, finished, deadline);
    // Undone before acting, so that the unwind starts with nothing to drop here.
    drop(unregister);
    drop(me);
    wake
}
