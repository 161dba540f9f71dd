//! The driver of the latency benches (`p3_latency`, `p4_latency`): rows of scenarios sampled
//! round-robin ([`crate::rounds`]) and printed as one table — per row the first sample of the
//! process (cold caches), min, median, p90 and p99 of the rest (after warm-up rounds), and the
//! median's ratio to the floor and to glibc on the same wait, the p99's to glibc — then the
//! verdict on the performance target for each row of ours. Where the target's floor includes one bare
//! unwind ([`Bench::floor_plus`]), that row's median is added to every floor.
//!
//! Arguments, as cargo passes them to a `harness = false` bench ([`Mode`]): `--bench` alone is
//! the full run ([`FULL_SAMPLES`] samples per row); `--test` (from `cargo bench -- --test`) or
//! no `--bench` at all (`cargo test --benches`) a quick run ([`QUICK_SAMPLES`]); `--list` lists
//! the bench and exits. `<ENV>_SAMPLES=n` and `<ENV>_WARMUP=n` override the samples and warm-up
//! rounds, `<ENV>_ONLY=text` keeps only the rows whose name contains `text` (`<ENV>` is `P3` or
//! `P4`); `P3_TARGET_CPU=n` pins every target thread to CPU `n` (see [`crate::target::target_cpu`]).
//!
//! Where the woken target runs matters as much as what it does: on a small VM the scheduler
//! often queues it on the canceler's CPU (it runs once the canceler blocks in the join), and
//! sometimes on an idle one (an inter-processor interrupt, slower and more variable), which
//! makes unpinned runs bimodal. For repeatable numbers, pin: `taskset -c 0 <bench> --bench`
//! (no CPU switch at all) or `taskset -c 0 env P3_TARGET_CPU=1 <bench> --bench` (every wake-up
//! crosses CPUs).

use crate::perf_targets::{verdict, Target};
use crate::rounds::{interleave, Plan};
use crate::stats::{env_usize, ratio, Mode, Stats};
use crate::target::{target_cpu, SETTLE};
use std::io;
use std::time::Duration;

/// Samples per row in a full run, and in a quick (`--test`) run.
pub const FULL_SAMPLES: usize = 300;
/// Samples per row in a quick run.
pub const QUICK_SAMPLES: usize = 3;
/// Warm-up rounds (taken and dropped) in a full run.
pub const FULL_WARMUP: usize = 20;
/// Warm-up rounds in a quick run.
pub const QUICK_WARMUP: usize = 1;

/// Takes one sample of a row.
pub type Sampler = Box<dyn FnMut() -> io::Result<Duration>>;

/// One row: a scenario and the rows it is compared with.
pub struct Row {
    /// Its label.
    pub name: String,
    /// Whether it is part of the target (the others are printed after, for reference).
    pub main: bool,
    /// The name of glibc's row on the same wait, if any.
    pub glibc: Option<String>,
    /// The name of the floor's row, if any.
    pub floor: Option<String>,
    /// How to take a sample.
    pub sample: Sampler,
}

/// One latency bench.
pub struct Bench {
    /// The bench's name (for `--list` and messages).
    pub name: &'static str,
    /// The prefix of its environment variables (`P3`, `P4`).
    pub env: &'static str,
    /// What is measured (the table's first line).
    pub title: String,
    /// The target its rows of ours are held to.
    pub target: Target,
    /// The rows, main ones first.
    pub rows: Vec<Row>,
    /// The line printed before the first row that is not a main one.
    pub others: &'static str,
    /// The name of a row whose median is added to every floor (P3 and P4: one bare
    /// `resume_unwind`), if any.
    pub floor_plus: Option<String>,
}

/// Runs `bench` as its arguments and environment say (see the module docs) and prints its
/// table.
///
/// # Panics
///
/// If a sample fails (the row's name and the error are in the message).
pub fn run(bench: Bench) {
    let Some(mode) = Mode::for_bench(bench.name) else {
        return;
    };
    let quick = mode == Mode::Quick;
    let var = |what: &str| format!("{}_{what}", bench.env);
    let samples = env_usize(&var("SAMPLES"))
        .unwrap_or(if quick { QUICK_SAMPLES } else { FULL_SAMPLES })
        .max(1);
    let warmup =
        env_usize(&var("WARMUP")).unwrap_or(if quick { QUICK_WARMUP } else { FULL_WARMUP });
    let only = std::env::var(var("ONLY")).unwrap_or_default();
    let mut rows: Vec<Row> = bench.rows;
    rows.retain(|r| r.name.contains(only.as_str()));
    if rows.is_empty() {
        println!(
            "{}: no scenario matches {}={only:?}",
            bench.name,
            var("ONLY")
        );
        return;
    }

    let plans = vec![Plan { warmup, samples }; rows.len()];
    let series = interleave(
        &plans,
        |i| (rows[i].sample)().map(crate::stats::us),
        |_, _| {},
    )
    .unwrap_or_else(|(i, e)| panic!("{} {}: {e}", bench.env, rows[i].name));
    let st: Vec<Stats> = series
        .iter()
        .map(|s| s.stats().expect("at least one sample per row"))
        .collect();
    let stats_of = |name: &Option<String>| {
        let name = name.as_deref()?;
        rows.iter().position(|r| r.name == name).map(|i| st[i])
    };
    // The floor's median, plus the bare unwind's where the target says so.
    let plus = stats_of(&bench.floor_plus).map_or(0.0, |s| s.median);
    let floor_median = |f: Option<Stats>| f.map(|f| f.median + plus);

    println!();
    println!(
        "{} (seen asleep in the expected syscall in /proc, then {} us more)",
        bench.title,
        SETTLE.as_micros()
    );
    println!(
        "{samples} samples per scenario{}, round-robin, after {warmup} warm-up rounds; \
         {} CPU(s) allowed to the canceler, target threads on {}",
        if quick { " (quick run)" } else { "" },
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        target_cpu().map_or("any of them".to_string(), |c| format!("CPU {c}"))
    );
    println!(
        "{:<30} {:>4} {:>9} {:>8} {:>9} {:>8} {:>8} {:>9} {:>9} {:>9}",
        "scenario",
        "n",
        "first us",
        "min us",
        "median us",
        "p90 us",
        "p99 us",
        "med/floor",
        "med/glibc",
        "p99/glibc"
    );
    if let (Some(name), Some(_)) = (&bench.floor_plus, stats_of(&bench.floor_plus)) {
        println!("med/floor: the floor's median + {plus:.1} us ({name}'s median)");
    }
    let mut others_printed = false;
    for (r, x) in rows.iter().zip(&st) {
        if !r.main && !others_printed {
            println!("{}", bench.others);
            others_printed = true;
        }
        let (f, g) = (stats_of(&r.floor), stats_of(&r.glibc));
        println!(
            "{:<30} {:>4} {:>9.1} {:>8.1} {:>9.1} {:>8.1} {:>8.1} {:>9} {:>9} {:>9}",
            r.name,
            x.n,
            x.first,
            x.min,
            x.median,
            x.p90,
            x.p99,
            ratio(x.median, floor_median(f)),
            ratio(x.median, g.map(|g| g.median)),
            ratio(x.p99, g.map(|g| g.p99)),
        );
    }

    // A verdict needs enough samples for a median.
    if quick {
        return;
    }
    println!();
    println!(
        "{} target: {} (medians)",
        bench.target.id(),
        bench.target.text()
    );
    for (r, x) in rows.iter().zip(&st) {
        let (f, g) = (stats_of(&r.floor), stats_of(&r.glibc));
        if !r.main || (f.is_none() && g.is_none()) {
            continue;
        }
        let met = bench
            .target
            .met(x.median, g.map(|g| g.median), floor_median(f));
        println!(
            "  {:<28} {:>6} floor  {:>6} glibc  {}",
            r.name,
            ratio(x.median, floor_median(f)),
            ratio(x.median, g.map(|g| g.median)),
            verdict(met)
        );
    }
}
