//! R06: cancellation latency of a compute loop with no cancellation point, from the `cancel`
//! call to the first cleanup handler (pushed outside the region) starting: ours in an
//! `async_region`, beside glibc's `pthread_cancel` of a C loop with type
//! `PTHREAD_CANCEL_ASYNCHRONOUS` (`csrc/glibc_async.c`), sampled alternately in one run.
//! Both sides stamp `CLOCK_MONOTONIC`.
//!
//! `cargo bench -p thread-cancel-bench --bench async_region` is the full run (300 samples per
//! side, `ASYNC_SAMPLES=n` to change); `-- --test` is a quick run (3 samples).

use thread_cancel_bench::async_cancel::{glibc, ours};
use thread_cancel_bench::stats::{env_usize, ratio, Mode, Stats};

fn main() {
    let mode = Mode::from_args();
    if mode == Mode::List {
        println!("async_region: benchmark");
        return;
    }
    let n = env_usize("ASYNC_SAMPLES").unwrap_or(if mode == Mode::Full { 300 } else { 3 });
    let warmup = if mode == Mode::Full { 20 } else { 1 };
    let (first_ours, first_glibc) = (ours(), glibc());
    let (mut o, mut g) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..warmup + n {
        // Alternate which side goes first in a round.
        let (a, b) = if i % 2 == 0 {
            let a = ours();
            (a, glibc())
        } else {
            let b = glibc();
            (ours(), b)
        };
        if i >= warmup {
            o.push(a);
            g.push(b);
        }
    }
    let (so, sg) = (Stats::new(first_ours, &o), Stats::new(first_glibc, &g));
    println!("Async cancel -> first cleanup, compute loop without cancellation points ({n} samples each, µs)");
    println!(
        "{:<40} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10}",
        "scenario", "first", "min", "median", "p90", "p99", "med/glibc", "p99/glibc"
    );
    for (name, s) in [
        ("ours: async_region loop", so),
        ("glibc: PTHREAD_CANCEL_ASYNCHRONOUS loop", sg),
    ] {
        println!(
            "{:<40} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>10} {:>10}",
            name,
            s.first,
            s.min,
            s.median,
            s.p90,
            s.p99,
            ratio(s.median, Some(sg.median)),
            ratio(s.p99, Some(sg.p99)),
        );
    }
}
