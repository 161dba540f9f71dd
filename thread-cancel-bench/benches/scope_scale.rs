//! Costs that must not grow with unrelated work (P10): a child scope made, run and dropped
//! beside 0, 10,000 and 50,000 live sibling scopes of the same parent (a server's root scope
//! with one child per connection). Reported per operation, `Throughput::Elements(N)`.
//!
//! The ratio of the 10,000 and 50,000 rows to the 0 row is the figure the target holds to
//! (<= 1.5x).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;
use thread_cancel::CancelScope;

/// Operations per measured iteration.
const N: u64 = 1000;

fn child_beside_siblings(c: &mut Criterion) {
    thread_cancel::current();
    let mut g = c.benchmark_group("P10 child scope made, run and dropped");
    g.throughput(Throughput::Elements(N));
    for siblings in [0usize, 10_000, 50_000] {
        let root = CancelScope::new();
        let live: Vec<CancelScope> = (0..siblings).map(|_| root.child()).collect();
        g.bench_with_input(
            BenchmarkId::new("live siblings", siblings),
            &root,
            |b, root| {
                b.iter(|| {
                    for _ in 0..N {
                        let child = root.child();
                        let _ = black_box(child.run(|| black_box(1)));
                    }
                })
            },
        );
        drop(live);
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = child_beside_siblings
}
criterion_main!(benches);
