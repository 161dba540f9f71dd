//! P2: the cost of `thread_cancel::io::read` / `io::write` when they do not block, beside the
//! raw system call (`libc::syscall(SYS_read, ..)`) and glibc's `read`/`write` wrappers, in one
//! run. Target: ours <= 1.03x the raw system call.
//!
//! The descriptors never block: `read` takes 1 byte from `/dev/zero` (always has data),
//! `write` gives 1 byte to `/dev/null` (always takes it). Each benchmark iteration is one call.
//!
//! Criterion runs every benchmark on the main thread, and adoption (`thread_cancel::current()`)
//! is permanent for a thread, so (as in P1) the un-adopted figure is taken first: without a
//! control block our calls take the plain path (one TLS load, then `libc::syscall`). Then the
//! main thread is adopted, and every later benchmark — ours through the trampoline, the raw
//! call, glibc — runs on that same adopted thread: the realistic case and the one P2 is about.
//!
//! A thread is spawned and joined before anything is measured, so glibc sees a multi-threaded
//! process (as any process that uses thread-cancel is) and its `read`/`write` take their
//! cancellation-point path (async-cancel enable, system call, disable), not the single-threaded
//! shortcut.

use criterion::{criterion_group, criterion_main, Criterion};
use std::fs::File;
use std::os::fd::AsFd;
use std::time::Duration;
use thread_cancel_bench::micro::{
    read_glibc, read_ours, read_raw, write_glibc, write_ours, write_raw,
};

fn p2_io(c: &mut Criterion) {
    // glibc's wrappers skip their cancellation bookkeeping while the process has one thread.
    std::thread::spawn(|| ()).join().unwrap();

    let zero = File::open("/dev/zero").expect("open /dev/zero");
    let null = File::options()
        .write(true)
        .open("/dev/null")
        .expect("open /dev/null");
    let (zfd, nfd) = (zero.as_fd(), null.as_fd());
    let mut rbuf = [0xffu8; 1];
    let wbuf = [0u8; 1];

    // Sanity: every variant moves one byte.
    assert_eq!(read_ours(zfd, &mut rbuf), 1);
    assert_eq!(rbuf, [0]);
    assert_eq!(write_ours(nfd, &wbuf), 1);
    assert_eq!(read_raw(zfd, &mut rbuf), 1);
    assert_eq!(write_raw(nfd, &wbuf), 1);
    assert_eq!(read_glibc(zfd, &mut rbuf), 1);
    assert_eq!(write_glibc(nfd, &wbuf), 1);

    // Before `thread_cancel::current()`: no control block, the plain path.
    let mut g = c.benchmark_group("P2 un-adopted main thread (plain path)");
    g.bench_function("io::read 1 byte /dev/zero", |b| {
        b.iter(|| read_ours(zfd, &mut rbuf))
    });
    g.bench_function("io::write 1 byte /dev/null", |b| {
        b.iter(|| write_ours(nfd, &wbuf))
    });
    g.finish();

    // Adopt the main thread for good: from here on our calls go through the trampoline.
    let me = thread_cancel::current();
    assert!(!me.is_finished());

    let mut g = c.benchmark_group("P2 read 1 byte from /dev/zero (adopted thread)");
    g.bench_function("thread_cancel::io::read", |b| {
        b.iter(|| read_ours(zfd, &mut rbuf))
    });
    g.bench_function("raw syscall(SYS_read)", |b| {
        b.iter(|| read_raw(zfd, &mut rbuf))
    });
    g.bench_function("glibc read", |b| b.iter(|| read_glibc(zfd, &mut rbuf)));
    g.finish();

    let mut g = c.benchmark_group("P2 write 1 byte to /dev/null (adopted thread)");
    g.bench_function("thread_cancel::io::write", |b| {
        b.iter(|| write_ours(nfd, &wbuf))
    });
    g.bench_function("raw syscall(SYS_write)", |b| {
        b.iter(|| write_raw(nfd, &wbuf))
    });
    g.bench_function("glibc write", |b| b.iter(|| write_glibc(nfd, &wbuf)));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = p2_io
}
criterion_main!(benches);
