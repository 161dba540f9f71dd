//! Requirements of SPEC §1 for the core model, one test (or more) per requirement id.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use thread_cancel::{
    cleanup_push, current, disable, enable_and_test, exit, set_cancel_state, set_cancel_type,
    spawn, testcancel, CancelPayload, CancelState, CancelType, InvalidValue, Key, NoSuchThread,
    Outcome,
};

/// A shared event log.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    fn get(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Spins (no cancellation point) until `flag` is set.
fn spin_until(flag: &AtomicBool) {
    while !flag.load(Ordering::SeqCst) {
        std::hint::spin_loop();
    }
}

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
    let (hc, g) = (handlers.clone(), go.clone());
    let h = spawn(move || {
        let _c = cleanup_push(move || {
            hc.fetch_add(1, Ordering::SeqCst);
        });
        set_cancel_state(CancelState::Disabled);
        spin_until(&g);
        for _ in 0..100 {
            testcancel(); // held pending, indefinitely
        }
        set_cancel_state(CancelState::Enabled); // deferred: not yet
        testcancel();
        unreachable!()
    });
    for _ in 0..5 {
        h.cancel().unwrap();
    }
    go.store(true, Ordering::SeqCst);
    assert!(h.join().is_canceled());
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
    let go = Arc::new(AtomicBool::new(false));
    let g = go.clone();
    let h = spawn(move || {
        spin_until(&g);
        // The request is already pending; code without a point keeps running.
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        testcancel();
        unreachable!()
    });
    h.cancel().unwrap();
    go.store(true, Ordering::SeqCst);
    assert!(h.join().is_canceled());
}

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
fn r08_cancel_returns_once_queued_before_the_target_acts() {
    let go = Arc::new(AtomicBool::new(false));
    let g = go.clone();
    let h = spawn(move || {
        spin_until(&g);
        testcancel();
    });
    // Ok returns while the target is still spinning: the request is only queued.
    assert_eq!(h.cancel(), Ok(()));
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

#[test]
fn r19_acting_disables_cancellation_in_handlers_and_destructors() {
    let log = Log::default();
    let l = log.clone();
    let key = Arc::new(Key::new({
        let l = log.clone();
        move |_: u8| {
            testcancel();
            enable_and_test();
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
            "handler finished",
            "destructor finished"
        ]
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
fn exit_with_a_value_of_the_wrong_type_panics_at_the_call() {
    let h = spawn(|| -> u32 { exit("not a u32") });
    match h.join() {
        Outcome::Panicked(p) => assert!(p.downcast_ref::<String>().unwrap().contains("type")),
        other => panic!("expected Panicked, got {other:?}"),
    }
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
