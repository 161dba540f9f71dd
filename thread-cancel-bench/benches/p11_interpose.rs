//! P11: an interposed call that does not block, nothing pending, beside the raw system call
//! and glibc's own wrapper, in one process run (feature `interpose` of this crate, which turns
//! on thread-cancel's). Target: the interposed `read`/`write` <= 1.03x the raw system call.
//!
//! `cargo bench -p thread-cancel-bench --features interpose --bench p11_interpose`
//!
//! With the feature, `libc::read` is the interposed symbol; glibc's own `read` is reached with
//! `dlsym(RTLD_NEXT, "read")`. Each sample is [`BATCH`] calls of 1 byte (`/dev/zero` to read,
//! `/dev/null` to write); the series are sampled interleaved (one sample of each in turn), and
//! the medians compared. First on a thread that never met the crate (no control block: one
//! thread-local read and one atomic load, then glibc's own definition, so that glibc's
//! cancellation keeps working for such threads: what the feature adds is the ratio to glibc's
//! `read`), then on an adopted thread (the trampoline: the ratio to the raw system call).
//!
//! Environment: `P11_SAMPLES` (default 2,000; `--test` or no `--bench`: 20).

use std::fs::File;
use std::hint::black_box;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

/// Calls per sample.
const BATCH: u32 = 1_000;

type ReadFn = unsafe extern "C" fn(libc::c_int, *mut libc::c_void, libc::size_t) -> libc::ssize_t;
type WriteFn =
    unsafe extern "C" fn(libc::c_int, *const libc::c_void, libc::size_t) -> libc::ssize_t;

/// glibc's own definition of `name`, behind the interposed one.
fn next(name: &std::ffi::CStr) -> *mut libc::c_void {
    // SAFETY: `dlsym` with a valid NUL-terminated name; `RTLD_NEXT` is a valid handle.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    assert!(!p.is_null(), "dlsym({name:?})");
    p
}

/// One series: a name and a batch of calls, the mean per call in ns.
struct Series {
    name: &'static str,
    run: Box<dyn Fn() -> f64>,
    samples: Vec<f64>,
}

fn batch(f: impl Fn()) -> f64 {
    let t = Instant::now();
    for _ in 0..BATCH {
        f();
    }
    t.elapsed().as_nanos() as f64 / f64::from(BATCH)
}

fn series(zero: RawFd, null: RawFd) -> Vec<Series> {
    // SAFETY: the symbols are glibc's `read`/`write`, of these signatures.
    let glibc_read: ReadFn = unsafe { std::mem::transmute(next(c"read")) };
    // SAFETY: as above.
    let glibc_write: WriteFn = unsafe { std::mem::transmute(next(c"write")) };
    let mut b = [0u8; 1];
    let rp = b.as_mut_ptr() as usize;
    vec![
        Series {
            name: "interposed read",
            // SAFETY (every closure): 1 byte into/from a live 1-byte buffer, on an open fd.
            run: Box::new(move || {
                batch(|| {
                    black_box(unsafe { libc::read(zero, rp as *mut libc::c_void, 1) });
                })
            }),
            samples: Vec::new(),
        },
        Series {
            name: "raw syscall(SYS_read)",
            run: Box::new(move || {
                batch(|| {
                    black_box(unsafe { libc::syscall(libc::SYS_read, zero, rp, 1) });
                })
            }),
            samples: Vec::new(),
        },
        Series {
            name: "glibc read",
            run: Box::new(move || {
                batch(|| {
                    black_box(unsafe { glibc_read(zero, rp as *mut libc::c_void, 1) });
                })
            }),
            samples: Vec::new(),
        },
        Series {
            name: "interposed write",
            run: Box::new(move || {
                batch(|| {
                    black_box(unsafe { libc::write(null, rp as *const libc::c_void, 1) });
                })
            }),
            samples: Vec::new(),
        },
        Series {
            name: "raw syscall(SYS_write)",
            run: Box::new(move || {
                batch(|| {
                    black_box(unsafe { libc::syscall(libc::SYS_write, null, rp, 1) });
                })
            }),
            samples: Vec::new(),
        },
        Series {
            name: "glibc write",
            run: Box::new(move || {
                batch(|| {
                    black_box(unsafe { glibc_write(null, rp as *const libc::c_void, 1) });
                })
            }),
            samples: Vec::new(),
        },
    ]
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Samples every series interleaved, prints the medians and the ratios to the raw call.
fn measure(title: &str, samples: usize, zero: RawFd, null: RawFd) {
    let mut all = series(zero, null);
    for _ in 0..samples {
        for s in &mut all {
            let v = (s.run)();
            s.samples.push(v);
        }
    }
    println!("\n{title} ({samples} samples of {BATCH} calls, median ns per call)");
    let meds: Vec<f64> = all.iter_mut().map(|s| median(&mut s.samples)).collect();
    for (i, s) in all.iter().enumerate() {
        let raw = meds[if i < 3 { 1 } else { 4 }];
        let glibc = meds[if i < 3 { 2 } else { 5 }];
        println!(
            "  {:<24} {:>8.1} ns  {:>6.3}x raw  {:>6.3}x glibc",
            s.name,
            meds[i],
            meds[i] / raw,
            meds[i] / glibc
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        println!("p11_interpose: bench");
        return;
    }
    let quick = args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench");
    let samples = std::env::var("P11_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if quick { 20 } else { 2_000 });
    let zero = File::open("/dev/zero").unwrap();
    let null = File::options().write(true).open("/dev/null").unwrap();
    let (z, n) = (zero.as_raw_fd(), null.as_raw_fd());
    // A thread that never met the crate: the plain path.
    std::thread::spawn(move || measure("P11, a thread without a control block", samples, z, n))
        .join()
        .unwrap();
    // An adopted thread: the trampoline, nothing pending.
    let _me = thread_cancel::current();
    measure("P11, an adopted thread (trampoline)", samples, z, n);
}
