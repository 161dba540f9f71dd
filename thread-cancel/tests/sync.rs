//! The synchronisation primitives of `thread_cancel::sync`, one section each: `Mutex`,
//! `RwLock`, `Condvar`, channels (`channel`, `sync_channel`), `Semaphore`, `Barrier`. Their waits
//! are cancellation points (R05) with the rule "completed or no effect" (R10; R22 for condition
//! waits); they behave as their `std` namesakes otherwise.
//!
//! The stress tests (REQUIREMENTS.md, S2) race cancellations against several waiters on each
//! side and count, over all their races: `lost` (a message sent or a notification/permit given
//! that nobody got), `duplicated` (received twice, or received although its `send` was
//! canceled), `stranded` (a waiter still blocked after everything that should wake it happened;
//! found with a generous timeout, never a hang; for locks and barriers, and in the one-race
//! stresses as `hangs`, only if still blocked after 7 × `HANG`: one that ends after `HANG` is
//! counted `slow`, a machine too loaded, not a failure), and for locks and barriers
//! `violations` (two writers, or a writer and a reader, inside at once), `leaked` (the lock
//! still held once every thread ended) and `miscounted` (a barrier trip that released other
//! than `n` threads). All but `slow` must be 0; the counts are printed (`--nocapture` shows
//! them).
//!
//! `THREAD_CANCEL_STRESS` sets the races per stress test (default 2,000;
//! `THREAD_CANCEL_STRESS_SECS` caps each test's time); a long run:
//! `THREAD_CANCEL_STRESS=1000000 nice cargo test --release --test sync stress -- --nocapture`.

mod common;

use common::{cancel_while_blocked, enough, spin_for, stress_iters, wait_for, Rng, HANG};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{RecvTimeoutError, SendError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thread_cancel::sync::{
    channel, sync_channel, Barrier, Condvar, Mutex, RwLock, Semaphore, Sender, SyncSender,
};
use thread_cancel::{cleanup_push, spawn, testcancel, JoinHandle};

// ---------------------------------------------------------------------------------------------
// Waits of every kind

/// R05/R14: the waits are cancellation points at entry too, even when they need not wait (a
/// message ready, a permit free, the target finished); acting there takes nothing.
#[test]
fn r05_waits_act_at_entry_even_when_ready() {
    let (tx, rx) = channel::<u32>();
    tx.send(1).unwrap();
    let rx = Arc::new(rx);
    let r2 = rx.clone();
    let h = spawn(move || {
        thread_cancel::current().cancel().unwrap();
        let _ = r2.recv();
        unreachable!("recv returned")
    });
    assert!(h.join().is_canceled());
    assert_eq!(rx.try_recv(), Ok(1), "the message stayed in the channel");

    let s = Arc::new(Semaphore::new(1));
    let s2 = s.clone();
    let h = spawn(move || {
        thread_cancel::current().cancel().unwrap();
        s2.acquire();
        unreachable!("acquire returned")
    });
    assert!(h.join().is_canceled());
    assert!(
        s.acquire_timeout(Duration::from_millis(1)),
        "the permit stayed"
    );

    let h = spawn(move || {
        let done = spawn(|| 5);
        done.wait_timeout(HANG);
        thread_cancel::current().cancel().unwrap();
        done.join()
    });
    assert!(h.join().is_canceled());
}

// ---------------------------------------------------------------------------------------------
// Mutex

/// The crate's `Mutex` poisons as `std`'s does on a panic, not on a cancellation, and not when
/// the guard was taken inside a `Drop` that the panic itself runs (std's rule too).
#[test]
fn mutex_poisoned_by_a_panic_not_by_a_cancellation_nor_a_guard_taken_while_panicking() {
    common::quiet_expected_panics(); // the panics below are on purpose
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

/// A genuine panic poisons the mutex even after the thread swallowed a cancellation's unwind
/// (and a scope's) with `catch_unwind`. Poison follows what is unwinding now: before the fix
/// the swallowed unwind left the word saying "terminating", and the later panic, with the lock
/// held and the data half-updated, did not poison.
#[test]
fn a_genuine_panic_poisons_after_a_swallowed_cancel() {
    common::quiet_expected_panics();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let seen2 = seen.clone();
    let h = spawn(move || {
        let m = Mutex::new(0);
        // A scope's unwind, swallowed.
        let scope = thread_cancel::CancelScope::new();
        let _ = scope.run(|| {
            scope.cancel();
            drop(std::panic::catch_unwind(testcancel));
            let after_scope = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _g = m.lock().unwrap();
                panic!("half-updated {}", common::EXPECTED_PANIC);
            }));
            assert!(after_scope.is_err());
        });
        let scope_poisoned = m.is_poisoned();
        m.clear_poison();
        // The thread's own cancellation, swallowed (held pending by `disable` afterwards).
        thread_cancel::current().cancel().unwrap();
        drop(std::panic::catch_unwind(testcancel));
        let _held = thread_cancel::disable();
        let after_cancel = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _g = m.lock().unwrap();
            panic!("half-updated {}", common::EXPECTED_PANIC);
        }));
        assert!(after_cancel.is_err());
        *seen2.lock().unwrap() = Some((scope_poisoned, m.is_poisoned()));
    });
    // The thread's swallowed cancellation still counts at its end.
    assert!(h.join().is_canceled());
    let (scope, cancel) = seen
        .lock()
        .unwrap()
        .take()
        .expect("the thread reached its end");
    assert!(
        scope,
        "a panic after a swallowed scope unwind did not poison"
    );
    assert!(
        cancel,
        "a panic after a swallowed cancellation did not poison"
    );
}

/// A program that keeps what its `catch_unwind` caught, to log it later (as a pool keeps its
/// tasks' results): kept as a description (the payload itself dropped, as the docs of
/// `CancelPayload` advise), a later genuine panic poisons the mutex and runs no cleanup
/// handler; and a cancellation raised while an older payload is still kept is a cancellation
/// (no poison, its cleanup handler runs).
#[test]
fn a_genuine_panic_poisons_after_a_swallowed_cancel_kept_as_a_description() {
    common::quiet_expected_panics();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let seen2 = seen.clone();
    let h = spawn(move || {
        let m = Mutex::new(0);
        let mut log = Vec::new();
        let cleanup_ran = std::cell::Cell::new(0);
        let scope = thread_cancel::CancelScope::new();
        let payload = scope
            .run(|| {
                scope.cancel();
                std::panic::catch_unwind(testcancel).unwrap_err()
            })
            .unwrap_err()
            .into_value()
            .expect("the closure returned the payload it caught");
        // A second scope canceled while the first payload is still alive: a cancellation.
        let second = thread_cancel::CancelScope::new();
        let r = second.run(|| {
            let _c = thread_cancel::cleanup_push(|| cleanup_ran.set(cleanup_ran.get() + 1));
            let _g = m.lock().unwrap();
            second.cancel();
            testcancel();
        });
        assert!(r.is_err());
        log.push(if payload.is::<thread_cancel::ScopeUnwind>() {
            "a scope's cancel"
        } else {
            "something else"
        });
        drop(payload);
        let after = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _c = thread_cancel::cleanup_push(|| cleanup_ran.set(cleanup_ran.get() + 10));
            let _g = m.lock().unwrap();
            panic!("half-updated {}", common::EXPECTED_PANIC);
        }));
        assert!(after.is_err());
        *seen2.lock().unwrap() = Some((m.is_poisoned(), cleanup_ran.get(), log));
    });
    h.join().unwrap();
    let (poisoned, cleanups, log) = seen.lock().unwrap().take().expect("the thread's end");
    assert_eq!(log, ["a scope's cancel"]);
    assert_eq!(
        cleanups, 1,
        "cleanup handlers run: 1 for the second scope's cancel, 10 for the panic"
    );
    assert!(poisoned, "the panic did not poison");
}

// ---------------------------------------------------------------------------------------------
// RwLock: a canceled `read`/`write` never holds the lock afterwards, and a writer that withdraws
// wakes the readers it was holding back; one that got the lock returns its guard. A read
// reentered behind a waiting writer deadlocks as `std` says it may, and here a cancel ends it.

/// Waits until each of the threads is seen blocked in its wait (a cancel sent next finds it
/// waiting, not on its way in); fails the test after `HANG`.
fn settle(threads: &[common::Tid]) {
    for t in threads {
        t.wait_blocked();
    }
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

/// A writer canceled while it waits returns no guard and holds nothing afterwards: once the
/// reader that blocked it leaves, the lock is free, and the writer's update never happened.
#[test]
fn rwlock_canceled_writer_never_holds_the_lock() {
    let lock = Arc::new(RwLock::new(0u32));
    let r = lock.read().unwrap();
    let l = lock.clone();
    let got = Arc::new(AtomicBool::new(false));
    let g2 = got.clone();
    let (w, wt) = common::spawn_watched(move || {
        let mut g = l.write().unwrap();
        g2.store(true, Ordering::SeqCst);
        *g += 1;
    });
    settle(&[wt]);
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
        let (readers, tids): (Vec<JoinHandle<u32>>, Vec<_>) = (0..3)
            .map(|_| {
                let l = lock.clone();
                common::spawn_watched(move || *l.read().unwrap())
            })
            .unzip();
        settle(&tids);
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
    let spawn_writer =
        |l: Arc<RwLock<u32>>| common::spawn_watched(move || *l.write().unwrap() += 1);
    let (w1, t1) = spawn_writer(lock.clone());
    let (w2, t2) = spawn_writer(lock.clone());
    let (w3, t3) = spawn_writer(lock.clone());
    settle(&[t1, t2, t3]);
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
    let (readers, tids): (Vec<_>, Vec<_>) = (0..3)
        .map(|_| {
            let l = lock.clone();
            common::spawn_watched(move || {
                let _g = l.read().unwrap();
            })
        })
        .unzip();
    settle(&tids);
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
    let (h, tid) = common::spawn_watched(move || {
        let off = thread_cancel::disable(); // the request waits while the write completes
        let mut g = l.write().unwrap();
        *g += 1;
        drop(off);
        testcancel(); // the request is acted on here, the guard still held
        unreachable!("a point with a request pending acts");
    });
    settle(&[tid]);
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
    let (reader, rt) = common::spawn_watched(move || {
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
    let (writer, wt) = common::spawn_watched(move || *l.write().unwrap() = 1);
    settle(&[wt, rt]); // both wait: the deadlock
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
    let (h, tid) = common::spawn_watched(move || {
        let _r = l.read().unwrap();
        let _w = l.write().unwrap(); // waits for its own read guard
        unreachable!("write cannot succeed while this thread reads");
    });
    settle(&[tid]);
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(lock.try_write().is_ok());
}

/// Poisoning follows the crate's `Mutex`: a panic while writing poisons, a cancellation while
/// writing does not, a panic while reading does not (as with `std`).
#[test]
fn rwlock_poisoned_by_a_panic_in_a_writer_not_by_a_cancellation() {
    common::quiet_expected_panics(); // the panics below are on purpose
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
    let mut counts = LockCounts::default();
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

// ---------------------------------------------------------------------------------------------
// Condvar

#[test]
fn r05_condvar_waits_are_woken_by_cancel_and_time_out() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let p = pair.clone();
    cancel_while_blocked(move || {
        let g = p.0.lock().unwrap();
        let _g = p.1.wait_while(g, |ready| !*ready);
    });
    let p = pair.clone();
    cancel_while_blocked(move || {
        let g = p.0.lock().unwrap();
        let _ = p.1.wait_timeout(g, Duration::from_secs(3600));
    });
    assert!(
        !pair.0.is_poisoned(),
        "a cancellation does not poison our Mutex"
    );
    assert!(
        pair.0.try_lock().is_ok(),
        "the canceled waiters released the mutex"
    );
    let g = pair.0.lock().unwrap();
    let t = Instant::now();
    let (_g, r) = pair.1.wait_timeout(g, Duration::from_millis(20)).unwrap();
    assert!(r.timed_out() && t.elapsed() >= Duration::from_millis(20));
}

#[test]
fn r22_canceled_condvar_wait_reacquires_the_mutex_before_the_first_cleanup_handler() {
    let pair = Arc::new((Mutex::new(()), Condvar::new()));
    let released = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(AtomicBool::new(false));
    let ran = Arc::new(AtomicBool::new(false));
    let (p, r, s, rn) = (pair.clone(), released.clone(), seen.clone(), ran.clone());
    let (h, tid) = common::spawn_watched(move || {
        let g = p.0.lock().unwrap();
        let _c = cleanup_push(move || {
            s.store(r.load(Ordering::SeqCst), Ordering::SeqCst);
            rn.store(true, Ordering::SeqCst);
        });
        let _g = p.1.wait(g);
    });
    tid.wait_blocked(); // in wait(): it released the mutex
    let held = pair.0.lock().unwrap();
    h.cancel().unwrap();
    // The woken waiter blocks re-acquiring the mutex held here: a futex wait on a word of the
    // mutex (the condvar's wait is on another word). A waiter that ran its handler without the
    // mutex ends the wait too: the handler then sees `released` still false.
    let mutex = &pair.0 as *const Mutex<()> as usize;
    let mutex = mutex..mutex + std::mem::size_of_val(&pair.0);
    assert!(
        common::wait_for(
            || ran.load(Ordering::SeqCst) || common::in_futex_wait_within(tid.get(), mutex.clone())
        ),
        "the canceled waiter neither blocked on the mutex nor ran its handler"
    );
    released.store(true, Ordering::SeqCst);
    drop(held);
    assert!(h.join().is_canceled());
    assert!(
        seen.load(Ordering::SeqCst),
        "the handler ran only after the mutex was re-acquired"
    );
    assert!(pair.0.try_lock().is_ok());
}

#[test]
fn r22_stress_notify_one_racing_cancel_never_loses_a_notification() {
    for _ in 0..stress_iters() {
        let shared = Arc::new((Mutex::new(0usize), Condvar::new(), AtomicUsize::new(0)));
        let waiter = |sh: Arc<(Mutex<usize>, Condvar, AtomicUsize)>| {
            spawn(move || {
                let (m, cv, consumed) = &*sh;
                let mut g = m.lock().unwrap();
                loop {
                    while *g == 0 {
                        g = cv.wait(g).unwrap();
                    }
                    *g -= 1;
                    consumed.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        let a = waiter(shared.clone());
        let b = waiter(shared.clone());
        std::thread::yield_now();
        *shared.0.lock().unwrap() += 1;
        shared.1.notify_one();
        a.cancel().unwrap(); // races the notification
        assert!(a.join().is_canceled());
        // The token is consumed by `a` (its wait completed) or by `b`: never stuck.
        let t = Instant::now();
        while shared.2.load(Ordering::SeqCst) != 1 {
            assert!(t.elapsed() < HANG, "notification lost");
            std::thread::yield_now();
        }
        assert_eq!(*shared.0.lock().unwrap(), 0);
        b.cancel().unwrap();
        assert!(b.join().is_canceled());
    }
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
    let (h, tid) = common::spawn_watched(move || {
        let (m, cv) = &*p;
        let _ = cv.wait_timeout_while(m.lock().unwrap(), Duration::from_secs(3600), |_| true);
    });
    tid.wait_blocked(); // in the wait
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(pair.0.try_lock().is_ok());
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

// ---------------------------------------------------------------------------------------------
// Channels

#[test]
fn r05_channel_recv_and_full_sync_send_are_woken_by_cancel() {
    let (tx, rx) = channel::<u8>();
    cancel_while_blocked(move || {
        let _ = rx.recv();
    });
    drop(tx);
    let (tx, rx) = channel::<u8>();
    cancel_while_blocked(move || {
        let _ = rx.recv_timeout(Duration::from_secs(3600));
    });
    drop(tx);
    let (tx, rx) = sync_channel::<u8>(1);
    tx.send(0).unwrap();
    cancel_while_blocked(move || {
        let _ = tx.send(1);
    });
    assert_eq!(rx.recv(), Ok(0));
    assert!(rx.recv().is_err(), "the canceled send did not send");
    // Timed receive times out when nobody sends.
    let (_tx, rx) = channel::<u8>();
    let t = Instant::now();
    let r = rx.recv_timeout(Duration::from_millis(20));
    assert_eq!(r, Err(std::sync::mpsc::RecvTimeoutError::Timeout));
    assert!(t.elapsed() >= Duration::from_millis(20));
}

#[test]
fn r10_rendezvous_send_canceled_before_receipt_has_no_effect() {
    let (tx, rx) = sync_channel::<u32>(0);
    cancel_while_blocked(move || {
        let _ = tx.send(42);
    });
    assert!(
        rx.try_recv().is_err(),
        "a canceled rendezvous send left nothing behind"
    );
}

#[test]
fn r10_stress_channel_recv_racing_cancel_never_loses_a_message() {
    for i in 0..stress_iters() {
        let (tx, rx) = channel::<u32>();
        let rx = Arc::new(rx);
        let got = Arc::new(AtomicUsize::new(0));
        let (r, g) = (rx.clone(), got.clone());
        let h = spawn(move || loop {
            // A message recv returned is counted before the next point (the next recv).
            if r.recv().is_ok() {
                g.fetch_add(1, Ordering::SeqCst);
            }
        });
        let sent = 1 + i % 4;
        for v in 0..sent {
            tx.send(v as u32).unwrap();
            if i % 3 == v % 3 {
                std::thread::yield_now();
            }
        }
        h.cancel().unwrap(); // races the receiver's recv of the last messages
        assert!(h.join().is_canceled());
        let mut left = 0;
        while rx.try_recv().is_ok() {
            left += 1;
        }
        assert_eq!(got.load(Ordering::SeqCst) + left, sent, "iteration {i}");
    }
}

#[test]
fn r10_stress_sync_channel_messages_are_counted_exactly() {
    for i in 0..stress_iters() {
        let (tx, rx) = sync_channel::<u32>(1 + i % 2);
        let rx = Arc::new(rx);
        let got = Arc::new(AtomicUsize::new(0));
        let (r, g) = (rx.clone(), got.clone());
        let h = spawn(move || loop {
            if r.recv().is_ok() {
                g.fetch_add(1, Ordering::SeqCst);
            }
        });
        let mut sent = 0;
        for v in 0..3 {
            tx.send(v).unwrap();
            sent += 1;
        }
        h.cancel().unwrap();
        assert!(h.join().is_canceled());
        // Received by the canceled thread + still queued = sent: nothing lost, nothing doubled.
        let mut left = 0;
        while rx.try_recv().is_ok() {
            left += 1;
        }
        assert_eq!(got.load(Ordering::SeqCst) + left, sent, "iteration {i}");
    }
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
    let (h, tid) = common::spawn_watched(move || {
        let mut n = 0;
        for _ in rx {
            n += 1;
        }
        n
    });
    tx.send(1).unwrap();
    tid.wait_blocked(); // waiting for the next message
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
        assert!(start.elapsed() < HANG, "receiver never waited");
        std::thread::yield_now();
    }
    assert_eq!(h.join().unwrap(), Ok(2));
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

/// A rendezvous `send` reported canceled must not have been received (R10: the
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

/// A withdrawn rendezvous message wakes the senders waiting for space. Sender A has pushed
/// and waits for a receiver, sender B waits for space; A is
/// canceled and its message withdrawn: B must be woken, push, and be received.
#[test]
fn canceled_rendezvous_sender_wakes_the_senders_behind_it() {
    for round in 0..20 {
        let (tx, rx) = sync_channel::<&'static str>(0);
        let tx_b = tx.clone();
        let (a, at) = common::spawn_watched(move || tx.send("a"));
        at.wait_blocked(); // A has pushed and waits for receipt
        let (b, bt) = common::spawn_watched(move || tx_b.send("b"));
        bt.wait_blocked(); // B waits for space
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

/// A rendezvous `send` blocked until its message is received
/// gets the message back in its error when the receiver goes away without taking it (as with
/// `std`), instead of `Ok` for a message nobody received.
#[test]
fn rendezvous_send_whose_receiver_goes_away_gets_its_message_back() {
    let (tx, rx) = sync_channel::<u32>(0);
    let (h, tid) = common::spawn_watched(move || tx.send(7));
    tid.wait_blocked(); // the message is pushed and waits
    drop(rx);
    assert_eq!(h.join().unwrap(), Err(SendError(7)));
}

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
// Semaphore

#[test]
fn r05_semaphore_acquire_is_woken_by_cancel_and_times_out() {
    let s = Arc::new(Semaphore::new(0));
    let s2 = s.clone();
    cancel_while_blocked(move || s2.acquire());
    let s2 = s.clone();
    cancel_while_blocked(move || {
        s2.acquire_timeout(Duration::from_secs(3600));
    });
    assert!(!s.acquire_timeout(Duration::from_millis(10)));
    s.release();
    assert!(s.acquire_timeout(Duration::from_millis(10)));
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

// ---------------------------------------------------------------------------------------------
// Barrier: a canceled wait is withdrawn (its arrival no longer counts, the others wait for a
// replacement); a wait released by the barrier is never canceled. `Barrier::new(0)` and `new(1)`
// behave as `std`'s.

/// The threads waiting at `b` now, from its `Debug` (`Barrier { n: 3, waiting: 1 }`).
fn waiting(b: &Barrier) -> usize {
    let s = format!("{b:?}");
    let tail = s.split("waiting: ").nth(1).expect("Debug shows `waiting`");
    tail.trim_end_matches(" }").parse().expect("a count")
}

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

/// Rounds on a barrier of 2 to 4 with 2 to 7 workers (one wait each, then a point), about two
/// thirds of them canceled at varied moments. Once every canceled worker has ended, the
/// workers still waiting get replacements (fillers nobody cancels) until the barrier trips
/// with no one left waiting. Then every trip must have released exactly `n` threads with one
/// leader (a withdrawn arrival that still counted would make a trip with fewer, or leave a
/// filler waiting), and every waiter must have ended.
#[test]
fn stress_barrier_cancel_races_wait() {
    let started = Instant::now();
    let mut counts = LockCounts::default();
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

// ---------------------------------------------------------------------------------------------
// One race per round, for the emulated weakly ordered machines (issue 35, item 7)

/// The figures of a one-race-per-round stress: `hangs` must be 0.
#[derive(Debug, Default)]
struct RaceCounts {
    rounds: usize,
    /// Rounds where the canceled waiter had completed its wait (it took the notification, or
    /// the barrier released it) before acting.
    completed: usize,
    /// Rounds where the canceled waiter's wait had no effect.
    canceled: usize,
    /// Something that must happen did not within 7 × [`HANG`] ([`within`]): a token left while
    /// a waiter waits, or a waiter that was never released.
    hangs: usize,
    /// The same, done only after `HANG`: a slow machine, not a failure.
    slow: usize,
    /// A wrong outcome (a waiter nobody canceled ended canceled, a trip with other than one
    /// leader per `n` released).
    wrong: usize,
}

impl RaceCounts {
    /// Counts what [`within`] saw; whether it happened.
    fn count(&mut self, w: Within) -> bool {
        match w {
            Within::Hang => {}
            Within::Late => self.slow += 1,
            Within::Never => self.hangs += 1,
        }
        w != Within::Never
    }

    fn report(&self, name: &str, started: Instant) {
        println!(
            "s2 {name}: rounds {}, completed {}, canceled {}, hangs {}, slow {}, wrong {} ({:.1} s)",
            self.rounds,
            self.completed,
            self.canceled,
            self.hangs,
            self.slow,
            self.wrong,
            started.elapsed().as_secs_f64()
        );
        assert_eq!((self.hangs, self.wrong), (0, 0), "{name}: {self:?}");
    }
}

/// Ends `h`, or counts a hang (and cancels it, so the test goes on); see [`within`].
fn end_within_hang<T: 'static>(
    h: JoinHandle<T>,
    counts: &mut RaceCounts,
) -> Option<thread_cancel::Outcome<T>> {
    if counts.count(within(|| h.is_finished())) {
        return Some(h.join());
    }
    let _ = h.cancel();
    assert!(
        h.wait_timeout(HANG),
        "a hung waiter does not even end on cancel"
    );
    let _ = h.join();
    None
}

/// Tokens, waiters inside their wait, the end of the round; and the condition variable.
type CountedTokens = (Mutex<(usize, usize, bool)>, Condvar);

/// R22 under a cancel, one race per round (`THREAD_CANCEL_STRESS` rounds, default 2,000): two
/// waiters W1 and W2 wait for a token under a `Mutex`; one token is added with `notify_one`
/// while W1 is canceled (the cancel before, after or between the two, with jitter on both
/// sides, from another thread). The token must be taken (by W1 before it acts, or by W2: the
/// notification W1 consumed is passed on or W1's wait completes), never left with W2 asleep.
#[test]
fn s2_stress_condvar_notify_one_vs_cancel() {
    let started = Instant::now();
    let mut counts = RaceCounts::default();
    while !enough(counts.rounds, started) {
        let mut rng = Rng::new(counts.rounds);
        counts.rounds += 1;
        // (tokens, waiters inside their wait, the end of the round)
        let shared: Arc<CountedTokens> = Arc::new((Mutex::new((0, 0, false)), Condvar::new()));
        let took: Arc<[AtomicBool; 2]> = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let waiter = |i: usize| {
            let (sh, took) = (shared.clone(), took.clone());
            spawn(move || {
                let (m, cv) = &*sh;
                let mut g = m.lock().unwrap();
                g.1 += 1;
                while g.0 == 0 && !g.2 {
                    g = cv.wait(g).unwrap();
                }
                if g.0 > 0 {
                    g.0 -= 1;
                    took[i].store(true, Ordering::SeqCst);
                }
                drop(g);
                until_canceled(i == 0);
            })
        };
        let (w1, w2) = (waiter(0), waiter(1));
        // Both are queued once the mutex is free with the count at 2: each counts itself and
        // queues before its wait releases the mutex.
        assert!(wait_for(|| shared.0.lock().unwrap().1 == 2));
        let notify = || {
            shared.0.lock().unwrap().0 += 1;
            shared.1.notify_one();
        };
        // The cancel from a thread of its own when the round says so, else from here.
        let cancel_first = rng.coin(2);
        if rng.coin(2) {
            let delay = rng.below(30) as u64;
            std::thread::scope(|s| {
                s.spawn(|| {
                    spin_for(Duration::from_micros(delay));
                    w1.cancel().unwrap();
                });
                rng.jitter();
                notify();
            });
        } else if cancel_first {
            w1.cancel().unwrap();
            rng.jitter();
            notify();
        } else {
            notify();
            rng.jitter();
            w1.cancel().unwrap();
        }
        // The token is taken while a waiter waits: by W1 before it acts, or by W2.
        counts.count(within(|| shared.0.lock().unwrap().0 == 0));
        let w1_took = took[0].load(Ordering::SeqCst);
        match end_within_hang(w1, &mut counts) {
            Some(o) if o.is_canceled() => {
                if w1_took {
                    counts.completed += 1;
                } else {
                    counts.canceled += 1;
                }
            }
            Some(_) => counts.wrong += 1,
            None => {}
        }
        shared.0.lock().unwrap().2 = true;
        shared.1.notify_all();
        match end_within_hang(w2, &mut counts) {
            Some(thread_cancel::Outcome::Returned(())) => {}
            Some(_) => counts.wrong += 1,
            None => {}
        }
        if usize::from(took[0].load(Ordering::SeqCst)) + usize::from(took[1].load(Ordering::SeqCst))
            != 1
        {
            counts.wrong += 1;
        }
        if counts.hangs + counts.wrong > 0 {
            break;
        }
    }
    counts.report("Condvar::notify_one vs cancel", started);
}

/// A barrier's last arrival against a cancel of a waiter, one race per round
/// (`THREAD_CANCEL_STRESS` rounds, default 2,000): on a barrier of `n` (2 or 3), the `n - 1`
/// waiters W1 (and W2) wait; the last arrival L and a cancel of W1 race. Either L trips the
/// barrier (W1 is released and acts at its next point) or W1 withdraws first (L then waits,
/// and a filler trips it). No waiter nobody canceled is left waiting, one leader per trip.
#[test]
fn s2_stress_barrier_last_arrival_vs_cancel() {
    let started = Instant::now();
    let mut counts = RaceCounts::default();
    while !enough(counts.rounds, started) {
        let mut rng = Rng::new(counts.rounds);
        counts.rounds += 1;
        let n = 2 + counts.rounds % 2;
        let b = Arc::new(Barrier::new(n));
        // Per thread: 0 not returned, 1 returned, 2 returned as the leader.
        let result: Arc<Vec<AtomicUsize>> = Arc::new((0..4).map(|_| AtomicUsize::new(0)).collect());
        let arrive = |i: usize, target: bool| {
            let (b, r) = (b.clone(), result.clone());
            spawn(move || {
                let leader = b.wait().is_leader();
                r[i].store(1 + usize::from(leader), Ordering::SeqCst);
                until_canceled(target);
            })
        };
        let w1 = arrive(0, true);
        let w2 = (n == 3).then(|| arrive(1, false));
        assert!(wait_for(|| waiting(&b) == n - 1));
        let l = if rng.coin(2) {
            let delay = rng.below(30) as u64;
            std::thread::scope(|s| {
                s.spawn(|| {
                    spin_for(Duration::from_micros(delay));
                    w1.cancel().unwrap();
                });
                rng.jitter();
                arrive(2, false)
            })
        } else if rng.coin(2) {
            w1.cancel().unwrap();
            rng.jitter();
            arrive(2, false)
        } else {
            let l = arrive(2, false);
            rng.jitter();
            w1.cancel().unwrap();
            l
        };
        match end_within_hang(w1, &mut counts) {
            Some(o) if o.is_canceled() => {
                if result[0].load(Ordering::SeqCst) != 0 {
                    counts.completed += 1;
                } else {
                    counts.canceled += 1;
                }
            }
            Some(_) => counts.wrong += 1,
            None => {}
        }
        // W1 has ended: released (the barrier tripped: L is released too), or withdrawn (then
        // L arrives and waits with W2: `n - 1` waiting, and a filler trips it).
        let tripped = || result[2].load(Ordering::SeqCst) != 0;
        counts.count(within(|| tripped() || waiting(&b) == n - 1));
        let filler =
            (!tripped() && result[0].load(Ordering::SeqCst) == 0).then(|| arrive(3, false));
        let rest = [w2, Some(l), filler];
        for h in rest.into_iter().flatten() {
            match end_within_hang(h, &mut counts) {
                Some(thread_cancel::Outcome::Returned(())) => {}
                Some(_) => counts.wrong += 1,
                None => {}
            }
        }
        let (released, leaders) = result.iter().fold((0, 0), |(r, l), x| {
            let x = x.load(Ordering::SeqCst);
            (r + usize::from(x != 0), l + usize::from(x == 2))
        });
        if released != leaders * n || waiting(&b) != 0 {
            counts.wrong += 1;
        }
        if counts.hangs + counts.wrong > 0 {
            break;
        }
    }
    counts.report("Barrier last arrival vs cancel", started);
}

// ---------------------------------------------------------------------------------------------
// The stress harness of the waits (channels, Condvar, Semaphore)

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
    describe(&format!("after {HANG:?}"));
    let t = Instant::now();
    while !taken() && t.elapsed() < 6 * HANG {
        std::thread::sleep(Duration::from_millis(10));
    }
    describe(&if taken() {
        "then taken: slow, not lost".to_string()
    } else {
        format!("after {:?}: lost", 7 * HANG)
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

// ---------------------------------------------------------------------------------------------
// The stress harness of the locks and barriers

#[derive(Debug, Default)]
struct LockCounts {
    races: usize,
    /// Races whose wait had no effect (no lock taken, no arrival counted).
    canceled: usize,
    /// Races whose wait completed (the request acted on at the next point).
    completed: usize,
    stranded: usize,
    /// Waiters that ended only after [`HANG`] (see [`within`]): a slow machine, not a failure.
    slow: usize,
    violations: usize,
    leaked: usize,
    miscounted: usize,
    rounds: usize,
}

impl LockCounts {
    fn failed(&self) -> bool {
        self.stranded + self.violations + self.leaked + self.miscounted > 0
    }

    fn report(&self, name: &str, started: Instant) {
        println!(
            "{name}: races {}, canceled {}, completed {}, stranded {}, slow {}, violations {}, \
             leaked {}, miscounted {} ({} rounds, {:.1} s)",
            self.races,
            self.canceled,
            self.completed,
            self.stranded,
            self.slow,
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

/// Joins `h` once it finishes. A thread still blocked after 7 × [`HANG`] is counted stranded
/// (one that ends later than `HANG` only is counted slow: see [`within`]), then canceled so the
/// test goes on to report it, and gives `None` (one that even a cancel cannot end fails the
/// test at once: it would hang).
fn finish<T: 'static>(
    h: JoinHandle<T>,
    counts: &mut LockCounts,
) -> Option<thread_cancel::Outcome<T>> {
    match within(|| h.is_finished()) {
        Within::Hang => return Some(h.join()),
        Within::Late => {
            counts.slow += 1;
            eprintln!("a waiter ended only after {HANG:?}: a slow machine, not a lost wake-up");
            return Some(h.join());
        }
        Within::Never => {}
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

/// When something that must happen did: within [`HANG`], later, or not within 7 × `HANG`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Within {
    Hang,
    /// After `HANG`: a slow machine (emulation on a loaded host: a thread of a test under
    /// qemu-user can wait that long for its turn), not a lost wake-up, which never resolves.
    Late,
    /// Not after 7 × `HANG`: lost.
    Never,
}

/// Waits for `done()` (see [`Within`]).
fn within(mut done: impl FnMut() -> bool) -> Within {
    if wait_for(&mut done) {
        return Within::Hang;
    }
    let t = Instant::now();
    while t.elapsed() < 6 * HANG {
        if done() {
            return Within::Late;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if done() {
        Within::Late
    } else {
        Within::Never
    }
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
