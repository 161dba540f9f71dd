//! P3 with criterion: cancellation latency (cancel call -> first cleanup handler starts) with
//! the target blocked, beside the futex wake-to-run floor and glibc's `pthread_cancel`.
//!
//! Every iteration needs a fresh blocked thread, so each benchmark uses `iter_custom`: the
//! iteration spawns its target, waits until it is blocked, and only the latency itself is
//! summed. The setup (thread creation, the wait, the join) is not measured but takes far longer
//! than the latency, so the measurement times are short: criterion sizes its runs by the
//! measured time, and the wall time is ~10-30x that. `benches/p3_latency.rs` prints the same
//! scenarios as one table (medians, p99, ratios), sampled round-robin.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use thread_cancel_bench::p3::{sample, Scenario};

fn p3_latency(c: &mut Criterion) {
    let mut g = c.benchmark_group("P3 cancel latency (blocked target)");
    for s in Scenario::MAIN {
        g.bench_function(s.name(), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| sample(s).unwrap_or_else(|e| panic!("P3 {}: {e}", s.name())))
                    .sum::<Duration>()
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(20))
        .measurement_time(Duration::from_millis(200))
        .sample_size(20);
    targets = p3_latency
}
criterion_main!(benches);
