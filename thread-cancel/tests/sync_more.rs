//! `sync::RwLock` and `sync::Barrier` (issue 16 item 4): their waits are cancellation points
//! with the "completed or no effect" rule (R10 applied to locks and barriers).
//!
//! - A canceled `read`/`write` never holds the lock afterwards, and a writer that withdraws
//!   wakes the readers it was holding back; one that got the lock returns its guard.
//! - A canceled barrier wait is withdrawn (its arrival no longer counts, the others wait for a
//!   replacement); a wait released by the barrier is never canceled.
//! - Misuse behaves as `std` (a `Barrier` of 0 or 1; a read reentered behind a waiting writer
//!   deadlocks as `std` says it may — and here a cancel ends it).
//!
//! The stress tests race cancels against several waiters on each side and count, over all
//! races: `stranded` (a waiter that should have been woken and was not: a lost wake-up, found
//! with a generous timeout, never a hang), `violations` (two writers, or a writer and a reader,
//! inside at once), `leaked` (the lock still held once every thread ended: held by a canceled
//! waiter), for the barrier `miscounted` (a trip released a number of threads other than `n`,
//! or a withdrawn arrival counted). All must be 0; the counts are printed (`--nocapture`).
//! `THREAD_CANCEL_STRESS` sets the races per stress test (default 2,000); the full run:
//! `THREAD_CANCEL_STRESS=100000 nice cargo test --release --test sync_more stress -- --nocapture`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thread_cancel::sync::{Barrier, RwLock};
use thread_cancel::{spawn, testcancel, JoinHandle};

/// A wait longer than this for something that must happen is a hang (reported, not waited).
const HANG: Duration = Duration::from_secs(10);

fn stress_iters() -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
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

/// Lets a spawned thread reach its blocking wait. Only ever makes a test weaker if the
/// machine is slow (a cancel then lands at entry), never makes it fail.
fn settle() {
    std::thread::sleep(Duration::from_millis(20));
}

/// The threads waiting at `b` now, from its `Debug` (`Barrier { n: 3, waiting: 1 }`).
fn waiting(b: &Barrier) -> usize {
    let s = format!("{b:?}");
    let tail = s.split("waiting: ").nth(1).expect("Debug shows `waiting`");
    tail.trim_end_matches(" }").parse().expect("a count")
}

/// The value of `lock` once it can be read; a lock that no reader gets within [`HANG`] fails
/// the test (a blocking `read` would hang it instead).
fn read_when_free<T: Copy>(lock: &RwLock<T>) -> T {
    let mut value = None;
    assert!(
        wait_for(|| {
            value = lock.try_read().ok().map(|g| *g);
            value.is_some()
        }),
        "the lock never became readable: held, or readers held back by a waiting writer"
    );
    value.expect("read")
}

fn spin_for(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

// ---------------------------------------------------------------------------------------------
// RwLock
// ---------------------------------------------------------------------------------------------

/// A writer canceled while it waits returns no guard and holds nothing afterwards: once the
/// reader that blocked it leaves, the lock is free, and the writer's update never happened.
#[test]
fn rwlock_canceled_writer_never_holds_the_lock() {
    let lock = Arc::new(RwLock::new(0u32));
    let r = lock.read().unwrap();
    let l = lock.clone();
    let got = Arc::new(AtomicBool::new(false));
    let g2 = got.clone();
    let w = spawn(move || {
        let mut g = l.write().unwrap();
        g2.store(true, Ordering::SeqCst);
        *g += 1;
    });
    settle();
    w.cancel().unwrap();
    assert!(w.join().is_canceled());
    assert!(
        !got.load(Ordering::SeqCst),
        "a canceled write returned a guard"
    );
    drop(r);
    let g = lock.try_write().expect("the lock is free: nobody holds it");
    assert_eq!(*g, 0, "the canceled writer's update happened");
}

/// Readers queue behind a waiting writer (writers are preferred); canceling that writer must
/// wake them at once, while the first reader still holds the lock: nothing else would wake
/// them (the first reader's release wakes writers only when some wait).
#[test]
fn rwlock_canceled_writer_unblocks_readers() {
    for round in 0..10 {
        let lock = Arc::new(RwLock::new(7u32));
        let first = lock.read().unwrap();
        let l = lock.clone();
        let writer = spawn(move || {
            let _g = l.write().unwrap();
        });
        // The writer waits: from now on new readers wait too.
        assert!(wait_for(|| lock.try_read().is_err()), "round {round}");
        let readers: Vec<JoinHandle<u32>> = (0..3)
            .map(|_| {
                let l = lock.clone();
                spawn(move || *l.read().unwrap())
            })
            .collect();
        settle();
        writer.cancel().unwrap();
        assert!(writer.join().is_canceled(), "round {round}");
        for (i, r) in readers.into_iter().enumerate() {
            assert!(
                wait_for(|| r.is_finished()),
                "round {round}: reader {i} stranded behind the withdrawn writer"
            );
            assert_eq!(r.join().unwrap(), 7);
        }
        drop(first);
        assert!(lock.try_write().is_ok(), "round {round}: lock left held");
    }
}

/// Several writers wait; canceling one of them leaves the others waiting (the readers stay
/// behind them), and each of them gets the lock in turn once the reader leaves.
#[test]
fn rwlock_canceled_writer_leaves_the_other_writers_their_turn() {
    let lock = Arc::new(RwLock::new(0u32));
    let first = lock.read().unwrap();
    let spawn_writer = |l: Arc<RwLock<u32>>| spawn(move || *l.write().unwrap() += 1);
    let w1 = spawn_writer(lock.clone());
    let w2 = spawn_writer(lock.clone());
    let w3 = spawn_writer(lock.clone());
    settle();
    w2.cancel().unwrap();
    assert!(w2.join().is_canceled());
    assert!(
        lock.try_read().is_err(),
        "readers must still wait behind the writers that remain"
    );
    drop(first);
    for w in [w1, w3] {
        assert!(
            wait_for(|| w.is_finished()),
            "a waiting writer was stranded"
        );
        w.join().unwrap();
    }
    assert_eq!(read_when_free(&lock), 2);
}

/// A reader canceled while a writer holds the lock holds nothing afterwards: once the writer
/// leaves, a writer can take the lock again (no read count was left behind).
#[test]
fn rwlock_canceled_reader_holds_nothing() {
    let lock = Arc::new(RwLock::new(()));
    let w = lock.write().unwrap();
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let l = lock.clone();
            spawn(move || {
                let _g = l.read().unwrap();
            })
        })
        .collect();
    settle();
    for r in &readers {
        r.cancel().unwrap();
    }
    for r in readers {
        assert!(r.join().is_canceled());
    }
    drop(w);
    assert!(
        lock.try_write().is_ok(),
        "a canceled reader left a read lock"
    );
}

/// A request that comes to a thread holding a guard does not take the lock from it: the
/// guard is dropped by the unwind at the next point (released, not poisoned), and a thread
/// whose `write` completed with a request pending keeps its guard until then.
#[test]
fn rwlock_write_that_completed_keeps_its_guard_until_the_next_point() {
    let lock = Arc::new(RwLock::new(0u32));
    let r = lock.read().unwrap();
    let l = lock.clone();
    let h = spawn(move || {
        let off = thread_cancel::disable(); // the request waits while the write completes
        let mut g = l.write().unwrap();
        *g += 1;
        drop(off);
        testcancel(); // the request is acted on here, the guard still held
        unreachable!("a point with a request pending acts");
    });
    settle();
    h.cancel().unwrap();
    drop(r); // now the disabled writer gets the lock
    assert!(h.join().is_canceled());
    assert_eq!(read_when_free(&lock), 1, "the completed write happened");
    assert!(!lock.is_poisoned(), "a cancellation poisoned the lock");
}

/// As `std` warns, a thread holding a read guard that calls `read` again while a writer
/// waits deadlocks (the writer waits for the first guard, the second read for the writer).
/// Here the second `read` is a cancellation point: a cancel ends the deadlock, the unwind
/// drops the first guard, and the writer gets the lock.
#[test]
fn rwlock_reentrant_read_behind_a_waiting_writer_is_ended_by_cancel() {
    let lock = Arc::new(RwLock::new(0u32));
    let holding = Arc::new(AtomicBool::new(false));
    let (l, hd) = (lock.clone(), holding.clone());
    let reader = spawn(move || {
        let _first = l.read().unwrap();
        hd.store(true, Ordering::SeqCst);
        while l.try_read().is_ok() {
            std::thread::yield_now(); // until the writer waits
        }
        let _second = l.read().unwrap(); // deadlock, as with std
        unreachable!("the second read cannot succeed while the writer waits");
    });
    assert!(wait_for(|| holding.load(Ordering::SeqCst)));
    let l = lock.clone();
    let writer = spawn(move || *l.write().unwrap() = 1);
    settle();
    assert!(!writer.is_finished() && !reader.is_finished());
    reader.cancel().unwrap();
    assert!(reader.join().is_canceled());
    assert!(
        wait_for(|| writer.is_finished()),
        "the writer never got the lock"
    );
    writer.join().unwrap();
    assert_eq!(read_when_free(&lock), 1);
}

/// Asking for the write lock while holding a read guard on the same thread deadlocks (as with
/// `std`); a cancel ends it, and the lock is free afterwards.
#[test]
fn rwlock_write_while_holding_read_is_ended_by_cancel() {
    let lock = Arc::new(RwLock::new(()));
    let l = lock.clone();
    let h = spawn(move || {
        let _r = l.read().unwrap();
        let _w = l.write().unwrap(); // waits for its own read guard
        unreachable!("write cannot succeed while this thread reads");
    });
    settle();
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(lock.try_write().is_ok());
}

/// Poisoning follows the crate's `Mutex`: a panic while writing poisons, a cancellation while
/// writing does not, a panic while reading does not (as with `std`).
#[test]
fn rwlock_poisoned_by_a_panic_in_a_writer_not_by_a_cancellation() {
    let lock = Arc::new(RwLock::new(0u32));
    let l = lock.clone();
    let holding = Arc::new(AtomicBool::new(false));
    let hd = holding.clone();
    let h = spawn(move || {
        let mut g = l.write().unwrap();
        *g = 1;
        hd.store(true, Ordering::SeqCst);
        loop {
            testcancel(); // canceled while holding the write guard
        }
    });
    assert!(wait_for(|| holding.load(Ordering::SeqCst)));
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(!lock.is_poisoned(), "a cancellation poisoned the lock");

    let l = lock.clone();
    let h = spawn(move || {
        let _g = l.read().unwrap();
        panic!("panic while reading (expected by the test)");
    });
    assert!(h.join().is_panicked());
    assert!(!lock.is_poisoned(), "a read guard poisoned the lock");

    let l = lock.clone();
    let h = spawn(move || {
        let _g = l.write().unwrap();
        panic!("panic while writing (expected by the test)");
    });
    assert!(h.join().is_panicked());
    assert!(lock.is_poisoned());
    let e = lock.read().unwrap_err();
    assert_eq!(
        **e.get_ref(),
        1,
        "the data is still reachable through the error"
    );
    drop(e);
    lock.clear_poison();
    assert!(lock.write().is_ok());
}

/// The std-shaped surface: `try_*` never block and say why, readers share, `get_mut`,
/// `into_inner`, `Default`, `From`, `Debug` (data when readable), unsized data.
#[test]
fn rwlock_behaves_as_std_for_the_basics() {
    let lock = RwLock::from(vec![1, 2]);
    {
        let a = lock.read().unwrap();
        let b = lock.try_read().unwrap();
        assert_eq!(a.len() + b.len(), 4);
        assert!(matches!(
            lock.try_write(),
            Err(std::sync::TryLockError::WouldBlock)
        ));
    }
    {
        let mut w = lock.write().unwrap();
        w.push(3);
        assert!(matches!(
            lock.try_read(),
            Err(std::sync::TryLockError::WouldBlock)
        ));
        assert!(format!("{lock:?}").contains("<locked>"));
    }
    assert_eq!(
        format!("{lock:?}"),
        "RwLock { data: [1, 2, 3], poisoned: false, .. }"
    );
    let mut lock = lock;
    lock.get_mut().unwrap().clear();
    assert!(lock.into_inner().unwrap().is_empty());
    let d: RwLock<String> = RwLock::default();
    assert!(d.read().unwrap().is_empty());
    let unsized_lock: &RwLock<[u8]> = &RwLock::new([1u8, 2, 3]);
    assert_eq!(unsized_lock.read().unwrap().len(), 3);
    unsized_lock.write().unwrap()[0] = 9;
    assert_eq!(unsized_lock.read().unwrap()[0], 9);
}

/// `read` and `write` act at entry when a request is pending, even on a free lock (as every
/// point of the crate), and hold nothing then.
#[test]
fn rwlock_read_and_write_act_at_entry() {
    let lock = Arc::new(RwLock::new(()));
    for write in [false, true] {
        let l = lock.clone();
        let h = spawn(move || {
            thread_cancel::current().cancel().unwrap();
            if write {
                drop(l.write());
            } else {
                drop(l.read());
            }
            unreachable!("the lock call acts at entry");
        });
        assert!(h.join().is_canceled());
        assert!(lock.try_write().is_ok());
    }
}

// ---------------------------------------------------------------------------------------------
// Barrier
// ---------------------------------------------------------------------------------------------

/// Barrier of 3: A and B wait, B is canceled; C arrives. Two live arrivals must not trip the
/// barrier (B's withdrawn arrival does not count); the third live one does, with one leader.
#[test]
fn barrier_canceled_waiter_does_not_count() {
    let b = Arc::new(Barrier::new(3));
    let waiter = |b: &Arc<Barrier>| {
        let b = b.clone();
        spawn(move || b.wait().is_leader())
    };
    let a = waiter(&b);
    assert!(wait_for(|| waiting(&b) == 1));
    let quitter = waiter(&b);
    assert!(wait_for(|| waiting(&b) == 2));
    quitter.cancel().unwrap();
    assert!(quitter.join().is_canceled());
    assert_eq!(waiting(&b), 1, "the canceled arrival still counts");
    let c = waiter(&b);
    // C has arrived (2 waiting), or, were the withdrawn arrival still counted, C tripped it.
    assert!(wait_for(|| waiting(&b) == 2 || c.is_finished()));
    assert!(
        !a.is_finished() && !c.is_finished(),
        "two live arrivals tripped a barrier of three"
    );
    let last = waiter(&b);
    for h in [&a, &c, &last] {
        assert!(
            wait_for(|| h.is_finished()),
            "the third live arrival did not trip it"
        );
    }
    let leaders = [last.join().unwrap(), a.join().unwrap(), c.join().unwrap()];
    assert_eq!(leaders.iter().filter(|&&l| l).count(), 1);
}

/// A waiter released by the barrier returns normally even when the cancel comes at the same
/// moment as the release: it is never both released and canceled. Its request is then acted
/// on at its next point. Over many rounds, the cancel lands before, at and after the trip.
#[test]
fn barrier_completed_wait_is_never_canceled() {
    let rounds = stress_iters().clamp(200, 2_000);
    let (mut released, mut withdrawn) = (0, 0);
    for round in 0..rounds {
        let b = Arc::new(Barrier::new(2));
        let returned = Arc::new(AtomicBool::new(false));
        let (b2, r2) = (b.clone(), returned.clone());
        let t = spawn(move || {
            b2.wait();
            r2.store(true, Ordering::SeqCst);
            loop {
                testcancel(); // until the request comes, if it comes after the release
                std::thread::yield_now();
            }
        });
        assert!(wait_for(|| waiting(&b) == 1), "round {round}");
        // The cancel and the partner's arrival start together; the cancel comes from 20 µs
        // before to 43 µs after the arrival (more or less: the machine is shared).
        let go = Arc::new(AtomicBool::new(false));
        let start = |go: &Arc<AtomicBool>, delay: u64| {
            let go = go.clone();
            move || {
                while !go.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                spin_for(Duration::from_micros(delay));
            }
        };
        let c = t.canceler();
        let before_cancel = start(&go, (round % 64) as u64);
        let canceler = std::thread::spawn(move || {
            before_cancel();
            let _ = c.cancel();
        });
        // The partner: released by T's arrival, or, if T withdrew first, waits for another.
        let b3 = b.clone();
        let before_arrival = start(&go, 20);
        let partner = std::thread::spawn(move || {
            before_arrival();
            b3.wait().is_leader()
        });
        go.store(true, Ordering::SeqCst);
        canceler.join().unwrap();
        assert!(t.join().is_canceled(), "round {round}");
        if returned.load(Ordering::SeqCst) {
            released += 1;
            assert!(
                partner.join().unwrap(),
                "round {round}: T returned, so the partner tripped the barrier as its leader"
            );
        } else {
            withdrawn += 1;
            assert!(
                !partner.is_finished(),
                "round {round}: the barrier tripped with T, yet T's wait did not return"
            );
            // T's arrival was withdrawn: the partner must still wait, for this replacement
            // (were T's arrival still counted, the partner would have tripped the barrier
            // alone and the replacement would wait forever).
            let b4 = b.clone();
            let replacement = std::thread::spawn(move || b4.wait().is_leader());
            assert!(
                wait_for(|| replacement.is_finished()),
                "round {round}: the withdrawn arrival still counted"
            );
            let leaders = [replacement.join().unwrap(), partner.join().unwrap()];
            assert!(leaders[0] != leaders[1], "round {round}: one leader");
        }
    }
    println!(
        "barrier_completed_wait_is_never_canceled: {rounds} rounds, {released} released, \
         {withdrawn} withdrawn"
    );
}

/// `Barrier::new(0)` and `new(1)` never block: every wait is the leader, as with `std`.
#[test]
fn barrier_of_zero_or_one_never_blocks_and_always_leads() {
    for n in [0, 1] {
        let b = Barrier::new(n);
        for _ in 0..3 {
            assert!(b.wait().is_leader(), "Barrier::new({n})");
        }
        let std_b = std::sync::Barrier::new(n);
        assert!(std_b.wait().is_leader(), "std agrees for {n}");
    }
}

/// A barrier is reusable: several generations in a row, one leader each, and a waiter
/// canceled in one generation does not disturb the next.
#[test]
fn barrier_reuse_across_generations_after_a_withdrawal() {
    let n = 3;
    let b = Arc::new(Barrier::new(n));
    for generation in 0..5 {
        let quitter = {
            let b = b.clone();
            spawn(move || {
                b.wait();
            })
        };
        assert!(wait_for(|| waiting(&b) == 1), "generation {generation}");
        quitter.cancel().unwrap();
        assert!(quitter.join().is_canceled());
        let hs: Vec<_> = (0..n)
            .map(|_| {
                let b = b.clone();
                spawn(move || b.wait().is_leader())
            })
            .collect();
        let leaders = hs.into_iter().fold(0, |acc, h| {
            assert!(
                wait_for(|| h.is_finished()),
                "generation {generation}: stranded"
            );
            acc + usize::from(h.join().unwrap())
        });
        assert_eq!(leaders, 1, "generation {generation}");
        assert_eq!(waiting(&b), 0);
    }
}

/// `wait` acts at entry when a request is pending: the thread never arrives.
#[test]
fn barrier_wait_acts_at_entry_without_arriving() {
    let b = Arc::new(Barrier::new(2));
    let b2 = b.clone();
    let h = spawn(move || {
        thread_cancel::current().cancel().unwrap();
        b2.wait();
        unreachable!("wait acts at entry");
    });
    assert!(h.join().is_canceled());
    assert_eq!(waiting(&b), 0);
}

// ---------------------------------------------------------------------------------------------
// Stress
// ---------------------------------------------------------------------------------------------

/// A small deterministic generator (xorshift), seeded per round.
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

#[derive(Debug, Default)]
struct Counts {
    races: usize,
    /// Races whose wait had no effect (no lock taken, no arrival counted).
    canceled: usize,
    /// Races whose wait completed (the request acted on at the next point).
    completed: usize,
    stranded: usize,
    violations: usize,
    leaked: usize,
    miscounted: usize,
    rounds: usize,
}

impl Counts {
    fn failed(&self) -> bool {
        self.stranded + self.violations + self.leaked + self.miscounted > 0
    }

    fn report(&self, name: &str, started: Instant) {
        println!(
            "{name}: races {}, canceled {}, completed {}, stranded {}, violations {}, \
             leaked {}, miscounted {} ({} rounds, {:.1} s)",
            self.races,
            self.canceled,
            self.completed,
            self.stranded,
            self.violations,
            self.leaked,
            self.miscounted,
            self.rounds,
            started.elapsed().as_secs_f64()
        );
        assert_eq!(
            (self.stranded, self.violations, self.leaked, self.miscounted),
            (0, 0, 0, 0),
            "{name}: {self:?}"
        );
        assert_eq!(
            self.races,
            self.canceled + self.completed,
            "{name}: {self:?}"
        );
    }
}

/// Joins `h` if it finishes in time. A thread still blocked after [`HANG`] is counted
/// stranded, then canceled so the test goes on to report it, and gives `None` (one that even
/// a cancel cannot end fails the test at once: it would hang).
fn finish<T: 'static>(h: JoinHandle<T>, counts: &mut Counts) -> Option<thread_cancel::Outcome<T>> {
    if wait_for(|| h.is_finished()) {
        return Some(h.join());
    }
    counts.stranded += 1;
    let _ = h.cancel();
    assert!(
        h.wait_timeout(HANG),
        "a stranded waiter does not even end on cancel"
    );
    let _ = h.join();
    None
}

/// A worker's last step: a target (a worker the round cancels) meets points until its
/// request comes, so every cancel of a target races its wait or meets a point after it;
/// another worker meets one point and returns.
fn until_canceled(target: bool) {
    loop {
        testcancel();
        if !target {
            return;
        }
        std::thread::yield_now();
    }
}

/// What a worker of the RwLock stress records: 0 nothing, 1 it got the lock.
const GOT: usize = 1;

/// Rounds of 2 to 4 writers and 2 to 4 readers on one lock that the main thread holds at
/// first (for reading, for writing, or not at all) and releases at a random moment among the
/// cancels, which hit about two thirds of the workers. Each worker that gets the lock checks
/// exclusion (writers alone, readers with readers only), holds it briefly, releases it and
/// then meets a point. Afterwards every worker must have ended (canceled or completed), the
/// lock must be free, and the data must count exactly the writes that completed.
#[test]
fn stress_rwlock_cancel_races_acquisition() {
    let started = Instant::now();
    let mut counts = Counts::default();
    while counts.races < stress_iters() {
        let mut rng = Rng::new(counts.rounds);
        counts.rounds += 1;
        let lock = Arc::new(RwLock::new(0usize));
        let inside_w = Arc::new(AtomicUsize::new(0));
        let inside_r = Arc::new(AtomicUsize::new(0));
        let violations = Arc::new(AtomicUsize::new(0));
        let (n_w, n_r) = (2 + rng.below(3), 2 + rng.below(3));
        let got: Arc<Vec<AtomicUsize>> =
            Arc::new((0..n_w + n_r).map(|_| AtomicUsize::new(0)).collect());
        // The main thread's guard at first: a read guard, a write guard, or none.
        let first = rng.below(3);
        let mut held_r = (first == 0).then(|| lock.read().unwrap());
        let mut held_w = (first == 1).then(|| lock.write().unwrap());
        let mut order: Vec<usize> = (0..n_w + n_r).collect();
        rng.shuffle(&mut order);
        let mut workers: Vec<(usize, JoinHandle<()>, bool)> = Vec::new();
        for i in order {
            let is_writer = i < n_w;
            let (l, iw, ir, v, g) = (
                lock.clone(),
                inside_w.clone(),
                inside_r.clone(),
                violations.clone(),
                got.clone(),
            );
            let hold = rng.below(20) as u64;
            let target = rng.below(3) != 0;
            let h = spawn(move || {
                if is_writer {
                    let mut guard = l.write().unwrap();
                    g[i].store(GOT, Ordering::SeqCst);
                    if iw.fetch_add(1, Ordering::SeqCst) != 0 || ir.load(Ordering::SeqCst) != 0 {
                        v.fetch_add(1, Ordering::SeqCst);
                    }
                    *guard += 1;
                    spin_for(Duration::from_micros(hold));
                    iw.fetch_sub(1, Ordering::SeqCst);
                } else {
                    let _guard = l.read().unwrap();
                    g[i].store(GOT, Ordering::SeqCst);
                    ir.fetch_add(1, Ordering::SeqCst);
                    if iw.load(Ordering::SeqCst) != 0 {
                        v.fetch_add(1, Ordering::SeqCst);
                    }
                    spin_for(Duration::from_micros(hold));
                    ir.fetch_sub(1, Ordering::SeqCst);
                }
                until_canceled(target);
            });
            workers.push((i, h, target));
            if rng.below(4) == 0 {
                rng.jitter();
            }
        }
        let mut targets: Vec<usize> = (0..workers.len()).filter(|&k| workers[k].2).collect();
        rng.shuffle(&mut targets);
        if rng.below(3) == 0 {
            std::thread::sleep(Duration::from_micros(300)); // let them block first
        }
        let release_at = rng.below(targets.len() + 1);
        for (step, k) in targets.iter().enumerate() {
            if step == release_at {
                held_r = None;
                held_w = None;
            }
            rng.jitter();
            workers[*k]
                .1
                .cancel()
                .expect("a target ends only when canceled");
            counts.races += 1;
        }
        drop((held_r, held_w));
        for (i, h, target) in workers {
            let Some(outcome) = finish(h, &mut counts) else {
                continue;
            };
            let took = got[i].load(Ordering::SeqCst) == GOT;
            if target {
                assert!(outcome.is_canceled(), "a canceled worker was not canceled");
                if took {
                    counts.completed += 1;
                } else {
                    counts.canceled += 1;
                }
            } else {
                assert!(
                    matches!(outcome, thread_cancel::Outcome::Returned(())),
                    "a worker nobody canceled did not return"
                );
            }
        }
        counts.violations += violations.load(Ordering::SeqCst);
        let free = lock.try_write().map(|g| *g).ok();
        match free {
            Some(value) => {
                let writes = got[..n_w]
                    .iter()
                    .filter(|g| g.load(Ordering::SeqCst) == GOT)
                    .count();
                if value != writes {
                    counts.violations += 1;
                }
            }
            None => counts.leaked += 1,
        }
        if counts.failed() {
            break; // report the first failing round rather than time out every later one
        }
    }
    counts.report("stress_rwlock_cancel_races_acquisition", started);
}

/// Rounds on a barrier of 2 to 4 with 2 to 7 workers (one wait each, then a point), about two
/// thirds of them canceled at varied moments. Once every canceled worker has ended, the
/// workers still waiting get replacements (fillers nobody cancels) until the barrier trips
/// with no one left waiting. Then every trip must have released exactly `n` threads with one
/// leader (a withdrawn arrival that still counted would make a trip with fewer, or leave a
/// filler waiting), and every waiter must have ended.
#[test]
fn stress_barrier_cancel_races_wait() {
    let started = Instant::now();
    let mut counts = Counts::default();
    while counts.races < stress_iters() {
        let mut rng = Rng::new(counts.rounds);
        counts.rounds += 1;
        let n = 2 + rng.below(3);
        let b = Arc::new(Barrier::new(n));
        let n_workers = 2 + rng.below(6);
        // Per worker: 0 not returned, 1 returned, 2 returned as the leader.
        let result: Arc<Vec<AtomicUsize>> =
            Arc::new((0..n_workers).map(|_| AtomicUsize::new(0)).collect());
        let mut workers = Vec::new();
        for i in 0..n_workers {
            let (b, r) = (b.clone(), result.clone());
            let target = rng.below(3) != 0;
            let h = spawn(move || {
                let leader = b.wait().is_leader();
                r[i].store(1 + usize::from(leader), Ordering::SeqCst);
                until_canceled(target);
            });
            workers.push((i, h, target));
            if rng.below(4) == 0 {
                rng.jitter();
            }
        }
        let mut targets: Vec<usize> = (0..n_workers).filter(|&k| workers[k].2).collect();
        rng.shuffle(&mut targets);
        if rng.below(3) == 0 {
            std::thread::sleep(Duration::from_micros(300));
        }
        for k in targets {
            rng.jitter();
            workers[k]
                .1
                .cancel()
                .expect("a target ends only when canceled");
            counts.races += 1;
        }
        // Every canceled worker ends (withdrawn, or released and then acting at its point).
        for (_, h, target) in &workers {
            if *target {
                let _ = wait_for(|| h.is_finished()); // one that does not is counted below
            }
        }
        // The others have arrived or been released: stable once the barrier's count is the
        // number of those not yet returned (and below `n`, or it would have tripped).
        let live_waiting = || {
            workers
                .iter()
                .filter(|(i, _, t)| !*t && result[*i].load(Ordering::SeqCst) == 0)
                .count()
        };
        if !wait_for(|| waiting(&b) == live_waiting()) {
            counts.miscounted += 1;
        }
        let w = waiting(&b);
        let fillers: Vec<JoinHandle<bool>> = if w == 0 {
            Vec::new()
        } else {
            (0..n.saturating_sub(w))
                .map(|_| {
                    let b = b.clone();
                    spawn(move || b.wait().is_leader())
                })
                .collect()
        };
        let (mut released, mut leaders) = (0, 0);
        for f in fillers {
            match finish(f, &mut counts).map(|o| o.into_result()) {
                None => {}
                Some(Ok(l)) => {
                    released += 1;
                    leaders += usize::from(l);
                }
                Some(Err(_)) => counts.miscounted += 1,
            }
        }
        for (i, h, target) in workers {
            let Some(outcome) = finish(h, &mut counts) else {
                continue;
            };
            let r = result[i].load(Ordering::SeqCst);
            if r != 0 {
                released += 1;
                leaders += usize::from(r == 2);
            }
            if target {
                assert!(outcome.is_canceled());
                if r != 0 {
                    counts.completed += 1;
                } else {
                    counts.canceled += 1;
                }
            } else if !matches!(outcome, thread_cancel::Outcome::Returned(())) || r == 0 {
                counts.miscounted += 1; // a worker nobody canceled must be released
            }
        }
        if released != leaders * n || waiting(&b) != 0 {
            counts.miscounted += 1;
        }
        if counts.failed() {
            break; // report the first failing round rather than time out every later one
        }
    }
    counts.report("stress_barrier_cancel_races_wait", started);
}

/// The crate's `Mutex` poisons as `std`'s does on a panic, not on a cancellation, and not when
/// the guard was taken inside a `Drop` that the panic itself runs (std's rule too).
#[test]
fn mutex_poisoned_by_a_panic_not_by_a_cancellation_nor_a_guard_taken_while_panicking() {
    use thread_cancel::sync::Mutex;
    let m = Arc::new(Mutex::new(0u32));

    let l = m.clone();
    let holding = Arc::new(AtomicBool::new(false));
    let hd = holding.clone();
    let h = spawn(move || {
        let _g = l.lock().unwrap();
        hd.store(true, Ordering::SeqCst);
        loop {
            testcancel();
        }
    });
    assert!(wait_for(|| holding.load(Ordering::SeqCst)));
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(!m.is_poisoned(), "a cancellation poisoned the mutex");

    struct LockInDrop(Arc<Mutex<u32>>);
    impl Drop for LockInDrop {
        fn drop(&mut self) {
            *self.0.lock().unwrap() += 1; // taken and dropped during the panic's unwind
        }
    }
    let l = m.clone();
    let h = spawn(move || {
        let _d = LockInDrop(l);
        panic!("panic with a lock taken in a Drop (expected by the test)");
    });
    assert!(h.join().is_panicked());
    assert!(
        !m.is_poisoned(),
        "a guard taken while panicking poisoned the mutex"
    );
    assert_eq!(*m.lock().unwrap(), 1);

    let l = m.clone();
    let h = spawn(move || {
        let _g = l.lock().unwrap();
        panic!("panic while holding the mutex (expected by the test)");
    });
    assert!(h.join().is_panicked());
    assert!(m.is_poisoned());
    assert_eq!(*m.lock().unwrap_err().into_inner(), 1);
    m.clear_poison();
    assert!(!m.is_poisoned());
}
