//! The performance targets of SPEC §4 (P1–P6), and R06's informative row, as data: what each says, and whether measured
//! medians meet it. The thresholds are the specification's; every figure compared with them
//! is measured.
//!
//! ```
//! use thread_cancel_bench::target::Target;
//! assert_eq!(Target::P4.met(9.0, Some(10.0), None), Some(true));
//! assert_eq!(Target::P3.met(9.0, Some(10.0), Some(5.0)), Some(false)); // 1.8x the floor
//! assert_eq!(Target::P2.met(100.0, None, None), None); // needs the floor (raw syscall)
//! ```

/// One target of SPEC §4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// `testcancel()` with nothing pending: <= 1 ns, and <= 0.5x glibc's `pthread_testcancel`
    /// (medians in ns).
    P1,
    /// Cancellable `read`/`write` that do not block: <= 1.03x the raw system call (the floor).
    P2,
    /// Cancel to first cleanup, blocked in sleep / condvar / channel / join: <= 1.2x the futex
    /// wake-to-run floor, and below glibc's `pthread_cancel` on the same wait.
    P3,
    /// Cancel to first cleanup, blocked in `read` / `accept` / `poll`: <= glibc's.
    P4,
    /// `spawn` + `join`: <= 1.10x `std::thread::spawn` + `join` (the floor).
    P5,
    /// 10,000 blocked threads canceled and joined: faster than glibc.
    P6,
    /// Not a SPEC target: R06's asynchronous cancellation of a compute loop, shown beside
    /// glibc for information (no verdict).
    R06,
}

impl Target {
    /// Its id, `"P1"` to `"P6"`.
    pub fn id(self) -> &'static str {
        match self {
            Target::P1 => "P1",
            Target::P2 => "P2",
            Target::P3 => "P3",
            Target::P4 => "P4",
            Target::P5 => "P5",
            Target::P6 => "P6",
            Target::R06 => "R06",
        }
    }

    /// What it asks, in a few words.
    pub fn text(self) -> &'static str {
        match self {
            Target::P1 => "<= 1 ns and <= 0.5x glibc",
            Target::P2 => "<= 1.03x raw syscall",
            Target::P3 => "<= 1.2x futex floor and < glibc",
            Target::P4 => "<= glibc",
            Target::P5 => "<= 1.10x std",
            Target::P6 => "< glibc",
            Target::R06 => "none (informative)",
        }
    }

    /// Whether the medians meet it: `ours`, glibc's and the floor's (in the same unit; ns for
    /// P1). `None` if a figure it needs is missing.
    pub fn met(self, ours: f64, glibc: Option<f64>, floor: Option<f64>) -> Option<bool> {
        match self {
            Target::P1 => glibc.map(|g| ours <= 1.0 && ours <= 0.5 * g),
            Target::P2 => floor.map(|f| ours <= 1.03 * f),
            Target::P3 => Some(ours <= 1.2 * floor? && ours < glibc?),
            Target::P4 => glibc.map(|g| ours <= g),
            Target::P5 => floor.map(|f| ours <= 1.10 * f),
            Target::P6 => glibc.map(|g| ours < g),
            Target::R06 => None,
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
