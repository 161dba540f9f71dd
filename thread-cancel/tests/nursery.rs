//! S7 structured threads: a nursery's tasks say what each returned, or which was canceled; a
//! thread started in a scope joins into one `Result` (`Outcome::flatten`) that `?` passes on,
//! with nothing lost.

mod common;

use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;
use thread_cancel::{CancelScope, Canceled, Cause, Nursery};

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

/// The handle of a thread of a scope whose body is a read.
type ScopedRead =
    thread_cancel::JoinHandle<Result<std::io::Result<usize>, Canceled<std::io::Result<usize>>>>;

/// A thread of `scope` that reads a pipe nobody writes, blocked in that read when this
/// returns (the write end is returned: keep it open).
fn blocked_in_scope(scope: &CancelScope) -> (ScopedRead, std::io::PipeWriter) {
    let (r, w) = std::io::pipe().unwrap();
    let fd = r.as_raw_fd();
    let tid = common::Tid::new();
    let t = tid.clone();
    let h = scope
        .spawn(move || {
            t.set();
            let mut b = [0u8; 8];
            thread_cancel::io::read(r.as_fd(), &mut b)
        })
        .unwrap();
    tid.wait_blocked_in_read(fd);
    (h, w)
}

/// `scope.spawn(f)?.join().flatten()`: one `Result`, each way a scoped thread can end, with
/// what the two layers said kept.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn s7_a_scoped_threads_join_flattens_into_one_result_nothing_lost() {
    common::quiet_expected_panics();
    let scope = CancelScope::new();
    // Returned.
    assert_eq!(scope.spawn(|| 6 * 7).unwrap().join().flatten(), Ok(42));

    // The scope's cancel stopped it at a point: acted, no value, the scope's cause.
    let (h, _w) = blocked_in_scope(&scope);
    let cause = std::io::Error::other("client left");
    scope.cancel_with(cause);
    let e = h.join().flatten().unwrap_err();
    assert!(e.acted() && !e.completed(), "{e:?}");
    assert!(matches!(e.cause(), Cause::Error(c) if c.to_string() == "client left"));

    // A deadline: it never started.
    let e = CancelScope::with_timeout(Duration::ZERO)
        .spawn(|| 1)
        .unwrap()
        .join()
        .flatten()
        .unwrap_err();
    assert!(e.deadline_passed() && e.acted() && !e.completed());

    // Missed: the closure returned after the cancel; an error still, the value kept.
    let late = CancelScope::new();
    let l = late.clone();
    let e = late
        .spawn(move || {
            l.cancel();
            "done anyway"
        })
        .unwrap()
        .join()
        .flatten()
        .unwrap_err();
    assert!(!e.acted(), "{e:?}");
    assert!(e.to_string().contains("nothing acted"), "{e}");
    assert_eq!(e.into_value(), Some("done anyway"));

    // The thread canceled as a thread, not its scope: a cancel, with its own cause.
    let other = CancelScope::new();
    let (h, _w) = blocked_in_scope(&other);
    h.cancel().unwrap();
    let e = h.join().flatten().unwrap_err();
    assert!(matches!(e.cause(), Cause::Thread), "{e:?}");
    assert!(e.acted() && !e.completed());
    assert!(!other.is_canceled());
    assert!(e.to_string().contains("its thread was canceled"), "{e}");

    // A panic is resumed in the joiner, with its payload.
    let h = CancelScope::new()
        .spawn(|| -> u8 { std::panic::panic_any(common::EXPECTED_PANIC) })
        .unwrap();
    let p =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.join().flatten())).unwrap_err();
    assert_eq!(p.downcast_ref::<&str>(), Some(&common::EXPECTED_PANIC));
}

/// `?` passes a flattened join on as users write it: into `io::Error` (recognised as the
/// crate's cancel), `anyhow::Error` and `Box<dyn Error>`.
#[test]
fn s7_a_flattened_join_passes_on_with_the_question_mark() {
    fn io_sum(scope: &CancelScope) -> std::io::Result<u32> {
        Ok(scope.spawn(|| 1 + 2)?.join().flatten()?)
    }
    fn anyhow_sum(scope: &CancelScope) -> anyhow::Result<u32> {
        Ok(scope.spawn(|| 1 + 2)?.join().flatten()?)
    }
    fn boxed_sum(scope: &CancelScope) -> Result<u32, Box<dyn std::error::Error>> {
        Ok(scope.spawn(|| 1 + 2)?.join().flatten()?)
    }
    let live = CancelScope::new();
    assert_eq!(io_sum(&live).unwrap(), 3);
    assert_eq!(anyhow_sum(&live).unwrap(), 3);
    assert_eq!(boxed_sum(&live).unwrap(), 3);

    let dead = CancelScope::new();
    dead.cancel();
    let e = io_sum(&dead).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::Other);
    assert!(Canceled::from_io_error(&e).is_some());
    let e = anyhow_sum(&dead).unwrap_err();
    assert!(e
        .downcast_ref::<Canceled<u32>>()
        .is_some_and(Canceled::acted));
    let e = boxed_sum(&dead).unwrap_err();
    assert!(e.downcast_ref::<Canceled<u32>>().is_some());

    let timed = CancelScope::with_timeout(Duration::ZERO);
    let e = io_sum(&timed).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
}
