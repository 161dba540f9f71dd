//! P7: entering and leaving a `CancelScope` when nothing is canceled, reported per call
//! (`Throughput::Elements(N)`): `run(|| black_box(1))` on a scope made once and reused (the
//! target: <= 20 ns), a new scope per run, `with_timeout(5 s, ..)` (a new scope whose deadline
//! is registered with the process-wide timer and removed again), and `catch_unwind` alone, the
//! floor every `run` pays to catch the unwind.
//!
//! The main thread is adopted first (`thread_cancel::current()`), as in a program that uses the
//! crate; its first `run` registers it once, during the warm-up. `compare` measures the same
//! calls interleaved with the other targets.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;
use thread_cancel::CancelScope;
use thread_cancel_bench::micro;

/// Calls per measured iteration.
const N: u64 = 1000;

fn p7_scope(c: &mut Criterion) {
    let me = thread_cancel::current();
    assert!(!me.is_finished());
    let mut g = c.benchmark_group("P7 CancelScope (nothing canceled)");
    g.throughput(Throughput::Elements(N));

    let scope = CancelScope::new();
    g.bench_function("CancelScope::run, reused scope", |b| {
        b.iter(|| {
            for _ in 0..N {
                micro::scope_run(&scope);
            }
        })
    });
    g.bench_function("CancelScope::new() + run", |b| {
        b.iter(|| {
            for _ in 0..N {
                micro::scope_run(&CancelScope::new());
            }
        })
    });
    g.bench_function("with_timeout(5 s, ..)", |b| {
        b.iter(|| {
            for _ in 0..N {
                micro::with_timeout_5s();
            }
        })
    });
    g.bench_function("floor: std::panic::catch_unwind alone", |b| {
        b.iter(|| {
            for _ in 0..N {
                micro::catch_unwind_alone();
            }
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = p7_scope
}
criterion_main!(benches);
