//! Summary statistics for the tables (`p3_latency`, `p4_latency`, `compare`): first sample, min,
//! median, nearest-rank percentiles (of durations: in microseconds), and how a `harness = false`
//! bench was invoked.
//!
//! ```
//! use std::time::Duration;
//! use thread_cancel_bench::stats::{ratio, Stats};
//! let v: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
//! let s = Stats::new(Duration::from_micros(7), &v);
//! assert_eq!((s.n, s.min, s.median, s.p90, s.p99), (100, 1.0, 50.5, 90.0, 99.0));
//! assert_eq!(ratio(s.median, Some(50.5)), "1.00x");
//! assert_eq!(ratio(1.0, None), "-");
//! ```

use std::time::Duration;

/// Summary of one scenario's samples (µs for durations; the series' own unit for
/// [`Stats::of`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// The first sample of the process (cold caches), taken before the warm-up was dropped.
    pub first: f64,
    /// Samples summarised.
    pub n: usize,
    /// The smallest.
    pub min: f64,
    /// The median (mean of the two middle samples for an even count).
    pub median: f64,
    /// The 90th percentile (nearest rank).
    pub p90: f64,
    /// The 99th percentile (nearest rank).
    pub p99: f64,
}

impl Stats {
    /// Summarises `samples` (at least one), with `first` reported as is.
    ///
    /// # Panics
    ///
    /// If `samples` is empty.
    pub fn new(first: Duration, samples: &[Duration]) -> Stats {
        let v: Vec<f64> = samples.iter().copied().map(us).collect();
        Stats::of(us(first), &v)
    }

    /// Summarises `values` (at least one, in any unit), with `first` reported as is.
    ///
    /// # Panics
    ///
    /// If `values` is empty.
    pub fn of(first: f64, values: &[f64]) -> Stats {
        assert!(!values.is_empty(), "no samples");
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        Stats {
            first,
            n: v.len(),
            min: v[0],
            median: median(&v),
            p90: percentile(&v, 90.0),
            p99: percentile(&v, 99.0),
        }
    }
}

/// `d` in microseconds.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Nearest-rank percentile of sorted, non-empty `v` (0 < p <= 100).
pub fn percentile(v: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Median of sorted, non-empty `v`.
pub fn median(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A number with 3 significant digits or so.
pub fn num(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// `num / den` as "1.23x", or "-" without a denominator.
pub fn ratio(num: f64, den: Option<f64>) -> String {
    den.map_or_else(|| "-".to_string(), |d| format!("{:.2}x", num / d))
}

/// The value of environment variable `name` as a `usize`, if set and valid.
pub fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// How a `harness = false` bench was invoked, from its arguments (as cargo passes them):
/// `cargo bench` passes `--bench` (a full run); `cargo bench -- --test` passes `--test --bench`
/// and `cargo test --benches` neither (a quick run, as criterion does); `--list` asks for the
/// list of benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `--list`: print the bench's name and exit.
    List,
    /// A quick check that everything works.
    Quick,
    /// The full measurement.
    Full,
}

impl Mode {
    /// The mode of this process for the bench `name`; with `--list`, prints `name: bench` (what
    /// `cargo test -- --list` expects) and returns `None`.
    pub fn for_bench(name: &str) -> Option<Mode> {
        let mode = Mode::from_args();
        if mode == Mode::List {
            println!("{name}: bench");
            return None;
        }
        Some(mode)
    }

    /// The mode of this process, from `std::env::args()`.
    pub fn from_args() -> Mode {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let has = |flag: &str| args.iter().any(|a| a == flag);
        if has("--list") {
            Mode::List
        } else if has("--test") || !has("--bench") {
            Mode::Quick
        } else {
            Mode::Full
        }
    }
}
