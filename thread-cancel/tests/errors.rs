//! A run's error where users pass it on: `?` into `io::Error` (the tail of a function that
//! returns `io::Result`, inside `Read::read`), `??` into `anyhow::Result`, `?` into
//! `Box<dyn Error>` — each compiling, and a cancel the closure returned after (missed, or cut
//! short) staying an error (C08: never silent). And recognising the crate's cancel in an
//! `io::Error`: by kind and by `Canceled::from_io_error`, with and without `interpose`, and
//! another `ECANCELED` or `ETIMEDOUT` not taken for ours.

mod common;

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use thread_cancel::{with_timeout, CancelScope, Canceled};

/// The shape most code has: the closure returns `io::Result<T>`, the function too.
fn fetch(scope: &CancelScope, data: &'static [u8]) -> std::io::Result<Vec<u8>> {
    scope.run(|| {
        let mut v = Vec::new();
        (&mut &data[..]).read_to_end(&mut v)?;
        Ok(v)
    })?
}

fn fetch_timed(budget: Duration, spin: Duration, started: &AtomicBool) -> std::io::Result<u32> {
    with_timeout(budget, || {
        started.store(true, Ordering::SeqCst);
        let t = std::time::Instant::now();
        while t.elapsed() < spin {
            std::hint::spin_loop(); // no cancellation point: a cancel is missed
        }
        Ok(7)
    })?
}

fn fetch_anyhow(budget: Duration, spin: Duration, started: &AtomicBool) -> anyhow::Result<u32> {
    Ok(with_timeout(budget, || {
        started.store(true, Ordering::SeqCst);
        let t = std::time::Instant::now();
        while t.elapsed() < spin {
            std::hint::spin_loop();
        }
        Ok::<u32, std::io::Error>(7)
    })??)
}

fn fetch_boxed(scope: &CancelScope) -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
    Ok(scope.run(|| 7)?)
}

/// A reader that runs each read in a scope, as the guides' adapters do.
struct Scoped<'a, R>(&'a CancelScope, R);

impl<R: Read> Read for Scoped<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let r = &mut self.1;
        self.0.run(|| r.read(buf))?
    }
}

#[test]
fn c08_question_mark_compiles_where_users_write_it_and_a_miss_stays_an_error() {
    let s = CancelScope::new();
    assert_eq!(fetch(&s, b"abc").unwrap(), b"abc");
    let started = AtomicBool::new(false);
    assert_eq!(
        fetch_timed(Duration::from_secs(60), Duration::ZERO, &started).unwrap(),
        7
    );
    assert_eq!(
        fetch_anyhow(Duration::from_secs(60), Duration::ZERO, &started).unwrap(),
        7
    );
    assert_eq!(fetch_boxed(&s).unwrap(), 7);
    let mut v = Vec::new();
    Scoped(&s, &b"xyz"[..]).read_to_end(&mut v).unwrap();
    assert_eq!(v, b"xyz");

    // A deadline missed (the closure returned 7 after it): an error, which says so. The budget
    // grows until the run started its closure (a deadline that passes before the run's entry
    // rightly never starts it: an emulated machine can take 5 ms to get there).
    let late = |budget: Duration| budget + Duration::from_millis(25);
    let e = common::once_started(Duration::from_millis(5), |b, started| {
        fetch_timed(b, late(b), started)
    })
    .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    assert!(e.to_string().contains("nothing acted"), "{e}");
    let c = Canceled::from_io_error(&e).expect("ours");
    assert!(c.deadline_passed() && !c.acted());
    let e = common::once_started(Duration::from_millis(5), |b, started| {
        fetch_anyhow(b, late(b), started)
    })
    .unwrap_err();
    assert!(e.to_string().contains("deadline passed"), "{e}");
    // Canceled before: never started.
    s.cancel();
    let e = fetch(&s, b"abc").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::Other);
    assert!(Canceled::from_io_error(&e).is_some_and(|c| c.acted() && !c.deadline_passed()));
    assert!(fetch_boxed(&s).unwrap_err().is::<Canceled<u32>>());
    let e = Scoped(&s, &b"xyz"[..]).read(&mut [0; 4]).unwrap_err();
    assert!(Canceled::from_io_error(&e).is_some());
    // The value, asked for by name.
    let s = CancelScope::new();
    let e = s
        .run(|| {
            s.cancel();
            5
        })
        .unwrap_err();
    assert_eq!(e.into_completed().unwrap(), 5);
}

/// An `ECANCELED` or `ETIMEDOUT` from elsewhere (an aborted asynchronous I/O, a TCP timeout)
/// is not taken for the crate's, inside a canceled run or not.
#[test]
fn c08_another_ecanceled_or_etimedout_is_not_ours() {
    for code in [libc::ECANCELED, libc::ETIMEDOUT] {
        let e = std::io::Error::from_raw_os_error(code);
        assert_eq!(Canceled::from_io_error(&e), None, "{e} outside every run");
        let s = CancelScope::new();
        let r = s.run(|| {
            s.cancel();
            Canceled::from_io_error(&e)
        });
        assert_eq!(
            r.unwrap_err().into_value(),
            Some(None),
            "{e} in a canceled run"
        );
    }
}

/// With `interpose`: a std read failed by the deadline (std builds the `io::Error` from the
/// errno) is recognised as the deadline, in the run and just after it, on the thread that made
/// the call; on another thread, or after the next run began, it is not.
#[cfg(thread_cancel_interpose)]
#[test]
fn e02_an_interposed_failure_is_recognised_on_its_thread_in_its_run_and_just_after() {
    let (r, _w) = std::io::pipe().unwrap();
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it, and no call fails).
    let e = common::once_started(Duration::from_millis(20), |budget, started| {
        with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            let mut b = [0u8; 1];
            let e = (&r).read(&mut b).unwrap_err();
            let inside = Canceled::from_io_error(&e);
            (e, inside)
        })
    })
    .unwrap_err();
    let (e, inside) = e.into_value().unwrap();
    assert_eq!(e.raw_os_error(), Some(libc::ETIMEDOUT));
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    assert!(inside.is_some_and(|c| c.deadline_passed()), "in the run");
    assert!(
        Canceled::from_io_error(&e).is_some_and(|c| c.deadline_passed()),
        "just after the run"
    );
    let e2 = std::io::Error::from_raw_os_error(libc::ETIMEDOUT);
    assert_eq!(
        std::thread::spawn(move || Canceled::from_io_error(&e2))
            .join()
            .unwrap(),
        None,
        "another thread"
    );
    CancelScope::new().run(|| ()).unwrap();
    assert_eq!(
        Canceled::from_io_error(&e),
        None,
        "after the next run began"
    );
    // A scope's cancel: ECANCELED, std's kind for it (`Uncategorized`, not matchable on
    // stable Rust): recognised by the crate's function.
    let s = CancelScope::new();
    let r = s.run(|| {
        s.cancel();
        let mut b = [0u8; 1];
        let e = (&r).read(&mut b).unwrap_err();
        (e.raw_os_error(), Canceled::from_io_error(&e))
    });
    let (code, c) = r.unwrap_err().into_value().unwrap();
    assert_eq!(code, Some(libc::ECANCELED));
    assert!(c.is_some_and(|c| !c.deadline_passed()));
}
