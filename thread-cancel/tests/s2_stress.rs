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
//! `THREAD_CANCEL_STRESS=1000000 nice cargo test --release --test s2_stress -- --nocapture`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{RecvTimeoutError, SendError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thread_cancel::sync::sync_channel;
use thread_cancel::{spawn, testcancel};

/// A wait longer than this for something that must happen is a hang (reported, not waited).
const HANG: Duration = Duration::from_secs(10);

fn stress_iters() -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
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
