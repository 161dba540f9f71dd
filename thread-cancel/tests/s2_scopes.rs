//! S2 for operation-level cancellation: scope cancels and deadlines raced against a one-byte
//! read, a channel recv, a condvar notify and the end of `run`. Each race checks that nothing
//! was lost or duplicated and that the thread is clean after `run` returned (no request, no
//! cancel signal pending or left blocked).
//!
//! `THREAD_CANCEL_STRESS` sets the races per test (default 2,000); the full run:
//! `THREAD_CANCEL_STRESS=1000000 nice cargo test --release --test s2_scopes -- --nocapture
//! --test-threads 1` (`THREAD_CANCEL_STRESS_SECS` caps each test's time; the printed races are
//! exact).

use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use thread_cancel::sync::{channel, Condvar, Mutex};
use thread_cancel::{cancel_requested, io, testcancel, CancelScope};

fn stress_iters() -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

fn time_limit() -> Option<Duration> {
    std::env::var("THREAD_CANCEL_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs)
}

fn enough(races: usize, started: Instant) -> bool {
    races >= stress_iters() || time_limit().is_some_and(|l| started.elapsed() >= l)
}

/// Busy-waits about `n` spin iterations (the jitter that moves the race's window).
fn jitter(n: u64) {
    for _ in 0..n {
        std::hint::spin_loop();
    }
}

/// The thread after a run: no request, no cancel signal pending or blocked, no point acts.
fn assert_clean() {
    assert!(!cancel_requested(), "a request is left after run returned");
    // SAFETY: sigpending / pthread_sigmask fill local sets.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut set);
        let rt = libc::SIGRTMIN()..=libc::SIGRTMAX();
        assert!(
            !rt.clone().any(|s| libc::sigismember(&set, s) == 1),
            "a cancel signal is still on its way after run returned"
        );
        libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set);
        assert!(
            !rt.clone().any(|s| libc::sigismember(&set, s) == 1),
            "the cancel signal is left blocked after run returned"
        );
    }
    testcancel();
}

/// How the race is ended: a scope cancel from another thread, or a deadline.
#[derive(Clone, Copy, Debug)]
enum By {
    Cancel,
    Deadline,
}

/// Runs the races: each round, `op` runs in a fresh scope in this thread while the producer
/// thread calls `produce(round)` and (for `By::Cancel`) cancels the scope, with a jitter
/// between the two that moves over the round numbers. `check(round, result)` judges the round.
fn race<R: Send + 'static>(
    name: &str,
    by: By,
    produce: impl Fn(usize) + Send + Sync + 'static,
    op: impl Fn() -> R,
    mut check: impl FnMut(usize, Result<R, thread_cancel::Canceled>),
) {
    let started = Instant::now();
    let go = Arc::new(Barrier::new(2));
    let done = Arc::new(Barrier::new(2));
    let stop = Arc::new(AtomicBool::new(false));
    let slot: Arc<std::sync::Mutex<Option<CancelScope>>> = Arc::default();
    let (g, d, st, sl) = (go.clone(), done.clone(), stop.clone(), slot.clone());
    let producer = std::thread::spawn(move || {
        let mut round = 0usize;
        loop {
            g.wait();
            if st.load(Ordering::SeqCst) {
                return;
            }
            let scope = sl.lock().unwrap().clone().unwrap();
            let j = (round as u64 * 7919) % 20_000;
            match (by, round % 2) {
                (By::Cancel, 0) => {
                    produce(round);
                    jitter(j);
                    scope.cancel();
                }
                (By::Cancel, _) => {
                    scope.cancel();
                    jitter(j);
                    produce(round);
                }
                (By::Deadline, _) => {
                    jitter(j);
                    produce(round);
                }
            }
            d.wait();
            round += 1;
        }
    });
    let (mut ok, mut canceled, mut races) = (0usize, 0usize, 0usize);
    while !enough(races, started) {
        let scope = match by {
            By::Cancel => CancelScope::new(),
            // A deadline a few microseconds away, moving over the rounds; one round in 16 has
            // 2 ms, so that some runs complete even where a round takes longer than the short
            // deadlines (under emulation all 200 rounds of a CI run timed out).
            By::Deadline => CancelScope::with_timeout(Duration::from_nanos(if races % 16 == 15 {
                2_000_000
            } else {
                2_000 + (races as u64 * 131) % 40_000
            })),
        };
        *slot.lock().unwrap() = Some(scope.clone());
        go.wait();
        let r = scope.run(&op);
        if r.is_ok() {
            ok += 1;
        } else {
            canceled += 1;
        }
        done.wait();
        check(races, r);
        assert_clean();
        races += 1;
    }
    stop.store(true, Ordering::SeqCst);
    go.wait();
    producer.join().unwrap();
    eprintln!(
        "s2 scopes {name} ({by:?}): {races} races, completed {ok}, canceled {canceled}, \
         lost 0, duplicated 0, left behind 0 ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
}

/// Bytes readable in the pipe.
fn unread(fd: &impl AsRawFd) -> i32 {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes an int.
    assert_eq!(
        unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) },
        0
    );
    n
}

fn read_race(by: By) {
    let (r, w) = std::io::pipe().unwrap();
    let w = Arc::new(std::sync::Mutex::new(w));
    let r = Arc::new(r);
    let r2 = r.clone();
    race(
        "read of one byte",
        by,
        move |_| std::io::Write::write_all(&mut *w.lock().unwrap(), b"z").unwrap(),
        move || {
            let mut b = [0u8; 1];
            io::read(r2.as_fd(), &mut b).unwrap()
        },
        |_, res| {
            let left = unread(&*r);
            match res {
                Ok(1) => assert_eq!(left, 0, "read returned the byte and it is still there"),
                Ok(n) => panic!("read returned {n}"),
                Err(_) => {
                    assert_eq!(left, 1, "canceled read consumed the byte: lost");
                    let mut b = [0u8; 1];
                    assert_eq!(io::read(r.as_fd(), &mut b).unwrap(), 1);
                }
            }
        },
    );
}

fn recv_race(by: By) {
    let (tx, rx) = channel::<usize>();
    let tx = std::sync::Mutex::new(tx);
    let rx = Arc::new(rx);
    let rx2 = rx.clone();
    race(
        "channel recv",
        by,
        move |round| tx.lock().unwrap().send(round).unwrap(),
        move || rx2.recv().unwrap(),
        |round, res| match res {
            Ok(v) => {
                assert_eq!(v, round, "received another round's message");
                assert!(rx.try_recv().is_err(), "a message was duplicated");
            }
            Err(_) => assert_eq!(rx.try_recv().ok(), Some(round), "canceled recv lost it"),
        },
    );
}

fn notify_race(by: By) {
    // One token and one `notify_one` per round, two waiters: the one in the scope, and a
    // backup that always waits. The notification goes to either; a canceled scoped waiter
    // must not swallow it (the backup would then sleep with the token there: lost).
    let m = Arc::new(Mutex::new(0usize)); // tokens available
    let cv = Arc::new(Condvar::new());
    let backup_got = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (m2, cv2, bg, st) = (m.clone(), cv.clone(), backup_got.clone(), stop.clone());
    let backup = std::thread::spawn(move || loop {
        let g = m2.lock().unwrap();
        let mut g = cv2
            .wait_while(g, |n| *n == 0 && !st.load(Ordering::SeqCst))
            .unwrap();
        if *g == 0 {
            return;
        }
        *g -= 1;
        bg.fetch_add(1, Ordering::SeqCst);
    });
    let (mp, cvp) = (m.clone(), cv.clone());
    let (mo, cvo) = (m.clone(), cv.clone());
    let mut scoped_got = 0usize;
    let mut rounds = 0usize;
    race(
        "condvar notify",
        by,
        move |_| {
            *mp.lock().unwrap() += 1;
            cvp.notify_one();
        },
        move || {
            let g = mo.lock().unwrap();
            let mut g = cvo.wait_while(g, |n| *n == 0).unwrap();
            *g -= 1;
        },
        |_, res| {
            rounds += 1;
            if res.is_ok() {
                scoped_got += 1;
            }
            // The token is taken by one of the two within the hang limit, never by both.
            let t = Instant::now();
            while *m.lock().unwrap() != 0 {
                assert!(
                    t.elapsed() < Duration::from_secs(10),
                    "a notification was lost"
                );
                std::thread::yield_now();
            }
            assert_eq!(
                scoped_got + backup_got.load(Ordering::SeqCst),
                rounds,
                "duplicated"
            );
        },
    );
    stop.store(true, Ordering::SeqCst);
    cv.notify_all();
    backup.join().unwrap();
}

fn end_of_run_race(by: By) {
    // Nothing blocks: `f` completes at once, so the cancel (or deadline) races the end of run.
    let counter = Arc::new(AtomicUsize::new(0));
    let c2 = counter.clone();
    race(
        "end of run",
        by,
        |_| {},
        move || c2.fetch_add(1, Ordering::SeqCst),
        |_, _| {},
    );
    assert!(counter.load(Ordering::SeqCst) > 0);
}

#[test]
fn s2_scope_cancel_races_a_read_of_one_byte() {
    read_race(By::Cancel);
}
#[test]
fn s2_deadline_races_a_read_of_one_byte() {
    read_race(By::Deadline);
}
#[test]
fn s2_scope_cancel_races_a_channel_recv() {
    recv_race(By::Cancel);
}
#[test]
fn s2_deadline_races_a_channel_recv() {
    recv_race(By::Deadline);
}
#[test]
fn s2_scope_cancel_races_a_condvar_notify() {
    notify_race(By::Cancel);
}
#[test]
fn s2_deadline_races_a_condvar_notify() {
    notify_race(By::Deadline);
}
#[test]
fn s2_scope_cancel_races_the_end_of_run() {
    end_of_run_race(By::Cancel);
}
#[test]
fn s2_deadline_races_the_end_of_run() {
    end_of_run_race(By::Deadline);
}
