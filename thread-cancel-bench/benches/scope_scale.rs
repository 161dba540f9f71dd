//! Costs that must not grow with unrelated work (P10), each measured with nothing beside it
//! and beside what accumulates in a server: idle threads that once ran a scope, live sibling
//! scopes of the same parent (a root scope with one child per connection). Reported per
//! operation, `Throughput::Elements(N)`.
//!
//! - a cancel of a scope nobody runs, beside 0 and 10,000 idle threads;
//! - a cancel of a scope one other thread is running, beside 0 and 10,000 idle threads;
//! - a `run` in a loop while another thread cancels unrelated scopes, beside 0 and 10,000 idle
//!   threads;
//! - a child scope made, run and dropped beside 0, 1,000, 10,000 and 50,000 live siblings.
//!
//! The ratio of each loaded row to its unloaded row is the figure the target holds to
//! (<= 1.5x). The idle threads exist only while their group runs (they are made before it and
//! joined after), so that they weigh on no other measurement.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;
use thread_cancel::CancelScope;

/// Operations per measured iteration.
const N: u64 = 1000;

/// Threads that each ran one scope and then wait, idle, until dropped.
struct Idle(Vec<std::thread::JoinHandle<()>>, Vec<mpsc::Sender<()>>);

impl Idle {
    fn new(n: usize) -> Idle {
        let ready = Arc::new(Barrier::new(n + 1));
        let mut handles = Vec::with_capacity(n);
        let mut stops = Vec::with_capacity(n);
        for _ in 0..n {
            let (tx, rx) = mpsc::channel::<()>();
            let ready = ready.clone();
            handles.push(
                std::thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn(move || {
                        let _ = CancelScope::new().run(|| ());
                        ready.wait();
                        let _ = rx.recv();
                    })
                    .expect("an idle thread"),
            );
            stops.push(tx);
        }
        ready.wait();
        Idle(handles, stops)
    }
}

impl Drop for Idle {
    fn drop(&mut self) {
        self.1.clear();
        for h in self.0.drain(..) {
            let _ = h.join();
        }
    }
}

fn idle_threads(c: &mut Criterion) {
    thread_cancel::current();
    for idle in [0usize, 10_000] {
        let _idle = Idle::new(idle);
        let mut g = c.benchmark_group("P10 beside idle threads that once ran a scope");
        g.throughput(Throughput::Elements(N));
        g.bench_function(
            BenchmarkId::new("cancel of a scope nobody runs", idle),
            |b| {
                b.iter(|| {
                    for _ in 0..N {
                        let s = CancelScope::new();
                        s.cancel();
                        black_box(&s);
                    }
                })
            },
        );
        // One other thread runs a scope (a long run, blocked); each iteration cancels a child
        // of it, whose run the other thread enters and leaves in a loop.
        {
            let stop = Arc::new(AtomicBool::new(false));
            let (stop2, root) = (stop.clone(), CancelScope::new());
            let r2 = root.clone();
            let runner = std::thread::spawn(move || {
                let _ = r2.run(|| {
                    while !stop2.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                });
            });
            std::thread::sleep(Duration::from_millis(10));
            g.bench_function(
                BenchmarkId::new("cancel of a child of a scope another thread runs", idle),
                |b| {
                    b.iter(|| {
                        for _ in 0..N {
                            let s = root.child();
                            s.cancel();
                            black_box(&s);
                        }
                    })
                },
            );
            stop.store(true, Ordering::Relaxed);
            runner.join().unwrap();
        }
        // A cancel of a scope another thread runs, blocked in a sleep: it reaches that
        // thread (one per iteration; nothing else runs meanwhile).
        g.throughput(Throughput::Elements(1));
        g.bench_function(
            BenchmarkId::new("cancel of a scope another thread runs", idle),
            |b| {
                // Only the cancel is timed; the thread is made before and joined after.
                b.iter_custom(|iters| {
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        let s = CancelScope::new();
                        let (tx, rx) = mpsc::channel();
                        let s2 = s.clone();
                        let h = std::thread::spawn(move || {
                            let _ = s2.run(|| {
                                tx.send(()).unwrap();
                                thread_cancel::sleep(Duration::from_secs(60));
                            });
                        });
                        rx.recv().unwrap();
                        // Blocked in its sleep by now.
                        std::thread::sleep(Duration::from_millis(1));
                        let t = std::time::Instant::now();
                        s.cancel();
                        timed += t.elapsed();
                        h.join().unwrap();
                    }
                    timed
                })
            },
        );
        g.throughput(Throughput::Elements(N));
        // Runs in a loop while another thread cancels unrelated scopes nobody runs.
        {
            let stop = Arc::new(AtomicBool::new(false));
            let stop2 = stop.clone();
            let canceler = std::thread::spawn(move || {
                while !stop2.load(Ordering::Relaxed) {
                    CancelScope::new().cancel();
                }
            });
            let scope = CancelScope::new();
            g.bench_function(
                BenchmarkId::new("run while another thread cancels unrelated scopes", idle),
                |b| {
                    b.iter(|| {
                        for _ in 0..N {
                            let _ = black_box(scope.run(|| black_box(1)));
                        }
                    })
                },
            );
            stop.store(true, Ordering::Relaxed);
            canceler.join().unwrap();
        }
        g.finish();
    }
}

fn child_beside_siblings(c: &mut Criterion) {
    thread_cancel::current();
    let mut g = c.benchmark_group("P10 child scope made, run and dropped");
    g.throughput(Throughput::Elements(N));
    for siblings in [0usize, 1_000, 10_000, 50_000] {
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
    targets = idle_threads, child_beside_siblings
}
criterion_main!(benches);
