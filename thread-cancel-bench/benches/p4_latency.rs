//! P4: cancellation latency with the target blocked in `read` / `accept` / `poll`, printed as
//! a table (no criterion): ours (`thread_cancel::io`) beside glibc's `pthread_cancel` of a C
//! thread blocked in glibc's own call (see `thread_cancel_bench::p4`). Target: ours <= glibc.
//!
//! As `p3_latency`: samples are taken round-robin (one of each scenario per round, the starting
//! scenario rotating), after warm-up rounds that are dropped; the table gives the first sample
//! of the process, min, median, p90, p99, and the median's and p99's ratios to glibc on the
//! same call. Three P3 scenarios are sampled in the same rounds, for reference: the futex
//! wake-to-run floor, ours canceled in `sleep` (woken by a futex, no signal) and glibc's in
//! `nanosleep` (woken by its cancel signal, as in `read`). Ours in `io::read` minus ours in
//! `sleep` is what the cancel signal adds (the wake-up and the unwind are the same). A
//! diagnostic row repeats ours in `read` with the target's alternate signal stack written to
//! beforehand (what the page faults of the first signal frame on it cost).
//!
//! Arguments, as cargo passes them to a `harness = false` bench: `--bench` alone is the full run
//! (300 samples per scenario); `--test` (from `cargo bench -- --test`) or no `--bench` at all
//! (`cargo test --benches`) is a quick run (3 samples); `--list` lists it and exits.
//!
//! `P4_SAMPLES=n` and `P4_WARMUP=n` override the number of samples and warm-up rounds;
//! `P4_ONLY=text` samples only the scenarios whose name contains `text`; `P3_TARGET_CPU=n` pins
//! every target thread to CPU `n` (see `p3_latency` on pinning).

use std::io;
use std::time::Duration;
use thread_cancel_bench::p3::{self, target_cpu, SETTLE};
use thread_cancel_bench::p4;
use thread_cancel_bench::stats::{env_usize, ratio, Mode, Stats};

/// Samples per scenario in a full run, and in a quick (`--test`) run.
const FULL_SAMPLES: usize = 300;
const QUICK_SAMPLES: usize = 3;
/// Rounds taken and dropped before the measured ones.
const FULL_WARMUP: usize = 20;
const QUICK_WARMUP: usize = 1;

/// A row of the table: a P4 scenario, or a P3 one for reference.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Row {
    P4(p4::Scenario),
    Ref(p3::Scenario),
}

/// The P3 scenarios sampled beside P4's: the futex floor, and a cancel that needs no signal
/// (ours, a futex wake) and one that does (glibc's `nanosleep`), which split ours into the
/// wake-up and the unwind (common to P3 and P4) and the signal (P4 only).
const REFS: [p3::Scenario; 3] = [
    p3::Scenario::FutexFloor,
    p3::Scenario::OursSleep,
    p3::Scenario::GlibcNanosleep,
];

impl Row {
    fn name(self) -> String {
        match self {
            Row::P4(s) => s.name().to_string(),
            Row::Ref(s) => format!("ref: {}", s.name()),
        }
    }

    fn sample(self) -> io::Result<Duration> {
        match self {
            Row::P4(s) => p4::sample(s),
            Row::Ref(s) => p3::sample(s),
        }
    }

    /// Whether this is one of the six scenarios of P4.
    fn is_main(self) -> bool {
        matches!(self, Row::P4(s) if p4::Scenario::MAIN.contains(&s))
    }

    fn glibc_counterpart(self) -> Option<Row> {
        match self {
            Row::P4(s) => s.glibc_counterpart().map(Row::P4),
            Row::Ref(s) => s.glibc_counterpart().map(Row::Ref),
        }
    }
}

fn main() {
    let mode = Mode::from_args();
    if mode == Mode::List {
        println!("p4_latency: bench");
        return;
    }
    let quick = mode == Mode::Quick;
    let samples = env_usize("P4_SAMPLES")
        .unwrap_or(if quick { QUICK_SAMPLES } else { FULL_SAMPLES })
        .max(1);
    let warmup = env_usize("P4_WARMUP").unwrap_or(if quick { QUICK_WARMUP } else { FULL_WARMUP });
    let only = std::env::var("P4_ONLY").unwrap_or_default();
    let rows: Vec<Row> = p4::Scenario::MAIN
        .into_iter()
        .map(Row::P4)
        .chain(REFS.into_iter().map(Row::Ref))
        .chain(p4::Scenario::DIAGNOSTICS.into_iter().map(Row::P4))
        .filter(|r| r.name().contains(only.as_str()))
        .collect();
    if rows.is_empty() {
        println!("p4_latency: no scenario matches P4_ONLY={only:?}");
        return;
    }

    let k = rows.len();
    let mut first: Vec<Option<Duration>> = vec![None; k];
    let mut taken: Vec<Vec<Duration>> = vec![Vec::with_capacity(samples); k];
    for round in 0..warmup + samples {
        for j in 0..k {
            let i = (round + j) % k;
            let r = rows[i];
            let d = r
                .sample()
                .unwrap_or_else(|e| panic!("P4 {}: {e}", r.name()));
            if first[i].is_none() {
                first[i] = Some(d);
            }
            if round >= warmup {
                taken[i].push(d);
            }
        }
    }
    let st: Vec<Stats> = (0..k)
        .map(|i| Stats::new(first[i].unwrap_or_default(), &taken[i]))
        .collect();
    let stats_of = |r: Row| rows.iter().position(|x| *x == r).map(|i| st[i]);

    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!();
    println!(
        "P4 cancellation latency: cancel call -> first cleanup handler starts, target blocked \
         in a system call (seen asleep in it in /proc, then {} us more)",
        SETTLE.as_micros()
    );
    println!(
        "{samples} samples per scenario{}, round-robin, after {warmup} warm-up rounds; \
         {cpus} CPU(s) allowed to the canceler, target threads on {}",
        if quick { " (quick run)" } else { "" },
        target_cpu().map_or("any of them".to_string(), |c| format!("CPU {c}"))
    );
    println!(
        "{:<30} {:>4} {:>9} {:>8} {:>9} {:>8} {:>8} {:>9} {:>9}",
        "scenario",
        "n",
        "first us",
        "min us",
        "median us",
        "p90 us",
        "p99 us",
        "med/glibc",
        "p99/glibc"
    );
    let mut refs_header = false;
    for (i, r) in rows.iter().enumerate() {
        if !r.is_main() && !refs_header {
            println!("-- for reference and diagnostics (not part of P4)");
            refs_header = true;
        }
        let x = &st[i];
        let g = r.glibc_counterpart().and_then(stats_of);
        println!(
            "{:<30} {:>4} {:>9.1} {:>8.1} {:>9.1} {:>8.1} {:>8.1} {:>9} {:>9}",
            r.name(),
            x.n,
            x.first,
            x.min,
            x.median,
            x.p90,
            x.p99,
            ratio(x.median, g.map(|g| g.median)),
            ratio(x.p99, g.map(|g| g.p99)),
        );
    }

    // A verdict needs enough samples for a median.
    if quick {
        return;
    }
    println!();
    println!("P4 target: ours <= glibc's pthread_cancel on the same call (medians)");
    for (i, r) in rows.iter().enumerate() {
        let (true, Some(g)) = (r.is_main(), r.glibc_counterpart().and_then(stats_of)) else {
            continue;
        };
        let m = st[i].median;
        println!(
            "  {:<24} {:>5.2}x glibc: {}",
            r.name(),
            m / g.median,
            if m <= g.median { "met" } else { "MISSED" }
        );
    }
}
