//! Cancelability: how a request is queued and when it is acted on (the cancel state and type,
//! `testcancel`, `enable_and_test`), what acting does (an unwind that the panic hook does not
//! report, and that cannot be swallowed), `on_cancel` callbacks, and requests that were never
//! acted on (`request_ignored`). Tests named `rNN_...` show requirement RNN (REQUIREMENTS.md);
//! the same rules, on random operation sequences, are in `model.rs`.

mod common;

use common::{spin_until, Log};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use thread_cancel::{
    cleanup_push, current, disable, enable_and_test, on_cancel, set_cancel_state, set_cancel_type,
    spawn, testcancel, CancelPayload, CancelState, CancelType, InvalidValue, JoinHandle, Key,
    Outcome,
};

// ---------------------------------------------------------------------------------------------
// Requests, the cancel state and type

#[test]
fn r01_cancel_queues_a_request_acted_on_per_target_state() {
    let log = Log::default();
    let (l, go) = (log.clone(), Arc::new(AtomicBool::new(false)));
    let g = go.clone();
    let h = spawn(move || {
        let _d = disable();
        spin_until(&g);
        testcancel(); // disabled: the queued request is not acted on
        l.push("passed disabled point");
        drop(_d);
        testcancel(); // enabled + deferred: acted on here
        l.push("unreachable");
    });
    h.cancel().unwrap();
    go.store(true, Ordering::SeqCst);
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["passed disabled point"]);
}

#[test]
fn r02_new_threads_start_enabled_and_deferred() {
    let h = spawn(|| {
        (
            set_cancel_state(CancelState::Enabled),
            set_cancel_type(CancelType::Deferred),
        )
    });
    assert_eq!(
        h.join().unwrap(),
        (CancelState::Enabled, CancelType::Deferred)
    );
    // Also a thread the crate did not spawn, adopted on first use.
    let s = std::thread::spawn(|| {
        (
            set_cancel_state(CancelState::Enabled),
            set_cancel_type(CancelType::Deferred),
        )
    });
    assert_eq!(
        s.join().unwrap(),
        (CancelState::Enabled, CancelType::Deferred)
    );
}

#[test]
fn r03_disabled_holds_requests_pending_and_several_count_as_one() {
    let handlers = Arc::new(AtomicUsize::new(0));
    let go = Arc::new(AtomicBool::new(false));
    let disabled = Arc::new(AtomicBool::new(false));
    // Set only by code that runs after the points passed while disabled: a request that was
    // not held would have ended the thread before.
    let held = Arc::new(AtomicBool::new(false));
    let (hc, g, d, hd) = (handlers.clone(), go.clone(), disabled.clone(), held.clone());
    let h = spawn(move || {
        let _c = cleanup_push(move || {
            hc.fetch_add(1, Ordering::SeqCst);
        });
        set_cancel_state(CancelState::Disabled);
        d.store(true, Ordering::SeqCst);
        spin_until(&g);
        for _ in 0..100 {
            testcancel(); // held pending, indefinitely
        }
        thread_cancel::sleep(Duration::from_millis(1)); // held through a blocking point too
        set_cancel_state(CancelState::Enabled); // deferred: not yet
        hd.store(true, Ordering::SeqCst);
        testcancel();
        unreachable!()
    });
    // The requests come once the thread has disabled cancellation.
    common::wait_flag(&disabled, "the thread disabled cancellation");
    for _ in 0..5 {
        h.cancel().unwrap();
    }
    go.store(true, Ordering::SeqCst);
    assert!(h.join().is_canceled());
    assert!(
        held.load(Ordering::SeqCst),
        "the request was acted on while cancellation was disabled"
    );
    assert_eq!(handlers.load(Ordering::SeqCst), 1, "acted on once");
}

#[test]
fn r04_type_only_matters_while_enabled() {
    let log = Log::default();
    let l = log.clone();
    let h = spawn(move || {
        set_cancel_state(CancelState::Disabled);
        current().cancel().unwrap();
        // Asynchronous while disabled: the request stays pending.
        set_cancel_type(CancelType::Asynchronous);
        l.push("async while disabled: still running");
        // Enabling with the asynchronous type acts at once (no point needed).
        set_cancel_state(CancelState::Enabled);
        l.push("unreachable");
    });
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["async while disabled: still running"]);
}

#[test]
fn r05_deferred_acts_only_at_a_cancellation_point() {
    fn compute() {
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
    }
    let log = Log::default();
    let go = Arc::new(AtomicBool::new(false));
    let (g, l) = (go.clone(), log.clone());
    let h = spawn(move || {
        spin_until(&g);
        // The request is already pending; code without a point keeps running.
        compute();
        l.push("reached the point");
        testcancel();
        unreachable!()
    });
    h.cancel().unwrap();
    go.store(true, Ordering::SeqCst);
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["reached the point"]);
    // The same with a request the thread queued itself: `cancel` is no point, nor are the
    // state and type calls that change nothing.
    let log = Log::default();
    let l = log.clone();
    let h = spawn(move || {
        current().cancel().unwrap();
        l.push("cancel returned");
        set_cancel_state(CancelState::Enabled);
        set_cancel_type(CancelType::Deferred);
        compute();
        l.push("reached the point");
        testcancel();
        unreachable!()
    });
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["cancel returned", "reached the point"]);
}

#[test]
fn r11_set_cancel_state_returns_previous_and_rejects_other_values() {
    let h = spawn(|| {
        [
            set_cancel_state(CancelState::Disabled),
            set_cancel_state(CancelState::Disabled),
            set_cancel_state(CancelState::Enabled),
            set_cancel_state(CancelState::Enabled),
        ]
    });
    use CancelState::*;
    assert_eq!(h.join().unwrap(), [Enabled, Disabled, Disabled, Enabled]);
    assert_eq!(CancelState::try_from(0), Ok(Enabled));
    assert_eq!(CancelState::try_from(1), Ok(Disabled));
    for bad in [-1, 2, 3, i32::MAX] {
        assert_eq!(CancelState::try_from(bad), Err(InvalidValue));
    }
    let e: std::io::Error = InvalidValue.into();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn r12_set_cancel_type_returns_previous_and_rejects_other_values() {
    let h = spawn(|| {
        [
            set_cancel_type(CancelType::Asynchronous),
            set_cancel_type(CancelType::Asynchronous),
            set_cancel_type(CancelType::Deferred),
            set_cancel_type(CancelType::Deferred),
        ]
    });
    use CancelType::*;
    assert_eq!(
        h.join().unwrap(),
        [Deferred, Asynchronous, Asynchronous, Deferred]
    );
    assert_eq!(CancelType::try_from(1), Ok(Asynchronous));
    for bad in [-1, 2, 99] {
        assert_eq!(CancelType::try_from(bad), Err(InvalidValue));
    }
}

#[test]
fn r13_enabling_acts_at_next_point_posix_or_at_once_irix() {
    // POSIX: enabling (deferred) does not act; the next point does.
    let log = Log::default();
    let l = log.clone();
    let h = spawn(move || {
        set_cancel_state(CancelState::Disabled);
        current().cancel().unwrap();
        set_cancel_state(CancelState::Enabled);
        l.push("after enable");
        testcancel();
        l.push("unreachable");
    });
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["after enable"]);
    // IRIX: `enable_and_test` acts at once.
    let log = Log::default();
    let l = log.clone();
    let h = spawn(move || {
        let _g = disable();
        current().cancel().unwrap();
        l.push("before");
        enable_and_test();
        l.push("unreachable");
    });
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["before"]);
    // Nothing pending: enable_and_test returns the previous state.
    let h = spawn(|| {
        set_cancel_state(CancelState::Disabled);
        enable_and_test()
    });
    assert_eq!(h.join().unwrap(), CancelState::Disabled);
}

#[test]
fn r14_testcancel_is_a_cancellation_point() {
    let log = Log::default();
    let l = log.clone();
    let h = spawn(move || {
        testcancel(); // nothing pending: returns
        l.push("first point passed");
        current().cancel().unwrap();
        testcancel();
        l.push("unreachable");
    });
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["first point passed"]);
}

// ---------------------------------------------------------------------------------------------
// Acting on a request

#[test]
fn r19_acting_disables_cancellation_in_handlers_and_destructors() {
    let log = Log::default();
    let l = log.clone();
    let key = Arc::new(Key::new({
        let l = log.clone();
        move |_: u8| {
            testcancel();
            enable_and_test();
            // Enabling changed nothing: still disabled.
            l.push(format!(
                "state in destructor: {:?}",
                set_cancel_state(CancelState::Enabled)
            ));
            l.push("destructor finished");
        }
    }));
    let k = key.clone();
    let h = spawn(move || {
        k.set(1);
        let l = l.clone();
        let _g = cleanup_push(move || {
            l.push(format!(
                "state in handler: {:?}",
                set_cancel_state(CancelState::Enabled)
            ));
            current().cancel().unwrap(); // a new request changes nothing
            testcancel();
            enable_and_test();
            // Enabling changed nothing: still disabled.
            l.push(format!(
                "state after enabling: {:?}",
                set_cancel_state(CancelState::Enabled)
            ));
            l.push("handler finished");
        });
        current().cancel().unwrap();
        testcancel();
    });
    assert!(h.join().is_canceled());
    assert_eq!(
        log.get(),
        [
            "state in handler: Disabled",
            "state after enabling: Disabled",
            "handler finished",
            "state in destructor: Disabled",
            "destructor finished"
        ]
    );
}

#[test]
fn swallowed_cancellation_is_raised_again_and_join_reports_canceled() {
    let log = Log::default();
    let l = log.clone();
    let h = spawn(move || {
        let r = std::panic::catch_unwind(|| loop {
            testcancel()
        });
        l.push(format!(
            "caught ours: {}",
            r.unwrap_err().is::<CancelPayload>()
        ));
        testcancel(); // raises it again
        l.push("unreachable");
    });
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert_eq!(log.get(), ["caught ours: true"]);
    // Swallowed and then returned normally: still canceled.
    let h = spawn(move || {
        let _ = std::panic::catch_unwind(|| {
            current().cancel().unwrap();
            testcancel()
        });
        7
    });
    assert!(h.join().is_canceled());
}

#[test]
fn acting_unwinds_every_drop_without_the_panic_hook_and_poisons_std_mutex() {
    static HOOK_CALLS: AtomicUsize = AtomicUsize::new(0);
    struct Dropped(Arc<AtomicBool>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let prev = std::panic::take_hook();
    // The hook is process-wide and other tests panic concurrently: count only our thread.
    std::panic::set_hook(Box::new(|_| {
        if std::thread::current().name() == Some("hook-probe") {
            HOOK_CALLS.fetch_add(1, Ordering::SeqCst);
        }
    }));
    let dropped = Arc::new(AtomicBool::new(false));
    let m = Arc::new(Mutex::new(0));
    let (d, m2) = (dropped.clone(), m.clone());
    let h = thread_cancel::Builder::new()
        .name("hook-probe".into())
        .spawn(move || {
            let _v = Dropped(d);
            let _guard = m2.lock().unwrap();
            current().cancel().unwrap();
            testcancel();
        });
    assert!(h.unwrap().join().is_canceled());
    let _ = std::panic::take_hook();
    std::panic::set_hook(prev);
    assert!(dropped.load(Ordering::SeqCst));
    assert_eq!(HOOK_CALLS.load(Ordering::SeqCst), 0);
    assert!(m.is_poisoned(), "documented: a held std MutexGuard poisons");
}

// ---------------------------------------------------------------------------------------------
// `on_cancel` callbacks

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

/// A target blocked in a call that is not a cancellation point (a `std` channel), as `on_cancel`
/// is made for: only a callback can unblock it (by sending on `unblock`). It registers the
/// callbacks `make(unblock)` returns, in order, then reports on `ready` and blocks; once
/// unblocked it reaches a point.
fn foreign_blocked_target(
    make: impl FnOnce(mpsc::Sender<()>) -> Vec<Box<dyn FnOnce() + Send>> + Send + 'static,
) -> (JoinHandle<()>, mpsc::Receiver<()>) {
    let (ready, is_ready) = mpsc::channel();
    let h = spawn(move || {
        let (unblock, blocked) = mpsc::channel::<()>();
        let _guards: Vec<_> = make(unblock).into_iter().map(on_cancel).collect();
        ready.send(()).unwrap();
        let _ = blocked.recv(); // not a point: the request cannot wake it
        testcancel();
    });
    (h, is_ready)
}

#[test]
fn panicking_on_cancel_callback_does_not_stop_the_others() {
    let ran = Arc::new(AtomicUsize::new(0));
    let (r, r2) = (ran.clone(), ran.clone());
    let (h, is_ready) = foreign_blocked_target(move |unblock| {
        vec![
            Box::new(move || {
                r.fetch_add(1, Ordering::SeqCst);
            }),
            Box::new(|| panic!("on_cancel callback boom")),
            Box::new(move || {
                r2.fetch_add(1, Ordering::SeqCst);
                unblock.send(()).unwrap(); // the one that unblocks the thread comes last
            }),
        ]
    });
    is_ready.recv().unwrap();
    let canceled = catch_unwind(AssertUnwindSafe(|| h.cancel()));
    assert!(
        matches!(canceled, Ok(Ok(()))),
        "cancel() must return Ok, not panic"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 2, "every other callback ran");
    assert!(h.join().is_canceled());
}

#[test]
fn panicking_on_cancel_callback_at_registration_is_caught_like_in_cancel() {
    let h = spawn(|| {
        let _held = disable();
        current().cancel().unwrap(); // pending: callbacks now run at registration
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let _a = on_cancel(|| panic!("on_cancel callback boom"));
        let _b = on_cancel(move || r.store(true, Ordering::SeqCst));
        ran.load(Ordering::SeqCst)
    });
    match h.join() {
        Outcome::Returned(ran) => assert!(ran, "the callback after the panicking one ran"),
        other => panic!("the registering thread ended {other:?}"),
    }
}

#[test]
fn cancellation_in_an_on_cancel_callback_is_not_swallowed() {
    // A callback runs in the canceling thread; if that thread acts on its own cancellation
    // inside it, the unwind goes on after every callback has run (it is not lost).
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    let (target, is_ready) = foreign_blocked_target(move |unblock| {
        vec![
            Box::new(testcancel),
            Box::new(move || {
                r.store(true, Ordering::SeqCst);
                unblock.send(()).unwrap();
            }),
        ]
    });
    is_ready.recv().unwrap();
    let canceler = target.canceler();
    let canceling_thread = spawn(move || {
        let held = disable();
        current().cancel().unwrap();
        drop(held); // enabled, pending: the first callback's testcancel acts
        let r = canceler.cancel();
        format!("cancel() returned {r:?}")
    });
    let o = canceling_thread.join();
    assert!(o.is_canceled(), "the canceling thread: {o:?}");
    assert!(ran.load(Ordering::SeqCst), "the second callback ran");
    assert!(target.join().is_canceled());
}

// ---------------------------------------------------------------------------------------------
// Requests never acted on: `request_ignored`

/// A thread blocked in `std::thread::sleep` (not a cancellation point) returns normally after a
/// cancel: the join says `Returned`, and the handles tell the request was never acted on.
#[test]
fn std_sleep_ignores_cancel_and_join_reports_request_ignored() {
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let canceled = Arc::new(AtomicBool::new(false));
    let c2 = canceled.clone();
    let h = thread_cancel::spawn(move || {
        started_tx.send(()).unwrap();
        // Sleeps until the request has been made (however late the test thread runs).
        while !c2.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        7
    });
    started_rx.recv().unwrap();
    let c = h.canceler();
    h.cancel().unwrap();
    canceled.store(true, Ordering::SeqCst);
    h.wait();
    assert!(h.request_ignored());
    match h.join() {
        Outcome::Returned(v) => assert_eq!(v, 7),
        other => panic!("expected Returned, got {other:?}"),
    }
    assert!(c.request_ignored());
}

/// A thread that was never asked to stop, and one that acted on the request, report no ignored
/// request.
#[test]
fn request_ignored_is_false_without_request_or_when_acted_on() {
    let h = thread_cancel::spawn(|| 1);
    let c = h.canceler();
    assert_eq!(h.join().unwrap(), 1);
    assert!(!c.request_ignored());

    let h = thread_cancel::spawn(|| thread_cancel::sleep(Duration::MAX));
    let c = h.canceler();
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(!c.request_ignored());
}

/// A request made after the thread finished fails and is not counted as ignored.
#[test]
fn request_after_finish_is_not_counted_as_ignored() {
    let h = thread_cancel::spawn(|| ());
    let c = h.canceler();
    h.join();
    assert_eq!(c.cancel(), Err(thread_cancel::NoSuchThread));
    assert!(!c.request_ignored());
}

/// A thread blocked in `std`'s `mpsc::Receiver::recv` ignores the request as well.
#[test]
fn std_recv_ignores_cancel_and_request_ignored_says_so() {
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let h = thread_cancel::spawn(move || {
        started_tx.send(()).unwrap();
        rx.recv().unwrap()
    });
    let c = h.canceler();
    started_rx.recv().unwrap();
    c.cancel().unwrap();
    tx.send(5).unwrap();
    assert_eq!(h.join().unwrap(), 5);
    assert!(c.request_ignored());
}

#[test]
fn scoped_handle_reports_request_ignored() {
    thread_cancel::scope(|s| {
        // Blocked in std's recv (not a point) until the request has been made.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let h = s.spawn(move || {
            let _ = rx.recv();
        });
        h.cancel().unwrap();
        drop(tx);
        h.wait();
        assert!(h.request_ignored());
        assert!(matches!(h.join(), Outcome::Returned(())));
    });
}
