//! P4: cancellation latency with the target blocked in a system-call cancellation point —
//! `read` on an empty pipe, `accept` on a listening TCP socket nobody connects to, `poll` on an
//! empty pipe — ours (`thread_cancel::io`) beside glibc's `pthread_cancel` of a C thread
//! blocked in glibc's own `read`, `accept`, `poll` ([`crate::glibc`]), and the floor of any
//! signal-based cancellation in the same call: a plain signal sent to a C thread blocked in it,
//! until its handler starts (the kernel's way out of a call for a signal is not the same cost in
//! every call: `accept` frees the socket and file it made before waiting). Target: ours <= 1.2x
//! (that floor + one bare `resume_unwind` caught one frame up,
//! [`crate::wait_latency::Scenario::StdResumeUnwind`]); the gap to glibc is reported beside it.
//!
//! The protocol is P3's (see [`crate::wait_latency`]): every sample creates a fresh target that pushes
//! a cleanup handler recording `CLOCK_MONOTONIC`, waits until the kernel reports it asleep in
//! the expected system call ([`wait_blocked`]) and [`SETTLE`]s, takes the time, cancels, and
//! joins. The descriptors are created per sample and closed only after the join, so a target
//! never sees end-of-file or a closed socket: it leaves its call only through the cancellation.
//!
//! Where our threads block: `io::read` is `read`, `io::accept` is `accept4`, `io::poll` is
//! `ppoll`. Where glibc's do (x86_64): `read`, `accept` (aarch64: `accept`), `poll` (aarch64:
//! `ppoll`).
//!
//! ```
//! use thread_cancel_bench::syscall_latency::{sample, Scenario};
//! for s in Scenario::all() {
//!     let d = sample(s).unwrap();
//!     assert!(d < std::time::Duration::from_secs(10), "{}: {d:?}", s.name());
//! }
//! ```
//!
//! [`SETTLE`]: crate::wait_latency::SETTLE
//! [`wait_blocked`]: crate::wait_latency::wait_blocked

use crate::glibc;
use crate::wait_latency::{self, ours_blocked};
use std::io;
use std::net::TcpListener;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::Duration;

/// Where the target blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// `read` of 1 byte on an empty pipe whose write end stays open.
    Read,
    /// `accept` on a TCP listener on 127.0.0.1 that nobody connects to.
    Accept,
    /// `poll` for `POLLIN` on an empty pipe, no time limit.
    Poll,
}

impl Call {
    /// The three calls of P4.
    pub const ALL: [Call; 3] = [Call::Read, Call::Accept, Call::Poll];

    /// The glibc target blocked in the same call.
    fn glibc_kind(self) -> glibc::Kind {
        match self {
            Call::Read => glibc::Kind::Read,
            Call::Accept => glibc::Kind::Accept,
            Call::Poll => glibc::Kind::Poll,
        }
    }

    /// The call's name.
    pub fn name(self) -> &'static str {
        match self {
            Call::Read => "read",
            Call::Accept => "accept",
            Call::Poll => "poll",
        }
    }

    /// The glibc target of the floor in the same call.
    fn signal_kind(self) -> glibc::Kind {
        match self {
            Call::Read => glibc::Kind::SignalRead,
            Call::Accept => glibc::Kind::SignalAccept,
            Call::Poll => glibc::Kind::SignalPoll,
        }
    }

    /// The system calls our target blocks in.
    fn ours_syscalls(self) -> &'static [libc::c_long] {
        match self {
            Call::Read => &[libc::SYS_read],
            Call::Accept => &[libc::SYS_accept4],
            Call::Poll => &[libc::SYS_ppoll],
        }
    }
}

/// One way of measuring a cancellation (or, for the floor, a signal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// Ours: a `thread_cancel` thread blocked in `thread_cancel::io::*`.
    Ours(Call),
    /// glibc: a C thread blocked in glibc's own call, canceled with `pthread_cancel`.
    Glibc(Call),
    /// The floor: a C thread blocked in the call (as glibc's) is sent a signal
    /// (`pthread_kill`, no cancellation); the time until its handler starts. Both ours and
    /// glibc's cancellation of a thread blocked in a system call take a signal.
    SignalFloor(Call),
}

impl Scenario {
    /// The six scenarios of P4: ours then glibc's, for each call.
    pub const MAIN: [Scenario; 6] = [
        Scenario::Ours(Call::Read),
        Scenario::Ours(Call::Accept),
        Scenario::Ours(Call::Poll),
        Scenario::Glibc(Call::Read),
        Scenario::Glibc(Call::Accept),
        Scenario::Glibc(Call::Poll),
    ];

    /// [`MAIN`](Self::MAIN) then the floors.
    pub fn all() -> impl Iterator<Item = Scenario> {
        Scenario::MAIN
            .into_iter()
            .chain(Call::ALL.map(Scenario::SignalFloor))
    }

    /// A short label for tables and benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Ours(Call::Read) => "ours io::read (pipe)",
            Scenario::Ours(Call::Accept) => "ours io::accept (TCP)",
            Scenario::Ours(Call::Poll) => "ours io::poll (pipe)",
            Scenario::Glibc(Call::Read) => "glibc read (pipe)",
            Scenario::Glibc(Call::Accept) => "glibc accept (TCP)",
            Scenario::Glibc(Call::Poll) => "glibc poll (pipe)",
            Scenario::SignalFloor(Call::Read) => "floor: signal-to-handler, in read",
            Scenario::SignalFloor(Call::Accept) => "floor: signal-to-handler, in accept",
            Scenario::SignalFloor(Call::Poll) => "floor: signal-to-handler, in poll",
        }
    }

    /// The glibc scenario on the same call, for ours; `None` for the others.
    pub fn glibc_counterpart(self) -> Option<Scenario> {
        match self {
            Scenario::Ours(c) => Some(Scenario::Glibc(c)),
            Scenario::Glibc(_) | Scenario::SignalFloor(_) => None,
        }
    }
}

/// The descriptors of one sample: what the target blocks on, and what keeps it blocked (the
/// pipe's write end), closed only after the target was joined.
struct Fds {
    /// The pipe's read end or the listener.
    wait_on: OwnedFd,
    /// The pipe's write end (`None` for the listener).
    _keep: Option<OwnedFd>,
}

impl Fds {
    fn new(call: Call) -> io::Result<Self> {
        match call {
            Call::Read | Call::Poll => {
                let (r, w) = io::pipe()?;
                Ok(Fds {
                    wait_on: r.into(),
                    _keep: Some(w.into()),
                })
            }
            Call::Accept => Ok(Fds {
                wait_on: TcpListener::bind("127.0.0.1:0")?.into(),
                _keep: None,
            }),
        }
    }
}

/// Takes one sample of `scenario`: creates its descriptors and target, waits until the target
/// is blocked, measures one cancellation (or signal), joins the target.
///
/// # Errors
///
/// Descriptor or thread creation failing, the target not blocking within seconds, or the
/// target not ending as expected (not canceled, no handler run).
pub fn sample(scenario: Scenario) -> io::Result<Duration> {
    match scenario {
        Scenario::Ours(call) => ours(call),
        Scenario::Glibc(call) => glibc_sample(call.glibc_kind(), call),
        Scenario::SignalFloor(call) => glibc_sample(call.signal_kind(), call),
    }
}

fn ours(call: Call) -> io::Result<Duration> {
    let fds = Fds::new(call)?;
    let fd = fds.wait_on.try_clone()?;
    let r = ours_blocked(move || block(call, fd.as_fd()), call.ours_syscalls());
    drop(fds); // only now: the target is joined
    r
}

/// Blocks in `call` on `fd` until canceled.
fn block(call: Call, fd: BorrowedFd<'_>) -> ! {
    match call {
        Call::Read => loop {
            let _ = thread_cancel::io::read(fd, &mut [0u8; 1]);
        },
        Call::Accept => loop {
            let _ = thread_cancel::io::accept(fd);
        },
        Call::Poll => loop {
            let mut p = [libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            let _ = thread_cancel::io::poll(&mut p, -1);
        },
    }
}

fn glibc_sample(kind: glibc::Kind, call: Call) -> io::Result<Duration> {
    let fds = Fds::new(call)?;
    let r = glibc::latency(kind, Some(fds.wait_on.as_fd()));
    drop(fds); // only now: the target is joined
    r
}

/// The P3 scenarios sampled beside P4's in the `p4_latency` bench, for reference: the futex
/// floor, and a cancel that needs no signal (ours, a futex wake) and one that does (glibc's
/// `nanosleep`). Ours in `io::read` minus ours in `sleep` is what the cancel signal adds (the
/// wake-up and the unwind are the same). And the bare unwind, which P4's floor includes.
pub const P3_REFS: [wait_latency::Scenario; 4] = [
    wait_latency::Scenario::FutexFloor,
    wait_latency::Scenario::OursSleep,
    wait_latency::Scenario::GlibcNanosleep,
    wait_latency::Scenario::StdResumeUnwind,
];

/// The `p4_latency` bench: the six scenarios and the signal floors, P4c's two (a C thread
/// through the C ABI beside the same C code on glibc: [`crate::c_thread_latency`]; not held to P4's
/// target), then [`P3_REFS`] (see [`crate::table`]). The floor of the verdicts is the signal
/// floor in the same call + the bare unwind.
pub fn bench() -> crate::table::Bench {
    let main = Scenario::all().map(|s| crate::table::Row {
        name: s.name().to_string(),
        main: true,
        glibc: s.glibc_counterpart().map(|g| g.name().to_string()),
        floor: match s {
            Scenario::Ours(c) => Some(Scenario::SignalFloor(c).name().to_string()),
            _ => None,
        },
        sample: Box::new(move || sample(s)),
    });
    let p4c = crate::c_thread_latency::Side::ALL.map(|s| crate::table::Row {
        name: format!("P4c {}", s.name()),
        main: false,
        glibc: (s != crate::c_thread_latency::Side::Glibc)
            .then(|| format!("P4c {}", crate::c_thread_latency::Side::Glibc.name())),
        floor: None,
        sample: Box::new(move || crate::c_thread_latency::sample(s)),
    });
    let ref_name = |s: wait_latency::Scenario| format!("ref: {}", s.name());
    let refs = P3_REFS.into_iter().map(|s| crate::table::Row {
        name: ref_name(s),
        main: false,
        glibc: s.glibc_counterpart().map(ref_name),
        floor: s
            .is_ours_blocked()
            .then(|| ref_name(wait_latency::Scenario::FutexFloor)),
        sample: Box::new(move || wait_latency::sample(s)),
    });
    crate::table::Bench {
        name: "p4_latency",
        env: "P4",
        title: "P4 cancellation latency: cancel call -> first cleanup handler starts, target \
                blocked in a system call"
            .to_string(),
        target: crate::perf_targets::Target::P4,
        rows: main.chain(p4c).chain(refs).collect(),
        others: "-- P4c (target: <= glibc), then for reference (P3 scenarios; not part of P4)",
        floor_plus: Some(ref_name(wait_latency::Scenario::StdResumeUnwind)),
    }
}
