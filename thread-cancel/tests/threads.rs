//! Threads: spawning, joining and waiting (`join`, `wait`, `wait_timeout`, `Outcome`), the
//! handles and `Canceler`s, cleanup handlers, thread-specific data (`Key`), `exit`, the thread's
//! own waits `sleep` and `park`, adopted `std` threads, scoped threads, a `fork`, and
//! lightweight threads (`Builder::lightweight`). Tests named `rNN_...` show requirement RNN
//! (REQUIREMENTS.md).
//!
//! Hangs are detected with generous timeouts (`common::HANG`), never asserted on elapsed time.
//! The stress tests run `THREAD_CANCEL_STRESS` rounds (default 2,000; a long run:
//! `THREAD_CANCEL_STRESS=200000 cargo test --release --test threads stress`).

mod common;

use common::{
    cancel_while_blocked, cancel_while_blocked_on, panic_message, run_child, spin_for, spin_until,
    stress_iters, Log, Rng, HANG,
};
use std::ffi::CStr;
use std::os::fd::{AsFd, AsRawFd};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use thread_cancel::sync::Mutex as CancelMutex;
use thread_cancel::{
    cleanup_push, current, disable, exit, spawn, testcancel, Builder, CancelPayload, JoinHandle,
    Key, NoSuchThread, Outcome,
};

// ---------------------------------------------------------------------------------------------
// Outcomes, join and wait

#[test]
fn r08_cancel_returns_once_queued_before_the_target_acts() {
    let go = Arc::new(AtomicBool::new(false));
    let g = go.clone();
    let h = spawn(move || {
        spin_until(&g);
        testcancel();
    });
    // Ok returns while the target is still spinning: the request is only queued. A cancel
    // that waited for the target to act would wait for ever (the target spins until `go`):
    // a watchdog fails the test instead, and releases the target.
    let c = h.canceler();
    let release = go.clone();
    let r = common::within_hang(
        "cancel() of a thread that has not acted (it spins, no point)",
        move || c.cancel(),
        move || release.store(true, Ordering::SeqCst),
    );
    assert_eq!(r, Ok(()));
    assert!(!h.is_finished());
    assert!(!h.canceler().is_finished());
    go.store(true, Ordering::SeqCst);
    assert!(h.join().is_canceled());
}

#[test]
fn r09_join_reports_canceled_and_other_outcomes() {
    let h = spawn(|| loop {
        testcancel()
    });
    h.cancel().unwrap();
    assert!(matches!(h.join(), Outcome::Canceled));
    assert!(matches!(spawn(|| 5).join(), Outcome::Returned(5)));
    let p = spawn(|| -> u8 { panic!("boom") }).join();
    match p {
        Outcome::Panicked(payload) => assert_eq!(*payload.downcast::<&str>().unwrap(), "boom"),
        other => panic!("expected Panicked, got {other:?}"),
    }
}

#[test]
fn r09_join_is_a_cancellation_point_for_the_joiner() {
    let release = Arc::new(AtomicBool::new(false));
    let r = release.clone();
    let (tx, rx) = mpsc::channel();
    let joiner = spawn(move || {
        let target = spawn(move || spin_until(&r));
        tx.send(target.canceler()).unwrap();
        target.join(); // blocks: the joiner's cancel wakes it
        unreachable!()
    });
    let target = rx.recv().unwrap();
    joiner.cancel().unwrap();
    assert!(joiner.join().is_canceled());
    // The target was not affected by its joiner's cancellation.
    assert!(!target.is_finished());
    release.store(true, Ordering::SeqCst);
    while !target.is_finished() {
        std::thread::yield_now();
    }
}

#[test]
fn r18_cancel_of_a_thread_that_does_not_exist_is_an_error() {
    // Finished and joined.
    let h = spawn(|| ());
    let c = h.canceler();
    h.join();
    assert_eq!(c.cancel(), Err(NoSuchThread));
    // Detached, then finished.
    let h = spawn(|| ());
    let c = h.canceler();
    drop(h);
    while !c.is_finished() {
        std::thread::yield_now();
    }
    assert_eq!(c.cancel(), Err(NoSuchThread));
    // Canceled, then joined: the handle stays safe and keeps answering.
    let h = spawn(|| loop {
        testcancel()
    });
    let c = h.canceler();
    c.cancel().unwrap();
    assert!(h.join().is_canceled());
    for _ in 0..3 {
        assert_eq!(c.clone().cancel(), Err(NoSuchThread));
    }
    // An adopted std thread that exited.
    let c = std::thread::spawn(current).join().unwrap();
    assert_eq!(c.cancel(), Err(NoSuchThread));
    let e: std::io::Error = NoSuchThread.into();
    assert_eq!(e.raw_os_error(), Some(libc::ESRCH));
}

/// What a thread-local destructor of a spawned thread saw of the thread itself.
struct CancelsItselfWhenDropped(mpsc::Sender<(Result<(), NoSuchThread>, bool)>);

impl Drop for CancelsItselfWhenDropped {
    fn drop(&mut self) {
        let me = current();
        let r = me.cancel();
        // A point here never acts: the thread's root is over.
        testcancel();
        let _ = self.0.send((r, me.is_finished()));
    }
}

thread_local! {
    static CANCELS_ITSELF: std::cell::RefCell<Option<CancelsItselfWhenDropped>> =
        const { std::cell::RefCell::new(None) };
}

/// After its root, in its thread-local destructors, a spawned thread is gone for the crate: a
/// cancel of it is an error and its points never act (an unwind out of a thread-local
/// destructor would abort the process). The root holds the thread's block, with no
/// thread-local destructor of the crate's: what the destructors see must not depend on the
/// order they run in.
#[test]
fn r18_a_spawned_thread_in_its_thread_local_destructors_is_finished() {
    for lightweight in [false, true] {
        let (tx, rx) = mpsc::channel();
        let body = move || {
            CANCELS_ITSELF.with(|c| *c.borrow_mut() = Some(CancelsItselfWhenDropped(tx)));
        };
        let h = if lightweight {
            Builder::new().lightweight().spawn(body)
        } else {
            Builder::new().spawn(body)
        };
        assert!(
            matches!(h.unwrap().join(), Outcome::Returned(())),
            "lightweight {lightweight}"
        );
        assert_eq!(
            rx.recv().unwrap(),
            (Err(NoSuchThread), true),
            "lightweight {lightweight}"
        );
    }
}

#[test]
fn exit_with_a_value_of_the_wrong_type_panics_at_the_call() {
    let h = spawn(|| -> u32 { exit("not a u32") });
    match h.join() {
        Outcome::Panicked(p) => assert!(p.downcast_ref::<String>().unwrap().contains("type")),
        other => panic!("expected Panicked, got {other:?}"),
    }
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
fn r09_a_canceled_waiter_leaves_the_target_joinable() {
    // The target runs until the waiter was canceled (not for a guessed 50 ms, which a loaded
    // machine can outlast before the waiter is seen blocked).
    let (release, released) = mpsc::channel::<()>();
    let target = spawn(move || {
        let _ = released.recv();
        7
    });
    let shared = Arc::new(CancelMutex::new(Some(target)));
    let s = shared.clone();
    cancel_while_blocked(move || {
        let g = s.lock().unwrap();
        g.as_ref().unwrap().wait(); // canceled here: the handle stays in `shared`
    });
    assert!(!shared.is_poisoned());
    drop(release);
    let target = shared.lock().unwrap().take().unwrap();
    assert_eq!(target.join().unwrap(), 7);
}

/// `into_result` is `std`'s `thread::Result`: the value, the panic's payload, or a
/// `CancelPayload` for a canceled thread.
#[test]
fn into_result_matches_std_join_result() {
    assert_eq!(thread_cancel::spawn(|| 4).join().into_result().unwrap(), 4);

    let std_err = std::thread::spawn(|| panic!("boom")).join().unwrap_err();
    let err = thread_cancel::spawn(|| -> () { panic!("boom") })
        .join()
        .into_result()
        .unwrap_err();
    assert_eq!(
        err.downcast_ref::<&str>(),
        std_err.downcast_ref::<&str>(),
        "the same payload as std's join"
    );

    let h = thread_cancel::spawn(|| loop {
        thread_cancel::testcancel()
    });
    h.cancel().unwrap();
    let err = h.join().into_result().unwrap_err();
    assert!(err.is::<thread_cancel::CancelPayload>());
}

#[test]
fn is_panicked_is_true_only_for_a_panic() {
    assert!(thread_cancel::spawn(|| -> () { panic!("x") })
        .join()
        .is_panicked());
    assert!(!thread_cancel::spawn(|| 1).join().is_panicked());
    let h = thread_cancel::spawn(|| loop {
        thread_cancel::testcancel()
    });
    h.cancel().unwrap();
    assert!(!h.join().is_panicked());
}

#[test]
fn expect_returns_value_or_panics_with_message() {
    assert_eq!(thread_cancel::spawn(|| 9).join().expect("ok"), 9);
    let h = thread_cancel::spawn(|| loop {
        thread_cancel::testcancel()
    });
    h.cancel().unwrap();
    let o = h.join();
    let p =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| o.expect("worker"))).unwrap_err();
    let msg = p.downcast_ref::<String>().unwrap();
    assert!(msg.starts_with("worker: "), "{msg}");
    assert!(msg.contains("canceled"), "{msg}");

    let o = thread_cancel::spawn(|| -> u8 { panic!("inner") }).join();
    let p =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| o.expect("worker"))).unwrap_err();
    let msg = p.downcast_ref::<String>().unwrap();
    assert!(msg.contains("inner"), "{msg}");
}

#[test]
fn outcome_debug_shows_the_panic_message() {
    let o = thread_cancel::spawn(|| -> () { panic!("a message") }).join();
    assert_eq!(format!("{o:?}"), r#"Panicked("a message")"#);
    let h = thread_cancel::spawn(|| loop {
        thread_cancel::testcancel()
    });
    h.cancel().unwrap();
    assert_eq!(format!("{:?}", h.join()), "Canceled");
    assert_eq!(
        format!("{:?}", thread_cancel::spawn(|| 5).join()),
        "Returned(5)"
    );
}

// ---------------------------------------------------------------------------------------------
// Several waiters on one thread: every waiter is woken

/// A target blocked in a cancellation point until canceled.
fn blocked_target() -> JoinHandle<()> {
    spawn(|| loop {
        thread_cancel::sleep(Duration::from_secs(3600));
    })
}

/// How a waiter waits.
#[derive(Clone, Copy, Debug)]
enum How {
    Wait,
    WaitTimeoutLong,
}

/// Starts a plain `std` thread (adopted by the crate when it waits) that waits on `target` and
/// reports on `done` once the wait returned, with whether the target had finished by then.
/// Returns its id, to wait until it is blocked in the wait (registered).
fn std_waiter(
    target: &Arc<JoinHandle<()>>,
    how: How,
    id: usize,
    done: &mpsc::Sender<(usize, bool)>,
) -> common::Tid {
    let (t, done) = (target.clone(), done.clone());
    let tid = common::Tid::new();
    let t2 = tid.clone();
    std::thread::spawn(move || {
        t2.set();
        let finished = match how {
            How::Wait => {
                t.wait();
                true
            }
            How::WaitTimeoutLong => t.wait_timeout(Duration::from_secs(3600)),
        };
        done.send((id, finished && t.canceler().is_finished()))
            .unwrap();
    });
    tid
}

#[test]
fn two_waiters_on_one_handle_are_both_woken() {
    for round in 0..3 {
        let target = Arc::new(blocked_target());
        let (done, reports) = mpsc::channel();
        for (id, how) in [How::Wait, How::WaitTimeoutLong, How::Wait]
            .into_iter()
            .enumerate()
        {
            std_waiter(&target, how, id, &done).wait_blocked(); // registered, waiting
        }
        target.cancel().unwrap();
        let mut woken = Vec::new();
        for _ in 0..3 {
            match reports.recv_timeout(HANG) {
                Ok((id, finished)) => {
                    assert!(finished, "waiter {id} returned before the target finished");
                    woken.push(id);
                }
                Err(_) => panic!("round {round}: only waiters {woken:?} of 3 were woken"),
            }
        }
    }
}

#[test]
fn timed_out_waiter_leaves_the_others_registered() {
    let target = Arc::new(blocked_target());
    let (done, reports) = mpsc::channel();
    std_waiter(&target, How::Wait, 0, &done).wait_blocked(); // registered, waiting
                                                             // Registers after the first one, times out and leaves.
    assert!(!target.wait_timeout(Duration::from_millis(50)));
    target.cancel().unwrap();
    let (id, finished) = reports
        .recv_timeout(HANG)
        .expect("the first waiter was stranded by the second one's timeout");
    assert_eq!((id, finished), (0, true));
}

#[test]
fn canceled_waiter_leaves_the_others_registered() {
    let target = Arc::new(blocked_target());
    let (done, reports) = mpsc::channel();
    std_waiter(&target, How::Wait, 0, &done).wait_blocked(); // registered, waiting
    let t = target.clone();
    let (canceled_waiter, tid) = common::spawn_watched(move || t.wait());
    tid.wait_blocked(); // registered after the first one, waiting
    canceled_waiter.cancel().unwrap();
    assert!(canceled_waiter.join().is_canceled());
    target.cancel().unwrap();
    let (id, finished) = reports
        .recv_timeout(HANG)
        .expect("the first waiter was stranded by the canceled one");
    assert_eq!((id, finished), (0, true));
}

#[test]
fn waiters_on_a_scoped_handle_are_all_woken() {
    let woken = AtomicUsize::new(0);
    thread_cancel::scope(|s| {
        let target = Arc::new(s.spawn(|| loop {
            thread_cancel::sleep(Duration::from_secs(3600));
        }));
        let tids: Vec<_> = (0..3).map(|_| common::Tid::new()).collect();
        let waiters: Vec<_> = (0..3)
            .map(|i| {
                let (target, woken, tid) = (target.clone(), &woken, tids[i].clone());
                s.spawn(move || {
                    tid.set();
                    let finished = if i == 1 {
                        target.wait_timeout(Duration::from_secs(3600))
                    } else {
                        target.wait();
                        true
                    };
                    assert!(finished && target.canceler().is_finished());
                    woken.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        for tid in &tids {
            tid.wait_blocked(); // registered, waiting
        }
        target.cancel().unwrap();
        for w in &waiters {
            assert!(
                w.wait_timeout(HANG),
                "a waiter on the scoped handle was stranded"
            );
        }
        for w in waiters {
            w.join().unwrap();
        }
        let target = Arc::try_unwrap(target).unwrap();
        assert!(target.join().is_canceled());
    });
    assert_eq!(woken.load(Ordering::SeqCst), 3);
}

// ---------------------------------------------------------------------------------------------
// Joining (or waiting for) oneself is a deadlock, reported as `std` does

/// Sends a thread its own handle; `f` uses it and reports; returns the report, or fails if the
/// thread is still blocked after `HANG` (then cancels it).
fn with_own_handle(f: fn(JoinHandle<()>) -> String) -> String {
    let (give, take) = mpsc::channel::<JoinHandle<()>>();
    let (report, reports) = mpsc::channel();
    let (got_canceler, canceler) = mpsc::channel();
    let h = spawn(move || {
        let me = take.recv().unwrap();
        got_canceler.send(me.canceler()).unwrap();
        report.send(f(me)).unwrap();
    });
    give.send(h).unwrap();
    let canceler = canceler.recv().unwrap();
    match reports.recv_timeout(HANG) {
        Ok(r) => r,
        Err(_) => {
            canceler.cancel().unwrap();
            panic!("the thread blocked on its own handle instead of reporting a deadlock");
        }
    }
}

#[test]
fn join_own_handle_reports_deadlock() {
    let msg = with_own_handle(|me| match catch_unwind(AssertUnwindSafe(|| me.join())) {
        Ok(_) => "returned".into(),
        Err(p) => panic_message(&*p),
    });
    let deadlock = std::io::Error::from_raw_os_error(libc::EDEADLK).to_string();
    assert!(msg.contains(&deadlock), "join of its own handle: {msg:?}");
}

#[test]
fn wait_on_own_handle_reports_deadlock() {
    let msg = with_own_handle(|me| {
        let wait = catch_unwind(AssertUnwindSafe(|| me.wait()));
        let timed = catch_unwind(AssertUnwindSafe(|| {
            me.wait_timeout(Duration::from_secs(3600))
        }));
        match (wait, timed) {
            (Err(a), Err(b)) => format!("{} | {}", panic_message(&*a), panic_message(&*b)),
            _ => "returned".into(),
        }
    });
    let deadlock = std::io::Error::from_raw_os_error(libc::EDEADLK).to_string();
    assert_eq!(
        msg.matches(&deadlock).count(),
        2,
        "wait / wait_timeout on its own handle: {msg:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Join and wait under stress (REQUIREMENTS.md, S2)

/// What the stress counts. Every field but the first three must stay 0.
#[derive(Debug, Default)]
struct Tally {
    /// Waits and joins that raced the target's end.
    races: usize,
    /// Waiters that saw the target finished.
    woken: usize,
    /// Waiters that were canceled (as asked).
    canceled: usize,
    /// A wait without a short timeout, not canceled, still blocked long after the target ended.
    stranded: usize,
    /// A wait that reported the target finished before it had (a wake-up counted twice, or
    /// delivered to the wrong waiter).
    early: usize,
    /// A wait with a long timeout that reported a timeout, or a waiter canceled that no one
    /// canceled, or a target whose outcome is not what was done to it.
    wrong: usize,
}

/// The target ends by itself (after a short spin) or blocks until canceled. Some waiters
/// (`wait`, `wait_timeout` short or long) race its end and its cancel; some are canceled
/// themselves at a random moment.
fn wait_round(rng: &mut Rng, t: &mut Tally) {
    let blocks = rng.coin(2);
    let work = rng.below(400) as u64;
    let target = Arc::new(spawn(move || {
        if blocks {
            loop {
                thread_cancel::sleep(Duration::MAX);
            }
        }
        spin_for(Duration::from_micros(work));
    }));
    let waiters: Vec<_> = (0..2 + rng.below(3))
        .map(|_| {
            let kind = rng.below(3);
            let short = Duration::from_micros(rng.below(300) as u64);
            let cancel_me = rng.coin(4);
            let tg = target.clone();
            let h = spawn(move || {
                let finished = match kind {
                    0 => {
                        tg.wait();
                        true
                    }
                    1 => tg.wait_timeout(short),
                    _ => tg.wait_timeout(Duration::from_secs(3600)),
                };
                (finished, tg.canceler().is_finished())
            });
            (kind, cancel_me, h)
        })
        .collect();
    spin_for(Duration::from_micros(rng.below(400) as u64));
    // A request counts only if it was queued (the waiter may have ended already).
    let waiters: Vec<_> = waiters
        .into_iter()
        .map(|(kind, cancel_me, h)| (kind, cancel_me && h.cancel().is_ok(), h))
        .collect();
    let cancel_target = (blocks || rng.coin(2)) && target.cancel().is_ok();
    for (kind, cancel_me, h) in waiters {
        t.races += 1;
        if !h.wait_timeout(HANG) {
            t.stranded += 1;
            h.cancel().unwrap(); // unblocks it, so the round can go on
        }
        match h.join() {
            Outcome::Returned((true, confirmed)) => {
                t.woken += 1;
                t.early += usize::from(!confirmed);
            }
            Outcome::Returned((false, _)) => t.wrong += usize::from(kind != 1),
            Outcome::Canceled => {
                t.canceled += 1;
                t.wrong += usize::from(!cancel_me);
            }
            Outcome::Exited(_) | Outcome::Panicked(_) => t.wrong += 1,
        }
    }
    let target = Arc::try_unwrap(target).expect("every waiter has ended");
    match target.join() {
        Outcome::Canceled => t.wrong += usize::from(!cancel_target),
        Outcome::Returned(()) => t.wrong += usize::from(blocks),
        _ => t.wrong += 1,
    }
}

/// A joiner owns the handle and races the target's end, the target's cancel and its own.
fn join_round(rng: &mut Rng, t: &mut Tally) {
    let blocks = rng.coin(2);
    let work = rng.below(400) as u64;
    let target = spawn(move || {
        if blocks {
            loop {
                thread_cancel::sleep(Duration::MAX);
            }
        }
        spin_for(Duration::from_micros(work));
    });
    let canceler = target.canceler();
    let joiner = spawn(move || target.join().is_canceled());
    spin_for(Duration::from_micros(rng.below(400) as u64));
    let cancel_joiner = rng.coin(3) && joiner.cancel().is_ok();
    let cancel_target = (blocks || rng.coin(2)) && canceler.cancel().is_ok();
    t.races += 1;
    if !joiner.wait_timeout(HANG) {
        t.stranded += 1;
        joiner.cancel().unwrap();
    }
    match joiner.join() {
        Outcome::Returned(canceled) => {
            t.woken += 1;
            t.wrong += usize::from(canceled && !cancel_target || !canceled && blocks);
        }
        Outcome::Canceled => {
            t.canceled += 1;
            t.wrong += usize::from(!cancel_joiner);
            // The handle went with the joiner (detached): the target still ends.
            let mut waited = Duration::ZERO;
            while !canceler.is_finished() && waited < HANG {
                std::thread::sleep(Duration::from_millis(1));
                waited += Duration::from_millis(1);
            }
            t.stranded += usize::from(!canceler.is_finished());
        }
        _ => t.wrong += 1,
    }
}

#[test]
fn stress_join_and_wait_wake_every_waiter_racing_cancels() {
    let rounds = stress_iters();
    let mut t = Tally::default();
    let start = std::time::Instant::now();
    for round in 0..rounds {
        let mut rng = Rng::new(round);
        if rng.coin(4) {
            join_round(&mut rng, &mut t);
        } else {
            wait_round(&mut rng, &mut t);
        }
    }
    eprintln!(
        "join/wait stress: {rounds} rounds in {:.1} s: {t:?}",
        start.elapsed().as_secs_f64()
    );
    assert!(
        t.woken > 0 && t.canceled > 0,
        "the races were not exercised: {t:?}"
    );
    assert_eq!(
        (t.stranded, t.early, t.wrong),
        (0, 0, 0),
        "lost or wrong wake-ups: {t:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Handles and cancelers

#[test]
// A `Canceler` hashes the address of its thread's control block, never its (atomic) contents.
#[allow(clippy::mutable_key_type)]
fn canceler_eq_and_hash_follow_the_thread() {
    use std::collections::HashSet;
    let h1 = thread_cancel::spawn(|| ());
    let h2 = thread_cancel::spawn(|| ());
    let (a, a2, b) = (h1.canceler(), h1.canceler(), h2.canceler());
    assert_eq!(a, a2);
    assert_ne!(a, b);
    assert_eq!(thread_cancel::current(), thread_cancel::current());
    let set: HashSet<_> = [a.clone(), a2, b.clone()].into_iter().collect();
    assert_eq!(set.len(), 2);
    h1.join();
    h2.join();
    assert_eq!(set.len(), 2);
    assert!(set.contains(&a) && set.contains(&b));
}

#[test]
fn canceler_thread_id_is_the_std_id() {
    assert_eq!(
        thread_cancel::current().thread_id(),
        Some(std::thread::current().id())
    );
    let h = thread_cancel::spawn(|| std::thread::current().id());
    let c = h.canceler();
    let id = h.join().unwrap();
    assert_eq!(c.thread_id(), Some(id));
}

#[test]
fn canceler_debug_shows_name_id_finished_and_pending_not_internals() {
    let h = thread_cancel::Builder::new()
        .name("dbg-worker".into())
        .spawn(|| thread_cancel::sleep(Duration::MAX))
        .unwrap();
    let c = h.canceler();
    while c.thread_id().is_none() {
        std::thread::yield_now();
    }
    let s = format!("{c:?}");
    assert!(s.contains("dbg-worker"), "{s}");
    assert!(s.contains("finished: false"), "{s}");
    assert!(!s.contains("StateWord") && !s.contains("TypeId"), "{s}");
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    let s = format!("{c:?}");
    assert!(
        s.contains("finished: true") && s.contains("cancel_requested: true"),
        "{s}"
    );
}

#[test]
fn join_handle_debug_shows_name_finished_and_pending_not_internals() {
    // Blocked in std's recv (not a point) until the end: running when canceled and shown.
    let (tx, rx) = mpsc::channel::<()>();
    let h = thread_cancel::Builder::new()
        .name("dbg-handle".into())
        .spawn(move || {
            let _ = rx.recv();
        })
        .unwrap();
    h.cancel().unwrap();
    let s = format!("{h:?}");
    assert!(s.contains("dbg-handle"), "{s}");
    assert!(s.contains("cancel_requested: true"), "{s}");
    assert!(
        !s.contains("StateWord") && !s.contains("TypeId") && !s.contains("region"),
        "{s}"
    );
    drop(tx);
    h.wait();
    assert!(format!("{h:?}").contains("finished: true"));
    h.join();
}

// ---------------------------------------------------------------------------------------------
// Cleanup handlers, thread-specific data and exit

#[test]
fn r07_cleanup_lifo_then_tsd_destructors_then_terminate() {
    let log = Log::default();
    let l = log.clone();
    let key = Arc::new(Key::new({
        let l = log.clone();
        move |v: &'static str| l.push(format!("tsd {v}"))
    }));
    let k = key.clone();
    let h = spawn(move || {
        k.set("value");
        let (l1, l2, l3) = (l.clone(), l.clone(), l.clone());
        let _a = cleanup_push(move || l1.push("cleanup 1"));
        let _b = cleanup_push(move || l2.push("cleanup 2"));
        let _c = cleanup_push(move || l3.push("cleanup 3"));
        loop {
            testcancel();
        }
    });
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    log.push("joined");
    assert_eq!(
        log.get(),
        ["cleanup 3", "cleanup 2", "cleanup 1", "tsd value", "joined"]
    );
}

#[test]
fn r15_cleanup_push_and_pop_with_execute() {
    let log = Log::default();
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    let outer = cleanup_push(move || l1.push("outer"));
    let inner = cleanup_push(move || l2.push("inner"));
    inner.pop(true);
    cleanup_push(move || l3.push("not run")).pop(false);
    outer.pop(true);
    assert_eq!(log.get(), ["inner", "outer"]);
}

#[test]
fn r16_handlers_run_on_cancel_and_exit_but_not_on_return() {
    fn run(end: &'static str) -> (Vec<String>, bool) {
        let log = Log::default();
        let l = log.clone();
        let h = spawn(move || {
            let (a, b) = (l.clone(), l.clone());
            let _a = cleanup_push(move || a.push("a"));
            let _b = cleanup_push(move || b.push("b"));
            match end {
                "cancel" => {
                    current().cancel().unwrap();
                    testcancel();
                }
                "exit" => exit(()),
                "panic" => panic!("a panic is not a cancellation"),
                _ => {}
            }
        });
        let o = h.join();
        (log.get(), o.is_canceled())
    }
    assert_eq!(run("cancel"), (vec!["b".into(), "a".into()], true));
    assert_eq!(run("exit"), (vec!["b".into(), "a".into()], false));
    assert_eq!(run("return"), (vec![], false));
    assert_eq!(run("panic"), (vec![], false));
}

#[test]
fn r17_push_and_pop_pair_in_one_scope() {
    // A guard that leaves its scope is popped without running; a later cancellation does not
    // see it. (That a guard cannot leave its thread is a compile_fail doctest on CleanupGuard.)
    let log = Log::default();
    let l = log.clone();
    let h = spawn(move || {
        {
            let l = l.clone();
            let _scoped = cleanup_push(move || l.push("scope ended: must not run"));
        }
        let l2 = l.clone();
        let _live = cleanup_push(move || l2.push("live"));
        current().cancel().unwrap();
        testcancel();
    });
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["live"]);
    // The guard cannot leave its thread (not `Send`), so it cannot be popped elsewhere: the
    // compile_fail doctest on CleanupGuard shows it to the compiler, this probe at run time
    // (the inherent method applies only when `T: Send`, else the trait's).
    struct Probe<T>(std::marker::PhantomData<T>);
    trait NotSend {
        fn is_send(&self) -> bool {
            false
        }
    }
    impl<T> NotSend for Probe<T> {}
    impl<T: Send> Probe<T> {
        fn is_send(&self) -> bool {
            true
        }
    }
    assert!(
        Probe::<u8>(std::marker::PhantomData).is_send(),
        "the probe sees Send"
    );
    assert!(
        !Probe::<thread_cancel::CleanupGuard<fn()>>(std::marker::PhantomData).is_send(),
        "a cleanup guard can be sent to another thread"
    );
}

#[test]
fn r20_tsd_destructor_gets_value_with_slot_cleared_and_repeats_up_to_4_rounds() {
    let log = Log::default();
    let key: Arc<Mutex<Option<Arc<Key<u32>>>>> = Arc::new(Mutex::new(None));
    let k2 = key.clone();
    let l = log.clone();
    let k = Arc::new(Key::new(move |v: u32| {
        let key = k2.lock().unwrap().clone().unwrap();
        l.push(format!("round value {v}, slot {:?}", key.get()));
        key.set(v + 1); // set again: another round
    }));
    *key.lock().unwrap() = Some(k.clone());
    let other = Arc::new(Key::new({
        let l = log.clone();
        move |v: &'static str| l.push(format!("other {v}"))
    }));
    let (k1, o1) = (k.clone(), other.clone());
    spawn(move || {
        k1.set(0);
        o1.set("x");
    })
    .join()
    .unwrap();
    let got = log.get();
    assert_eq!(
        got.iter()
            .filter(|s| s.starts_with("round"))
            .collect::<Vec<_>>(),
        [
            "round value 0, slot None",
            "round value 1, slot None",
            "round value 2, slot None",
            "round value 3, slot None"
        ]
    );
    assert_eq!(got.iter().filter(|s| *s == "other x").count(), 1);
    // A key with no value on a thread: its destructor does not run.
    let log2 = Log::default();
    let l2 = log2.clone();
    let unused = Arc::new(Key::new(move |_: u8| l2.push("ran")));
    let u = unused.clone();
    spawn(move || drop(u)).join().unwrap();
    assert!(log2.get().is_empty());
    *key.lock().unwrap() = None;
}

#[test]
fn r21_exit_runs_handlers_then_destructors_and_join_reports_the_value() {
    let log = Log::default();
    let l = log.clone();
    let key = Arc::new(Key::new({
        let l = log.clone();
        move |v: u8| l.push(format!("tsd {v}"))
    }));
    let k = key.clone();
    let h = spawn(move || -> String {
        k.set(9);
        let l = l.clone();
        let _g = cleanup_push(move || l.push("handler"));
        fn deep() -> ! {
            exit("bye".to_string())
        }
        deep()
    });
    match h.join() {
        Outcome::Exited(v) => assert_eq!(v, "bye"),
        other => panic!("expected Exited, got {other:?}"),
    }
    assert_eq!(log.get(), ["handler", "tsd 9"]);
}

#[test]
fn a_panicking_cleanup_handler_does_not_stop_the_others() {
    let log = Log::default();
    let l = log.clone();
    let h = spawn(move || {
        let l2 = l.clone();
        let _a = cleanup_push(move || l2.push("first pushed ran"));
        let _b = cleanup_push(|| panic!("handler panics"));
        current().cancel().unwrap();
        testcancel();
    });
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["first pushed ran"]);
}

#[test]
fn exit_in_cleanup_handler_ends_the_handler_and_the_termination_goes_on() {
    let later = Arc::new(AtomicBool::new(false));
    let l = later.clone();
    let h = spawn(move || {
        let _outer = cleanup_push(move || l.store(true, Ordering::SeqCst));
        let _inner = cleanup_push(|| thread_cancel::exit(()));
        current().cancel().unwrap();
        testcancel();
    });
    assert!(h.join().is_canceled());
    assert!(later.load(Ordering::SeqCst), "the next handler still ran");
}

// ---------------------------------------------------------------------------------------------
// `exit` while the thread is unwinding

struct ExitInDrop;

impl Drop for ExitInDrop {
    fn drop(&mut self) {
        thread_cancel::exit(());
    }
}

/// The child side: a `Drop` that calls `exit` runs during a panic, a cancellation or an exit.
fn exit_in_drop_child(mode: &str) {
    let h = match mode {
        "panic" => spawn(|| {
            let _d = ExitInDrop;
            panic!("the first unwind");
        }),
        "cancel" => spawn(|| {
            let _d = ExitInDrop;
            current().cancel().unwrap();
            testcancel();
        }),
        "exit" => spawn(|| {
            let _d = ExitInDrop;
            thread_cancel::exit(());
        }),
        _ => unreachable!("unknown mode {mode}"),
    };
    let _ = h.join();
    eprintln!("CHILD SURVIVED");
}

#[test]
fn exit_in_drop_during_unwind_aborts_with_a_clear_message() {
    if let Some(mode) = common::child_value() {
        return exit_in_drop_child(&mode);
    }
    for mode in ["panic", "cancel", "exit"] {
        let common::ChildRun { status, stderr } = run_child(
            "exit_in_drop_during_unwind_aborts_with_a_clear_message",
            mode,
            Duration::from_secs(60),
        );
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            Some(libc::SIGABRT),
            "{mode}: the process must abort ({status:?}); stderr:\n{stderr}"
        );
        assert!(
            stderr.contains("thread_cancel::exit called while the thread is unwinding"),
            "{mode}: the abort must say why; stderr:\n{stderr}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The thread's own waits: sleep and park

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

// ---------------------------------------------------------------------------------------------
// Adopted and scoped threads, fork

#[test]
fn an_adopted_std_thread_can_be_canceled() {
    let (tx, rx) = mpsc::channel();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let s = std::thread::spawn(move || {
        let _g = cleanup_push(move || d.store(true, Ordering::SeqCst));
        tx.send(current()).unwrap();
        loop {
            testcancel();
        }
    });
    rx.recv().unwrap().cancel().unwrap();
    let err = s.join().unwrap_err();
    assert!(err.is::<CancelPayload>());
    assert!(done.load(Ordering::SeqCst));
}

#[test]
fn scoped_threads_can_be_canceled_and_borrow() {
    let counter = AtomicUsize::new(0);
    thread_cancel::scope(|s| {
        let h = s.spawn(|| loop {
            counter.fetch_add(1, Ordering::Relaxed);
            testcancel();
        });
        while counter.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        h.cancel().unwrap();
        assert!(h.join().is_canceled());
    });
    assert!(counter.load(Ordering::Relaxed) > 0);
}

#[test]
fn r09_a_scoped_join_is_a_cancellation_point_and_its_target_runs_on() {
    // The joiner's handle of the target is dropped before its unwind starts: the unwind still
    // runs the joiner's cleanup, and the target, not canceled, runs on and is waited for by
    // the scope.
    let (release, wait) = mpsc::channel::<()>();
    let cleaned = AtomicBool::new(false);
    let tid = common::Tid::new();
    thread_cancel::scope(|s| {
        let target = s.spawn(move || wait.recv().is_ok()); // `std`'s recv: not a point
        let c = target.canceler();
        let (cleaned, t2) = (&cleaned, tid.clone());
        let joiner = s.spawn(move || {
            let _g = cleanup_push(move || cleaned.store(true, Ordering::SeqCst));
            t2.set();
            target.join();
            unreachable!("the join returned before the target ended")
        });
        tid.wait_blocked();
        joiner.cancel().unwrap();
        assert!(joiner.join().is_canceled());
        assert!(cleaned.load(Ordering::SeqCst));
        assert!(!c.is_finished(), "the joiner's cancel reached its target");
        release.send(()).unwrap();
    });
}

/// A thread blocked in a system call (`read` of a socket nobody writes to), and the socket's
/// other end.
fn blocked_in_read() -> (JoinHandle<()>, std::os::unix::net::UnixStream, common::Tid) {
    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    let (t, tid) = common::spawn_watched(move || loop {
        let _ = thread_cancel::io::read(a.as_fd(), &mut [0u8; 1]);
    });
    (t, b, tid)
}

#[test]
fn cancel_in_forked_child_of_parent_thread_is_no_such_thread() {
    // Where a blocked call can be interrupted (not the portable layer): a cancel signal sent
    // before the fork (the process id the signal goes to is then known: the child must not use
    // the parent's).
    let interrupts = !cfg!(thread_cancel_portable);
    if interrupts {
        let (before, _peer, tid) = blocked_in_read();
        tid.wait_blocked(); // asleep in `read`
        before.cancel().unwrap();
        assert!(before.join().is_canceled());
    }
    let parent_thread = blocked_target();
    // This thread, which will fork: it lives on in the child.
    let adopted = current();
    // SAFETY: the child only uses the crate's cancel path and `_exit`: it spawns one thread and
    // cancels it, which takes locks that no other thread of the parent holds at the fork (the
    // parent's threads are blocked in `sleep`, or in the test harness, which uses none of them).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: a child that hangs ends with SIGALRM, reported by the parent below.
        unsafe { libc::alarm(10) };
        let parents = parent_thread.cancel() == Err(NoSuchThread);
        // The forking thread, blocked in a call, is interrupted by a scope's cancel from a
        // thread made in the child (the signal goes to its kernel id in the child).
        let interrupted = !interrupts || {
            let scope = thread_cancel::CancelScope::new();
            let s2 = scope.clone();
            let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
            let (tid, fd) = (common::gettid(), a.as_raw_fd());
            // Canceled once the run's read is blocked (a hang ends with the alarm above).
            let canceler = std::thread::spawn(move || {
                common::wait_blocked_in_read(tid, fd);
                s2.cancel();
            });
            let r = scope
                .run(|| thread_cancel::io::read(a.as_fd(), &mut [0u8; 1]))
                .is_err();
            canceler.join().is_ok() && r
        };
        let _held = disable();
        let own = adopted.cancel() == Ok(());
        let child_thread = blocked_target();
        let created_here = child_thread.cancel() == Ok(()) && child_thread.join().is_canceled();
        let code = i32::from(!parents)
            | i32::from(!own) << 1
            | i32::from(!created_here) << 2
            | i32::from(!interrupted) << 3;
        // SAFETY: ends the child at once, without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status), "the child died: {status:#x}");
    let code = libc::WEXITSTATUS(status);
    assert_eq!(
        code & 1,
        0,
        "in the child, cancel() of a parent's thread must be NoSuchThread"
    );
    assert_eq!(
        code & 2,
        0,
        "in the child, the forking thread can still be canceled"
    );
    assert_eq!(
        code & 4,
        0,
        "in the child, a thread created there can be canceled"
    );
    assert_eq!(
        code & 8,
        0,
        "in the child, the forking thread blocked in a call is interrupted by a cancel"
    );
    parent_thread.cancel().unwrap();
    assert!(parent_thread.join().is_canceled());
}

// ---------------------------------------------------------------------------------------------
// Lightweight threads (`Builder::lightweight`, P5 and P6 of REQUIREMENTS.md): made with
// `pthread_create` directly, they behave as every spawned thread does, and differ only where the
// docs say (no alternate signal stack, `std` does not know their name).

fn light() -> Builder {
    Builder::new().lightweight()
}

fn spawn_light<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    light().spawn(f).expect("spawn a lightweight thread")
}

/// [`spawn_light`] for [`cancel_while_blocked_on`].
fn spawn_light_boxed(f: Box<dyn FnOnce() + Send>) -> JoinHandle<()> {
    spawn_light(f)
}

#[test]
fn lightweight_thread_is_canceled_in_sleep() {
    cancel_while_blocked_on(spawn_light_boxed, || {
        thread_cancel::sleep(Duration::from_secs(3600))
    });
}

#[test]
fn lightweight_thread_is_canceled_in_channel_recv() {
    let (tx, rx) = thread_cancel::sync::channel::<()>();
    cancel_while_blocked_on(spawn_light_boxed, move || {
        let _ = rx.recv();
    });
    drop(tx);
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn lightweight_thread_is_canceled_in_read_by_the_signal() {
    let (r, w) = std::io::pipe().unwrap();
    cancel_while_blocked_on(spawn_light_boxed, move || {
        let _ = thread_cancel::io::read(r.as_fd(), &mut [0u8; 1]);
    });
    drop(w);
}

#[test]
fn lightweight_thread_is_canceled_in_park() {
    cancel_while_blocked_on(spawn_light_boxed, || loop {
        thread_cancel::park();
    });
}

#[test]
fn lightweight_r07_cleanup_lifo_then_tsd_destructors_then_canceled() {
    let log = Log::default();
    let key = Arc::new(Key::new({
        let l = log.clone();
        move |v: &'static str| l.push(format!("tsd {v}"))
    }));
    let (k, l) = (key.clone(), log.clone());
    let h = spawn_light(move || {
        k.set("value");
        let (l1, l2, l3) = (l.clone(), l.clone(), l.clone());
        let _a = cleanup_push(move || l1.push("cleanup 1"));
        let _b = cleanup_push(move || l2.push("cleanup 2"));
        let _c = cleanup_push(move || l3.push("cleanup 3"));
        loop {
            testcancel();
        }
    });
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    log.push("joined");
    assert_eq!(
        log.get(),
        ["cleanup 3", "cleanup 2", "cleanup 1", "tsd value", "joined"]
    );
}

#[test]
fn lightweight_r21_exit_value_is_joined_after_handlers_and_destructors() {
    let log = Log::default();
    let key = Arc::new(Key::new({
        let l = log.clone();
        move |v: u8| l.push(format!("tsd {v}"))
    }));
    let (k, l) = (key.clone(), log.clone());
    let h = spawn_light(move || -> u32 {
        k.set(7);
        let _g = cleanup_push(move || l.push("cleanup"));
        exit(42u32)
    });
    match h.join() {
        Outcome::Exited(v) => assert_eq!(v, 42),
        o => panic!("expected Exited(42), got {o:?}"),
    }
    assert_eq!(log.get(), ["cleanup", "tsd 7"]);
}

#[test]
fn lightweight_returned_value_joins_as_returned_and_handlers_do_not_run() {
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    let h = spawn_light(move || {
        let g = cleanup_push(move || r.store(true, Ordering::SeqCst));
        drop(g); // normal scope exit: not run (R16)
        "done".to_string()
    });
    match h.join() {
        Outcome::Returned(v) => assert_eq!(v, "done"),
        o => panic!("expected Returned, got {o:?}"),
    }
    assert!(!ran.load(Ordering::SeqCst));
}

/// Messages the panic hook saw, with the thread's system name; the default hook still runs.
fn hook_log() -> &'static Mutex<Vec<String>> {
    static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // First: the panic below is intentional and, in a thread the test harness does not
        // know of, its message would reach the terminal; this hook still sees it.
        common::quiet_expected_panics();
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .unwrap_or_default();
            LOG.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(format!("{}: {msg}", system_name()));
            prev(info);
        }));
    });
    &LOG
}

/// The calling thread's name as the system knows it (`pthread_getname_np`).
fn system_name() -> String {
    let mut buf = [0 as libc::c_char; 64];
    // SAFETY: `buf` is valid for 64 bytes, which `pthread_getname_np` is told; it writes a
    // NUL-terminated name into it on success.
    let rc = unsafe { libc::pthread_getname_np(libc::pthread_self(), buf.as_mut_ptr(), 64) };
    assert_eq!(rc, 0, "pthread_getname_np");
    // SAFETY: NUL-terminated within `buf` (success above).
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn lightweight_panic_joins_as_panicked_and_is_reported_by_the_hook() {
    let log = hook_log();
    let h = light()
        .name("lw-panics".into())
        .spawn(|| -> u8 { panic!("lightweight boom (expected by the test)") })
        .unwrap();
    match h.join() {
        Outcome::Panicked(p) => assert_eq!(
            p.downcast_ref::<&str>(),
            Some(&"lightweight boom (expected by the test)")
        ),
        o => panic!("expected Panicked, got {o:?}"),
    }
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .any(|l| l == "lw-panics: lightweight boom (expected by the test)"),
        "the hook did not report it: {:?}",
        log.lock().unwrap()
    );
}

#[test]
fn lightweight_cancellation_is_not_reported_by_the_panic_hook() {
    let log = hook_log();
    let h = light()
        .name("lw-quiet".into())
        .spawn(|| loop {
            testcancel();
        })
        .unwrap();
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(
        !log.lock()
            .unwrap()
            .iter()
            .any(|l| l.starts_with("lw-quiet")),
        "{:?}",
        log.lock().unwrap()
    );
}

#[test]
fn lightweight_wait_and_wait_timeout_and_is_finished() {
    let h = spawn_light(|| thread_cancel::sleep(Duration::from_secs(3600)));
    assert!(!h.wait_timeout(Duration::from_millis(5)));
    assert!(!h.is_finished());
    h.cancel().unwrap();
    h.wait();
    assert!(h.canceler().is_finished());
    let t = Instant::now();
    while !h.is_finished() {
        assert!(t.elapsed() < HANG, "is_finished never true");
        std::thread::yield_now();
    }
    assert!(h.join().is_canceled());
}

#[test]
fn lightweight_join_is_a_cancellation_point_for_the_joiner() {
    let never = spawn_light(|| thread_cancel::sleep(Duration::from_secs(3600)));
    let never_canceler = never.canceler();
    let tid = common::Tid::new();
    let t2 = tid.clone();
    let joiner = spawn_light(move || {
        t2.set();
        let _ = never.join();
    });
    tid.wait_blocked(); // in join
    joiner.cancel().unwrap();
    assert!(joiner.join().is_canceled());
    // The abandoned handle detached the thread; it can still be canceled.
    never_canceler.cancel().unwrap();
    let t = Instant::now();
    while !never_canceler.is_finished() {
        assert!(t.elapsed() < HANG, "never finished");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn lightweight_name_is_given_to_the_system_not_to_std() {
    let h = light()
        .name("lw-named".into())
        .spawn(|| {
            (
                system_name(),
                std::thread::current().name().map(String::from),
            )
        })
        .unwrap();
    let (system, std_name) = h.join().unwrap();
    assert_eq!(system, "lw-named");
    assert_eq!(std_name, None, "std does not learn a name it did not give");
}

#[test]
fn lightweight_long_name_is_cut_to_15_bytes_at_a_char_boundary() {
    // 14 ASCII bytes, then a 2-byte character that would straddle the 15-byte limit.
    let h = light()
        .name("abcdefghijklmné-and-more".into())
        .spawn(system_name)
        .unwrap();
    assert_eq!(h.join().unwrap(), "abcdefghijklmn");
}

#[test]
fn lightweight_name_with_a_nul_byte_is_invalid_input() {
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    let e = light()
        .name("bad\0name".into())
        .spawn(move || r.store(true, Ordering::SeqCst))
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(!ran.load(Ordering::SeqCst));
}

#[test]
fn lightweight_handle_thread_is_the_std_thread_of_the_new_thread() {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn_light(move || {
        tx.send(std::thread::current().id()).unwrap();
        thread_cancel::sleep(Duration::from_secs(3600));
    });
    // Asked at once: it waits for the thread to have started, if needed.
    let from_handle = h.thread().id();
    assert_eq!(rx.recv().unwrap(), from_handle);
    assert_ne!(from_handle, std::thread::current().id());
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
}

/// The calling thread's stack size as glibc reports it.
fn own_stack_size() -> usize {
    // SAFETY: plain data, initialised by `pthread_getattr_np` before it is read.
    let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
    let mut size = 0usize;
    let mut addr = std::ptr::null_mut();
    // SAFETY: `attr` is valid for writes and destroyed once after use; `addr`/`size` are
    // valid for writes.
    unsafe {
        assert_eq!(libc::pthread_getattr_np(libc::pthread_self(), &mut attr), 0);
        assert_eq!(libc::pthread_attr_getstack(&attr, &mut addr, &mut size), 0);
        libc::pthread_attr_destroy(&mut attr);
    }
    size
}

#[test]
fn lightweight_stack_size_is_honoured() {
    for want in [64 << 10, 256 << 10, 8 << 20] {
        let got = light()
            .stack_size(want)
            .spawn(own_stack_size)
            .unwrap()
            .join()
            .unwrap();
        // Never below the architecture's minimum (16 KiB on x86_64, 128 KiB on aarch64).
        let floor = want.max(libc::PTHREAD_STACK_MIN);
        assert!(
            (floor..floor + (64 << 10)).contains(&got),
            "asked {want} (at least {floor}), got {got}"
        );
    }
    // A deep recursion that needs about 1 MiB runs on a 4 MiB stack.
    fn deep(n: u32) -> u64 {
        let pad = std::hint::black_box([n as u8; 1000]);
        if n == 0 {
            u64::from(pad[0])
        } else {
            deep(n - 1) + u64::from(pad[999])
        }
    }
    let sum = light()
        .stack_size(4 << 20)
        .spawn(|| deep(1000))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(sum, (1..=1000u64).map(|n| n % 256).sum::<u64>());
}

#[test]
fn lightweight_default_stack_size_is_std_s() {
    let ours = spawn_light(own_stack_size).join().unwrap();
    let std_size = std::thread::spawn(own_stack_size).join().unwrap();
    assert_eq!(ours, std_size);
}

#[test]
fn lightweight_spawn_failure_is_an_error_and_the_closure_is_dropped_unrun() {
    let token = Arc::new(());
    let t = token.clone();
    // 1 EiB of stack: beyond any 64-bit Linux address space (at most 2^57 bytes), so the
    // mapping cannot be made whatever the overcommit policy; and refused at once by a
    // user-mode emulator (64 TiB made qemu 7.2 describe every page and be killed for memory).
    let e = light()
        .stack_size(1 << 60)
        .spawn(move || drop(t))
        .unwrap_err();
    assert!(e.raw_os_error().is_some(), "an OS error: {e:?}");
    assert_eq!(Arc::strong_count(&token), 1, "the closure was dropped");
    // A size that cannot be rounded up to whole pages is refused, not wrapped.
    assert!(light().stack_size(usize::MAX).spawn(|| ()).is_err());
}

/// Whether the calling thread has an alternate signal stack.
fn has_alt_stack() -> bool {
    // SAFETY: plain data, written by `sigaltstack`.
    let mut old: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new stack only queries; `old` is valid for writes.
    assert_eq!(unsafe { libc::sigaltstack(std::ptr::null(), &mut old) }, 0);
    old.ss_flags & libc::SS_DISABLE == 0
}

#[test]
fn lightweight_thread_has_no_alternate_signal_stack_unlike_a_std_one() {
    assert!(!spawn_light(has_alt_stack).join().unwrap());
    assert!(Builder::new().spawn(has_alt_stack).unwrap().join().unwrap());
}

#[test]
fn lightweight_setting_leaves_scoped_threads_std_s() {
    let data = [1, 2, 3];
    thread_cancel::scope(|s| {
        let h = light()
            .name("scoped".into())
            .spawn_scoped(s, || {
                (
                    data.iter().sum::<i32>(),
                    std::thread::current().name().map(String::from),
                )
            })
            .unwrap();
        let spinner = light().spawn_scoped(s, || loop {
            testcancel();
        });
        let spinner = spinner.unwrap();
        spinner.cancel().unwrap();
        assert!(spinner.join().is_canceled());
        assert_eq!(h.join().unwrap(), (6, Some("scoped".to_string())));
    });
}

#[test]
fn lightweight_current_in_the_thread_is_its_own_control_block() {
    let h = spawn_light(|| {
        let me = thread_cancel::current();
        me.cancel().unwrap(); // a request to itself
        testcancel(); // acted on here
        unreachable!("testcancel acted");
    });
    let o: Outcome<()> = h.join();
    assert!(o.is_canceled(), "{o:?}");
}

#[test]
fn stress_lightweight_cancel_races_thread_start_and_end() {
    // A cancel at any moment of a short thread's life: before it is linked, while it runs,
    // after it returned. Every join is Canceled or Returned, never a hang; several joiners
    // meanwhile (`wait` from other threads) are all woken.
    for i in 0..stress_iters() {
        let h = Arc::new(spawn_light(move || {
            if i % 2 == 0 {
                testcancel();
            }
            i
        }));
        let waiter = {
            let h = h.clone();
            spawn_light(move || h.wait())
        };
        if i % 3 != 0 {
            let _ = h.cancel();
        }
        assert!(waiter.join().value().is_some());
        let h = Arc::into_inner(h).expect("the waiter dropped its handle");
        match h.join() {
            Outcome::Canceled => {}
            Outcome::Returned(v) => assert_eq!(v, i),
            o => panic!("iteration {i}: {o:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// When the system refuses a thread

/// A thread the system refuses (1 EiB of stack: no address space has room) is an error of
/// `Builder::spawn` (std's and lightweight), `spawn_scoped` too, with the closure dropped unrun
/// and the scope still ending; the next spawn works and its thread can be canceled.
#[test]
fn spawn_failure_is_an_error_and_the_next_spawn_works() {
    let token = Arc::new(());
    for builder in [Builder::new(), light()] {
        let t = token.clone();
        let e = builder
            .stack_size(1 << 60)
            .spawn(move || drop(t))
            .unwrap_err();
        assert!(e.raw_os_error().is_some(), "an OS error: {e:?}");
        assert_eq!(
            Arc::strong_count(&token),
            1,
            "the closure was dropped unrun"
        );
    }
    thread_cancel::scope(|s| {
        let t = token.clone();
        let e = Builder::new()
            .stack_size(1 << 60)
            .spawn_scoped(s, move || drop(t))
            .unwrap_err();
        assert!(e.raw_os_error().is_some(), "an OS error: {e:?}");
    });
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "the scoped closure was dropped unrun"
    );
    for builder in [Builder::new(), light()] {
        let h = builder
            .spawn(|| thread_cancel::sleep(Duration::from_secs(3600)))
            .unwrap();
        h.cancel().unwrap();
        assert!(h.join().is_canceled());
    }
}

/// The address space this process has mapped.
fn address_space_in_use() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

/// Sets the soft address-space limit (the hard one stays unlimited, so it can be raised again).
fn set_address_space_limit(bytes: u64) {
    let lim = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: a plain rlimit structure, read by the call.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) }, 0);
}

/// Runs the calling test in a child process with `CHILD_ENV` set; true in the child. Under
/// user-mode emulation (where an address-space limit binds the emulator, not the guest's
/// threads) it skips: false in the parent either way.
fn in_child_with_no_room_for_threads(name: &str) -> bool {
    if common::child_value().is_some() {
        return true;
    }
    if std::env::var_os("THREAD_CANCEL_TEST_RUNNER").is_some() {
        eprintln!("skipped under emulation: an address-space limit binds the emulator");
        return false;
    }
    let run = run_child(name, "child", Duration::from_secs(20));
    assert!(run.status.success(), "the child failed:\n{}", run.stderr);
    false
}

/// Thread creation refused by the system as a whole (an address-space limit leaves no room for
/// any new stack, as RLIMIT_NPROC or a cgroup's pids limit would for a non-root user): every
/// way to spawn reports it (`spawn` panics with std's message, as `std::thread::spawn`), the
/// process goes on (its own points still act: a scope's deadline ends a sleep), and once
/// threads can be created again they are spawned, canceled and joined as usual.
#[test]
fn spawn_refused_by_a_process_limit_is_an_error_and_spawning_resumes_after_it() {
    if !in_child_with_no_room_for_threads(
        "spawn_refused_by_a_process_limit_is_an_error_and_spawning_resumes_after_it",
    ) {
        return;
    }
    thread_cancel::current();
    set_address_space_limit(address_space_in_use() + (1 << 20));
    assert!(
        std::thread::Builder::new().spawn(|| ()).is_err(),
        "the limit did not stop thread creation"
    );
    let token = Arc::new(());
    for builder in [Builder::new(), light(), Builder::new().name("named".into())] {
        let t = token.clone();
        let e = builder.spawn(move || drop(t)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EAGAIN), "{e:?}");
    }
    let t = token.clone();
    let p = catch_unwind(AssertUnwindSafe(|| spawn(move || drop(t)))).unwrap_err();
    assert!(
        panic_message(&*p).contains("failed to spawn thread"),
        "{}",
        panic_message(&*p)
    );
    thread_cancel::scope(|s| {
        let t = token.clone();
        assert!(Builder::new().spawn_scoped(s, move || drop(t)).is_err());
    });
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "every closure was dropped unrun"
    );
    set_address_space_limit(libc::RLIM_INFINITY);
    for builder in [Builder::new(), light()] {
        let h = builder
            .spawn(|| thread_cancel::sleep(Duration::from_secs(3600)))
            .unwrap();
        h.cancel().unwrap();
        assert!(h.join().is_canceled());
    }
}

/// The same with the limit on the user's processes and threads (RLIMIT_NPROC, the usual limit
/// of a shared machine): every way to spawn fails with `EAGAIN`, the thread canceled while the
/// limit held is joined as canceled, and spawning resumes once it is raised. RLIMIT_NPROC does
/// not bind root: run as root, the child becomes the user nobody first (the limit counts that
/// user's tasks); where it cannot, the test says so and checks nothing more.
#[test]
fn spawn_refused_by_rlimit_nproc_is_eagain_and_spawning_resumes_after_it() {
    if !in_child_with_no_room_for_threads(
        "spawn_refused_by_rlimit_nproc_is_eagain_and_spawning_resumes_after_it",
    ) {
        return;
    }
    let held = spawn(|| thread_cancel::sleep(Duration::from_secs(3600)));
    // SAFETY: plain calls on the process's credentials.
    let root = unsafe { libc::geteuid() } == 0;
    // SAFETY: as above; glibc applies them to every thread of the process.
    if root && unsafe { libc::setgid(65534) != 0 || libc::setuid(65534) != 0 } {
        eprintln!("skipped: cannot leave root, and RLIMIT_NPROC does not bind root");
        return;
    }
    // SAFETY: plain data, written by the call.
    let mut old: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `old` is valid for writes.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut old) }, 0);
    let low = libc::rlimit {
        rlim_cur: 1, // this process alone has more tasks
        rlim_max: old.rlim_max,
    };
    // SAFETY: a plain rlimit structure, read by the call.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NPROC, &low) }, 0);
    let token = Arc::new(());
    for builder in [Builder::new(), light()] {
        let t = token.clone();
        let e = builder.spawn(move || drop(t)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EAGAIN), "{e:?}");
    }
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "every closure was dropped unrun"
    );
    held.cancel().unwrap();
    assert!(held.join().is_canceled());
    // SAFETY: as above; the soft limit goes back to what it was (at most the hard one).
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NPROC, &old) }, 0);
    for builder in [Builder::new(), light()] {
        let h = builder
            .spawn(|| thread_cancel::sleep(Duration::from_secs(3600)))
            .unwrap();
        h.cancel().unwrap();
        assert!(h.join().is_canceled());
    }
}

/// C06: a deadline's `on_cancel` callbacks run even when the thread that runs them cannot be
/// created (the timer thread runs them itself then): a run blocked in a call that only its
/// callback ends (std's `recv`) still ends at its deadline, and so does the next one once
/// threads can be created again.
#[test]
#[cfg_attr(thread_cancel_portable, ignore = "no deadline callbacks thread there")]
fn c06_deadline_callbacks_run_when_their_thread_cannot_start() {
    if !in_child_with_no_room_for_threads(
        "c06_deadline_callbacks_run_when_their_thread_cannot_start",
    ) {
        return;
    }
    fn blocked_until_the_callback(timeout: Duration) -> Duration {
        let (tx, rx) = mpsc::channel::<()>();
        let t = Instant::now();
        let r = thread_cancel::with_timeout(timeout, move || {
            let _g = thread_cancel::on_cancel(move || {
                let _ = tx.send(());
            });
            rx.recv().unwrap(); // not a point: only the callback ends it
            testcancel();
        });
        assert!(r.is_err_and(|e| e.acted() && !e.completed()));
        t.elapsed()
    }
    // The timer thread exists (started by a first deadline), then no thread fits.
    assert!(blocked_until_the_callback(Duration::from_millis(10)) < HANG);
    set_address_space_limit(address_space_in_use() + (1 << 20));
    // A stack larger than any the C library keeps cached from ended threads (a cached one
    // would be reused without a new mapping, and the limit would not show).
    assert!(
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(|| ())
            .is_err(),
        "the limit did not stop thread creation"
    );
    let took = blocked_until_the_callback(Duration::from_millis(50));
    assert!(took < HANG, "not ended by its deadline: {took:?}");
    set_address_space_limit(libc::RLIM_INFINITY);
    let took = blocked_until_the_callback(Duration::from_millis(50));
    assert!(took < HANG, "not ended by its deadline: {took:?}");
}

/// C06: a deadline around a call blocked in the kernel (`io::read` on an empty pipe) while no
/// thread can be created ends at its deadline, and so does the next one. Without a timer
/// thread, the run arms a kernel timer of its own thread (`timer_create`, `SIGEV_THREAD_ID`)
/// that sends the cancel signal at the deadline; the point then times the scope out. Before,
/// the run blocked for ever (this child hung until the test's limit killed it, 20 s, for a
/// 50 ms deadline).
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "no interruption of a blocked call there"
)]
fn c06_deadline_on_a_blocked_read_when_the_timer_thread_cannot_start_ends_at_its_deadline() {
    const NAME: &str =
        "c06_deadline_on_a_blocked_read_when_the_timer_thread_cannot_start_ends_at_its_deadline";
    if common::child_value().is_none() {
        if std::env::var_os("THREAD_CANCEL_TEST_RUNNER").is_some() {
            eprintln!("skipped under emulation: an address-space limit binds the emulator");
            return;
        }

        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env(common::CHILD_ENV, "child")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if t.elapsed() > Duration::from_secs(20) {
                child.kill().unwrap();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(
            status.is_some_and(|s| s.success()),
            "the child failed or hung: {status:?}"
        );
        return;
    }
    thread_cancel::current();
    set_address_space_limit(address_space_in_use() + (1 << 20));
    assert!(
        std::thread::Builder::new().spawn(|| ()).is_err(),
        "the limit did not stop thread creation"
    );
    let (r, _w) = std::io::pipe().unwrap();
    let blocked_read = |what: &str| {
        let t = Instant::now();
        let res = thread_cancel::with_timeout(Duration::from_millis(50), || {
            thread_cancel::io::read(r.as_fd(), &mut [0u8; 1])
        });
        let took = t.elapsed();
        assert!(
            res.as_ref()
                .is_err_and(|e| e.deadline_passed() && e.acted() && !e.completed()),
            "{what}: {res:?}"
        );
        assert!(took < HANG, "{what}: not ended by its deadline: {took:?}");
        eprintln!("{what}: ended after {took:?} (deadline 50 ms)");
    };
    blocked_read("no thread can be created");
    blocked_read("the next one, still none");
    // Thread creation works again: the timer thread starts, and the deadline is its.
    let unlimited = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: a valid resource and limit.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &unlimited) }, 0);
    blocked_read("after creation works again");
}
