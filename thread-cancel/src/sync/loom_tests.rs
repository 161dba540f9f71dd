//! Model checks (`RUSTFLAGS="--cfg loom"`) of a notification and a barrier's last arrival,
//! each raced against a cancel of a waiter (issue 35, item 7: a lost wake-up on a weakly
//! ordered machine?).
//!
//! They run the crate's own protocol: `condvar::{wait_queued, notify_one_queued,
//! notify_all_queued}` (the waiter's `notified` flag, the decision under the queue lock),
//! `barrier::arrive` (the count and the generation), the wait loop `point::wait::wait_until`
//! on the thread's real state word, its real parker (`control/parker.rs`), and the real
//! requests: `Control::request` (a thread's cancel) and `Control::scope_request` with
//! `wake_parked` (a scope's). Stand-ins, behind the façade: loom's `Mutex` for the queue's
//! `std` mutex and for the crate's `sync::Mutex` the user's data and the barrier's state are
//! under, and a loom futex (`atomic.rs`) under the parker. A wake-up that is lost leaves a
//! thread asleep with nobody to wake it: loom reports the deadlock.

use super::barrier::{arrive, State};
use super::condvar::{notify_all_queued, notify_one_queued, wait_queued, Queue};
use crate::control::Control;
use crate::point::wait::Wake;
use loom::sync::{Mutex, MutexGuard};
use loom::thread;
use std::sync::Arc;

/// A condition variable: the crate's protocol on a loom mutex for its queue.
#[derive(Default)]
struct Cv {
    queue: Mutex<Queue>,
}

impl Cv {
    /// `Condvar::wait_unacted`: queue, unlock `m`, wait, decide, lock `m` again.
    fn wait<'a, T>(
        &self,
        me: &Arc<Control>,
        m: &'a Mutex<T>,
        g: MutexGuard<'a, T>,
    ) -> (MutexGuard<'a, T>, Wake) {
        let ((), wake) = wait_queued(|| self.queue.lock().unwrap(), me, || drop(g), None);
        (m.lock().unwrap(), wake)
    }

    fn notify_one(&self) {
        notify_one_queued(self.queue.lock().unwrap());
    }

    fn notify_all(&self) {
        notify_all_queued(self.queue.lock().unwrap());
    }
}

/// Which cancel wakes the waiter.
#[derive(Clone, Copy, Debug)]
enum Cancel {
    /// The thread's own cancel (`JoinHandle::cancel`, `pthread_cancel`).
    Thread,
    /// A scope's cancel delivered to a thread that runs the scope (`CancelScope::cancel`).
    Scope,
}

fn cancel(c: &Control, kind: Cancel) {
    match kind {
        Cancel::Thread => assert!(c.request().unwrap().is_none()),
        Cancel::Scope => {
            if c.scope_request() {
                c.wake_parked();
            }
        }
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

/// The user's side of a token pool (the S2 stress, R22's C test): tokens, and the end.
#[derive(Default)]
struct Tokens {
    tokens: usize,
    done: bool,
}

/// Two waiters W1 and W2 wait for a token; the main thread adds one and `notify_one`s while
/// another thread cancels W1. The token is taken exactly once: by W1 (its wait completed:
/// the request is then acted on at its next point) or by W2, with no other wake-up than the
/// notification (were it lost, W2 would sleep forever: a deadlock loom reports).
fn condvar_notify_one_vs_cancel(kind: Cancel) {
    model(move || {
        let cv = Arc::new(Cv::default());
        let m = Arc::new(Mutex::new(Tokens::default()));
        let waiter = |me: Arc<Control>| {
            let (cv, m) = (cv.clone(), m.clone());
            thread::spawn(move || {
                let mut g = m.lock().unwrap();
                loop {
                    if g.tokens > 0 {
                        g.tokens -= 1;
                        return true;
                    }
                    if g.done {
                        return false;
                    }
                    let (g2, wake) = cv.wait(&me, &m, g);
                    g = g2;
                    if wake == Wake::Cancel {
                        return false; // `Condvar::wait` acts here, the mutex held
                    }
                }
            })
        };
        let c1 = Arc::new(Control::new(None));
        let w1 = waiter(c1.clone());
        let w2 = waiter(Arc::new(Control::new(None)));
        let canceler = thread::spawn(move || cancel(&c1, kind));
        m.lock().unwrap().tokens += 1;
        cv.notify_one();
        canceler.join().unwrap();
        let took1 = w1.join().unwrap();
        if took1 {
            m.lock().unwrap().done = true;
            cv.notify_all();
        }
        let took2 = w2.join().unwrap();
        assert!(took1 != took2, "the token taken twice or never");
    });
}

#[test]
fn loom_condvar_notify_one_vs_thread_cancel() {
    condvar_notify_one_vs_cancel(Cancel::Thread);
}

#[test]
fn loom_condvar_notify_one_vs_scope_cancel() {
    condvar_notify_one_vs_cancel(Cancel::Scope);
}

/// A barrier of `n` (2 or 3): W1 (and W2) and the last arrival L arrive while the main
/// thread cancels W1. W1 is released (its wait completed: one trip with W1, W2 and L) or
/// withdrawn (then the main thread arrives in its place and trips the barrier with the
/// others). Nobody is stranded (a waiter left asleep is a deadlock loom reports) and each
/// trip has one leader.
fn barrier_arrival_vs_cancel(n: usize, kind: Cancel) {
    model(move || {
        let state = Arc::new(Mutex::new(State::default()));
        let cv = Arc::new(Cv::default());
        let arrive_as = move |me: &Arc<Control>, state: &Mutex<State>, cv: &Cv| {
            let wait = |g| cv.wait(me, state, g);
            arrive(n, state.lock().unwrap(), wait, || cv.notify_all())
        };
        let spawn_arrival = |me: Arc<Control>| {
            let (state, cv) = (state.clone(), cv.clone());
            thread::spawn(move || arrive_as(&me, &state, &cv))
        };
        let c1 = Arc::new(Control::new(None));
        let w1 = spawn_arrival(c1.clone());
        let w2 = (n == 3).then(|| spawn_arrival(Arc::new(Control::new(None))));
        let l = spawn_arrival(Arc::new(Control::new(None)));
        cancel(&c1, kind);
        let r1 = w1.join().unwrap();
        let filler = match r1 {
            Some(_) => None,
            None => Some(arrive_as(&Arc::new(Control::new(None)), &state, &cv)),
        };
        let mut released = vec![r1, filler.flatten(), l.join().unwrap()];
        released.extend(w2.map(|w| w.join().unwrap()));
        let released: Vec<bool> = released.into_iter().flatten().collect();
        assert_eq!(released.len(), n, "a trip released other than n");
        assert_eq!(released.iter().filter(|&&l| l).count(), 1, "one leader");
        let s = state.lock().unwrap();
        assert_eq!((s.count, s.generation), (0, 1));
    });
}

#[test]
fn loom_barrier_last_arrival_vs_thread_cancel() {
    barrier_arrival_vs_cancel(2, Cancel::Thread);
}

#[test]
fn loom_barrier_last_arrival_vs_scope_cancel() {
    barrier_arrival_vs_cancel(2, Cancel::Scope);
}

#[test]
fn loom_barrier_of_three_last_arrival_vs_thread_cancel() {
    barrier_arrival_vs_cancel(3, Cancel::Thread);
}
