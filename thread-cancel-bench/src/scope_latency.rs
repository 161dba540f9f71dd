//! P8: operation-level cancellation latency. (a) A [`CancelScope`] canceled while its `run` is
//! blocked in `sleep`, a channel `recv` or `io::read`: the time from the `scope.cancel()` call
//! to `run` returning `Err` in the target thread, beside the thread cancellation's latency on
//! the same wait (P3/P4: the cancel call to the first cleanup handler, [`crate::wait_latency`],
//! [`crate::syscall_latency`]). (b) Deadline accuracy: how long after its deadline a `with_deadline` whose
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
//! use thread_cancel_bench::scope_latency::{sample, Scenario};
//! for s in Scenario::ALL {
//!     let d = sample(s).unwrap();
//!     assert!(d < std::time::Duration::from_secs(10), "{}: {d:?}", s.name());
//! }
//! ```
//!
//! [`SETTLE`]: crate::wait_latency::SETTLE
//! [`wait_blocked`]: crate::wait_latency::wait_blocked

use crate::wait_latency::{interval, now_ns, wait_blocked, Stamp, Tid, TARGET_NAME};
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
    /// Diagnostic: `scope.cancel()` to the first `Drop` inside the run (the point P3/P4 stop
    /// their clock at: the first cleanup), so that the rest is what the end of `run` costs.
    ScopeCancelToDrop(Wait),
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
            Scenario::ScopeCancelToDrop(Wait::Sleep) => "diag: scope.cancel() to Drop, sleep(1h)",
            Scenario::ScopeCancelToDrop(Wait::Recv) => "diag: scope.cancel() to Drop, recv",
            Scenario::ScopeCancelToDrop(Wait::Read) => "diag: scope.cancel() to Drop, io::read",
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
        Scenario::ScopeCancel(w) => with_blocker(w, ScopeCancel { to_drop: false }),
        Scenario::Deadline(w) => with_blocker(w, DeadlineIn),
        Scenario::ScopeCancelToDrop(w) => with_blocker(w, ScopeCancel { to_drop: true }),
    }
}

/// What a sample does with the blocking call of a [`Wait`] (to run in a target) and what keeps
/// it blocked (the pipe's write end, the channel's sender, to drop only after the call
/// returned). The call is passed as a closure of its own type, never boxed: a
/// `Box<dyn FnOnce>` between the run and the wait would add a frame (with a landing pad, to
/// free the box) to every unwind measured, which the thread cancels the rows are compared with
/// do not have.
trait WithBlocker {
    fn with<F: FnOnce() + Send + 'static>(
        self,
        w: Wait,
        call: F,
        keep: Box<dyn std::any::Any>,
    ) -> io::Result<Duration>;
}

/// Gives `sample` the blocking call of `w`.
fn with_blocker(w: Wait, sample: impl WithBlocker) -> io::Result<Duration> {
    match w {
        Wait::Sleep => sample.with(
            w,
            || thread_cancel::sleep(Duration::from_secs(3600)),
            Box::new(()),
        ),
        Wait::Recv => {
            let (tx, rx) = thread_cancel::sync::channel::<()>();
            let call = move || {
                let _ = rx.recv();
            };
            sample.with(w, call, Box::new(tx))
        }
        Wait::Read => {
            let (r, wr) = io::pipe()?;
            let r: OwnedFd = r.into();
            let call = move || {
                let _ = thread_cancel::io::read(r.as_fd(), &mut [0u8; 1]);
            };
            sample.with(w, call, Box::new(wr))
        }
    }
}

/// Records the time when dropped.
struct RecordOnDrop(Stamp);

impl Drop for RecordOnDrop {
    fn drop(&mut self) {
        self.0.record();
    }
}

/// (a): a fresh target runs `scope.run(call)`; the time from `scope.cancel()` to `run`
/// returning in the target (or, `to_drop`, to the first `Drop` inside the run).
struct ScopeCancel {
    to_drop: bool,
}

impl WithBlocker for ScopeCancel {
    fn with<F: FnOnce() + Send + 'static>(
        self,
        w: Wait,
        call: F,
        keep: Box<dyn std::any::Any>,
    ) -> io::Result<Duration> {
        let to_drop = self.to_drop;
        let scope = CancelScope::new();
        let stamp = Stamp::default();
        let tid = Tid::default();
        let (sc, s, t) = (scope.clone(), stamp.clone(), tid.clone());
        let h = thread_cancel::Builder::new()
            .name(TARGET_NAME.into())
            .spawn(move || {
                t.publish();
                if to_drop {
                    sc.run(move || {
                        let _first = RecordOnDrop(s);
                        call()
                    })
                    .is_err()
                } else {
                    let r = sc.run(call);
                    s.record();
                    r.is_err()
                }
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
}

/// (b): `with_deadline(now + DEADLINE_AFTER, call)` in this thread; how late it returned.
struct DeadlineIn;

impl WithBlocker for DeadlineIn {
    fn with<F: FnOnce() + Send + 'static>(
        self,
        _: Wait,
        call: F,
        keep: Box<dyn std::any::Any>,
    ) -> io::Result<Duration> {
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
}

/// The `p8_latency` bench: the scope cancel in each wait beside the thread cancel on the same
/// wait (P3/P4 of ours, the rows' floor) and glibc's, then the diagnostics (the scope cancel to
/// the first `Drop`) and the deadlines' lateness, for reference (see [`crate::table`]).
pub fn bench() -> crate::table::Bench {
    use crate::syscall_latency::{Call, Scenario as P4};
    use crate::wait_latency::Scenario as P3;
    type Sample = Box<dyn FnMut() -> io::Result<Duration>>;
    let row = |name: String, main, glibc: Option<String>, floor: Option<String>, sample: Sample| {
        crate::table::Row {
            name,
            main,
            glibc,
            floor,
            sample,
        }
    };
    let pairs = [
        (Wait::Sleep, P3::OursSleep.name(), P3::GlibcNanosleep.name()),
        (Wait::Recv, P3::OursRecv.name(), P3::GlibcCondWait.name()),
        (
            Wait::Read,
            P4::Ours(Call::Read).name(),
            P4::Glibc(Call::Read).name(),
        ),
    ];
    let mut rows = Vec::new();
    for (w, thread, glibc) in pairs {
        let s = Scenario::ScopeCancel(w);
        rows.push(row(
            s.name().to_string(),
            true,
            Some(glibc.to_string()),
            Some(thread.to_string()),
            Box::new(move || sample(s)),
        ));
    }
    for (w, thread, _) in pairs {
        let s = Scenario::ScopeCancelToDrop(w);
        rows.push(row(
            s.name().to_string(),
            false,
            None,
            Some(thread.to_string()),
            Box::new(move || sample(s)),
        ));
    }
    for s in [
        Scenario::Deadline(Wait::Sleep),
        Scenario::Deadline(Wait::Read),
    ] {
        rows.push(row(
            s.name().to_string(),
            false,
            None,
            None,
            Box::new(move || sample(s)),
        ));
    }
    for s in [
        P3::OursSleep,
        P3::OursRecv,
        P3::GlibcNanosleep,
        P3::GlibcCondWait,
    ] {
        rows.push(row(
            s.name().to_string(),
            false,
            None,
            None,
            Box::new(move || crate::wait_latency::sample(s)),
        ));
    }
    for s in [P4::Ours(Call::Read), P4::Glibc(Call::Read)] {
        rows.push(row(
            s.name().to_string(),
            false,
            None,
            None,
            Box::new(move || crate::syscall_latency::sample(s)),
        ));
    }
    crate::table::Bench {
        name: "p8_latency",
        env: "P8",
        title: "P8 scope cancel latency: scope.cancel() -> run returns Err, target blocked; \
                floor = the thread cancel (cancel -> first cleanup) on the same wait"
            .to_string(),
        target: crate::perf_targets::Target::P8,
        rows,
        others: "-- diagnostics, deadlines (late by, after a 2 ms deadline) and the rows compared",
        floor_plus: None,
    }
}
