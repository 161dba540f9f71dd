//! P6: 10,000 blocked threads (a quarter each in a sleep, a channel-like wait, a pipe `read`,
//! a condition wait; 64 KiB stacks) canceled and joined — ours (lightweight threads, and
//! threads spawned through `std`), glibc's `pthread_cancel` on C threads, and the futex wake +
//! join floor — interleaved (see `thread_cancel_bench::mass_cancel`). Target: ours with
//! `Builder::lightweight()` not slower than glibc.
//!
//! `--bench` alone is the full run (10 runs per side after one dropped); `--test` or no
//! `--bench` a quick one (200 threads, one run); `--list` lists it. `P6_THREADS`, `P6_SAMPLES`
//! and `P6_STACK` (bytes) override the thread count, the runs and the stack size;
//! `P6_ONLY=<prefix>` runs the sides whose name starts with it (`ours lightweight`,
//! `ours std-spawned`, `glibc`, `floor`; `ours` is both of ours), for profiling (e.g. under
//! `perf record`).

use thread_cancel_bench::mass_cancel::{self, Side};
use thread_cancel_bench::perf_targets::{verdict, Target};
use thread_cancel_bench::rounds::{interleave, Plan};
use thread_cancel_bench::stats::{env_usize, Mode};

fn main() {
    let Some(mode) = Mode::for_bench("p6_mass_cancel") else {
        return;
    };
    let quick = mode == Mode::Quick;
    let threads = env_usize("P6_THREADS").unwrap_or(if quick { 200 } else { mass_cancel::THREADS });
    let stack = env_usize("P6_STACK").unwrap_or(mass_cancel::STACK);
    let plan = Plan {
        warmup: usize::from(!quick),
        samples: env_usize("P6_SAMPLES")
            .unwrap_or(if quick { 1 } else { 10 })
            .max(1),
    };
    let only = std::env::var("P6_ONLY").unwrap_or_default();
    let sides: Vec<Side> = Side::ALL
        .into_iter()
        .filter(|s| s.name().starts_with(only.as_str()))
        .collect();
    let mut runs = vec![Vec::new(); Side::ALL.len()];
    let plans: Vec<Plan> = Side::ALL
        .iter()
        .map(|s| {
            if sides.contains(s) {
                plan
            } else {
                Plan {
                    warmup: 0,
                    samples: 0,
                }
            }
        })
        .collect();
    interleave(
        &plans,
        |i| {
            let s = mass_cancel::run(Side::ALL[i], threads, stack)?;
            runs[i].push(s);
            Ok::<f64, std::io::Error>(s.total.as_secs_f64())
        },
        |_, _| {},
    )
    .unwrap_or_else(|(i, e)| panic!("P6 {}: {e}", Side::ALL[i].name()));

    println!();
    println!(
        "P6: {threads} blocked threads ({} KiB stacks) canceled (woken) and joined{}",
        stack >> 10,
        if quick { " (quick run)" } else { "" }
    );
    let kept: Vec<Vec<mass_cancel::Sample>> = runs
        .iter()
        .map(|r| r.get(plan.warmup..).unwrap_or_default().to_vec())
        .collect();
    for (side, r) in Side::ALL.iter().zip(&kept) {
        if let Some(line) = mass_cancel::summary(*side, r, threads) {
            println!("  {line}");
        }
    }
    let median = |side: Side| {
        let i = Side::ALL.iter().position(|s| *s == side)?;
        let v: Vec<f64> = kept[i].iter().map(|s| s.total.as_secs_f64()).collect();
        (!v.is_empty()).then(|| thread_cancel_bench::stats::Stats::of(v[0], &v).median)
    };
    let Some(glibc) = median(Side::Glibc).filter(|_| !quick) else {
        return;
    };
    if let Some(std_spawned) = median(Side::Ours) {
        println!(
            "ours std-spawned/glibc {:.2}x (informative)",
            std_spawned / glibc
        );
    }
    if let Some(light) = median(Side::Lightweight) {
        println!(
            "P6 target: {}: ours lightweight/glibc {:.2}x: {}",
            Target::P6.text(),
            light / glibc,
            verdict(Target::P6.met(light, Some(glibc), None))
        );
    }
}
