//! P8: operation-level cancellation latency. (a) A [`CancelScope`] canceled while its `run` is
//! blocked in `sleep`, a channel `recv` or `io::read`: the time from the `scope.cancel()` call
//! to `run` returning `Err` in the target thread, beside the thread cancellation's latency on
//! the same wait (P3/P4: the cancel call to the first cleanup handler, [`crate::p3`],
//! [`crate::p4`]). (b) Deadline accuracy: how long after its deadline a `with_deadline` whose
//! closure is blocked in `sleep` or `io::read` returns `Err`.
//!
//! The protocol of (a) is P3's: every sample spawns a fresh target thread (made by
//! `thread_cancel::Builder`, as P3's and P4's), which runs the scope around its blocking call;
//! the sampler waits until the kernel reports it asleep in the expected system call and
//! [`SETTLE`]s ([`wait_blocked`]), takes the time, cancels the scope and joins. The target takes
//! the time as soon as `run` returned. The descriptors and the channel's sender outlive the
//! join, so the target leaves its call only through the cancel.
//!
//! (b) runs in the sampling thread: it takes `now + `[`DEADLINE_AFTER`] as the deadline, blocks
//! in the call inside `with_deadline`, and takes the time as soon as it returned `Err`. A sleep
//! is a wait of the crate's own, which bounds its sleep by the deadline; a `read` is a system
//! call, interrupted by the process-wide deadline timer thread.
//!
//! ```
//! use thread_cancel_bench::p8::{sample, Scenario};
//! for s in Scenario::ALL {
//!     let d = sample(s).unwrap();
//!     assert!(d < std::time::Duration::from_secs(10), "{}: {d:?}", s.name());
//! }
//! ```
//!
//! [`SETTLE`]: crate::p3::SETTLE
//! [`wait_blocked`]: crate::p3::wait_blocked

use crate::p3::{interval, now_ns, wait_blocked, Stamp, Tid, TARGET_NAME};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};
use thread_cancel::{CancelScope, Outcome};

/// How far in the future a deadline sample sets its deadline: long enough for the call to be
/// blocked by then.
pub const DEADLINE_AFTER: Duration = Duration::from_millis(2);

/// Where the operation blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wait {
    /// `thread_cancel::sleep(1 h)`.
    Sleep,
    /// `recv` on an empty `thread_cancel::sync::channel` whose sender lives.
    Recv,
    /// `thread_cancel::io::read` of 1 byte on an empty pipe whose write end stays open.
    Read,
}

impl Wait {
    /// The system calls the target is asleep in.
    fn syscalls(self) -> &'static [libc::c_long] {
        match self {
            Wait::Sleep | Wait::Recv => &[libc::SYS_futex],
            Wait::Read => &[libc::SYS_read],
        }
    }
}

/// One measurement of P8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// `scope.cancel()` to `Err` from `run`, the target blocked in the wait.
    ScopeCancel(Wait),
    /// How late `with_deadline` returns `Err` after its deadline, the closure blocked in the
    /// wait.
    Deadline(Wait),
}

impl Scenario {
    /// Every scenario: the scope cancel in each wait, the deadline in a sleep and a read.
    pub const ALL: [Scenario; 5] = [
        Scenario::ScopeCancel(Wait::Sleep),
        Scenario::ScopeCancel(Wait::Recv),
        Scenario::ScopeCancel(Wait::Read),
        Scenario::Deadline(Wait::Sleep),
        Scenario::Deadline(Wait::Read),
    ];

    /// A short label for tables.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::ScopeCancel(Wait::Sleep) => "scope.cancel(), run in sleep(1h)",
            Scenario::ScopeCancel(Wait::Recv) => "scope.cancel(), run in channel recv",
            Scenario::ScopeCancel(Wait::Read) => "scope.cancel(), run in io::read (pipe)",
            Scenario::Deadline(Wait::Sleep) => "with_deadline(now + 2 ms), sleep(1h): late by",
            Scenario::Deadline(Wait::Recv) => "with_deadline(now + 2 ms), channel recv: late by",
            Scenario::Deadline(Wait::Read) => "with_deadline(now + 2 ms), io::read: late by",
        }
    }
}

/// Takes one sample of `scenario`.
///
/// # Errors
///
/// Descriptor or thread creation failing, the target not blocking within seconds, `run` not
/// returning `Err`, or a deadline firing early.
pub fn sample(scenario: Scenario) -> io::Result<Duration> {
    match scenario {
        Scenario::ScopeCancel(w) => scope_cancel(w),
        Scenario::Deadline(w) => deadline(w),
    }
}

/// The blocking call of `w` (to run in a target), and what keeps it blocked (the pipe's write
/// end, the channel's sender), to drop only after the call returned.
type Blocker = (Box<dyn FnOnce() + Send>, Box<dyn std::any::Any>);

fn blocker(w: Wait) -> io::Result<Blocker> {
    Ok(match w {
        Wait::Sleep => (
            Box::new(|| thread_cancel::sleep(Duration::from_secs(3600))),
            Box::new(()),
        ),
        Wait::Recv => {
            let (tx, rx) = thread_cancel::sync::channel::<()>();
            let call = move || {
                let _ = rx.recv();
            };
            (Box::new(call), Box::new(tx))
        }
        Wait::Read => {
            let (r, w) = io::pipe()?;
            let r: OwnedFd = r.into();
            let call = move || {
                let _ = thread_cancel::io::read(r.as_fd(), &mut [0u8; 1]);
            };
            (Box::new(call), Box::new(w))
        }
    })
}

/// (a): a fresh target runs `scope.run(call)`; the time from `scope.cancel()` to `run`
/// returning in the target.
fn scope_cancel(w: Wait) -> io::Result<Duration> {
    let (call, keep) = blocker(w)?;
    let scope = CancelScope::new();
    let stamp = Stamp::default();
    let tid = Tid::default();
    let (sc, s, t) = (scope.clone(), stamp.clone(), tid.clone());
    let h = thread_cancel::Builder::new()
        .name(TARGET_NAME.into())
        .spawn(move || {
            t.publish();
            let r = sc.run(call);
            s.record();
            r.is_err()
        })?;
    let blocked = wait_blocked(tid.wait(), w.syscalls());
    let t0 = now_ns();
    scope.cancel();
    let outcome = h.join();
    drop(keep); // only now: the target is joined
    blocked?;
    match outcome {
        Outcome::Returned(true) => interval(t0, stamp.get(), "scope cancel"),
        other => Err(io::Error::other(format!(
            "run did not return Err: {other:?}"
        ))),
    }
}

/// (b): `with_deadline(now + DEADLINE_AFTER, call)` in this thread; how late it returned.
fn deadline(w: Wait) -> io::Result<Duration> {
    let (call, keep) = blocker(w)?;
    let at = Instant::now() + DEADLINE_AFTER;
    let r = thread_cancel::with_deadline(at, call);
    let end = Instant::now();
    drop(keep);
    if r.is_ok() {
        return Err(io::Error::other("the call returned before its deadline"));
    }
    if end < at {
        return Err(io::Error::other(format!(
            "the deadline fired {:?} early",
            at - end
        )));
    }
    Ok(end - at)
}
