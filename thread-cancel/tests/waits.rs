//! Blocking cancellation points (issue "points that wake"): each primitive is woken by a cancel
//! request, runs its cleanup and reports canceled; timed variants time out; R10 for channels,
//! R22 for condition waits; stress races of cancel against notify/send.
//!
//! The stress tests run `THREAD_CANCEL_STRESS` iterations (default 2,000; the full run is
//! `THREAD_CANCEL_STRESS=100000 cargo test --release --test waits stress`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thread_cancel::sync::{channel, sync_channel, Condvar, Mutex, Semaphore};
use thread_cancel::{cleanup_push, on_cancel, spawn, testcancel, JoinHandle};

fn stress_iters() -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

/// Spawns `body` behind a cleanup handler that sets the returned flag; waits until the thread
/// is (very likely) blocked, then cancels it and checks cleanup + canceled.
fn cancel_while_blocked<F: FnOnce() + Send + 'static>(body: F) {
    let cleaned = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (c, s) = (cleaned.clone(), started.clone());
    let h: JoinHandle<()> = spawn(move || {
        let _g = cleanup_push(move || c.store(true, Ordering::SeqCst));
        s.store(true, Ordering::SeqCst);
        body();
        panic!("the blocking call returned");
    });
    while !started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    std::thread::sleep(Duration::from_millis(20)); // let it block
    let t = Instant::now();
    h.cancel().unwrap();
    let o = h.join();
    assert!(o.is_canceled(), "outcome: {o:?}");
    assert!(cleaned.load(Ordering::SeqCst));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "woken at once, not by a timeout"
    );
}

#[test]
fn r05_sleep_is_woken_by_cancel_and_times_out_otherwise() {
    cancel_while_blocked(|| thread_cancel::sleep(Duration::from_secs(3600)));
    let t = Instant::now();
    thread_cancel::sleep(Duration::from_millis(20));
    assert!(t.elapsed() >= Duration::from_millis(20));
}

#[test]
fn r05_park_is_woken_by_cancel_and_park_timeout_returns() {
    cancel_while_blocked(|| loop {
        thread_cancel::park()
    });
    thread_cancel::park_timeout(Duration::from_millis(5));
    // std's unpark still works with our park.
    let h = spawn(thread_cancel::park);
    h.thread().unpark();
    assert!(matches!(h.join(), thread_cancel::Outcome::Returned(())));
}

#[test]
fn r05_channel_recv_and_full_sync_send_are_woken_by_cancel() {
    let (tx, rx) = channel::<u8>();
    cancel_while_blocked(move || {
        let _ = rx.recv();
    });
    drop(tx);
    let (tx, rx) = channel::<u8>();
    cancel_while_blocked(move || {
        let _ = rx.recv_timeout(Duration::from_secs(3600));
    });
    drop(tx);
    let (tx, rx) = sync_channel::<u8>(1);
    tx.send(0).unwrap();
    cancel_while_blocked(move || {
        let _ = tx.send(1);
    });
    assert_eq!(rx.recv(), Ok(0));
    assert!(rx.recv().is_err(), "the canceled send did not send");
    // Timed receive times out when nobody sends.
    let (_tx, rx) = channel::<u8>();
    let t = Instant::now();
    let r = rx.recv_timeout(Duration::from_millis(20));
    assert_eq!(r, Err(std::sync::mpsc::RecvTimeoutError::Timeout));
    assert!(t.elapsed() >= Duration::from_millis(20));
}

#[test]
fn r10_rendezvous_send_canceled_before_receipt_has_no_effect() {
    let (tx, rx) = sync_channel::<u32>(0);
    cancel_while_blocked(move || {
        let _ = tx.send(42);
    });
    assert!(
        rx.try_recv().is_err(),
        "a canceled rendezvous send left nothing behind"
    );
}

#[test]
fn r05_condvar_waits_are_woken_by_cancel_and_time_out() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let p = pair.clone();
    cancel_while_blocked(move || {
        let g = p.0.lock().unwrap();
        let _g = p.1.wait_while(g, |ready| !*ready);
    });
    let p = pair.clone();
    cancel_while_blocked(move || {
        let g = p.0.lock().unwrap();
        let _ = p.1.wait_timeout(g, Duration::from_secs(3600));
    });
    assert!(
        !pair.0.is_poisoned(),
        "a cancellation does not poison our Mutex"
    );
    assert!(
        pair.0.try_lock().is_ok(),
        "the canceled waiters released the mutex"
    );
    let g = pair.0.lock().unwrap();
    let t = Instant::now();
    let (_g, r) = pair.1.wait_timeout(g, Duration::from_millis(20)).unwrap();
    assert!(r.timed_out() && t.elapsed() >= Duration::from_millis(20));
}

#[test]
fn r05_semaphore_acquire_is_woken_by_cancel_and_times_out() {
    let s = Arc::new(Semaphore::new(0));
    let s2 = s.clone();
    cancel_while_blocked(move || s2.acquire());
    let s2 = s.clone();
    cancel_while_blocked(move || {
        s2.acquire_timeout(Duration::from_secs(3600));
    });
    assert!(!s.acquire_timeout(Duration::from_millis(10)));
    s.release();
    assert!(s.acquire_timeout(Duration::from_millis(10)));
}

#[test]
fn r09_join_is_woken_by_cancel_and_the_target_stays_running() {
    let target = spawn(|| loop {
        thread_cancel::sleep(Duration::from_millis(1))
    });
    let c = target.canceler();
    cancel_while_blocked(move || {
        target.join();
    });
    assert!(!c.is_finished());
    c.cancel().unwrap();
    while !c.is_finished() {
        std::thread::yield_now();
    }
}

#[test]
fn r22_canceled_condvar_wait_reacquires_the_mutex_before_the_first_cleanup_handler() {
    let pair = Arc::new((Mutex::new(()), Condvar::new()));
    let released = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(AtomicBool::new(false));
    let (p, r, s) = (pair.clone(), released.clone(), seen.clone());
    let h = spawn(move || {
        let g = p.0.lock().unwrap();
        let _c = cleanup_push(move || s.store(r.load(Ordering::SeqCst), Ordering::SeqCst));
        let _g = p.1.wait(g);
    });
    std::thread::sleep(Duration::from_millis(20));
    let held = pair.0.lock().unwrap(); // the waiter released it in wait()
    h.cancel().unwrap();
    std::thread::sleep(Duration::from_millis(30)); // the waiter is blocked re-acquiring
    released.store(true, Ordering::SeqCst);
    drop(held);
    assert!(h.join().is_canceled());
    assert!(
        seen.load(Ordering::SeqCst),
        "the handler ran only after the mutex was re-acquired"
    );
    assert!(pair.0.try_lock().is_ok());
}

#[test]
fn r22_stress_notify_one_racing_cancel_never_loses_a_notification() {
    for _ in 0..stress_iters() {
        let shared = Arc::new((Mutex::new(0usize), Condvar::new(), AtomicUsize::new(0)));
        let waiter = |sh: Arc<(Mutex<usize>, Condvar, AtomicUsize)>| {
            spawn(move || {
                let (m, cv, consumed) = &*sh;
                let mut g = m.lock().unwrap();
                loop {
                    while *g == 0 {
                        g = cv.wait(g).unwrap();
                    }
                    *g -= 1;
                    consumed.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        let a = waiter(shared.clone());
        let b = waiter(shared.clone());
        std::thread::yield_now();
        *shared.0.lock().unwrap() += 1;
        shared.1.notify_one();
        a.cancel().unwrap(); // races the notification
        assert!(a.join().is_canceled());
        // The token is consumed by `a` (its wait completed) or by `b`: never stuck.
        let t = Instant::now();
        while shared.2.load(Ordering::SeqCst) != 1 {
            assert!(t.elapsed() < Duration::from_secs(10), "notification lost");
            std::thread::yield_now();
        }
        assert_eq!(*shared.0.lock().unwrap(), 0);
        b.cancel().unwrap();
        assert!(b.join().is_canceled());
    }
}

#[test]
fn r10_stress_channel_recv_racing_cancel_never_loses_a_message() {
    for i in 0..stress_iters() {
        let (tx, rx) = channel::<u32>();
        let rx = Arc::new(rx);
        let got = Arc::new(AtomicUsize::new(0));
        let (r, g) = (rx.clone(), got.clone());
        let h = spawn(move || loop {
            // A message recv returned is counted before the next point (the next recv).
            if r.recv().is_ok() {
                g.fetch_add(1, Ordering::SeqCst);
            }
        });
        let sent = 1 + i % 4;
        for v in 0..sent {
            tx.send(v as u32).unwrap();
            if i % 3 == v % 3 {
                std::thread::yield_now();
            }
        }
        h.cancel().unwrap(); // races the receiver's recv of the last messages
        assert!(h.join().is_canceled());
        let mut left = 0;
        while rx.try_recv().is_ok() {
            left += 1;
        }
        assert_eq!(got.load(Ordering::SeqCst) + left, sent, "iteration {i}");
    }
}

#[test]
fn r10_stress_sync_channel_messages_are_counted_exactly() {
    for i in 0..stress_iters() {
        let (tx, rx) = sync_channel::<u32>(1 + i % 2);
        let rx = Arc::new(rx);
        let got = Arc::new(AtomicUsize::new(0));
        let (r, g) = (rx.clone(), got.clone());
        let h = spawn(move || loop {
            if r.recv().is_ok() {
                g.fetch_add(1, Ordering::SeqCst);
            }
        });
        let mut sent = 0;
        for v in 0..3 {
            tx.send(v).unwrap();
            sent += 1;
        }
        h.cancel().unwrap();
        assert!(h.join().is_canceled());
        // Received by the canceled thread + still queued = sent: nothing lost, nothing doubled.
        let mut left = 0;
        while rx.try_recv().is_ok() {
            left += 1;
        }
        assert_eq!(got.load(Ordering::SeqCst) + left, sent, "iteration {i}");
    }
}

#[test]
fn on_cancel_runs_once_in_the_canceling_thread_or_at_once_if_pending() {
    let ran_on = Arc::new(std::sync::Mutex::new(Vec::new()));
    let r = ran_on.clone();
    let go = Arc::new(AtomicBool::new(false));
    let g = go.clone();
    let registered = Arc::new(AtomicBool::new(false));
    let reg = registered.clone();
    let h = spawn(move || {
        let _guard = on_cancel(move || r.lock().unwrap().push(std::thread::current().id()));
        reg.store(true, Ordering::SeqCst);
        while !g.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        testcancel();
    });
    while !registered.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    h.cancel().unwrap();
    h.cancel().unwrap();
    go.store(true, Ordering::SeqCst);
    assert!(h.join().is_canceled());
    assert_eq!(*ran_on.lock().unwrap(), [std::thread::current().id()]);
    // Already pending: runs at once, in the registering thread.
    let h = spawn(|| {
        let _d = thread_cancel::disable();
        thread_cancel::current().cancel().unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let _g = on_cancel(move || r.store(true, Ordering::SeqCst));
        ran.load(Ordering::SeqCst)
    });
    assert!(h.join().unwrap());
    // Unregistered by dropping the guard: never runs.
    let h = spawn(|| {
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        drop(on_cancel(move || r.store(true, Ordering::SeqCst)));
        let _d = thread_cancel::disable();
        thread_cancel::current().cancel().unwrap();
        ran.load(Ordering::SeqCst)
    });
    assert!(!h.join().unwrap());
}

#[test]
fn r09_a_canceled_waiter_leaves_the_target_joinable() {
    let target = spawn(|| {
        thread_cancel::sleep(Duration::from_millis(50));
        7
    });
    let shared = Arc::new(Mutex::new(Some(target)));
    let s = shared.clone();
    cancel_while_blocked(move || {
        let g = s.lock().unwrap();
        g.as_ref().unwrap().wait(); // canceled here: the handle stays in `shared`
    });
    assert!(!shared.is_poisoned());
    let target = shared.lock().unwrap().take().unwrap();
    assert_eq!(target.join().unwrap(), 7);
}

/// R05/R14: the waits are cancellation points at entry too, even when they need not wait (a
/// message ready, a permit free, the target finished); acting there takes nothing.
#[test]
fn r05_waits_act_at_entry_even_when_ready() {
    let (tx, rx) = channel::<u32>();
    tx.send(1).unwrap();
    let rx = Arc::new(rx);
    let r2 = rx.clone();
    let h = spawn(move || {
        thread_cancel::current().cancel().unwrap();
        let _ = r2.recv();
        unreachable!("recv returned")
    });
    assert!(h.join().is_canceled());
    assert_eq!(rx.try_recv(), Ok(1), "the message stayed in the channel");

    let s = Arc::new(Semaphore::new(1));
    let s2 = s.clone();
    let h = spawn(move || {
        thread_cancel::current().cancel().unwrap();
        s2.acquire();
        unreachable!("acquire returned")
    });
    assert!(h.join().is_canceled());
    assert!(
        s.acquire_timeout(Duration::from_millis(1)),
        "the permit stayed"
    );

    let h = spawn(move || {
        let done = spawn(|| 5);
        done.wait_timeout(Duration::from_secs(10));
        thread_cancel::current().cancel().unwrap();
        done.join()
    });
    assert!(h.join().is_canceled());
}
