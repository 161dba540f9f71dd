//! The performance targets of REQUIREMENTS.md (P1–P8, with P4c and P5's lightweight form), and the
//! informative rows (R06, P6 with `std`-spawned threads), as data: what each says, and whether
//! measured medians meet it. The thresholds are those of REQUIREMENTS.md; every figure compared
//! with them is measured.
//!
//! For P3 and P4 the floor is the floor of the wait (the futex wake-to-run, or the
//! signal-to-handler) plus one bare `resume_unwind` caught one frame up, both measured in the
//! same run: acting in Rust must unwind, and `std` offers only its two-phase unwind.
//!
//! ```
//! use thread_cancel_bench::perf_targets::Target;
//! assert_eq!(Target::P1.met(0.37, Some(0.50), None), Some(true)); // 0.74x glibc, under 1 ns
//! assert_eq!(Target::P1.met(0.55, Some(0.50), None), Some(false)); // slower than glibc
//! assert_eq!(Target::P1.met(1.2, Some(3.0), None), Some(false)); // over 1 ns
//! assert_eq!(Target::P4.met(9.0, Some(5.0), Some(8.0)), Some(true)); // 1.125x floor + unwind
//! assert_eq!(Target::P3.met(9.0, Some(10.0), Some(5.0)), Some(false)); // 1.8x floor + unwind
//! assert_eq!(Target::P5Lightweight.met(10.5, Some(10.0), None), Some(true));
//! assert_eq!(Target::P2.met(100.0, None, None), None); // needs the floor (raw syscall)
//! assert_eq!(Target::P6Std.met(1.0, Some(2.0), None), None); // informative
//! assert_eq!(Target::P8.met(11.0, None, Some(10.0)), Some(true)); // 1.1x the thread cancel
//! assert_eq!(Target::P8Deadline.met(1030.0, None, Some(40.0)), Some(true)); // <= 1 ms + 40 us
//! assert_eq!(Target::P7.met(25.0, None, Some(2.0)), Some(false));
//! assert_eq!(Target::P7Timeout.met(48.0, None, Some(38.0)), Some(true)); // 1.26x its floor
//! ```

/// One performance target (REQUIREMENTS.md), or an informative row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// `testcancel()` with nothing pending: <= 1 ns, and no slower than glibc's
    /// `pthread_testcancel` on the same CPU (medians in ns).
    P1,
    /// Cancellable `read`/`write` that do not block: <= 1.03x the raw system call (the floor).
    P2,
    /// Cancel to first cleanup, blocked in sleep / condvar / channel / join: <= 1.2x (the futex
    /// wake-to-run floor + one bare unwind), and below glibc's `pthread_cancel` on the same
    /// wait.
    P3,
    /// Cancel to first cleanup, blocked in `read` / `accept` / `poll`: <= 1.2x (the
    /// signal-to-handler floor + one bare unwind); the gap to glibc is reported beside it.
    P4,
    /// Cancel to first cleanup handler of a C thread through `pthread_compat.h`, blocked in
    /// `read`: <= glibc's `pthread_cancel` of the same C code.
    P4c,
    /// `spawn` + `join`: <= 1.10x `std::thread::spawn` + `join` (the floor).
    P5,
    /// `Builder::lightweight()` spawn + `join`: <= 1.10x glibc's `pthread_create` +
    /// `pthread_join`.
    P5Lightweight,
    /// 10,000 blocked threads made by `Builder::lightweight()` canceled and joined: not slower
    /// than glibc.
    P6,
    /// Entering and leaving a `CancelScope` (`run`) with nothing canceled: <= 20 ns per run
    /// (medians in ns).
    P7,
    /// `with_timeout` (a new scope and its deadline, a run) with nothing canceled: <= 1.3x its
    /// floor, a clock read plus a `run` (on a VM whose clock read costs 20–40 ns, a fixed
    /// 50 ns lay below that floor).
    P7Timeout,
    /// `cancel_requested()` / `CancelScope::is_canceled()` with nothing canceled, inside a
    /// deadline run or not: <= 2 ns.
    P9,
    /// Scope cancel to `Err` from `run`, blocked in sleep / recv / read: <= 1.2x the thread
    /// cancellation's latency on the same wait (P3/P4 of ours, the "floor" of the row).
    P8,
    /// How late a deadline's `Err` comes: <= 1 ms + the P8 latency on the same wait (the
    /// "floor" of the row; medians in us).
    P8Deadline,
    /// Not a performance target: P6 with threads spawned through `std`, for information (no verdict).
    P6Std,
    /// Not a performance target: P4c's glibc side again, its driver given `libthread_cancel.so`
    /// with `LD_PRELOAD` (a program already built, the library as a drop-in), beside glibc's, for
    /// information (no verdict).
    P4cPreloaded,
    /// Not a performance target: R06's asynchronous cancellation of a compute loop, shown beside
    /// glibc for information (no verdict).
    R06,
}

impl Target {
    /// Its id, `"P1"` to `"P9"`, `"P4c"`, `"R06"`.
    pub fn id(self) -> &'static str {
        match self {
            Target::P1 => "P1",
            Target::P2 => "P2",
            Target::P3 => "P3",
            Target::P4 => "P4",
            Target::P4c | Target::P4cPreloaded => "P4c",
            Target::P5 | Target::P5Lightweight => "P5",
            Target::P6 | Target::P6Std => "P6",
            Target::R06 => "R06",
            Target::P7 | Target::P7Timeout => "P7",
            Target::P9 => "P9",
            Target::P8 | Target::P8Deadline => "P8",
        }
    }

    /// What it asks, in a few words.
    pub fn text(self) -> &'static str {
        match self {
            Target::P1 => "<= 1 ns and <= glibc",
            Target::P2 => "<= 1.03x raw syscall",
            Target::P3 => "<= 1.2x (futex floor + unwind) and < glibc",
            Target::P4 => "<= 1.2x (signal floor + unwind)",
            Target::P4c => "<= glibc",
            Target::P5 => "<= 1.10x std",
            Target::P5Lightweight => "<= 1.10x glibc",
            Target::P6 => "<= glibc",
            Target::P7 => "<= 20 ns",
            Target::P7Timeout => "<= 1.3x (clock read + run)",
            Target::P9 => "<= 2 ns",
            Target::P8 => "<= 1.2x thread cancel (P3/P4)",
            Target::P8Deadline => "<= 1 ms + P8 latency",
            Target::P6Std | Target::R06 | Target::P4cPreloaded => "none (informative)",
        }
    }

    /// Whether it has a verdict (the informative rows have none).
    pub fn is_target(self) -> bool {
        !matches!(self, Target::P6Std | Target::R06 | Target::P4cPreloaded)
    }

    /// Whether the medians meet it: `ours`, glibc's and the floor's (in the same unit; ns for
    /// P1; for P3 and P4 the floor includes the bare unwind). `None` if a figure it needs is
    /// missing, or for an informative row.
    pub fn met(self, ours: f64, glibc: Option<f64>, floor: Option<f64>) -> Option<bool> {
        match self {
            Target::P1 => glibc.map(|g| ours <= 1.0 && ours <= g),
            Target::P2 => floor.map(|f| ours <= 1.03 * f),
            Target::P3 => Some(ours <= 1.2 * floor? && ours < glibc?),
            Target::P4 => floor.map(|f| ours <= 1.2 * f),
            Target::P4c | Target::P6 => glibc.map(|g| ours <= g),
            Target::P5 => floor.map(|f| ours <= 1.10 * f),
            Target::P5Lightweight => glibc.map(|g| ours <= 1.10 * g),
            Target::P7 => Some(ours <= 20.0),
            Target::P7Timeout => floor.map(|f| ours <= 1.3 * f),
            Target::P9 => Some(ours <= 2.0),
            Target::P8 => floor.map(|f| ours <= 1.2 * f),
            Target::P8Deadline => floor.map(|f| ours <= 1000.0 + f),
            Target::P6Std | Target::R06 | Target::P4cPreloaded => None,
        }
    }
}

/// "MET", "MISSED", or "-" (not decided).
pub fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "MET",
        Some(false) => "MISSED",
        None => "-",
    }
}
