//! A probe of a thread's spawn and join, for `strace -c` and callgrind, outside criterion and
//! `compare`: one mode per process, `N` spawn + join pairs per batch, `REPS` batches, each
//! batch's microseconds per pair printed.
//!
//! ```text
//! cargo build --release -p thread-cancel-bench --example p5_probe
//! target/release/examples/p5_probe <std|ours|light|glibc> [N] [REPS]
//! target/release/examples/p5_probe ours_adopted   # the joiner has a control block of its own
//! strace -f -c target/release/examples/p5_probe ours_adopted 2000 1
//! ```
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "ours".into());
    let n: u32 = args.next().map_or(2000, |s| s.parse().expect("N"));
    let reps: u32 = args.next().map_or(5, |s| s.parse().expect("REPS"));
    let (base, adopted) = match mode.strip_suffix("_adopted") {
        Some(b) => (b.to_owned(), true),
        None => (mode.clone(), false),
    };
    if adopted {
        // A run gives the calling thread a control block (a joiner that can be canceled).
        thread_cancel::CancelScope::new()
            .run(|| ())
            .expect("a live scope");
    }
    let pair: fn() -> std::io::Result<()> = match base.as_str() {
        "std" => thread_cancel_bench::micro::spawn_join_std,
        "ours" => thread_cancel_bench::micro::spawn_join_ours,
        "light" => thread_cancel_bench::micro::spawn_join_lightweight,
        "glibc" => thread_cancel_bench::glibc_spawn_join,
        m => panic!("unknown mode {m}"),
    };
    pair().expect("a first pair");
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..n {
            pair().expect("a pair");
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        println!("{mode} {us:.2} us");
    }
}
