//! P3: cancellation latency, the time from a cancel call to the target thread's first cleanup
//! handler starting, with the target blocked in a waiting cancellation point; beside the
//! futex wake-to-run floor and glibc's `pthread_cancel` on the same kinds of waits.
//!
//! Every sample spawns a fresh target thread, waits until the kernel reports it blocked in the
//! expected system call (see [`wait_blocked`]), lets it settle, then measures one cancellation
//! and joins the thread. Both ends of the interval are read from `CLOCK_MONOTONIC`: Rust's
//! [`Instant`] on Linux, and `clock_gettime` in the C shim (`csrc/glibc_latency.c`, driven by
//! [`crate::glibc`]).
//!
//! ```
//! use thread_cancel_bench::wait_latency::{sample, Scenario};
//! for s in Scenario::all() {
//!     let d = sample(s).unwrap();
//!     assert!(d < std::time::Duration::from_secs(10), "{}: {d:?}", s.name());
//! }
//! ```

use crate::glibc;
use crate::target::pin_to_target_cpu;
pub use crate::target::{target_cpu, wait_blocked, SETTLE};
use std::io;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The name of every Rust target thread (its `comm`, e.g. for `perf report --comm`).
pub const TARGET_NAME: &str = "p3-target";

/// How long [`wait_blocked`] waits for a thread to block before giving up.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// One way of measuring a cancellation (or, for the floor, a wake-up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// (a) ours: `thread_cancel::sleep(1 h)`.
    OursSleep,
    /// (b) ours: `sync::Condvar::wait` with our `sync::Mutex`, never notified.
    OursCondvar,
    /// (c) ours: `sync::channel` `recv` on an empty channel whose sender lives.
    OursRecv,
    /// (d) ours: `JoinHandle::join` of a thread that does not end.
    OursJoin,
    /// (e) the floor: a thread blocked in `FUTEX_WAIT`; time from just before the waker's store
    /// and `FUTEX_WAKE` to the woken thread running.
    FutexFloor,
    /// (f) glibc: `pthread_cancel` of a C thread blocked in `nanosleep(1 h)`.
    GlibcNanosleep,
    /// (g) glibc: `pthread_cancel` of a C thread blocked in `pthread_cond_wait`.
    GlibcCondWait,
    /// (h) glibc: `pthread_cancel` of a C thread blocked in `pthread_join` of a thread that
    /// does not end.
    GlibcJoin,
    /// Diagnostic: ours, the target running a loop of `testcancel()` (no wake-up, no sleep).
    OursTestcancelSpin,
    /// Diagnostic: glibc, the target running a loop of `pthread_testcancel()`.
    GlibcTestcancelSpin,
    /// Diagnostic: ours, in one thread: `thread_cancel::exit(())` to the first cleanup handler
    /// (the unwind alone: no second thread, no wake-up).
    OursExitUnwind,
    /// Diagnostic: `std` alone, in one thread: `std::panic::resume_unwind` to a `Drop` under a
    /// `catch_unwind` (the Rust unwinder's cost for a short stack, no thread-cancel code).
    StdResumeUnwind,
}

impl Scenario {
    /// The eight scenarios of P3, (a) to (h).
    pub const MAIN: [Scenario; 8] = [
        Scenario::OursSleep,
        Scenario::OursCondvar,
        Scenario::OursRecv,
        Scenario::OursJoin,
        Scenario::FutexFloor,
        Scenario::GlibcNanosleep,
        Scenario::GlibcCondWait,
        Scenario::GlibcJoin,
    ];

    /// Extra measurements that split the latency into its parts (for the analysis).
    pub const DIAGNOSTICS: [Scenario; 4] = [
        Scenario::OursTestcancelSpin,
        Scenario::GlibcTestcancelSpin,
        Scenario::OursExitUnwind,
        Scenario::StdResumeUnwind,
    ];

    /// [`MAIN`](Self::MAIN) then [`DIAGNOSTICS`](Self::DIAGNOSTICS).
    pub fn all() -> impl Iterator<Item = Scenario> {
        Scenario::MAIN.into_iter().chain(Scenario::DIAGNOSTICS)
    }

    /// A short label for tables and benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::OursSleep => "ours sleep(1h)",
            Scenario::OursCondvar => "ours Condvar::wait",
            Scenario::OursRecv => "ours channel recv",
            Scenario::OursJoin => "ours JoinHandle::join",
            Scenario::FutexFloor => "floor: futex wake-to-run",
            Scenario::GlibcNanosleep => "glibc nanosleep",
            Scenario::GlibcCondWait => "glibc pthread_cond_wait",
            Scenario::GlibcJoin => "glibc pthread_join",
            Scenario::OursTestcancelSpin => "diag: ours testcancel spin",
            Scenario::GlibcTestcancelSpin => "diag: glibc testcancel spin",
            Scenario::OursExitUnwind => "diag: ours exit() unwind",
            Scenario::StdResumeUnwind => "diag: std resume_unwind",
        }
    }

    /// Whether this is one of thread-cancel's blocked waits, (a) to (d).
    pub fn is_ours_blocked(self) -> bool {
        matches!(
            self,
            Scenario::OursSleep | Scenario::OursCondvar | Scenario::OursRecv | Scenario::OursJoin
        )
    }

    /// The glibc scenario on the same kind of wait: `nanosleep` for `sleep`, `pthread_join` for
    /// `join`, `pthread_cond_wait` for the other waits of ours (condvar, channel).
    pub fn glibc_counterpart(self) -> Option<Scenario> {
        match self {
            Scenario::OursSleep => Some(Scenario::GlibcNanosleep),
            Scenario::OursCondvar | Scenario::OursRecv => Some(Scenario::GlibcCondWait),
            Scenario::OursJoin => Some(Scenario::GlibcJoin),
            Scenario::OursTestcancelSpin => Some(Scenario::GlibcTestcancelSpin),
            _ => None,
        }
    }
}

/// Takes one sample of `scenario`: spawns its target, waits until it is blocked, measures one
/// cancellation (or wake-up), joins the target.
///
/// # Errors
///
/// Thread creation failing, the target not blocking within seconds, or the target not ending
/// as expected (not canceled, no handler run).
pub fn sample(scenario: Scenario) -> io::Result<Duration> {
    match scenario {
        Scenario::OursSleep => ours_blocked(
            || thread_cancel::sleep(Duration::from_secs(3600)),
            &[libc::SYS_futex],
        ),
        Scenario::OursCondvar => {
            let pair = Arc::new((
                thread_cancel::sync::Mutex::new(()),
                thread_cancel::sync::Condvar::new(),
            ));
            let p = pair.clone();
            ours_blocked(
                move || {
                    let (m, cv) = &*p;
                    let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
                    loop {
                        g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
                    }
                },
                &[libc::SYS_futex],
            )
        }
        Scenario::OursRecv => {
            let (tx, rx) = thread_cancel::sync::channel::<()>();
            let r = ours_blocked(
                move || {
                    let _ = rx.recv();
                },
                &[libc::SYS_futex],
            );
            drop(tx); // only now: the receiver must block, not see a disconnected channel
            r
        }
        Scenario::OursJoin => ours_join(),
        Scenario::FutexFloor => futex_floor(),
        Scenario::GlibcNanosleep => glibc::latency(glibc::Kind::Nanosleep, None),
        Scenario::GlibcCondWait => glibc::latency(glibc::Kind::CondWait, None),
        Scenario::GlibcJoin => glibc::latency(glibc::Kind::Join, None),
        Scenario::OursTestcancelSpin => ours_blocked(
            || loop {
                thread_cancel::testcancel();
            },
            &[],
        ),
        Scenario::GlibcTestcancelSpin => glibc::latency(glibc::Kind::TestcancelSpin, None),
        Scenario::OursExitUnwind => ours_exit_unwind(),
        Scenario::StdResumeUnwind => std_resume_unwind(),
    }
}

// ---------------------------------------------------------------------------------------------
// Time stamps and thread ids.

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// `CLOCK_MONOTONIC` (through `Instant`) in ns since a process-wide epoch; never 0 once the
/// epoch is set, so 0 can mean "not recorded".
pub(crate) fn now_ns() -> u64 {
    let e = epoch();
    u64::try_from(Instant::now().duration_since(e).as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// A time stamp written by one thread and read by another after a join.
#[derive(Clone, Default)]
pub(crate) struct Stamp(Arc<AtomicU64>);

impl Stamp {
    pub(crate) fn record(&self) {
        self.0.store(now_ns(), Ordering::Release);
    }

    pub(crate) fn get(&self) -> Option<u64> {
        match self.0.load(Ordering::Acquire) {
            0 => None,
            t => Some(t),
        }
    }
}

/// The interval `t0..t1` (ns since the epoch), or an error if `t1` was not recorded.
pub(crate) fn interval(t0: u64, t1: Option<u64>, what: &str) -> io::Result<Duration> {
    match t1 {
        Some(t1) if t1 >= t0 => Ok(Duration::from_nanos(t1 - t0)),
        _ => Err(io::Error::other(format!("{what}: end time not recorded"))),
    }
}

/// The kernel thread id of the calling thread.
fn gettid() -> i32 {
    // SAFETY: `gettid` has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

/// A kernel thread id published by the target thread (0 until published).
#[derive(Clone, Default)]
pub(crate) struct Tid(Arc<AtomicI32>);

impl Tid {
    /// Moves the calling (target) thread to [`target_cpu`], if set, then publishes its tid.
    pub(crate) fn publish(&self) {
        pin_to_target_cpu();
        self.0.store(gettid(), Ordering::Release);
    }

    pub(crate) fn wait(&self) -> i32 {
        let start = Instant::now();
        loop {
            let t = self.0.load(Ordering::Acquire);
            if t != 0 {
                return t;
            }
            assert!(
                start.elapsed() < BLOCK_TIMEOUT,
                "the target thread never started"
            );
            std::thread::yield_now();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Ours.

/// Spawns a cancelable thread that pushes the measured cleanup handler, publishes its tid, then
/// runs `body` (which blocks, or, with `syscalls` empty, spins); waits until it is blocked in
/// one of `syscalls` (with none, lets it run for [`SETTLE`]); measures the cancel call to the
/// handler; joins.
pub(crate) fn ours_blocked<F>(body: F, syscalls: &[libc::c_long]) -> io::Result<Duration>
where
    F: FnOnce() + Send + 'static,
{
    let stamp = Stamp::default();
    let tid = Tid::default();
    let (s, t) = (stamp.clone(), tid.clone());
    let h = thread_cancel::Builder::new()
        .name(TARGET_NAME.into())
        .spawn(move || {
            let _handler = thread_cancel::cleanup_push(move || s.record());
            t.publish();
            body();
        })?;
    let tid = tid.wait();
    let blocked = if syscalls.is_empty() {
        std::thread::sleep(SETTLE);
        Ok(())
    } else {
        wait_blocked(tid, syscalls)
    };
    let t0 = now_ns();
    h.cancel().map_err(io::Error::from)?;
    let outcome = h.join();
    blocked?;
    if !outcome.is_canceled() {
        return Err(io::Error::other(format!(
            "the target was not canceled: {outcome:?}"
        )));
    }
    interval(t0, stamp.get(), "ours")
}

/// (d): the target joins a thread that waits on a `std` condition variable until the sample
/// is over, as glibc's joined helper waits on a `pthread_cond_t` (a channel's blocking receive
/// would make the helper allocate — `std`'s per-thread wait context —, which glibc's helper
/// does not: the helper then takes a malloc arena of its own, and the target's first
/// allocation, the unwind's, finds none free and makes one). Once the target is canceled (its
/// join abandoned, the handle dropped), the helper is told to stop and its end awaited, so it
/// does not run during the next sample.
fn ours_join() -> io::Result<Duration> {
    let stop = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let s = stop.clone();
    let never = thread_cancel::Builder::new()
        .name("p3-never-ends".into())
        .spawn(move || {
            let (m, c) = &*s;
            let mut stopped = m.lock().unwrap_or_else(|e| e.into_inner());
            while !*stopped {
                stopped = c.wait(stopped).unwrap_or_else(|e| e.into_inner());
            }
        })?;
    let never_canceler = never.canceler();
    let r = ours_blocked(
        move || {
            let _ = never.join();
        },
        &[libc::SYS_futex],
    );
    {
        let (m, c) = &*stop;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = true;
        c.notify_all();
    }
    let start = Instant::now();
    while !never_canceler.is_finished() && start.elapsed() < BLOCK_TIMEOUT {
        std::thread::sleep(Duration::from_micros(10));
    }
    r
}

/// Diagnostic: in one thread, `exit(())` to the first cleanup handler.
fn ours_exit_unwind() -> io::Result<Duration> {
    let stamp = Stamp::default();
    let start = Stamp::default();
    let (s, s0) = (stamp.clone(), start.clone());
    let h = thread_cancel::Builder::new()
        .name(TARGET_NAME.into())
        .spawn(move || {
            pin_to_target_cpu();
            let _handler = thread_cancel::cleanup_push(move || s.record());
            s0.record();
            thread_cancel::exit(())
        })?;
    if h.join().value().is_none() {
        return Err(io::Error::other("exit(()) did not end the thread"));
    }
    interval(start.get().unwrap_or(u64::MAX), stamp.get(), "ours exit")
}

/// Records the time when dropped.
struct RecordOnDrop(Stamp);

impl Drop for RecordOnDrop {
    fn drop(&mut self) {
        self.0.record();
    }
}

/// Diagnostic: in one `std` thread, `resume_unwind` to a `Drop` under a `catch_unwind`.
fn std_resume_unwind() -> io::Result<Duration> {
    let stamp = Stamp::default();
    let start = Stamp::default();
    let (s, s0) = (stamp.clone(), start.clone());
    let t = std::thread::Builder::new()
        .name(TARGET_NAME.into())
        .spawn(move || {
            pin_to_target_cpu();
            std::panic::catch_unwind(move || {
                let _record = RecordOnDrop(s);
                s0.record();
                std::panic::resume_unwind(Box::new(()));
            })
            .is_err()
        })?;
    if !t.join().unwrap_or(false) {
        return Err(io::Error::other("the unwind was not caught"));
    }
    interval(start.get().unwrap_or(u64::MAX), stamp.get(), "std unwind")
}

// ---------------------------------------------------------------------------------------------
// The floor.

/// `FUTEX_WAIT` on `word` while it holds `expected` (returns on a wake-up, a spurious one
/// included, or at once if it holds something else).
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: `word` is a valid, aligned u32 that outlives the call (it is borrowed); FUTEX_WAIT
    // only reads it; the timeout pointer is null (no time limit).
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// `FUTEX_WAKE` of one waiter on `word`.
pub(crate) fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE does not access the memory behind the pointer, it only uses the
    // address as a key; waking nobody is harmless.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        );
    }
}

/// (e): a `std` thread blocked in `FUTEX_WAIT`; t0 just before the store and `FUTEX_WAKE`, t1
/// as soon as the woken thread returns from the system call.
fn futex_floor() -> io::Result<Duration> {
    let word = Arc::new(AtomicU32::new(0));
    let stamp = Stamp::default();
    let tid = Tid::default();
    let (w, s, t) = (word.clone(), stamp.clone(), tid.clone());
    let th = std::thread::Builder::new()
        .name(TARGET_NAME.into())
        .spawn(move || {
            t.publish();
            while w.load(Ordering::Acquire) == 0 {
                futex_wait(&w, 0);
            }
            s.record();
        })?;
    let blocked = wait_blocked(tid.wait(), &[libc::SYS_futex]);
    let t0 = now_ns();
    word.store(1, Ordering::Release);
    futex_wake(&word);
    th.join()
        .map_err(|_| io::Error::other("the futex waiter panicked"))?;
    blocked?;
    interval(t0, stamp.get(), "futex")
}

/// The `p3_latency` bench: every scenario, main ones first, each of ours compared with the
/// futex floor and glibc on the same wait (see [`crate::table`]).
pub fn bench() -> crate::table::Bench {
    let rows = Scenario::all()
        .map(|s| crate::table::Row {
            name: s.name().to_string(),
            main: Scenario::MAIN.contains(&s),
            glibc: s.glibc_counterpart().map(|g| g.name().to_string()),
            floor: s
                .is_ours_blocked()
                .then(|| Scenario::FutexFloor.name().to_string()),
            sample: Box::new(move || sample(s)),
        })
        .collect();
    crate::table::Bench {
        name: "p3_latency",
        env: "P3",
        title: "P3 cancellation latency: cancel call -> first cleanup handler starts, target \
                blocked"
            .to_string(),
        target: crate::perf_targets::Target::P3,
        rows,
        others: "-- diagnostics (not part of P3; they split the latency into its parts)",
        floor_plus: Some(Scenario::StdResumeUnwind.name().to_string()),
    }
}
