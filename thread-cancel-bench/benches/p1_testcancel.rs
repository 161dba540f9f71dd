//! P1: the cost of a cancellation point with nothing pending, ours beside glibc's
//! `pthread_testcancel`, both reported per call (`Throughput::Elements(1000)`).
//!
//! Criterion runs every benchmark on the thread that calls `bench_function`, the main thread.
//! Adoption (`thread_cancel::current()`) is permanent for a thread, and criterion cannot give
//! a benchmark a fresh `std` thread, so the un-adopted case is measured first, on the main
//! thread before anything adopts it; then the main thread is adopted and the realistic case
//! (a thread with a control block) is measured.
//!
//! Why our loop cannot be optimised away: `std::hint::black_box` is an opaque `asm!` block
//! that the compiler must assume reads and writes any memory, the thread-locals included. So
//! every iteration reloads the thread's control-block pointer from TLS, and, when it is
//! non-null, performs the `Acquire` load of the state word (an atomic load, which compilers do
//! not elide either). The glibc loop is an external call into libc.so per iteration.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

/// Cancellation points per measured iteration (FFI overhead amortised on the glibc side).
const N: u64 = 1000;

fn ours_loop() {
    for _ in 0..N {
        thread_cancel::testcancel();
        black_box(());
    }
}

fn p1_testcancel(c: &mut Criterion) {
    let mut g = c.benchmark_group("P1 testcancel (nothing pending)");
    g.throughput(Throughput::Elements(N));

    // Must run before `thread_cancel::current()` below: the main thread is not adopted yet,
    // so `testcancel` finds no control block (one TLS load and a null check).
    g.bench_function("thread_cancel::testcancel, un-adopted main thread", |b| {
        b.iter(ours_loop)
    });

    // Adopt the main thread for good: from here on `testcancel` loads the state word too.
    let me = thread_cancel::current();
    assert!(!me.is_finished());
    g.bench_function("thread_cancel::testcancel, adopted main thread", |b| {
        b.iter(ours_loop)
    });

    g.bench_function("glibc pthread_testcancel, C loop", |b| {
        b.iter(|| thread_cancel_bench::glibc_testcancel_n(black_box(N)))
    });

    g.bench_function("glibc pthread_testcancel, one FFI call each", |b| {
        b.iter(|| {
            for _ in 0..N {
                thread_cancel_bench::glibc_testcancel();
                black_box(());
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
    targets = p1_testcancel
}
criterion_main!(benches);
