//! A probe of `CancelScope::run` and `with_timeout` with nothing canceled, for profilers
//! (callgrind, `perf`), outside criterion and `compare`: one mode per process, `N` calls per
//! batch, `REPS` batches, each batch's ns per call printed.
//!
//! ```text
//! cargo build --release -p thread-cancel-bench --example p7_probe
//! target/release/examples/p7_probe <run|new_run|timeout|catch|clock_run|clock|none> [N] [REPS]
//! target/release/examples/p7_probe nt_run      # the same, no timer thread started
//! target/release/examples/p7_probe cancel [N]  # a scope cancel's call, and cancel -> Err
//! valgrind --tool=callgrind target/release/examples/p7_probe timeout 100000 1
//! ```
use std::hint::black_box;
use std::time::{Duration, Instant};
use thread_cancel::CancelScope;

#[inline(never)]
fn do_run(scope: &CancelScope) -> i32 {
    black_box(scope).run(|| black_box(1)).expect("a live scope")
}
#[inline(never)]
fn do_timeout() -> i32 {
    thread_cancel::with_timeout(black_box(Duration::from_secs(5)), || black_box(1))
        .expect("no timeout")
}
#[inline(never)]
fn do_catch() -> i32 {
    std::panic::catch_unwind(|| black_box(1)).expect("no panic")
}
#[inline(never)]
fn do_clock_run(scope: &CancelScope) -> i32 {
    black_box(Instant::now());
    do_run(scope)
}
#[inline(never)]
fn do_new_run() -> i32 {
    do_run(&CancelScope::new())
}

/// "cancel" mode: the time of `scope.cancel()` on a scope whose run is blocked in
/// `thread_cancel::sleep` on another thread (the canceler's side of a delivery, where the end
/// of a run's asymmetric fence puts its `membarrier`), and the time until that run returned
/// `Err`.
fn cancel_mode(n: u64) {
    use std::sync::mpsc;
    let (tx, rx) = mpsc::channel::<CancelScope>();
    let (dtx, drx) = mpsc::channel::<Instant>();
    let h = std::thread::spawn(move || {
        for s in rx {
            let r = s.run(|| thread_cancel::sleep(Duration::from_secs(3600)));
            let t = Instant::now();
            assert!(r.is_err());
            dtx.send(t).unwrap();
        }
    });
    let mut call = Vec::new();
    let mut lat = Vec::new();
    for _ in 0..n {
        let s = CancelScope::new();
        tx.send(s.clone()).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        let t0 = Instant::now();
        s.cancel();
        let t1 = Instant::now();
        let done = drx.recv().unwrap();
        call.push((t1 - t0).as_nanos() as f64);
        lat.push((done - t0).as_nanos() as f64);
    }
    drop(tx);
    h.join().unwrap();
    for (name, v) in [("cancel() call", &mut call), ("cancel -> Err", &mut lat)] {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "{name}: median {:.0} ns, p10 {:.0} ns, p90 {:.0} ns (n={})",
            v[v.len() / 2],
            v[v.len() / 10],
            v[v.len() * 9 / 10],
            v.len()
        );
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("cancel") {
        let _ = thread_cancel::current();
        let n = std::env::args()
            .nth(2)
            .map(|s| s.parse().unwrap())
            .unwrap_or(300);
        return cancel_mode(n);
    }
    let mut a = std::env::args().skip(1);
    let mode0 = a.next().unwrap_or_else(|| "run".into());
    // "nt_<mode>": no with_timeout in the warm-up (no timer thread started, as in the criterion
    // bench p7_scope, whose `run` benchmark comes before its `with_timeout` one).
    let no_timer = mode0.starts_with("nt_");
    let mode = mode0.trim_start_matches("nt_").to_string();
    let n: u64 = a.next().map(|s| s.parse().unwrap()).unwrap_or(1_000_000);
    let reps: u32 = a.next().map(|s| s.parse().unwrap()).unwrap_or(1);
    let me = thread_cancel::current();
    assert!(!me.is_finished());
    let scope = CancelScope::new();
    // warm-up: registers the thread, etc.
    for _ in 0..1000 {
        do_run(&scope);
        if !no_timer {
            do_timeout();
        }
    }
    for _ in 0..reps {
        let t = Instant::now();
        let mut s = 0i64;
        match mode.as_str() {
            "run" => {
                for _ in 0..n {
                    s += do_run(&scope) as i64
                }
            }
            "new_run" => {
                for _ in 0..n {
                    s += do_new_run() as i64
                }
            }
            "timeout" => {
                for _ in 0..n {
                    s += do_timeout() as i64
                }
            }
            "catch" => {
                for _ in 0..n {
                    s += do_catch() as i64
                }
            }
            "clock_run" => {
                for _ in 0..n {
                    s += do_clock_run(&scope) as i64
                }
            }
            "clock" => {
                for _ in 0..n {
                    black_box(Instant::now());
                    s += 1
                }
            }
            "none" => {}
            _ => panic!("mode"),
        }
        let el = t.elapsed();
        println!(
            "{mode} n={n} {:.2} ns/call sum={s}",
            el.as_nanos() as f64 / n as f64
        );
    }
}
