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

/// Gives the spawned thread time to block in its wait first. The tests that use it are correct
/// whether or not it blocked; this only makes the blocked case the usual one.
fn let_it_block() {
    thread_cancel::sleep(Duration::from_millis(20));
}

#[test]
fn wait_timeout_while_returns_when_condition_clears() {
    use std::sync::Arc;
    use thread_cancel::sync::{Condvar, Mutex};
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let p = pair.clone();
    let h = thread_cancel::spawn(move || {
        let (m, cv) = &*p;
        let (g, r) = cv
            .wait_timeout_while(m.lock().unwrap(), Duration::from_secs(60), |v| *v < 3)
            .unwrap();
        (*g, r.timed_out())
    });
    for _ in 0..3 {
        *pair.0.lock().unwrap() += 1;
        pair.1.notify_all();
    }
    assert_eq!(h.join().unwrap(), (3, false));
}

#[test]
fn wait_timeout_while_times_out_with_condition_true() {
    use thread_cancel::sync::{Condvar, Mutex};
    let (m, cv) = (Mutex::new(()), Condvar::new());
    let (g, r) = cv
        .wait_timeout_while(m.lock().unwrap(), Duration::from_millis(10), |_| true)
        .unwrap();
    assert!(r.timed_out());
    drop(g);
    // A zero timeout with the condition false does not wait and did not time out.
    let (g, r) = cv
        .wait_timeout_while(m.lock().unwrap(), Duration::ZERO, |_| false)
        .unwrap();
    assert!(!r.timed_out());
    drop(g);
}

#[test]
fn wait_timeout_while_is_a_cancellation_point_and_leaves_mutex_unlocked() {
    use std::sync::Arc;
    use thread_cancel::sync::{Condvar, Mutex};
    let pair = Arc::new((Mutex::new(()), Condvar::new()));
    let p = pair.clone();
    let h = thread_cancel::spawn(move || {
        let (m, cv) = &*p;
        let _ = cv.wait_timeout_while(m.lock().unwrap(), Duration::from_secs(3600), |_| true);
    });
    let_it_block();
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(pair.0.try_lock().is_ok());
}

#[test]
fn try_iter_yields_ready_messages_without_blocking() {
    let (tx, rx) = thread_cancel::sync::channel();
    assert_eq!(rx.try_iter().count(), 0);
    for i in 0..4 {
        tx.send(i).unwrap();
    }
    assert_eq!(rx.try_iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(rx.try_iter().next(), None);
}

#[test]
fn receiver_into_iter_by_value_and_by_ref() {
    let (tx, rx) = thread_cancel::sync::channel();
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    let mut seen = Vec::new();
    for v in &rx {
        seen.push(v);
        if seen.len() == 2 {
            break;
        }
    }
    assert_eq!(seen, [1, 2]);
    tx.send(3).unwrap();
    drop(tx);
    assert_eq!(rx.into_iter().collect::<Vec<_>>(), [3]);
}

#[test]
fn receiver_iteration_is_a_cancellation_point() {
    let (tx, rx) = thread_cancel::sync::channel::<u32>();
    let h = thread_cancel::spawn(move || {
        let mut n = 0;
        for _ in rx {
            n += 1;
        }
        n
    });
    tx.send(1).unwrap();
    let_it_block();
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    drop(tx);
}

#[test]
fn try_send_bounded_full_and_disconnected_like_std() {
    use thread_cancel::sync::TrySendError;
    let (tx, rx) = thread_cancel::sync::sync_channel(2);
    assert_eq!(tx.try_send(1), Ok(()));
    assert_eq!(tx.try_send(2), Ok(()));
    assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
    assert_eq!(rx.recv(), Ok(1));
    assert_eq!(tx.try_send(4), Ok(()));
    assert_eq!(rx.try_iter().collect::<Vec<_>>(), [2, 4]);
    drop(rx);
    assert_eq!(tx.try_send(5), Err(TrySendError::Disconnected(5)));
}

#[test]
fn try_send_rendezvous_needs_a_waiting_receiver() {
    use thread_cancel::sync::TrySendError;
    let (tx, rx) = thread_cancel::sync::sync_channel::<u32>(0);
    assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
    let h = thread_cancel::spawn(move || rx.recv());
    // Retry until the receiver is blocked in recv (generous limit: a hang is a failure).
    let start = std::time::Instant::now();
    let mut v = 2;
    loop {
        match tx.try_send(v) {
            Ok(()) => break,
            Err(TrySendError::Full(back)) => v = back,
            Err(e) => panic!("{e:?}"),
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "receiver never waited"
        );
        std::thread::yield_now();
    }
    assert_eq!(h.join().unwrap(), Ok(2));
}

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
    let h = thread_cancel::Builder::new()
        .name("dbg-handle".into())
        .spawn(|| std::thread::sleep(Duration::from_millis(20)))
        .unwrap();
    h.cancel().unwrap();
    let s = format!("{h:?}");
    assert!(s.contains("dbg-handle"), "{s}");
    assert!(s.contains("cancel_requested: true"), "{s}");
    assert!(
        !s.contains("StateWord") && !s.contains("TypeId") && !s.contains("region"),
        "{s}"
    );
    h.wait();
    assert!(format!("{h:?}").contains("finished: true"));
    h.join();
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

fn scratch_file(tag: &str) -> std::fs::File {
    let p = std::env::temp_dir().join(format!("tc-parity-{tag}-{}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&p)
        .unwrap();
    std::fs::remove_file(&p).unwrap();
    f
}

#[test]
fn cancelable_seek_moves_the_offset_reads_and_writes_use() {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut c = thread_cancel::io::Cancelable::new(scratch_file("seek"));
    c.write_all(b"abcdef").unwrap();
    assert_eq!(c.stream_position().unwrap(), 6);
    assert_eq!(c.seek(SeekFrom::Current(-2)).unwrap(), 4);
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    assert_eq!(s, "ef");
    c.rewind().unwrap();
    c.write_all(b"X").unwrap();
    c.seek(SeekFrom::Start(0)).unwrap();
    s.clear();
    c.read_to_string(&mut s).unwrap();
    assert_eq!(s, "Xbcdef");
}

#[test]
fn cancelable_get_mut_and_as_fd_reach_the_inner_value() {
    use std::io::Write;
    use std::os::fd::{AsFd, AsRawFd};
    let mut c = thread_cancel::io::Cancelable::new(scratch_file("getmut"));
    c.write_all(b"1234").unwrap();
    c.get_mut().set_len(2).unwrap();
    assert_eq!(c.get_ref().metadata().unwrap().len(), 2);
    assert_eq!(c.as_fd().as_raw_fd(), c.get_ref().as_raw_fd());
}

#[test]
fn stdin_read_is_a_cancellation_point() {
    use std::io::Read;
    let h = thread_cancel::spawn(|| {
        // The request is pending before the read: the read must act on it whatever stdin is
        // (a terminal that blocks, or /dev/null that would return 0 at once).
        while !thread_cancel::cancel_requested() {
            std::hint::spin_loop();
        }
        let mut b = [0u8; 16];
        thread_cancel::io::stdin().read(&mut b)
    });
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
}

#[test]
fn scoped_handle_reports_request_ignored() {
    thread_cancel::scope(|s| {
        let h = s.spawn(|| std::thread::sleep(Duration::from_millis(20)));
        h.cancel().unwrap();
        h.wait();
        assert!(h.request_ignored());
        assert!(matches!(h.join(), Outcome::Returned(())));
    });
}
