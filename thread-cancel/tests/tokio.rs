//! The Cargo feature `tokio` (the integration with a thread pool): `thread_cancel::tokio::
//! spawn_blocking` on a real multi-threaded tokio runtime. Its abort interrupts a running
//! closure blocked in a read (the read returns by unwinding to the task's scope, the closure's
//! `Drop`s run), the await reports `is_cancelled()`, and the runtime's blocking thread survives,
//! clean, and runs the next task.
//!
//! The stress test runs `THREAD_CANCEL_STRESS` races (default 2,000) on one blocking thread; the
//! full run:
//! `THREAD_CANCEL_STRESS=20000 nice cargo test -p thread-cancel --release --features tokio
//! --test tokio stress -- --nocapture`.
#![cfg(feature = "tokio")]

mod common;

use common::{gettid, stress_iters, wait_blocked_in_read, Rng, SetOnDrop, HANG};
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use thread_cancel::tokio::{
    spawn_blocking, spawn_blocking_in, spawn_blocking_with_timeout, BlockingHandle,
};
use thread_cancel::{cancel_requested, io, CancelScope, ScopeUnwind};

/// Awaits `task`, failing the test if it has not finished after [`HANG`].
async fn finish<R>(task: BlockingHandle<R>) -> Result<R, thread_cancel::tokio::BlockingError<R>> {
    tokio::time::timeout(HANG, task)
        .await
        .expect("the task did not finish: hang")
}

/// Whether any real-time signal (the cancel signal is one) is pending for this thread.
fn rt_signal_pending() -> bool {
    // SAFETY: sigpending fills a local, zero-initialised set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut set);
        (libc::SIGRTMIN()..=libc::SIGRTMAX()).any(|s| libc::sigismember(&set, s) == 1)
    }
}

/// What a blocking thread's next task sees of the thread.
#[derive(Debug)]
struct Clean {
    requested: bool,
    signal_pending: bool,
    /// The result of a plain C-library `poll` sleep: `Err` if a stray signal interrupted it.
    plain_sleep: std::io::Result<()>,
    /// The result of reading a byte that is there (a cancellation point must not act).
    read: std::io::Result<u8>,
}

/// Run on a pool thread after an abort: the thread's state is as before the aborted task.
fn observe_clean() -> Clean {
    // SAFETY: poll with no descriptors is a sleep of 2 ms.
    let r = unsafe { libc::poll(std::ptr::null_mut(), 0, 2) };
    let plain_sleep = if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    };
    let (r, mut w) = std::io::pipe().unwrap();
    w.write_all(&[7]).unwrap();
    let mut b = [0u8; 1];
    let read = io::read(r.as_fd(), &mut b).map(|_| b[0]);
    Clean {
        requested: cancel_requested(),
        signal_pending: rt_signal_pending(),
        plain_sleep,
        read,
    }
}

fn assert_clean(c: &Clean) {
    assert!(
        !c.requested,
        "a request is left on the pool's thread: {c:?}"
    );
    assert!(!c.signal_pending, "a cancel signal is still pending: {c:?}");
    assert!(c.plain_sleep.is_ok(), "EINTR reached the next task: {c:?}");
    assert_eq!(c.read.as_ref().ok(), Some(&7), "{c:?}");
}

/// Spawns a task that reports its thread and kernel id, then blocks reading `r` (which nobody
/// writes) behind a guard that sets the returned flag when dropped. Returns once the read is
/// blocked (waiting in the calling thread: a test's `block_on` thread, not a worker, and not the
/// blocking pool, which may have one thread only).
fn blocked_reader(
    r: Arc<std::io::PipeReader>,
) -> (
    BlockingHandle<std::io::Result<usize>>,
    Arc<AtomicBool>,
    std::thread::ThreadId,
) {
    let dropped = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let d = dropped.clone();
    let fd = r.as_raw_fd();
    let task = spawn_blocking(move || {
        let _guard = SetOnDrop(d);
        tx.send((std::thread::current().id(), gettid())).unwrap();
        let mut buf = [0u8; 16];
        io::read(r.as_fd(), &mut buf)
    });
    let (id, tid) = rx.recv_timeout(HANG).expect("the task never started");
    wait_blocked_in_read(tid, fd);
    (task, dropped, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_interrupts_a_blocking_read_and_its_drop_runs() {
    let (r, mut w) = std::io::pipe().unwrap();
    let r = Arc::new(r);
    let (task, dropped, _) = blocked_reader(r.clone());
    assert!(!task.is_finished());

    let t0 = Instant::now();
    task.abort();
    let res = finish(task).await;
    let latency = t0.elapsed();
    eprintln!(
        "abort -> await returned Err: {:.3} ms",
        latency.as_secs_f64() * 1e3
    );

    let err = res.expect_err("the aborted read returned a value");
    assert!(err.is_cancelled(), "{err}");
    assert!(!err.is_panic() && !err.deadline_passed(), "{err:?}");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the closure's Drop did not run"
    );
    // The interrupted read had no effect: a byte written now is still there for the next reader.
    w.write_all(&[1]).unwrap();
    let mut b = [0u8; 1];
    assert_eq!(io::read(r.as_fd(), &mut b).unwrap(), 1);
    assert_eq!(b[0], 1);
}

#[test]
fn the_blocking_thread_survives_and_runs_the_next_task() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let (r, _w) = std::io::pipe().unwrap();
        let r = Arc::new(r);
        // Three rounds: every abort leaves the only blocking thread able to run the next task.
        for round in 0..3 {
            let dropped = Arc::new(AtomicBool::new(false));
            let (tx, rx) = mpsc::channel();
            let (d, r2, fd) = (dropped.clone(), r.clone(), r.as_raw_fd());
            let task = spawn_blocking(move || {
                let _guard = SetOnDrop(d);
                tx.send((std::thread::current().id(), gettid())).unwrap();
                let mut buf = [0u8; 16];
                io::read(r2.as_fd(), &mut buf)
            });
            // The only blocking thread runs the task: wait for it from a worker, not the pool.
            let (first_id, tid) = rx.recv_timeout(HANG).expect("the task never started");
            wait_blocked_in_read(tid, fd);
            task.abort();
            let err = finish(task).await.unwrap_err();
            assert!(err.is_cancelled(), "round {round}: {err}");
            assert!(
                dropped.load(Ordering::SeqCst),
                "round {round}: Drop did not run"
            );

            let next = spawn_blocking(|| (std::thread::current().id(), observe_clean()));
            let (next_id, clean) = finish(next).await.expect("the next task failed");
            assert_eq!(
                next_id, first_id,
                "round {round}: the next task ran on another thread"
            );
            assert_clean(&clean);
        }
    });
}

#[test]
fn abort_before_start_never_runs_the_closure() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        // The only blocking thread is kept busy, so the second task cannot start.
        let (r, _w) = std::io::pipe().unwrap();
        let (busy, _, _) = blocked_reader(Arc::new(r));
        let ran = Arc::new(AtomicBool::new(false));
        let ran2 = ran.clone();
        let queued = spawn_blocking(move || ran2.store(true, Ordering::SeqCst));
        queued.abort();
        busy.abort();
        assert!(finish(busy).await.unwrap_err().is_cancelled());
        let err = finish(queued).await.unwrap_err();
        assert!(err.is_cancelled(), "{err}");
        assert!(
            !ran.load(Ordering::SeqCst),
            "an aborted task ran its closure"
        );
        // The pool still serves.
        assert_eq!(finish(spawn_blocking(|| 5)).await.unwrap(), 5);
    });
}

#[test]
fn canceling_the_scope_before_start_never_runs_the_closure() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let (r, _w) = std::io::pipe().unwrap();
        let (busy, _, _) = blocked_reader(Arc::new(r));
        let ran = Arc::new(AtomicBool::new(false));
        let ran2 = ran.clone();
        let queued = spawn_blocking(move || ran2.store(true, Ordering::SeqCst));
        // Only the scope: the tokio task still starts, and its run does not start the closure.
        queued.scope().cancel();
        busy.abort();
        assert!(finish(busy).await.unwrap_err().is_cancelled());
        assert!(finish(queued).await.unwrap_err().is_cancelled());
        assert!(
            !ran.load(Ordering::SeqCst),
            "a canceled scope ran its closure"
        );
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_task_is_ok_even_if_aborted_after() {
    let task = spawn_blocking(|| 42);
    let t0 = Instant::now();
    while !task.is_finished() {
        assert!(t0.elapsed() < HANG, "the task never finished");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    task.abort();
    task.abort(); // twice is once
    assert!(task.scope().is_canceled());
    assert_eq!(finish(task).await.unwrap(), 42);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_is_reported_as_a_panic() {
    let task = spawn_blocking(|| -> u32 { panic!("boom in a blocking task") });
    let err = finish(task).await.unwrap_err();
    assert!(err.is_panic(), "{err}");
    assert!(!err.is_cancelled() && !err.deadline_passed());
    // Displayed as tokio displays a panicked task.
    assert!(err.to_string().contains("panicked"), "{err}");
    assert_eq!(
        std::io::Error::from(err.without_value()).kind(),
        std::io::ErrorKind::Other,
        "a panic as io::Error"
    );
    let err = finish(spawn_blocking(|| -> () { std::panic::panic_any(9u8) }))
        .await
        .unwrap_err();
    let payload = err.into_panic();
    assert_eq!(payload.downcast_ref::<u8>(), Some(&9));
    // A cancellation is not a panic.
    let t = spawn_blocking(|| thread_cancel::sleep(HANG));
    t.abort();
    let err = finish(t).await.unwrap_err();
    assert!(err.try_into_panic().unwrap_err().is_cancelled());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_stops_a_blocked_read_and_says_its_deadline_passed() {
    let (r, _w) = std::io::pipe().unwrap();
    let r = Arc::new(r);
    // The deadline counts from the spawn: on a loaded machine it can pass before the closure
    // starts (then it never runs, and the error says the same). Longer deadlines until a round
    // in which the read was really blocked when the deadline came.
    for ms in [20u64, 100, 500, 2_500] {
        let started = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(AtomicBool::new(false));
        let (s, d, r2) = (started.clone(), dropped.clone(), r.clone());
        let task = spawn_blocking_with_timeout(Duration::from_millis(ms), move || {
            s.store(true, Ordering::SeqCst);
            let _guard = SetOnDrop(d);
            let mut buf = [0u8; 16];
            io::read(r2.as_fd(), &mut buf)
        });
        assert!(task.scope().deadline().is_some());
        let err = finish(task).await.unwrap_err();
        assert!(err.is_cancelled() && err.deadline_passed(), "{err}");
        assert_eq!(
            std::io::Error::from(err.without_value()).kind(),
            std::io::ErrorKind::TimedOut
        );
        let started = started.load(Ordering::SeqCst);
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            started,
            "Drop ran iff started"
        );
        if started {
            return;
        }
        eprintln!("the deadline of {ms} ms passed before the closure started: a longer one");
    }
    panic!("the closure never started before a 2.5 s deadline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborting_one_task_of_a_scope_leaves_the_scope_and_its_other_tasks_alone() {
    let request = CancelScope::new();
    let (r, mut w) = std::io::pipe().unwrap();
    let r = Arc::new(r);
    let reader = |r: Arc<std::io::PipeReader>| {
        move || {
            let mut b = [0u8; 1];
            io::read(r.as_fd(), &mut b).map(|_| b[0])
        }
    };
    let a = spawn_blocking_in(&request, reader(r.clone()));
    let b = spawn_blocking_in(&request, reader(r.clone()));
    a.abort();
    assert!(finish(a).await.unwrap_err().is_cancelled());
    assert!(!request.is_canceled());
    w.write_all(&[3]).unwrap();
    assert_eq!(finish(b).await.unwrap().unwrap(), 3);

    // Canceling the scope stops every task in it.
    let c = spawn_blocking_in(&request, reader(r.clone()));
    let d = spawn_blocking_in(&request, reader(r.clone()));
    request.cancel();
    assert!(finish(c).await.unwrap_err().is_cancelled());
    assert!(finish(d).await.unwrap_err().is_cancelled());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_blocked_tasks_aborted_at_once_from_several_threads_all_stop() {
    const TASKS: usize = 16;
    let (r, _w) = std::io::pipe().unwrap();
    let r = Arc::new(r);
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        tasks.push(blocked_reader(r.clone()));
    }
    // Four threads cancel the tasks' scopes, all at once, while this one aborts every task too.
    let scopes: Vec<CancelScope> = tasks.iter().map(|(t, _, _)| t.scope().clone()).collect();
    let go = Arc::new(std::sync::Barrier::new(5));
    let cancelers: Vec<_> = (0..4)
        .map(|k| {
            let (scopes, go) = (scopes.clone(), go.clone());
            std::thread::spawn(move || {
                go.wait();
                for s in scopes.iter().skip(k).step_by(2) {
                    s.cancel();
                }
            })
        })
        .collect();
    go.wait();
    for (t, _, _) in &tasks {
        t.abort();
    }
    for c in cancelers {
        c.join().unwrap();
    }
    for (i, (t, dropped, _)) in tasks.into_iter().enumerate() {
        let err = finish(t).await.unwrap_err();
        assert!(err.is_cancelled(), "task {i}: {err}");
        assert!(
            dropped.load(Ordering::SeqCst),
            "task {i}: its Drop did not run"
        );
    }
    // The pool's threads all go on, clean.
    let mut next = Vec::new();
    for _ in 0..TASKS {
        next.push(spawn_blocking(observe_clean));
    }
    for t in next {
        assert_clean(&finish(t).await.unwrap());
    }
}

fn spin(n: u64) {
    for _ in 0..n {
        std::hint::spin_loop();
    }
}

/// Whether a byte is ready to read on `fd`, without blocking.
fn readable(fd: BorrowedFd<'_>) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, timeout 0.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    r == 1
}

/// One blocking thread runs every race, each right after the last: anything a race left on the
/// thread (a request, a signal on its way) would show in the next race's read (an `EINTR`, or a
/// cancel with no abort).
#[test]
fn stress_abort_racing_a_one_byte_read_never_loses_the_byte() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(stress_races());
}

async fn stress_races() {
    let n = stress_iters();
    let mut rng = Rng::new(0);
    let (mut returned, mut in_pipe_after_start, mut in_pipe_before_start) = (0usize, 0, 0);
    let mut late = 0usize;
    for i in 0..n {
        let (r, mut w) = std::io::pipe().unwrap();
        let r = Arc::new(r);
        let byte = (i % 251) as u8;
        let r2 = r.clone();
        let ran = Arc::new(AtomicBool::new(false));
        let ran2 = ran.clone();
        let task = spawn_blocking(move || {
            ran2.store(true, Ordering::SeqCst);
            let mut b = [0u8; 1];
            io::read(r2.as_fd(), &mut b).map(|n| (n, b[0]))
        });
        let x = rng.next();
        if x & (1 << 41) != 0 {
            // Half the rounds race the read itself (on its way in, blocked, returning), not
            // the task's start.
            let t0 = Instant::now();
            while !ran.load(Ordering::SeqCst) {
                assert!(t0.elapsed() < HANG, "round {i}: the task never started");
                std::hint::spin_loop();
            }
        }
        spin(x % 20_000);
        let gap = (x >> 20) % 5_000;
        if x & (1 << 40) == 0 {
            w.write_all(&[byte]).unwrap();
            spin(gap);
            task.abort();
        } else {
            task.abort();
            spin(gap);
            w.write_all(&[byte]).unwrap();
        }
        // A read that returned before the abort's cancel was seen is reported with the cancel
        // and its value (C08): for "never both", a completed read.
        let res = match finish(task).await {
            Err(e) if e.canceled().is_some_and(|c| c.completed()) => {
                late += 1;
                Ok(e.into_value().expect("completed"))
            }
            res => res,
        };
        match res {
            Ok(Ok((1, b))) => {
                assert_eq!(b, byte, "round {i}: a wrong byte");
                assert!(!readable(r.as_fd()), "round {i}: a byte read twice");
                returned += 1;
            }
            Ok(other) => panic!("round {i}: the read returned {other:?}"),
            Err(e) => {
                assert!(e.is_cancelled(), "round {i}: {e}");
                assert!(
                    readable(r.as_fd()),
                    "round {i}: the task was cancelled and the byte is not in the pipe: lost"
                );
                let mut b = [0u8; 1];
                assert_eq!(io::read(r.as_fd(), &mut b).unwrap(), 1);
                assert_eq!(b[0], byte, "round {i}");
                if ran.load(Ordering::SeqCst) {
                    in_pipe_after_start += 1;
                } else {
                    in_pipe_before_start += 1;
                }
            }
        }
    }
    eprintln!(
        "{n} races: {returned} bytes returned by the task ({late} of them reported with the \
         abort that came before the task ended), {in_pipe_after_start} cancelled after \
         the closure started (byte still in the pipe), {in_pipe_before_start} aborted before it \
         started (byte in the pipe), 0 lost"
    );
    assert_eq!(
        returned + in_pipe_after_start + in_pipe_before_start,
        n,
        "every race is accounted for"
    );
    // The pool is still sound after the races.
    let clean = finish(spawn_blocking(observe_clean)).await.unwrap();
    assert_clean(&clean);
}

/// C08 for the pool: a task aborted while its closure is in a call that is not a point (std's
/// sleep) runs to its end; the await reports the abort (`is_cancelled`, not acted on) with the
/// closure's value, never `Ok` in silence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c08_a_missed_abort_is_reported_with_the_value() {
    let (started_tx, started_rx) = mpsc::channel();
    let task = spawn_blocking(move || {
        started_tx.send(()).unwrap();
        common::spin_for(Duration::from_millis(100)); // no cancellation point
        "slept"
    });
    started_rx.recv().unwrap();
    task.abort();
    let e = finish(task).await.unwrap_err();
    assert!(e.is_cancelled(), "{e}");
    assert!(!e.canceled().unwrap().acted(), "{e}");
    assert!(e.to_string().contains("nothing acted"), "{e}");
    assert_eq!(e.into_value(), Some("slept"));
}

/// What a blocking closure of [`observed_reader`] saw, set from inside it.
#[derive(Clone, Default)]
struct Seen {
    /// Its read (a cancellation point) returned by the scope's unwind: it observed the cancel.
    cancel_at_the_read: Arc<AtomicBool>,
    /// Its `Drop`s ran (the closure ended, by the cancel or by returning).
    dropped: Arc<AtomicBool>,
    /// Its read returned this many bytes (`usize::MAX` until it returns).
    read: Arc<std::sync::atomic::AtomicUsize>,
}

impl Seen {
    fn new() -> Self {
        let s = Seen::default();
        s.read.store(usize::MAX, Ordering::SeqCst);
        s
    }
    fn canceled_at_the_read(&self) -> bool {
        self.cancel_at_the_read.load(Ordering::SeqCst)
    }
    fn dropped(&self) -> bool {
        self.dropped.load(Ordering::SeqCst)
    }
}

/// The closure of a blocking task that reads `r` (nobody writes it unless the test does),
/// reports its kernel id on `tid`, and records in `seen` what happened at its read.
fn observed_read(
    r: Arc<std::io::PipeReader>,
    tid: mpsc::Sender<i32>,
    seen: Seen,
) -> impl FnOnce() -> std::io::Result<usize> + Send + 'static {
    move || {
        let _guard = SetOnDrop(seen.dropped.clone());
        tid.send(gettid()).unwrap();
        let mut buf = [0u8; 16];
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            io::read(r.as_fd(), &mut buf)
        })) {
            Ok(n) => {
                if let Ok(n) = &n {
                    seen.read.store(*n, Ordering::SeqCst);
                }
                n
            }
            Err(unwind) => {
                if unwind.is::<ScopeUnwind>() {
                    seen.cancel_at_the_read.store(true, Ordering::SeqCst);
                }
                std::panic::resume_unwind(unwind)
            }
        }
    }
}

/// A runtime with one blocking thread, so that "the blocking thread survives" is checkable.
fn one_blocking_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_time()
        .build()
        .unwrap()
}

/// The default: `tokio::time::timeout(d, spawn_blocking(..))` — the handle by value, as most
/// code writes it, no extra call — stops the blocked read when the timeout drops the handle.
/// The closure observes the cancel at its read (the point unwinds with the scope's cancel), its
/// `Drop` runs, the read took nothing, and the pool's only blocking thread takes the next task.
#[test]
fn s7_timeout_drops_the_handle_and_stops_the_blocking_read() {
    let rt = one_blocking_thread();
    rt.block_on(async {
        let (r, mut w) = std::io::pipe().unwrap();
        let r = Arc::new(r);
        let (tid_tx, tid_rx) = mpsc::channel();
        let seen = Seen::new();
        let fd = r.as_raw_fd();
        let timed = tokio::time::timeout(
            Duration::from_millis(50),
            spawn_blocking(observed_read(r.clone(), tid_tx, seen.clone())),
        );
        // The task is blocked in its read before the timeout is awaited: it never returns by
        // itself (nobody writes), so only the drop can end it.
        wait_blocked_in_read(tid_rx.recv_timeout(HANG).expect("never started"), fd);
        let t0 = Instant::now();
        assert!(timed.await.is_err(), "the read returned: nobody wrote");
        assert!(
            common::wait_for(|| seen.dropped()),
            "the closure's Drop never ran: the read is still blocked"
        );
        eprintln!(
            "timeout(50 ms, spawn_blocking(..)): the read stopped {:?} after the await began",
            t0.elapsed()
        );
        assert!(
            seen.canceled_at_the_read(),
            "the read did not return by the scope's cancel"
        );
        w.write_all(&[9]).unwrap();
        let mut b = [0u8; 1];
        assert_eq!(
            io::read(r.as_fd(), &mut b).unwrap(),
            1,
            "the canceled read took the byte"
        );
        let next = spawn_blocking(observe_clean);
        assert_clean(&finish(next).await.expect("the next task failed"));
    });
}

/// The default in a `select!`: the losing branch's handle is dropped, and its blocked read is
/// stopped (observed at the read, inside the closure).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s7_the_losing_branch_of_a_select_stops_its_blocking_task() {
    let (r, _w) = std::io::pipe().unwrap();
    let r = Arc::new(r);
    let (tid_tx, tid_rx) = mpsc::channel();
    let seen = Seen::new();
    let task = spawn_blocking(observed_read(r.clone(), tid_tx, seen.clone()));
    let scope = task.scope().clone();
    wait_blocked_in_read(tid_rx.recv_timeout(HANG).unwrap(), r.as_raw_fd());
    let (won_tx, won_rx) = tokio::sync::oneshot::channel::<()>();
    won_tx.send(()).unwrap();
    let won = tokio::select! {
        _ = task => "task",
        _ = won_rx => "other",
    };
    assert_eq!(won, "other", "the read returned: nobody wrote");
    assert!(scope.is_canceled(), "the drop did not cancel the task");
    assert!(
        common::wait_for(|| seen.dropped()),
        "the losing task is still blocked"
    );
    assert!(seen.canceled_at_the_read());
}

/// A handle dropped before its task started: the closure never runs.
#[test]
fn dropping_a_handle_before_its_task_starts_never_runs_the_closure() {
    let rt = one_blocking_thread();
    rt.block_on(async {
        // The only blocking thread is kept busy, so the second task cannot start.
        let (r, _w) = std::io::pipe().unwrap();
        let (busy, _, _) = blocked_reader(Arc::new(r));
        let ran = Arc::new(AtomicBool::new(false));
        let ran2 = ran.clone();
        let queued = spawn_blocking(move || ran2.store(true, Ordering::SeqCst));
        let queued_scope = queued.scope().clone();
        drop(queued);
        assert!(queued_scope.is_canceled());
        busy.abort();
        assert!(finish(busy).await.unwrap_err().is_cancelled());
        // The pool's only thread has taken the dropped task (or tokio dropped it unstarted)
        // once it runs the next one.
        assert_eq!(finish(spawn_blocking(|| 5)).await.unwrap(), 5);
        assert!(
            !ran.load(Ordering::SeqCst),
            "a dropped task ran its closure"
        );
    });
}

/// A handle whose task has ended cancels nothing when dropped: awaited, or only finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_handle_whose_task_ended_cancels_nothing() {
    let task = spawn_blocking(|| 1);
    let scope = task.scope().clone();
    let mut task = task;
    assert_eq!(finish_ref(&mut task).await.unwrap(), 1);
    drop(task);
    assert!(!scope.is_canceled(), "an awaited handle's drop canceled");

    let task = spawn_blocking(|| 2);
    let scope = task.scope().clone();
    let t0 = Instant::now();
    while !task.is_finished() {
        assert!(t0.elapsed() < HANG, "the task never finished");
        tokio::task::yield_now().await;
    }
    drop(task);
    assert!(!scope.is_canceled(), "a finished handle's drop canceled");
}

/// Awaits `task` by reference (the handle stays the caller's), failing the test after [`HANG`].
async fn finish_ref<R>(
    task: &mut BlockingHandle<R>,
) -> Result<R, thread_cancel::tokio::BlockingError<R>> {
    tokio::time::timeout(HANG, task)
        .await
        .expect("the task did not finish: hang")
}

/// `timeout(d, &mut handle)`: the wait ends, the task does not (the handle is still the
/// caller's), and awaiting the handle again gets the value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_on_a_borrowed_handle_stops_the_wait_not_the_task() {
    let (r, mut w) = std::io::pipe().unwrap();
    let r = Arc::new(r);
    let (tid_tx, tid_rx) = mpsc::channel();
    let seen = Seen::new();
    let mut task = spawn_blocking(observed_read(r.clone(), tid_tx, seen.clone()));
    wait_blocked_in_read(tid_rx.recv_timeout(HANG).unwrap(), r.as_raw_fd());
    assert!(tokio::time::timeout(Duration::from_millis(10), &mut task)
        .await
        .is_err());
    assert!(!task.scope().is_canceled());
    w.write_all(&[1, 2]).unwrap();
    assert_eq!(finish_ref(&mut task).await.unwrap().unwrap(), 2);
    assert!(!seen.canceled_at_the_read());
}

/// `.detach()`: the handle goes, the task runs to its end — its read returns the bytes written
/// after the detach, and nothing canceled it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s7_detach_keeps_the_blocking_task_running_to_completion() {
    let (r, mut w) = std::io::pipe().unwrap();
    let r = Arc::new(r);
    let (tid_tx, tid_rx) = mpsc::channel();
    let seen = Seen::new();
    let task = spawn_blocking(observed_read(r.clone(), tid_tx, seen.clone()));
    let scope = task.scope().clone();
    wait_blocked_in_read(tid_rx.recv_timeout(HANG).unwrap(), r.as_raw_fd());
    task.detach();
    assert!(!scope.is_canceled(), "detach canceled the task");
    w.write_all(&[1, 2, 3]).unwrap();
    assert!(
        common::wait_for(|| seen.dropped()),
        "the detached task never ended"
    );
    assert_eq!(
        seen.read.load(Ordering::SeqCst),
        3,
        "the detached read did not complete"
    );
    assert!(!seen.canceled_at_the_read());
    assert!(!scope.is_canceled());
}

/// A runtime that shuts down with a crate task blocked cancels it instead of waiting for it:
/// `shutdown_timeout(10 s)` and a plain drop of the runtime both return soon; the task's scope
/// says why (`RuntimeShutdown`).
#[test]
fn s7_runtime_shutdown_cancels_blocked_tasks_instead_of_waiting() {
    for by_drop in [false, true] {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap();
        let (r, _w) = std::io::pipe().unwrap();
        let r = Arc::new(r);
        let _g = rt.enter();
        let (task, dropped, _) = blocked_reader(r.clone());
        let scope = task.scope().clone();
        drop(_g);
        let t0 = Instant::now();
        if by_drop {
            drop(rt);
        } else {
            // Longer than the bound below: a shutdown that waited for the task fails it.
            rt.shutdown_timeout(2 * HANG);
        }
        let took = t0.elapsed();
        eprintln!("shutdown (by drop: {by_drop}) with a blocked task returned in {took:?}");
        assert!(took < HANG, "shutdown waited: {took:?}");
        assert!(
            dropped.load(Ordering::SeqCst),
            "the task's Drop did not run"
        );
        assert!(scope.is_canceled());
        let e = scope.run(|| ()).unwrap_err();
        assert!(
            matches!(e.cause(), thread_cancel::Cause::Error(err)
                if err.is::<thread_cancel::tokio::RuntimeShutdown>()),
            "{e:?}"
        );
    }
}

/// Conversion with tokio-util's `CancellationToken`, both ways, on a real runtime: a scope's
/// cancel (and deadline) cancels its token; a token's cancel stops a blocking read running in
/// the linked scope, and the linked scope's cancel cancels the token.
#[test]
fn s7_cancellation_token_conversion_both_ways() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    // Scope -> token.
    let scope = CancelScope::new();
    let token = thread_cancel::tokio::token_for(&scope);
    assert!(!token.is_cancelled());
    scope.cancel();
    assert!(token.is_cancelled());
    let timed = CancelScope::with_timeout(Duration::from_millis(20));
    let token = thread_cancel::tokio::token_for(&timed);
    rt.block_on(async {
        tokio::time::timeout(HANG, token.cancelled())
            .await
            .expect("the deadline did not cancel the token")
    });
    // Token -> scope: a blocking read in the linked scope is stopped by the token's cancel.
    let token = tokio_util::sync::CancellationToken::new();
    let request = CancelScope::new();
    let linked = thread_cancel::tokio::linked_with_token_on(rt.handle(), &request, &token);
    let (r, _w) = std::io::pipe().unwrap();
    let (tx, rx) = mpsc::channel();
    let l = linked.clone();
    let reader = std::thread::spawn(move || {
        l.run(|| {
            tx.send(gettid()).unwrap();
            let mut b = [0u8; 1];
            io::read(r.as_fd(), &mut b)
        })
    });
    let tid = rx.recv_timeout(HANG).unwrap();
    common::wait_blocked(tid);
    token.cancel();
    let e = reader.join().unwrap().unwrap_err();
    assert!(e.acted() && e.value().is_none());
    assert!(
        !request.is_canceled(),
        "the parent scope was canceled by the token"
    );
    // The linked scope's cancel cancels the token.
    let token = tokio_util::sync::CancellationToken::new();
    let linked = thread_cancel::tokio::linked_with_token_on(rt.handle(), &request, &token);
    linked.cancel();
    assert!(token.is_cancelled());
    // And its parent's.
    let token = tokio_util::sync::CancellationToken::new();
    let _linked = thread_cancel::tokio::linked_with_token_on(rt.handle(), &request, &token);
    request.cancel();
    assert!(token.is_cancelled());
}

/// A token made from a scope with a deadline is canceled at that deadline even when every
/// handle of the scope was dropped before it (the token is often all the async code keeps); the
/// same for a child scope's token and its parent's cancel, and for its parent's deadline.
#[test]
fn s7_token_for_a_dropped_scope_is_canceled_by_its_deadline_and_its_parents_cancel() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let wait = |token: tokio_util::sync::CancellationToken, what: &str| {
        rt.block_on(async {
            tokio::time::timeout(HANG, token.cancelled())
                .await
                .unwrap_or_else(|_| panic!("{what} did not cancel the token"))
        })
    };
    // Its own deadline.
    let token =
        thread_cancel::tokio::token_for(&CancelScope::with_timeout(Duration::from_millis(20)));
    wait(token, "the deadline of the dropped scope");
    // A parent's cancel, the child's handle dropped.
    let parent = CancelScope::new();
    let token = thread_cancel::tokio::token_for(&parent.child());
    assert!(!token.is_cancelled());
    parent.cancel();
    wait(token, "the parent's cancel");
    // A parent's deadline, both handles dropped; through two dropped generations.
    let token = {
        let parent = CancelScope::with_timeout(Duration::from_millis(20));
        let child = parent.child();
        thread_cancel::tokio::token_for(&child.child())
    };
    wait(token, "the deadline of the dropped grandparent");
    // Nothing can cancel a dropped root without a deadline: its token is never canceled, and
    // the callback (holding the token) is dropped, not kept for ever.
    let token = thread_cancel::tokio::token_for(&CancelScope::new());
    let weak = Arc::new(());
    let held = weak.clone();
    let s = CancelScope::new();
    s.on_cancel(move || drop(held)).keep();
    drop(s);
    assert_eq!(
        Arc::strong_count(&weak),
        1,
        "the callback of a dropped root is kept"
    );
    assert!(!token.is_cancelled());
}
