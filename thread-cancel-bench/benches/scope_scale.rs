//! Costs that must not grow with unrelated work (P10), each measured with nothing beside it
//! and beside what accumulates in a server: idle threads that once ran a scope, live sibling
//! scopes of the same parent (a root scope with one child per connection). Reported per
//! operation, `Throughput::Elements(N)`.
//!
//! - a cancel of a scope nobody runs, beside 0 and 10,000 idle threads;
//! - a cancel of a scope one other thread is running, beside 0 and 10,000 idle threads;
//! - a `run` in a loop while another thread cancels unrelated scopes, beside 0 and 10,000 idle
//!   threads;
//! - a child scope made, run and dropped beside 0, 1,000, 10,000 and 50,000 live siblings;
//! - a child scope made, run and dropped at the end of a chain of 0 and 10,000 nested
//!   children (`child()` of a `child()` ...), under a root with no deadline and under a root
//!   with a deadline far ahead (a request's budget);
//! - beside the cancel of a scope another thread runs (blocked in a sleep, so the cancel makes
//!   a futex wake-up), std's `unpark` of a parked thread: one futex wake-up, the floor. On
//!   Linux 6.16 and later both grow with the idle threads: the kernel hashes a process's
//!   futexes into a table sized by the number of CPUs (16 buckets on 2 CPUs), and a wake-up
//!   walks its bucket, where the idle threads wait too. The two rows are measured again with
//!   the table sized for the threads (`prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, 16384)`),
//!   where the kernel has it.
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

/// One cancel of a scope another thread runs, blocked in a sleep (only the cancel is timed;
/// the thread is made before and joined after), per iteration.
fn cancel_of_a_blocked_run(iters: u64) -> Duration {
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
}

/// The floor of [`cancel_of_a_blocked_run`]: std's `unpark` of a parked thread (one futex
/// wake-up), timed the same way.
fn unpark_of_a_parked_thread(iters: u64) -> Duration {
    let mut timed = Duration::ZERO;
    for _ in 0..iters {
        let h = std::thread::spawn(std::thread::park);
        std::thread::sleep(Duration::from_millis(1));
        let t = std::time::Instant::now();
        h.thread().unpark();
        timed += t.elapsed();
        h.join().unwrap();
    }
    timed
}

/// The rows whose operation wakes a blocked thread (one per iteration): the cancel of a scope
/// another thread runs, blocked in a sleep, and its floor, std's `unpark`.
fn wake_rows(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, idle: usize) {
    g.throughput(Throughput::Elements(1));
    g.bench_function(
        BenchmarkId::new("cancel of a scope another thread runs", idle),
        |b| b.iter_custom(cancel_of_a_blocked_run),
    );
    g.bench_function(
        BenchmarkId::new("floor: std unpark of a parked thread", idle),
        |b| b.iter_custom(unpark_of_a_parked_thread),
    );
}

/// Sizes the process's futex hash table for `slots` (Linux 6.16 and later); false where the
/// kernel has no such setting.
fn size_futex_hash(slots: u64) -> bool {
    const PR_FUTEX_HASH: libc::c_int = 78;
    const PR_FUTEX_HASH_SET_SLOTS: libc::c_ulong = 1;
    // SAFETY: a prctl with integer arguments only.
    unsafe {
        libc::prctl(
            PR_FUTEX_HASH,
            PR_FUTEX_HASH_SET_SLOTS,
            slots,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        ) == 0
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
        // thread (one per iteration; nothing else runs meanwhile), beside its floor.
        wake_rows(&mut g, idle);
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
    if !size_futex_hash(16_384) {
        eprintln!(
            "no PR_FUTEX_HASH here: the rows with a futex hash sized for the threads are skipped"
        );
        return;
    }
    for idle in [0usize, 10_000] {
        let _idle = Idle::new(idle);
        let mut g = c.benchmark_group("P10 beside idle threads, futex hash sized for them");
        wake_rows(&mut g, idle);
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

fn child_at_depth(c: &mut Criterion) {
    thread_cancel::current();
    let mut g = c.benchmark_group("P10 child scope made, run and dropped at depth");
    g.throughput(Throughput::Elements(N));
    for (root_kind, root) in [
        ("no deadline", CancelScope::new()),
        (
            "a deadline ahead",
            CancelScope::with_timeout(Duration::from_secs(3600)),
        ),
    ] {
        for depth in [0usize, 10_000] {
            let mut chain = vec![root.clone()];
            for _ in 0..depth {
                let next = chain.last().unwrap().child();
                chain.push(next);
            }
            let deepest = chain.last().unwrap().clone();
            g.bench_with_input(
                BenchmarkId::new(format!("root with {root_kind}"), depth),
                &deepest,
                |b, deepest| {
                    b.iter(|| {
                        for _ in 0..N {
                            let child = deepest.child();
                            let _ = black_box(child.run(|| black_box(1)));
                        }
                    })
                },
            );
            // Dropped from the deepest up (a long chain dropped from the root would recurse).
            while chain.pop().is_some() {}
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = idle_threads, child_beside_siblings, child_at_depth
}
criterion_main!(benches);
