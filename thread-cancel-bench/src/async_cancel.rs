//! R06: cancellation latency of a compute loop with no cancellation point, from the `cancel`
//! call to the first cleanup handler (pushed outside the region) starting: ours in an
//! `async_region`, glibc's `pthread_cancel` of a C loop with type `PTHREAD_CANCEL_ASYNCHRONOUS`
//! (`csrc/glibc_async.c`). Both sides stamp `CLOCK_MONOTONIC`. Used by `benches/async_region.rs`
//! and by `compare`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[repr(C)]
struct GlibcTarget {
    _private: [u8; 0],
}

extern "C" {
    fn glibc_async_start(out: *mut *mut GlibcTarget) -> libc::c_int;
    fn glibc_async_fire(t: *mut GlibcTarget) -> u64;
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One sample of ours: a thread spinning in an async region is canceled.
pub fn ours() -> Duration {
    let progress = Arc::new(AtomicU64::new(0));
    let handler_ns = Arc::new(AtomicU64::new(0));
    let (p, h) = (progress.clone(), handler_ns.clone());
    let t = thread_cancel::spawn(move || {
        let _g = thread_cancel::cleanup_push(move || h.store(monotonic_ns(), Ordering::Release));
        // SAFETY: the loop does arithmetic and a relaxed atomic add on memory that outlives
        // the region: it holds nothing at any instruction.
        unsafe {
            thread_cancel::async_region(|| {
                let mut x = 1u64;
                loop {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    p.fetch_add(1, Ordering::Relaxed);
                    std::hint::black_box(x);
                }
            })
        }
    });
    while progress.load(Ordering::Relaxed) < 1000 {
        std::thread::yield_now();
    }
    let t0 = monotonic_ns();
    t.cancel().expect("the target is alive");
    assert!(t.join().is_canceled());
    Duration::from_nanos(handler_ns.load(Ordering::Acquire) - t0)
}

/// One sample of glibc: the same loop in C, type asynchronous.
pub fn glibc() -> Duration {
    let mut t = std::ptr::null_mut();
    // SAFETY: `t` is a valid out-pointer; on success it is handed to `fire`, which frees it.
    let rc = unsafe { glibc_async_start(&mut t) };
    assert_eq!(rc, 0, "pthread_create failed");
    // SAFETY: `t` came from a successful start and is fired once.
    let ns = unsafe { glibc_async_fire(t) };
    assert_ne!(ns, 0, "the glibc target was not canceled");
    Duration::from_nanos(ns)
}
