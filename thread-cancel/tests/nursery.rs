//! S7 structured threads: a nursery's tasks say what each returned, or which was canceled.

mod common;

use std::time::Duration;
use thread_cancel::{CancelScope, Nursery};

#[test]
fn s7_nursery_tasks_say_what_each_returned_or_which_was_canceled() {
    common::quiet_expected_panics();
    let request = CancelScope::new();
    let n = Nursery::new(&request);
    let (tx, rx) = std::sync::mpsc::channel();
    let done = n.spawn(|| 42).unwrap();
    let blocked = n
        .spawn(move || {
            tx.send(()).unwrap();
            thread_cancel::sleep(Duration::from_secs(3600));
            "woke"
        })
        .unwrap();
    // The first task has returned before the cancel: wait for it and for the second to start.
    rx.recv_timeout(common::HANG).unwrap();
    let give_up = std::time::Instant::now() + common::HANG;
    while !done.is_done() {
        assert!(
            std::time::Instant::now() < give_up,
            "the first task never returned"
        );
        std::thread::yield_now();
    }
    request.cancel();
    n.join().unwrap();
    assert_eq!(done.result(), Some(Ok(42)));
    let e = blocked.result().expect("ended").unwrap_err();
    assert!(e.acted() && e.value().is_none(), "{e:?}");

    // A panic: the nursery's join returns it, its task has no result, its sibling is canceled.
    let n = Nursery::new(&CancelScope::new());
    let sibling = n
        .spawn(|| thread_cancel::sleep(Duration::from_secs(3600)))
        .unwrap();
    let bad = n
        .spawn(|| -> u8 { panic!("bad {}", common::EXPECTED_PANIC) })
        .unwrap();
    assert!(n.join().is_err());
    assert!(bad.result().is_none());
    assert!(sibling.result().expect("ended").is_err());
}
