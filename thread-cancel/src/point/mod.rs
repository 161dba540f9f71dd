//! Cancellation points and acting on a request: the unwind that terminates a thread.
//!
//! Acting on a request (or on [`exit`]) sets `CANCELING` (or `EXITING`) with `DISABLED` in the
//! state word and then unwinds the stack with [`std::panic::resume_unwind`] and a private
//! payload, [`CancelPayload`]. `resume_unwind` does not call the panic hook, so nothing is
//! printed; every `Drop` on the way runs, cleanup guards among them. The thread's root (see
//! `thread/mod.rs`) recognises the payload, runs the thread-specific-data destructors and reports
//! the outcome.

// Not under `--cfg loom` (the model of the state machine): the trampoline is real assembly.
#[cfg(not(loom))]
pub mod conv;
#[cfg(not(loom))]
pub(crate) mod raw;
pub(crate) mod runs;
#[cfg(not(loom))]
pub(crate) mod syscall;
pub(crate) mod wait;

use crate::control::{with_current, CancelPayload};
use crate::current::current_control;
use crate::word::{self, Action};
use std::any::{Any, TypeId};

/// `exit` reached while the thread unwinds, outside `control::contain`: the unwind it would start
/// would leave a destructor that runs during another unwind, which Rust turns into an abort
/// with a generic message. Abort here instead, saying why.
#[cold]
#[inline(never)]
fn exit_while_unwinding() -> ! {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "thread_cancel::exit called while the thread is unwinding (from a Drop run by a panic, a \
         cancellation or an exit): a second unwind cannot start inside a running one, and the \
         thread cannot end any other way; aborting the process"
    );
    std::process::abort()
}

/// A cancellation point: if cancellation is enabled and a request is pending, the calling
/// thread acts on it here and does not return.
///
/// With nothing pending this is one thread-local load and one atomic load.
///
/// ```
/// let h = thread_cancel::spawn(|| {
///     let mut n = 0u64;
///     loop {
///         n = n.wrapping_add(1);
///         thread_cancel::testcancel();
///     }
/// });
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// ```
#[inline]
pub fn testcancel() {
    with_current(|c| {
        let s = c.word.load();
        if s & word::SLOW != 0 {
            slow_point(c, s);
        }
    });
}

/// The slow path of a cancellation point: act, resume a swallowed unwind, or return.
#[cold]
#[inline(never)]
pub(crate) fn slow_point(c: &crate::control::Control, s: u32) {
    act_on(c, s)
}

/// [`slow_point`]'s body, inlined into the callers that are already on a slow path (a wait
/// that a request woke, a system call it aborted): every frame between the point and the
/// unwind's start is a frame that both phases of the unwind must step through, so acting
/// adds none of its own.
#[inline(always)]
pub(crate) fn act_on(c: &crate::control::Control, s: u32) {
    if let Some(payload) = begin_act(c, s) {
        unwind(payload)
    }
}

/// What acting on the word `s` does before its unwind, out of line (so that the code inlined
/// where the unwind starts is a call and the raise): marks the thread's or the scope's unwind
/// begun and returns the payload to unwind with; `None` if there is nothing to act on.
#[inline(never)]
pub(crate) fn begin_act(c: &crate::control::Control, s: u32) -> Option<Box<dyn Any + Send>> {
    // Starting an unwind while another one runs (a point called from a Drop during a panic, or
    // from a cleanup handler) would abort the process: the request stays pending instead.
    if std::thread::panicking() {
        return None;
    }
    match word::classify(s) {
        Action::None => None,
        Action::Act => {
            c.word.begin_cancel();
            Some(Box::new(CancelPayload::raised()))
        }
        Action::Resume => Some(Box::new(CancelPayload::raised())),
        Action::ActScope => Some(runs::scope_payload(c, true)),
        Action::ResumeScope => Some(runs::scope_payload(c, false)),
    }
}

/// Starts an unwind of ours (a thread's termination or a scope's) with `payload`, in the
/// caller's frame.
#[inline(always)]
pub(crate) fn unwind(payload: Box<dyn Any + Send>) -> ! {
    #[cfg(panic = "abort")]
    {
        drop(payload);
        eprintln!(
            "thread-cancel: a thread acted on a cancellation (of the thread or of a scope) in a \
             panic=abort build; aborting"
        );
        std::process::abort();
    }
    #[cfg(not(panic = "abort"))]
    std::panic::resume_unwind(payload)
}

/// Whether the calling thread is unwinding because it acts on a cancellation, an exit or a
/// scope's cancellation (the condition under which cleanup handlers run, and under which a
/// guard of the crate's `Mutex` does not poison). What unwinds now decides: the word says an
/// unwind of ours began, and a payload of one is still alive (a swallowed one was dropped, so
/// a later panic is a panic).
pub(crate) fn terminating() -> bool {
    std::thread::panicking()
        && crate::control::own_unwind_live()
        && with_current(|c| {
            let s = c.word.load();
            s & word::UNWINDING != 0 && s & word::ROOT == 0
        })
        .unwrap_or(false)
}

/// Starts (or resumes) the termination unwind.
#[inline(always)]
pub(crate) fn raise() -> ! {
    unwind(Box::new(CancelPayload::raised()))
}

/// Terminates the calling thread with `value`: cleanup handlers run (last pushed first),
/// then thread-specific-data destructors; a join of the thread reports
/// [`Outcome::Exited`](crate::Outcome::Exited)`(value)`.
///
/// For a thread spawned by this crate, `value` must have the thread's return type `T` (see
/// Panics). In a thread the crate did not spawn, the unwind ends at
/// that thread's own root (for a `std` thread, its join returns `Err` with a [`CancelPayload`]).
/// If the thread is already terminating (an earlier cancellation or exit was swallowed by
/// `catch_unwind`), that termination continues and `value` is dropped.
///
/// # Panics
/// In a thread spawned by this crate, if `V` is not the thread's return type `T` (the message
/// names `V`); the thread is not terminated by `exit` then, it unwinds with that panic.
///
/// # Aborts
///
/// `exit` ends the thread by unwinding, and a second unwind cannot start while one is running:
/// called from a `Drop` that runs during an unwind (a panic's, a cancellation's or an exit's),
/// it cannot return (it returns `!`), cannot unwind and cannot end the thread any other way,
/// so it prints `thread_cancel::exit called while the thread is unwinding` with the reason to
/// standard error and aborts the process. (Rust itself would abort there too, with a generic
/// "panic in a destructor during cleanup".) In a cleanup handler, which the crate runs in a
/// contained frame, `exit` ends the handler and the termination already under way goes on
/// (`value` is dropped); the other handlers still run. A cancellation point in a `Drop` during
/// an unwind is simply no point (it returns); only `exit` cannot be.
///
/// ```
/// let h = thread_cancel::spawn(|| -> u32 {
///     let _g = thread_cancel::cleanup_push(|| println!("runs on exit"));
///     thread_cancel::exit(7u32)
/// });
/// assert_eq!(h.join().unwrap(), 7);
/// ```
pub fn exit<V: Send + 'static>(value: V) -> ! {
    if std::thread::panicking() && !crate::control::contained() {
        exit_while_unwinding();
    }
    let c = current_control();
    if let Some(expected) = c.exit_type {
        assert!(
            expected == TypeId::of::<V>(),
            "thread_cancel::exit: the value's type is not the thread's return type ({})",
            std::any::type_name::<V>()
        );
    }
    if c.word.load() & word::TERMINATING == 0 {
        c.set_exit_value(Box::new(value));
        c.word.begin_exit();
    }
    drop(c);
    raise()
}
