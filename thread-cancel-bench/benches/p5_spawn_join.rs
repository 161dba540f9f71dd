//! P5: spawning a thread that does nothing and joining it: `std`, ours, and glibc's
//! `pthread_create` + `pthread_join` (through the C shim) in the same run.
//!
//! Criterion runs every benchmark on the main thread, and adoption
//! (`thread_cancel::current()`) is permanent for a thread; criterion cannot run a benchmark in
//! a separate process. So the benchmarks are ordered: everything that needs an un-adopted
//! main thread runs first, and the adopted variant (where `join` is a cancellation point that
//! registers the caller as the joiner and may park) runs last.
//!
//! Note: glibc's default stack is `ulimit -s` (usually 8 MiB) and `std`'s is 2 MiB; both are
//! only reserved (mmap), not touched, so the size matters little here.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

fn p5_spawn_join(c: &mut Criterion) {
    let mut g = c.benchmark_group("P5 spawn+join");
    g.throughput(Throughput::Elements(1));

    g.bench_function("std::thread::spawn+join", |b| {
        b.iter(|| std::thread::spawn(|| ()).join().unwrap())
    });

    // The main thread is not adopted yet: `join` has no control block to register and goes
    // straight to `std`'s join.
    g.bench_function("thread_cancel::spawn+join, un-adopted main thread", |b| {
        b.iter(|| thread_cancel::spawn(|| ()).join().unwrap())
    });

    g.bench_function(
        "thread_cancel lightweight spawn+join, un-adopted main thread",
        |b| b.iter(|| thread_cancel_bench::micro::spawn_join_lightweight().unwrap()),
    );

    g.bench_function("glibc pthread_create+pthread_join", |b| {
        b.iter(|| thread_cancel_bench::glibc_spawn_join().unwrap())
    });

    // Last, because adoption cannot be undone: from here on the main thread has a control
    // block, and `join` is a cancellation point that may park on it.
    g.bench_function("thread_cancel::spawn+join, adopted main thread", |b| {
        let me = thread_cancel::current();
        assert!(!me.is_finished());
        b.iter(|| thread_cancel::spawn(|| ()).join().unwrap())
    });

    g.bench_function(
        "thread_cancel lightweight spawn+join, adopted main thread",
        |b| b.iter(|| thread_cancel_bench::micro::spawn_join_lightweight().unwrap()),
    );

    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = p5_spawn_join
}
criterion_main!(benches);
