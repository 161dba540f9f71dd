//! P3: cancellation latency, printed as a table (no criterion).
//!
//! Each scenario (see `thread_cancel_bench::p3`) needs a fresh blocked thread per sample, and
//! machine noise (a frequency change, a neighbour on the host) should hit all scenarios alike,
//! so the samples are taken round-robin: one of each scenario per round, the starting scenario
//! rotating from round to round. The table gives, per scenario, the first sample of the process
//! (cold caches), min, median, p90 and p99 of the rest (after warm-up rounds), and the medians'
//! ratios to the futex wake-to-run floor and to glibc on the same kind of wait (`nanosleep` for
//! `sleep`, `pthread_cond_wait` for the condvar, channel and join).
//!
//! Arguments, as cargo passes them to a `harness = false` bench:
//! - `cargo bench` runs it with `--bench`: the full run (300 samples per scenario);
//! - `cargo bench -- --test` passes `--test --bench`, and `cargo test --benches` passes neither:
//!   a quick run (3 samples per scenario), as criterion does;
//! - `--list` (from `cargo test -- --list`) lists it and exits.
//!
//! `P3_SAMPLES=n` and `P3_WARMUP=n` override the number of samples and warm-up rounds;
//! `P3_ONLY=text` samples only the scenarios whose name contains `text` (for profiling one, e.g.
//! `P3_ONLY=sleep perf record -g target/release/deps/p3_latency-* --bench`; the Rust target
//! threads are named `p3-target`); `P3_TARGET_CPU=n` pins every target thread to CPU `n`.
//!
//! Where the woken target runs matters as much as what it does: on a small VM the scheduler
//! often queues it on the canceler's CPU (it runs once the canceler blocks in the join), and
//! sometimes on an idle one (an inter-processor interrupt, slower and more variable), which
//! makes unpinned runs bimodal. For repeatable numbers, pin: `taskset -c 0 <bench> --bench`
//! (no CPU switch at all) or `taskset -c 0 env P3_TARGET_CPU=1 <bench> --bench` (every wake-up
//! crosses CPUs).

use std::time::Duration;
use thread_cancel_bench::p3::{sample, target_cpu, Scenario, SETTLE};
use thread_cancel_bench::stats::{env_usize, ratio, Mode, Stats};

/// Samples per scenario in a full run, and in a quick (`--test`) run.
const FULL_SAMPLES: usize = 300;
const QUICK_SAMPLES: usize = 3;
/// Rounds taken and dropped before the measured ones (the first unwind loads the unwinder's
/// caches, the first threads fault in their stacks' pages, ...).
const FULL_WARMUP: usize = 20;
const QUICK_WARMUP: usize = 1;

fn main() {
    let mode = Mode::from_args();
    if mode == Mode::List {
        println!("p3_latency: bench");
        return;
    }
    // As criterion: `--bench` alone is a benchmark run; `--test`, or no `--bench` at all
    // (`cargo test --benches`), is a quick check that everything works.
    let quick = mode == Mode::Quick;
    let samples = env_usize("P3_SAMPLES")
        .unwrap_or(if quick { QUICK_SAMPLES } else { FULL_SAMPLES })
        .max(1);
    let warmup = env_usize("P3_WARMUP").unwrap_or(if quick { QUICK_WARMUP } else { FULL_WARMUP });
    let only = std::env::var("P3_ONLY").unwrap_or_default();
    let scenarios: Vec<Scenario> = Scenario::ALL
        .into_iter()
        .filter(|s| s.name().contains(only.as_str()))
        .collect();
    if scenarios.is_empty() {
        println!("p3_latency: no scenario matches P3_ONLY={only:?}");
        return;
    }

    let k = scenarios.len();
    let mut first: Vec<Option<Duration>> = vec![None; k];
    let mut taken: Vec<Vec<Duration>> = vec![Vec::with_capacity(samples); k];
    for round in 0..warmup + samples {
        for j in 0..k {
            let i = (round + j) % k;
            let s = scenarios[i];
            let d = sample(s).unwrap_or_else(|e| panic!("P3 {}: {e}", s.name()));
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
    let median_of = |s: Scenario| scenarios.iter().position(|x| *x == s).map(|i| st[i].median);
    let floor = median_of(Scenario::FutexFloor);

    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!();
    println!(
        "P3 cancellation latency: cancel call -> first cleanup handler starts, target blocked \
         (seen asleep in the expected syscall in /proc, then {} us more)",
        SETTLE.as_micros()
    );
    println!(
        "{samples} samples per scenario{}, round-robin, after {warmup} warm-up rounds; \
         {cpus} CPU(s) allowed to the canceler, target threads on {}",
        if quick { " (quick run)" } else { "" },
        target_cpu().map_or("any of them".to_string(), |c| format!("CPU {c}"))
    );
    println!(
        "{:<28} {:>4} {:>9} {:>8} {:>9} {:>8} {:>8} {:>9} {:>9} {:>10}",
        "scenario",
        "n",
        "first us",
        "min us",
        "median us",
        "p90 us",
        "p99 us",
        "med/floor",
        "med/glibc",
        "-floor us"
    );
    let mut diagnostics_header = false;
    for (i, s) in scenarios.iter().enumerate() {
        let main = Scenario::MAIN.contains(s);
        if !main && !diagnostics_header {
            println!("-- diagnostics (not part of P3; they split the latency into its parts)");
            diagnostics_header = true;
        }
        let x = &st[i];
        let (vs_floor, over_floor) = match floor {
            Some(f) if main => (
                ratio(x.median, Some(f)),
                if *s == Scenario::FutexFloor {
                    "-".to_string()
                } else {
                    format!("{:+.1}", x.median - f)
                },
            ),
            _ => ("-".to_string(), "-".to_string()),
        };
        let vs_glibc = ratio(x.median, s.glibc_counterpart().and_then(median_of));
        println!(
            "{:<28} {:>4} {:>9.1} {:>8.1} {:>9.1} {:>8.1} {:>8.1} {:>9} {:>9} {:>10}",
            s.name(),
            x.n,
            x.first,
            x.min,
            x.median,
            x.p90,
            x.p99,
            vs_floor,
            vs_glibc,
            over_floor
        );
    }

    // A verdict needs the full table and enough samples for a median.
    let (Some(floor), true, false) = (floor, only.is_empty(), quick) else {
        return;
    };
    println!();
    println!(
        "P3 targets: ours <= 1.2x the futex floor, and below glibc on the same wait (medians)"
    );
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    for (i, s) in scenarios.iter().enumerate() {
        let Some(g) = s.glibc_counterpart().and_then(median_of) else {
            continue;
        };
        if !s.is_ours_blocked() {
            continue;
        }
        let m = st[i].median;
        println!(
            "  {:<24} {:>5.2}x floor: {:<6}  {:>5.2}x glibc: {}",
            s.name(),
            m / floor,
            verdict(m <= 1.2 * floor),
            m / g,
            verdict(m < g)
        );
    }
}
