//! A probe of a one-byte `read` of `/dev/zero` and `write` to `/dev/null` through the crate's
//! points, beside the raw system call, for callgrind: one mode per process, `N` calls per
//! batch, `REPS` batches, each batch's ns per call printed. The calling thread is given a
//! control block first (as in `compare`, whose thread has run scopes before), so the points
//! take their cancelable path.
//!
//! ```text
//! cargo build --release -p thread-cancel-bench --example p2_probe
//! target/release/examples/p2_probe <read_ours|read_raw|read_glibc|write_ours|write_raw> [N] [REPS]
//! valgrind --tool=callgrind target/release/examples/p2_probe read_ours 100000 1
//! ```
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Instant;
use thread_cancel_bench::micro;

fn batches<R>(mode: &str, n: u32, reps: u32, fd: BorrowedFd<'_>, f: impl Fn(BorrowedFd<'_>) -> R) {
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(f(fd));
        }
        let ns = t.elapsed().as_secs_f64() * 1e9 / f64::from(n);
        println!("{mode} {ns:.1} ns");
    }
}

fn main() {
    let mut a = std::env::args().skip(1);
    let mode = a.next().unwrap_or_else(|| "read_ours".into());
    let n: u32 = a.next().map_or(1_000_000, |s| s.parse().expect("N"));
    let reps: u32 = a.next().map_or(5, |s| s.parse().expect("REPS"));
    thread_cancel::CancelScope::new()
        .run(|| ())
        .expect("a live scope");
    let zero = File::open("/dev/zero").expect("/dev/zero");
    let null = File::options()
        .write(true)
        .open("/dev/null")
        .expect("/dev/null");
    let (z, w) = (zero.as_fd(), null.as_fd());
    match mode.as_str() {
        "read_ours" => batches(&mode, n, reps, z, |fd| micro::read_ours(fd, &mut [0u8; 1])),
        "read_raw" => batches(&mode, n, reps, z, |fd| micro::read_raw(fd, &mut [0u8; 1])),
        "read_glibc" => batches(&mode, n, reps, z, |fd| micro::read_glibc(fd, &mut [0u8; 1])),
        "write_ours" => batches(&mode, n, reps, w, |fd| micro::write_ours(fd, &[0u8; 1])),
        "write_raw" => batches(&mode, n, reps, w, |fd| micro::write_raw(fd, &[0u8; 1])),
        m => panic!("unknown mode {m}"),
    }
}
