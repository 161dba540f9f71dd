//! S2: stress for every own synchronisation primitive (issue 13), and the regression tests of
//! its findings 2 (R10 for a rendezvous `send`) and 3 (a withdrawn rendezvous message wakes the
//! senders waiting for space).
//!
//! Each stress test races cancellations against several waiters on each side and counts, over
//! all its races: `lost` (a message sent or a notification/permit given that nobody got),
//! `duplicated` (received twice, or received although its `send` was canceled: a caller that
//! sends again on cancel would deliver it twice), `stranded` (a waiter still blocked after
//! everything that should wake it happened; found with a generous timeout, never a hang). All
//! three must be 0. The counts are printed (`--nocapture` shows them).
//!
//! `THREAD_CANCEL_STRESS` sets the races per test (default 2,000); the full run:
//! `THREAD_CANCEL_STRESS=1000000 nice cargo test --release --test s2_stress -- --nocapture`
//! (`THREAD_CANCEL_STRESS_SECS` caps each test's time; the printed races are exact).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{RecvTimeoutError, SendError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thread_cancel::sync::{channel, sync_channel, Condvar, Mutex, Semaphore, Sender, SyncSender};
use thread_cancel::{spawn, testcancel, JoinHandle};

/// A wait longer than this for something that must happen is a hang (reported, not waited).
const HANG: Duration = Duration::from_secs(10);

fn stress_iters() -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

/// An optional time limit per stress test (`THREAD_CANCEL_STRESS_SECS`): a long run stops
/// there and reports the exact number of races it ran.
fn time_limit() -> Option<Duration> {
    std::env::var("THREAD_CANCEL_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs)
}

/// Whether a stress test started at `started` has run its races or its time.
fn enough(races: usize, started: Instant) -> bool {
    races >= stress_iters() || time_limit().is_some_and(|l| started.elapsed() >= l)
}

/// Busy-waits `d` (finer than `sleep`).
fn spin_for(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Runs `f` under `depth` frames that the unwind must walk: a cancellation's unwind takes longer
/// to reach the frames that undo a wait, which widens the window a race needs.
#[inline(never)]
fn deep<R>(depth: usize, f: &mut dyn FnMut() -> R) -> R {
    if depth == 0 {
        return f();
    }
    let r = deep(std::hint::black_box(depth - 1), f);
    std::hint::black_box(&r);
    r
}

// ---------------------------------------------------------------------------------------------
// Regression tests
// ---------------------------------------------------------------------------------------------

/// Finding 2: a rendezvous `send` reported canceled must not have been received (R10: the
/// decision taken-or-withdrawn is made once, under the channel's lock). The receiver takes the
/// message at varied moments after `cancel()`, including while the canceled sender unwinds.
#[test]
fn rendezvous_send_canceled_is_never_received() {
    let rounds = stress_iters().clamp(200, 2_000);
    let (mut canceled_and_received, mut completed, mut withdrawn) = (0, 0, 0);
    for i in 0..rounds {
        let (tx, rx) = sync_channel::<usize>(0);
        let started = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicBool::new(false));
        let (st, se) = (started.clone(), sent.clone());
        let h = spawn(move || {
            st.store(true, Ordering::SeqCst);
            deep(1_000, &mut || {
                if tx.send(i).is_ok() {
                    se.store(true, Ordering::SeqCst);
                }
            });
            testcancel();
        });
        while !started.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(1)); // let it push and wait
        h.cancel().unwrap();
        spin_for(Duration::from_micros(25 * (i % 16) as u64));
        let t = Instant::now();
        let got = loop {
            if let Ok(v) = rx.try_recv() {
                break Some(v);
            }
            if h.is_finished() {
                break rx.try_recv().ok();
            }
            assert!(t.elapsed() < HANG, "round {i}: the canceled sender hangs");
        };
        assert!(h.join().is_canceled());
        match (got, sent.load(Ordering::SeqCst)) {
            (Some(v), true) => {
                assert_eq!(v, i);
                completed += 1;
            }
            (Some(_), false) => canceled_and_received += 1,
            (None, false) => withdrawn += 1,
            (None, true) => panic!("round {i}: send returned Ok but nothing was received"),
        }
    }
    println!(
        "rendezvous_send_canceled_is_never_received: {rounds} rounds, {completed} completed, \
         {withdrawn} withdrawn, {canceled_and_received} canceled but received"
    );
    assert_eq!(
        canceled_and_received, 0,
        "a canceled rendezvous send had its message received"
    );
}

/// Finding 3: sender A has pushed and waits for a receiver, sender B waits for space; A is
/// canceled and its message withdrawn: B must be woken, push, and be received.
#[test]
fn canceled_rendezvous_sender_wakes_the_senders_behind_it() {
    for round in 0..20 {
        let (tx, rx) = sync_channel::<&'static str>(0);
        let tx_b = tx.clone();
        let a = spawn(move || tx.send("a"));
        std::thread::sleep(Duration::from_millis(20)); // A has pushed and waits for receipt
        let b = spawn(move || tx_b.send("b"));
        std::thread::sleep(Duration::from_millis(20)); // B waits for space
        a.cancel().unwrap();
        assert!(a.join().is_canceled(), "round {round}");
        assert_eq!(
            rx.recv_timeout(HANG),
            Ok("b"),
            "round {round}: B was stranded behind the withdrawn message"
        );
        let t = Instant::now();
        while !b.is_finished() {
            assert!(t.elapsed() < HANG, "round {round}: B never returned");
            std::thread::yield_now();
        }
        assert_eq!(b.join().unwrap(), Ok(()));
        assert_eq!(
            rx.recv_timeout(Duration::ZERO),
            Err(RecvTimeoutError::Disconnected)
        );
    }
}

/// Found while fixing finding 2: a rendezvous `send` blocked until its message is received
/// gets the message back in its error when the receiver goes away without taking it (as with
/// `std`), instead of `Ok` for a message nobody received.
#[test]
fn rendezvous_send_whose_receiver_goes_away_gets_its_message_back() {
    let (tx, rx) = sync_channel::<u32>(0);
    let h = spawn(move || tx.send(7));
    std::thread::sleep(Duration::from_millis(20)); // the message is pushed and waits
    drop(rx);
    assert_eq!(h.join().unwrap(), Err(SendError(7)));
}

// ---------------------------------------------------------------------------------------------
// Stress: the harness
// ---------------------------------------------------------------------------------------------

/// The figures of one stress test, over all its rounds.
#[derive(Debug, Default)]
struct Counts {
    /// `cancel()` calls, each against a thread doing one blocking operation.
    races: usize,
    /// Races whose operation did not complete: it had no effect.
    canceled: usize,
    /// Races whose operation completed (before the request, or consumed in the race): the
    /// request was acted on at the next point.
    completed: usize,
    lost: usize,
    duplicated: usize,
    stranded: usize,
    rounds: usize,
}

impl Counts {
    fn report(&self, name: &str, started: Instant) {
        println!(
            "s2 {name}: races {}, canceled {}, completed {}, lost {}, duplicated {}, \
             stranded {} ({} rounds, {:.1} s)",
            self.races,
            self.canceled,
            self.completed,
            self.lost,
            self.duplicated,
            self.stranded,
            self.rounds,
            started.elapsed().as_secs_f64()
        );
        assert_eq!(
            self.races,
            self.canceled + self.completed,
            "{name}: {self:?}"
        );
        assert_eq!(
            (self.lost, self.duplicated, self.stranded),
            (0, 0, 0),
            "{name}: {self:?}"
        );
    }
}

/// A small deterministic generator (xorshift), seeded per round: the races vary, and a
/// failing round can be replayed.
struct Rng(u64);

impl Rng {
    fn new(seed: usize) -> Self {
        Self((seed as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Shuffles `v` (Fisher–Yates).
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
    /// A pause of varied length, so cancels land before, during and after the waits.
    fn jitter(&mut self) {
        match self.below(8) {
            0 | 1 => {}
            2 | 3 => std::thread::yield_now(),
            4 | 5 => spin_for(Duration::from_micros(self.below(20) as u64)),
            6 => spin_for(Duration::from_micros(20 + self.below(100) as u64)),
            _ => std::thread::sleep(Duration::from_micros(50)),
        }
    }
}

/// Waits until `done()` holds; false if it still does not after [`HANG`].
fn wait_for(mut done: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    let mut polls = 0u32;
    while !done() {
        if t.elapsed() > HANG {
            return false;
        }
        polls += 1;
        if polls < 100 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
    true
}

/// One thread of a round: its handle and whether this round cancels it.
struct Worker {
    handle: JoinHandle<()>,
    target: bool,
}

/// A step of the other side (a notification, a release), run among the cancels.
type Step<'a> = Box<dyn FnOnce() + 'a>;

/// Cancels every target of `workers` in a shuffled order, with jitter, and runs the `steps` at
/// random moments among the cancels. Returns the number of cancels (a worker that had already
/// ended is not a race: it stops being a target).
fn race(rng: &mut Rng, workers: &mut [Worker], mut steps: Vec<Step<'_>>) -> usize {
    let mut targets: Vec<usize> = (0..workers.len()).filter(|&i| workers[i].target).collect();
    rng.shuffle(&mut targets);
    if rng.below(3) == 0 {
        // Let the workers start and block: the cancels then wake waits rather than entries.
        std::thread::sleep(Duration::from_micros(300));
    }
    let mut races = 0;
    for i in targets {
        if !steps.is_empty() && rng.below(2) == 0 {
            let k = rng.below(steps.len());
            steps.swap_remove(k)();
        }
        rng.jitter();
        if workers[i].handle.cancel().is_ok() {
            races += 1;
        } else {
            workers[i].target = false; // it had already ended: no race
        }
    }
    for f in steps {
        rng.jitter();
        f();
    }
    races
}

/// Joins every worker; a worker that never finished is counted stranded, then canceled so the
/// test goes on (a worker that even a cancel cannot end fails the test: it would hang).
fn join_all(workers: Vec<Worker>, counts: &mut Counts) {
    for w in workers {
        if !wait_for(|| w.handle.is_finished()) {
            counts.stranded += 1;
            let _ = w.handle.cancel();
            assert!(
                w.handle.wait_timeout(HANG),
                "a stranded waiter does not even end on cancel"
            );
        }
        let _ = w.handle.join();
    }
}

// ---------------------------------------------------------------------------------------------
// Stress: channels
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Kind {
    Rendezvous,
    Bounded(usize),
    Unbounded,
}

#[derive(Clone)]
enum Tx {
    Sync(SyncSender<usize>),
    Async(Sender<usize>),
}

impl Tx {
    fn send(&self, v: usize) -> bool {
        match self {
            Tx::Sync(t) => t.send(v).is_ok(),
            Tx::Async(t) => t.send(v).is_ok(),
        }
    }
}

/// A receiver's record: not returned, or returned without a message (disconnected).
const NOTHING: usize = usize::MAX;
const DISCONNECTED: usize = usize::MAX - 1;

/// Rounds of 2 to 4 senders (one message each) and 2 to 4 receivers (one `recv` or
/// `recv_timeout` each) on one channel, about two thirds of them canceled at varied moments.
/// Then the main thread receives until every sender has returned (a sender still blocked while
/// the main thread receives is stranded), every receiver must return (with a message, or
/// disconnected once the senders are gone), and what is left in the channel is drained. Each
/// message must be received once if its `send` returned `Ok`, never if its `send` was canceled.
fn channel_stress(kind: Kind, name: &str) {
    let started = Instant::now();
    let mut counts = Counts::default();
    while !enough(counts.races, started) {
        let mut rng = Rng::new(counts.rounds);
        counts.rounds += 1;
        let (tx, rx) = match kind {
            Kind::Rendezvous => {
                let (t, r) = sync_channel(0);
                (Tx::Sync(t), r)
            }
            Kind::Bounded(n) => {
                let (t, r) = sync_channel(n);
                (Tx::Sync(t), r)
            }
            Kind::Unbounded => {
                let (t, r) = channel();
                (Tx::Async(t), r)
            }
        };
        let rx = Arc::new(rx);
        let (n_send, n_recv) = (2 + rng.below(3), 2 + rng.below(3));
        // Per sender: 0 = not returned, 1 = Ok, 2 = Err. Per receiver: the message, NOTHING or
        // DISCONNECTED.
        let sent: Arc<Vec<AtomicUsize>> =
            Arc::new((0..n_send).map(|_| AtomicUsize::new(0)).collect());
        let got: Arc<Vec<AtomicUsize>> =
            Arc::new((0..n_recv).map(|_| AtomicUsize::new(NOTHING)).collect());
        let mut order: Vec<(bool, usize)> = (0..n_send)
            .map(|i| (true, i))
            .chain((0..n_recv).map(|j| (false, j)))
            .collect();
        rng.shuffle(&mut order);
        let mut senders = Vec::new();
        let mut receivers = Vec::new();
        for (is_sender, i) in order {
            let target = rng.below(3) != 0;
            if is_sender {
                let (tx, sent) = (tx.clone(), sent.clone());
                let handle = spawn(move || {
                    let ok = tx.send(i);
                    sent[i].store(if ok { 1 } else { 2 }, Ordering::SeqCst);
                    testcancel();
                });
                senders.push((i, Worker { handle, target }));
            } else {
                let (rx, got) = (rx.clone(), got.clone());
                let timed = rng.below(2) == 0;
                let handle = spawn(move || {
                    let r = if timed {
                        rx.recv_timeout(Duration::from_secs(3600)).ok()
                    } else {
                        rx.recv().ok()
                    };
                    got[i].store(r.unwrap_or(DISCONNECTED), Ordering::SeqCst);
                    testcancel();
                });
                receivers.push((i, Worker { handle, target }));
            }
        }
        drop(tx); // the senders' clones keep the channel connected until they return
        senders.sort_by_key(|(i, _)| *i);
        receivers.sort_by_key(|(i, _)| *i);
        let mut all: Vec<Worker> = senders
            .into_iter()
            .chain(receivers)
            .map(|(_, w)| w)
            .collect();
        counts.races += race(&mut rng, &mut all, Vec::new());
        // Rescue: receive until every sender has returned.
        let mut received = vec![0usize; n_send];
        let t = Instant::now();
        while !all[..n_send].iter().all(|w| w.handle.is_finished()) && t.elapsed() < HANG {
            if let Ok(v) = rx.recv_timeout(Duration::from_millis(1)) {
                received[v] += 1;
            }
        }
        let targets: Vec<bool> = all.iter().map(|w| w.target).collect();
        join_all(all, &mut counts);
        while let Ok(v) = rx.try_recv() {
            received[v] += 1;
        }
        for g in got.iter() {
            let v = g.load(Ordering::SeqCst);
            if v != NOTHING && v != DISCONNECTED {
                received[v] += 1;
            }
        }
        for (i, &n) in received.iter().enumerate() {
            let ok = sent[i].load(Ordering::SeqCst) == 1;
            match (ok, n) {
                (true, 0) => counts.lost += 1,
                (true, n) => counts.duplicated += n - 1,
                (false, n) => counts.duplicated += n, // received although not sent
            }
        }
        for (k, _) in targets.iter().enumerate().filter(|(_, &t)| t) {
            let done = if k < n_send {
                sent[k].load(Ordering::SeqCst) != 0
            } else {
                got[k - n_send].load(Ordering::SeqCst) != NOTHING
            };
            if done {
                counts.completed += 1;
            } else {
                counts.canceled += 1;
            }
        }
    }
    counts.report(name, started);
}

#[test]
fn s2_stress_rendezvous_channel() {
    channel_stress(Kind::Rendezvous, "sync_channel(0)");
}

#[test]
fn s2_stress_bounded_channel() {
    channel_stress(Kind::Bounded(1), "sync_channel(1)");
}

#[test]
fn s2_stress_bounded_channel_of_two() {
    channel_stress(Kind::Bounded(2), "sync_channel(2)");
}

#[test]
fn s2_stress_unbounded_channel() {
    channel_stress(Kind::Unbounded, "channel()");
}

// ---------------------------------------------------------------------------------------------
// Stress: condition variable and semaphore
// ---------------------------------------------------------------------------------------------

/// A waiter's record: not returned, took a token (a permit), or released by the end of round.
const WAITING: usize = 0;
const TOOK: usize = 1;
const RELEASED: usize = 2;

/// Describes a stranded round, then tells a slow machine from a lost wake-up: waits once
/// more, much longer, for the tokens to be taken.
fn diagnose(
    name: &str,
    round: usize,
    workers: &[Worker],
    state: &[AtomicUsize],
    mut taken: impl FnMut() -> bool,
) {
    let describe = |when: &str| {
        let ws: Vec<String> = workers
            .iter()
            .zip(state)
            .map(|(w, s)| {
                format!(
                    "target={} finished={} state={}",
                    w.target,
                    w.handle.is_finished(),
                    s.load(Ordering::SeqCst)
                )
            })
            .collect();
        eprintln!("{name}: round {round} stranded ({when}): {ws:?}");
    };
    describe("after 10 s");
    let t = Instant::now();
    while !taken() && t.elapsed() < 6 * HANG {
        std::thread::sleep(Duration::from_millis(10));
    }
    describe(if taken() {
        "then taken: slow, not lost"
    } else {
        "after 70 s: lost"
    });
}

/// Counts the targets of a round: completed if their wait returned, canceled otherwise.
fn count_targets(targets: &[bool], state: &[AtomicUsize], counts: &mut Counts) {
    for (k, _) in targets.iter().enumerate().filter(|(_, &t)| t) {
        if state[k].load(Ordering::SeqCst) == WAITING {
            counts.canceled += 1;
        } else {
            counts.completed += 1;
        }
    }
}

/// Counts what a round gave (`given` tokens or permits) against what was taken and is left.
fn count_tokens(given: usize, state: &[AtomicUsize], left: usize, counts: &mut Counts) {
    let took = state
        .iter()
        .filter(|s| s.load(Ordering::SeqCst) == TOOK)
        .count();
    counts.lost += given.saturating_sub(took + left);
    counts.duplicated += (took + left).saturating_sub(given);
}

type Tokens = (Mutex<(usize, bool)>, Condvar);

/// Rounds of 2 to 5 waiters, each waiting (`wait` or `wait_timeout`) for one token of a pool
/// guarded by a `Mutex`, and 1 to (waiters) tokens each added with one `notify_one` (or
/// `notify_all`), at random moments among the cancels of about two thirds of the waiters. A
/// notification consumed by a canceled waiter must not be lost: a token left in the pool while
/// a waiter still waits is stranded. Then a last `notify_all` ends the round; every waiter
/// must return.
fn condvar_stress(notify_all: bool, name: &str) {
    let started = Instant::now();
    let mut counts = Counts::default();
    while !enough(counts.races, started) {
        let mut rng = Rng::new(counts.rounds);
        counts.rounds += 1;
        let shared: Arc<Tokens> = Arc::new((Mutex::new((0, false)), Condvar::new()));
        let n_wait = 2 + rng.below(4);
        let n_tokens = 1 + rng.below(n_wait);
        let state: Arc<Vec<AtomicUsize>> =
            Arc::new((0..n_wait).map(|_| AtomicUsize::new(WAITING)).collect());
        let mut workers: Vec<Worker> = (0..n_wait)
            .map(|i| {
                let (sh, state) = (shared.clone(), state.clone());
                let timed = rng.below(2) == 0;
                let handle = spawn(move || {
                    let (m, cv) = &*sh;
                    let mut g = m.lock().unwrap();
                    let took = loop {
                        if g.0 > 0 {
                            g.0 -= 1;
                            break TOOK;
                        }
                        if g.1 {
                            break RELEASED;
                        }
                        g = if timed {
                            cv.wait_timeout(g, Duration::from_secs(3600)).unwrap().0
                        } else {
                            cv.wait(g).unwrap()
                        };
                    };
                    state[i].store(took, Ordering::SeqCst);
                    drop(g);
                    testcancel();
                });
                Worker {
                    handle,
                    target: rng.below(3) != 0,
                }
            })
            .collect();
        let steps: Vec<Step<'_>> = (0..n_tokens)
            .map(|_| {
                let sh = &*shared;
                Box::new(move || {
                    sh.0.lock().unwrap().0 += 1;
                    if notify_all {
                        sh.1.notify_all();
                    } else {
                        sh.1.notify_one();
                    }
                }) as Step<'_>
            })
            .collect();
        counts.races += race(&mut rng, &mut workers, steps);
        // Every token must find a waiter while one waits.
        let tokens_found = wait_for(|| {
            shared.0.lock().unwrap().0 == 0 || workers.iter().all(|w| w.handle.is_finished())
        });
        if !tokens_found {
            let unfinished = workers.iter().filter(|w| !w.handle.is_finished()).count();
            counts.stranded += unfinished.min(shared.0.lock().unwrap().0);
            diagnose(name, counts.rounds, &workers, &state, || {
                shared.0.lock().unwrap().0 == 0
            });
        }
        shared.0.lock().unwrap().1 = true;
        shared.1.notify_all();
        let targets: Vec<bool> = workers.iter().map(|w| w.target).collect();
        join_all(workers, &mut counts);
        let left = shared.0.lock().unwrap().0;
        count_tokens(n_tokens, &state, left, &mut counts);
        count_targets(&targets, &state, &mut counts);
    }
    counts.report(name, started);
}

#[test]
fn s2_stress_condvar_notify_one() {
    condvar_stress(false, "Condvar::notify_one");
}

#[test]
fn s2_stress_condvar_notify_all() {
    condvar_stress(true, "Condvar::notify_all");
}

/// Rounds of 2 to 5 threads in `acquire` (or `acquire_timeout`) on a semaphore at 0, and 1 to
/// (threads) `release`s at random moments among the cancels of about two thirds of them. A
/// permit taken by a canceled acquire must be returned by it (else lost); a permit left free
/// while an acquirer waits is stranded. Then one permit per remaining acquirer ends the round.
#[test]
fn s2_stress_semaphore() {
    let started = Instant::now();
    let mut counts = Counts::default();
    while !enough(counts.races, started) {
        let mut rng = Rng::new(counts.rounds);
        counts.rounds += 1;
        let sem = Arc::new(Semaphore::new(0));
        let n_acq = 2 + rng.below(4);
        let n_rel = 1 + rng.below(n_acq);
        let state: Arc<Vec<AtomicUsize>> =
            Arc::new((0..n_acq).map(|_| AtomicUsize::new(WAITING)).collect());
        let mut workers: Vec<Worker> = (0..n_acq)
            .map(|i| {
                let (sem, state) = (sem.clone(), state.clone());
                let timed = rng.below(2) == 0;
                let handle = spawn(move || {
                    let took = if timed {
                        sem.acquire_timeout(Duration::from_secs(3600))
                    } else {
                        sem.acquire();
                        true
                    };
                    // A timed-out acquire (impossible in an hour) would count as lost.
                    state[i].store(if took { TOOK } else { RELEASED }, Ordering::SeqCst);
                    testcancel();
                });
                Worker {
                    handle,
                    target: rng.below(3) != 0,
                }
            })
            .collect();
        let steps: Vec<Step<'_>> = (0..n_rel)
            .map(|_| {
                let sem = &*sem;
                Box::new(move || sem.release()) as Step<'_>
            })
            .collect();
        counts.races += race(&mut rng, &mut workers, steps);
        let permits_found =
            wait_for(|| sem.available() == 0 || workers.iter().all(|w| w.handle.is_finished()));
        if !permits_found {
            let unfinished = workers.iter().filter(|w| !w.handle.is_finished()).count();
            counts.stranded += unfinished.min(sem.available());
            diagnose("Semaphore", counts.rounds, &workers, &state, || {
                sem.available() == 0
            });
        }
        // One permit per acquirer still waiting ends the round.
        let unfinished = workers.iter().filter(|w| !w.handle.is_finished()).count();
        for _ in 0..unfinished {
            sem.release();
        }
        let targets: Vec<bool> = workers.iter().map(|w| w.target).collect();
        join_all(workers, &mut counts);
        count_tokens(n_rel + unfinished, &state, sem.available(), &mut counts);
        count_targets(&targets, &state, &mut counts);
    }
    counts.report("Semaphore", started);
}
