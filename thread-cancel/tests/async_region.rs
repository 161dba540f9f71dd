//! Asynchronous cancellation (R06): `async_region` lets a request stop a loop that has no
//! cancellation point; frames inside the region are abandoned, the unwind continues outside.
//!
//! The stress test runs `THREAD_CANCEL_STRESS` races (default 2,000; the full run is
//! `THREAD_CANCEL_STRESS=100000 cargo test --release --test async_region stress`).

mod common;

use common::stress_iters;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use thread_cancel::{
    async_region, cleanup_push, current, set_cancel_state, set_cancel_type, spawn, testcancel,
    CancelState, CancelType,
};

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A loop with no cancellation point and no allocation: it only publishes progress.
fn spin(progress: &AtomicU64) -> ! {
    let mut x = 1u64;
    loop {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        progress.fetch_add(1, Ordering::Relaxed);
        std::hint::black_box(x);
    }
}

fn wait_for_progress(p: &AtomicU64, at_least: u64) {
    while p.load(Ordering::Relaxed) < at_least {
        std::thread::yield_now();
    }
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_compute_loop_in_region_is_canceled_and_joined() {
    let progress = Arc::new(AtomicU64::new(0));
    let cleaned = Arc::new(AtomicBool::new(false));
    let (p, c) = (progress.clone(), cleaned.clone());
    let h = spawn(move || {
        let _g = cleanup_push(move || c.store(true, Ordering::SeqCst));
        // SAFETY: `spin` allocates nothing and holds nothing.
        unsafe { async_region(|| spin(&p)) }
    });
    wait_for_progress(&progress, 1000);
    h.cancel().unwrap();
    // The loop has no point: only acting inside the region ends it (a failure, not a hang).
    assert!(
        common::wait_for(|| h.is_finished()),
        "the compute loop in the region was not canceled"
    );
    assert!(h.join().is_canceled());
    assert!(
        cleaned.load(Ordering::SeqCst),
        "the cleanup outside the region ran"
    );
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_drop_outside_the_region_runs_inside_is_abandoned() {
    let progress = Arc::new(AtomicU64::new(0));
    let outside = Arc::new(AtomicUsize::new(0));
    let inside = Arc::new(AtomicUsize::new(0));
    let (p, o, i) = (progress.clone(), outside.clone(), inside.clone());
    let h = spawn(move || {
        let _outside = Counted(o);
        let inner = Counted(i);
        // SAFETY: the loop allocates nothing; `inner` is moved in and may be abandoned (its
        // drop only counts, and the test checks that it does not run).
        unsafe {
            async_region(move || {
                let _inner = inner;
                spin(&p)
            })
        }
    });
    wait_for_progress(&progress, 1000);
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert_eq!(
        outside.load(Ordering::SeqCst),
        1,
        "Drop outside the region ran"
    );
    assert_eq!(
        inside.load(Ordering::SeqCst),
        0,
        "frames inside were abandoned"
    );
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_request_pending_before_entry_acts_at_entry() {
    let ran = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicUsize::new(0));
    let (r, d) = (ran.clone(), dropped.clone());
    let h = spawn(move || {
        current().cancel().unwrap(); // deferred: pending, nothing acts it yet
        let token = Counted(d);
        // SAFETY: the body only stores to an atomic.
        unsafe {
            async_region(move || {
                let _t = token;
                r.store(true, Ordering::SeqCst);
            })
        }
    });
    assert!(h.join().is_canceled());
    assert!(!ran.load(Ordering::SeqCst), "the body never started");
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the unstarted body was dropped"
    );
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_disabled_inside_the_region_holds_the_request_until_enabled() {
    let progress = Arc::new(AtomicU64::new(0));
    let enable = Arc::new(AtomicBool::new(false));
    let after_enable = Arc::new(AtomicBool::new(false));
    let (p, e, a) = (progress.clone(), enable.clone(), after_enable.clone());
    let h = spawn(move || {
        // SAFETY: atomics and the async-cancel-safe state calls only.
        unsafe {
            async_region(|| {
                set_cancel_state(CancelState::Disabled);
                while !e.load(Ordering::SeqCst) {
                    p.fetch_add(1, Ordering::Relaxed);
                }
                set_cancel_state(CancelState::Enabled); // acts here, at once
                a.store(true, Ordering::SeqCst);
            })
        }
    });
    wait_for_progress(&progress, 1000);
    h.cancel().unwrap();
    // The thread keeps running while disabled: it makes progress after the request.
    let seen = progress.load(Ordering::Relaxed);
    wait_for_progress(&progress, seen + 100_000);
    assert!(!h.is_finished(), "a disabled region was canceled");
    enable.store(true, Ordering::SeqCst);
    assert!(h.join().is_canceled());
    assert!(
        !after_enable.load(Ordering::SeqCst),
        "acted on at once when enabled"
    );
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_self_cancel_inside_a_region_acts_at_once() {
    let after = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicUsize::new(0));
    let (a, d) = (after.clone(), dropped.clone());
    let h = spawn(move || {
        let me = current();
        // SAFETY: `cancel` is async-cancel-safe; the rest are atomics. `_t` may be abandoned.
        unsafe {
            async_region(move || {
                let _t = Counted(d);
                me.cancel().unwrap();
                a.store(true, Ordering::SeqCst);
            })
        }
    });
    assert!(h.join().is_canceled());
    assert!(!after.load(Ordering::SeqCst));
    // A request the thread makes itself is acted on synchronously: nothing is abandoned.
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_nested_regions_leave_the_inner_one_and_unwind_outside() {
    let progress = Arc::new(AtomicU64::new(0));
    let outside = Arc::new(AtomicUsize::new(0));
    let after_inner = Arc::new(AtomicBool::new(false));
    let (p, o, a) = (progress.clone(), outside.clone(), after_inner.clone());
    let h = spawn(move || {
        let _outside = Counted(o);
        // SAFETY: atomics only; the inner loop holds nothing.
        unsafe {
            async_region(|| {
                async_region(|| spin(&p));
                a.store(true, Ordering::SeqCst);
            })
        }
    });
    wait_for_progress(&progress, 1000);
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(!after_inner.load(Ordering::SeqCst));
    assert_eq!(outside.load(Ordering::SeqCst), 1);
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_region_returns_its_value_and_restores_the_type() {
    let h = spawn(|| {
        // SAFETY: pure arithmetic.
        let v = unsafe { async_region(|| 6 * 7) };
        let after = set_cancel_type(CancelType::Deferred);
        set_cancel_type(CancelType::Asynchronous);
        // SAFETY: as above.
        let w = unsafe { async_region(|| 1) };
        (v, after, set_cancel_type(CancelType::Deferred), w)
    });
    assert_eq!(
        h.join().unwrap(),
        (42, CancelType::Deferred, CancelType::Asynchronous, 1)
    );
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_panic_inside_a_region_propagates() {
    let h = spawn(|| {
        // SAFETY: the panic allocates, but no cancellation is requested in this test.
        unsafe { async_region(|| panic!("boom")) }
    });
    match h.join() {
        thread_cancel::Outcome::Panicked(p) => {
            assert_eq!(p.downcast_ref::<&str>(), Some(&"boom"));
        }
        o => panic!("outcome: {}", o.is_canceled()),
    }
}

/// Races a cancel against every phase of a region: before entry, while arming, in the loop,
/// while returning, and after it (where `testcancel` acts). The thread must always end
/// canceled, and the Drop outside the region must run exactly once.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_stress_cancel_races_region_entry_loop_and_exit() {
    let n = stress_iters();
    let mut left_in_loop = 0;
    for i in 0..n {
        let outside = Arc::new(AtomicUsize::new(0));
        let finished_loop = Arc::new(AtomicBool::new(false));
        let (o, f) = (outside.clone(), finished_loop.clone());
        let spins = (i % 64) as u64 * 50;
        let h = spawn(move || {
            let _outside = Counted(o);
            // SAFETY: atomics and arithmetic only.
            unsafe {
                async_region(|| {
                    let mut x = 0u64;
                    for k in 0..spins {
                        x = std::hint::black_box(x.wrapping_add(k));
                    }
                    f.store(true, Ordering::SeqCst);
                })
            };
            testcancel();
            loop {
                testcancel();
                std::thread::yield_now();
            }
        });
        if i % 3 == 0 {
            std::thread::yield_now();
        }
        h.cancel().unwrap();
        assert!(h.join().is_canceled(), "race {i}");
        assert_eq!(outside.load(Ordering::SeqCst), 1, "race {i}");
        if !finished_loop.load(Ordering::SeqCst) {
            left_in_loop += 1;
        }
    }
    eprintln!("{n} races, {left_in_loop} left the region before its body finished");
}

/// Its Drop asks for the thread's canceler, which must still work after a
/// region was left in the middle of `disable()` / `set_cancel_state`.
struct UsesCurrentOnDrop;

impl Drop for UsesCurrentOnDrop {
    fn drop(&mut self) {
        let _ = current();
    }
}

/// The async-cancel-safe calls (`disable`, `set_cancel_state`, `set_cancel_type`) borrow
/// nothing that an abandoned frame could leave borrowed: canceled at any instruction of a loop
/// of them, the thread unwinds cleanly and its Drops can still use the crate.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_stress_state_calls_inside_a_region_are_async_cancel_safe() {
    let n = stress_iters();
    for i in 0..n {
        let progress = Arc::new(AtomicU64::new(0));
        let p = progress.clone();
        let h = spawn(move || {
            let _uses = UsesCurrentOnDrop;
            // SAFETY: only the async-cancel-safe state calls and an atomic add.
            unsafe {
                async_region(|| loop {
                    let g = thread_cancel::disable();
                    p.fetch_add(1, Ordering::Relaxed);
                    drop(g);
                    set_cancel_type(CancelType::Asynchronous);
                })
            }
        });
        wait_for_progress(&progress, (i % 50) as u64);
        h.cancel().unwrap();
        assert!(h.join().is_canceled(), "race {i}");
    }
}

/// A request that arrives while an inner region has the type deferred is acted on when the
/// inner region returns into the asynchronous outer one (not lost to the restored type).
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer has no asynchronous regions"
)]
fn r06_request_held_by_a_deferred_inner_region_acts_when_it_returns() {
    let requested = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicU64::new(0));
    let inner = Arc::new(AtomicBool::new(false));
    let (r, p, i) = (requested.clone(), progress.clone(), inner.clone());
    let h = spawn(move || {
        // SAFETY: atomics, spinning and the async-cancel-safe `set_cancel_type` only.
        unsafe {
            async_region(|| {
                async_region(|| {
                    set_cancel_type(CancelType::Deferred);
                    i.store(true, Ordering::SeqCst);
                    while !r.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                });
                spin(&p)
            })
        }
    });
    // The request arrives while the inner region has the type deferred.
    common::wait_flag(&inner, "the thread entered the deferred inner region");
    h.cancel().unwrap();
    requested.store(true, Ordering::Release);
    assert!(h.join().is_canceled());
    assert_eq!(
        progress.load(Ordering::Relaxed),
        0,
        "acted before the outer loop ran"
    );
}

/// Calls `async_region` and captures a backtrace inside it (formatted after the region, with
/// every frame: `{:#}`). Not inlined and not a tail call, so that it is a frame of its own,
/// under a name no other frame has.
#[inline(never)]
fn r06_caller_of_the_region_outside_it() -> String {
    let mut captured = None;
    // SAFETY: the capture allocates, but nothing cancels this thread (no handle of it is used
    // to cancel), so the region is never left early and nothing is abandoned.
    unsafe { async_region(|| r06_body_inside_the_region(&mut captured)) };
    let bt = std::hint::black_box(captured).expect("the region's body ran");
    assert_eq!(
        bt.status(),
        std::backtrace::BacktraceStatus::Captured,
        "no backtrace on this platform"
    );
    format!("{bt:#}")
}

/// The body of that region: a named frame of its own (the closure around it is inlined into
/// the crate's code in an optimised build).
#[inline(never)]
fn r06_body_inside_the_region(captured: &mut Option<std::backtrace::Backtrace>) {
    *captured = Some(std::backtrace::Backtrace::force_capture());
}

/// The region's assembly carries unwind information (CFI) on every architecture, so that an
/// unwinder started inside the region walks through its frames: the backtrace has, in order,
/// the region's body, the frame that called `async_region`, the thread's root and its entry in
/// `std`, as without a region (aarch64's had none: its backtraces stopped at the region).
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "no asynchronous regions in the portable layer"
)]
fn r06_backtrace_inside_an_async_region_reaches_the_thread_root() {
    let h = spawn(r06_caller_of_the_region_outside_it);
    let bt = h.join().unwrap();
    // The symbol of each frame (`{:#}`: "  N:  0xADDR - name", then "at file:line" lines).
    let names: Vec<&str> = bt
        .lines()
        .filter_map(|l| l.split_once(" - ").map(|(_, name)| name))
        .collect();
    // In order: (what, a substring of its symbol); a closure's frame is none of them.
    let mut from = 0;
    for (what, has) in [
        ("the region's body, inside it", "r06_body_inside_the_region"),
        (
            "the region's caller, outside it",
            "r06_caller_of_the_region_outside_it",
        ),
        ("the thread's root", "thread_cancel::thread::root"),
        ("the thread's entry in std", "thread_start"),
    ] {
        let is = |n: &&str| n.contains(has) && !n.contains("closure");
        match names[from..].iter().position(is) {
            Some(i) => from += i + 1,
            None => panic!(
                "no frame of {what} (after symbol {from}) in the backtrace taken inside the \
                 region:\n{bt}"
            ),
        }
    }
}

#[cfg(thread_cancel_portable)]
#[test]
fn portable_layer_async_region_panics_with_the_reason_before_running_anything() {
    let ran = std::sync::atomic::AtomicBool::new(false);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the body holds nothing that needs dropping.
        unsafe {
            thread_cancel::async_region(|| ran.store(true, std::sync::atomic::Ordering::SeqCst))
        }
    }));
    let payload = r.unwrap_err();
    let msg = payload
        .downcast_ref::<&str>()
        .copied()
        .or(payload.downcast_ref::<String>().map(String::as_str))
        .unwrap();
    assert!(msg.contains("async_region is not supported"), "{msg}");
    assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
}
