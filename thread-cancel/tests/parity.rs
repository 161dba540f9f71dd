//! What a user writing `std` code expects: parity with `std`'s namesakes, and a request that
//! was never acted on being visible after the join.

use std::time::Duration;
use thread_cancel::Outcome;

/// A thread blocked in `std::thread::sleep` (not a cancellation point) returns normally after a
/// cancel: the join says `Returned`, and the handles tell the request was never acted on.
#[test]
fn std_sleep_ignores_cancel_and_join_reports_request_ignored() {
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let h = thread_cancel::spawn(move || {
        started_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        7
    });
    started_rx.recv().unwrap();
    let c = h.canceler();
    h.cancel().unwrap();
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
