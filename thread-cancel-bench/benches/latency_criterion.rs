//! P3, P4 and P6 with criterion. P3/P4: cancellation latency (cancel call -> first cleanup
//! handler starts) with the target blocked in a wait (P3) or a system call (P4), beside the
//! floors (futex wake-to-run; signal-to-handler) and glibc's `pthread_cancel`. P6: 10,000
//! blocked threads canceled and joined, beside glibc and the futex floor.
//!
//! Every iteration needs fresh blocked threads, so each benchmark uses `iter_custom`: the
//! iteration spawns its targets, waits until they are blocked, and only the measured part is
//! summed. The setup takes far longer than the latency, so the measurement times are short:
//! criterion sizes its runs by the measured time, and the wall time is ~10-30x that.
//! `compare` prints every scenario as one table (medians, p99, ratios), sampled round-robin.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use thread_cancel_bench::{mass_cancel, syscall_latency, wait_latency};

fn p3_latency(c: &mut Criterion) {
    let mut g = c.benchmark_group("P3 cancel latency (blocked target)");
    for s in wait_latency::Scenario::MAIN {
        g.bench_function(s.name(), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        wait_latency::sample(s).unwrap_or_else(|e| panic!("P3 {}: {e}", s.name()))
                    })
                    .sum::<Duration>()
            })
        });
    }
    g.finish();
}

fn p4_latency(c: &mut Criterion) {
    let mut g = c.benchmark_group("P4 cancel latency (target in a system call)");
    for s in syscall_latency::Scenario::all() {
        g.bench_function(s.name(), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        syscall_latency::sample(s)
                            .unwrap_or_else(|e| panic!("P4 {}: {e}", s.name()))
                    })
                    .sum::<Duration>()
            })
        });
    }
    g.finish();
}

fn p6_mass_cancel(c: &mut Criterion) {
    let mut g = c.benchmark_group("P6 10,000 blocked threads canceled and joined");
    g.sample_size(10);
    for side in mass_cancel::Side::ALL {
        g.bench_function(side.name(), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        mass_cancel::run(side, mass_cancel::THREADS, mass_cancel::STACK)
                            .unwrap_or_else(|e| panic!("P6 {}: {e}", side.name()))
                            .total
                    })
                    .sum::<Duration>()
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = latency;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(20))
        .measurement_time(Duration::from_millis(200))
        .sample_size(20);
    targets = p3_latency, p4_latency
}
criterion_group! {
    name = mass;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(2));
    targets = p6_mass_cancel
}
criterion_main!(latency, mass);
