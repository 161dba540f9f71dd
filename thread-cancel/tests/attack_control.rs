//! Issue 13, findings on the control block: several waiters on one thread (finding 4), a thread
//! joining itself (9), a panicking `on_cancel` callback (12), `exit()` during an unwind (8),
//! `cancel()` in a forked child (smaller item), and the S2 stress for join/wait.
//!
//! Hangs are detected with generous timeouts (`HANG`), never asserted on elapsed time. The
//! stress test runs `THREAD_CANCEL_STRESS` rounds (default 2,000; the full run is
//! `THREAD_CANCEL_STRESS=200000 cargo test --release --test attack_control stress`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;
use thread_cancel::{
    cleanup_push, current, disable, on_cancel, spawn, testcancel, JoinHandle, NoSuchThread, Outcome,
};

/// Longer than any legitimate wake-up takes on a loaded machine: a wait that has not returned
/// after this is stranded.
const HANG: Duration = Duration::from_secs(20);

/// Long enough for a waiter to have registered (it yields a few times first); the tests do not
/// depend on it for correctness, only for exercising the registered path.
const SETTLE: Duration = Duration::from_millis(100);

fn stress_iters() -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

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
fn std_waiter(
    target: &Arc<JoinHandle<()>>,
    how: How,
    id: usize,
    done: &mpsc::Sender<(usize, bool)>,
) {
    let (t, done) = (target.clone(), done.clone());
    std::thread::spawn(move || {
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
}

// ---------------------------------------------------------------------------------------------
// Finding 4: every waiter is woken.

#[test]
fn two_waiters_on_one_handle_are_both_woken() {
    for round in 0..3 {
        let target = Arc::new(blocked_target());
        let (done, reports) = mpsc::channel();
        for (id, how) in [How::Wait, How::WaitTimeoutLong, How::Wait]
            .into_iter()
            .enumerate()
        {
            std_waiter(&target, how, id, &done);
        }
        std::thread::sleep(SETTLE);
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
    std_waiter(&target, How::Wait, 0, &done);
    std::thread::sleep(SETTLE);
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
    std_waiter(&target, How::Wait, 0, &done);
    std::thread::sleep(SETTLE);
    let t = target.clone();
    let canceled_waiter = spawn(move || t.wait());
    std::thread::sleep(SETTLE);
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
        let waiters: Vec<_> = (0..3)
            .map(|i| {
                let (target, woken) = (target.clone(), &woken);
                s.spawn(move || {
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
        std::thread::sleep(SETTLE);
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
// Finding 9: joining (or waiting for) oneself is a deadlock, reported like `std` does.

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

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
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
// Finding 12: a panicking `on_cancel` callback.

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
// Finding 8: `exit()` while the thread is unwinding.

const CHILD_ENV: &str = "THREAD_CANCEL_ATTACK_CHILD";

/// Runs this test binary's test `name` in a child process with `CHILD_ENV=mode`; returns its
/// exit status and standard error.
fn run_child(name: &str, mode: &str) -> (std::process::ExitStatus, String) {
    // Through the emulator named by `THREAD_CANCEL_TEST_RUNNER` (as Cargo's `runner`) when the
    // tests run under user-mode emulation, where the host cannot execute the binary.
    let exe = std::env::current_exe().unwrap();
    let runner = std::env::var("THREAD_CANCEL_TEST_RUNNER").unwrap_or_default();
    let mut words = runner.split_whitespace();
    let mut cmd = match words.next() {
        None => std::process::Command::new(&exe),
        Some(emulator) => {
            let mut c = std::process::Command::new(emulator);
            c.args(words).arg(&exe);
            c
        }
    };
    let out = cmd
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, mode)
        .output()
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

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
    if let Ok(mode) = std::env::var(CHILD_ENV) {
        return exit_in_drop_child(&mode);
    }
    for mode in ["panic", "cancel", "exit"] {
        let (status, stderr) = run_child(
            "exit_in_drop_during_unwind_aborts_with_a_clear_message",
            mode,
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
// Smaller item: `cancel()` in a forked child.

#[test]
fn cancel_in_forked_child_of_parent_thread_is_no_such_thread() {
    let parent_thread = blocked_target();
    let adopted = current(); // this thread, which will fork: it lives on in the child
                             // SAFETY: the child only uses the crate's cancel path and `_exit`: it spawns one thread and
                             // cancels it, which takes locks that no other thread of the parent holds at the fork (the
                             // parent's threads are blocked in `sleep`, or in the test harness, which uses none of them).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let parents = parent_thread.cancel() == Err(NoSuchThread);
        let _held = disable();
        let own = adopted.cancel() == Ok(());
        let child_thread = blocked_target();
        let created_here = child_thread.cancel() == Ok(()) && child_thread.join().is_canceled();
        let code = i32::from(!parents) | i32::from(!own) << 1 | i32::from(!created_here) << 2;
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
    parent_thread.cancel().unwrap();
    assert!(parent_thread.join().is_canceled());
}

// ---------------------------------------------------------------------------------------------
// S2: join/wait under stress.

/// splitmix64: a reproducible stream per round.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn coin(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// Spins (no cancellation point, no system call) for `us` microseconds: the random moments
/// of a race, spread over the time it takes the other threads to start and block.
fn spin_us(us: u64) {
    let end = std::time::Instant::now() + Duration::from_micros(us);
    while std::time::Instant::now() < end {
        std::hint::spin_loop();
    }
}

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
    let work = rng.below(400);
    let target = Arc::new(spawn(move || {
        if blocks {
            loop {
                thread_cancel::sleep(Duration::MAX);
            }
        }
        spin_us(work);
    }));
    let waiters: Vec<_> = (0..2 + rng.below(3))
        .map(|_| {
            let kind = rng.below(3);
            let short = Duration::from_micros(rng.below(300));
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
    spin_us(rng.below(400));
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
    let work = rng.below(400);
    let target = spawn(move || {
        if blocks {
            loop {
                thread_cancel::sleep(Duration::MAX);
            }
        }
        spin_us(work);
    });
    let canceler = target.canceler();
    let joiner = spawn(move || target.join().is_canceled());
    spin_us(rng.below(400));
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
        let mut rng = Rng(round as u64);
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
