//! Model-based property test: random per-thread operation sequences are run on a real
//! cancelable thread and compared, event by event, with a small sequential model of the rules.
//!
//! The model (what the library documents and implements):
//!
//! - a new thread is ENABLED + DEFERRED with nothing pending (R02);
//! - `Cancel` (sent from another thread, sequenced by a join of the helper) only sets
//!   `pending`; several requests are one (R01, R03);
//! - a pending request is acted on only at these points (R05, R13, R14, R04):
//!   `testcancel()` when enabled; `set_cancel_state(Enabled)` when the type is asynchronous;
//!   `set_cancel_type(Asynchronous)` when enabled; `enable_and_test()` always. A request that
//!   arrives while enabled + asynchronous is acted on at the next of those points (outside an
//!   `async_region` there is no signal);
//! - acting runs every pushed handler, last pushed first, and the join reports `Canceled`
//!   (R07, R09, R16); `exit(v)` runs them likewise and the join reports `Exited(v)` (R21);
//! - `pop(true)` runs the handler, `pop(false)` does not (R15); returning normally runs none;
//! - `set_cancel_state` / `set_cancel_type` return the previous value (R11, R12).

mod common;

use common::panic_message;
use proptest::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};
use thread_cancel::{CancelState, CancelType, Outcome};

/// One operation of the thread under test.
#[derive(Clone, Debug)]
enum Op {
    SetState(CancelState),
    SetType(CancelType),
    Test,
    /// A request from another thread, sequenced before the next operation.
    Cancel,
    /// `enable_and_test()` (the IRIX form of R13).
    EnableAndTest,
    Exit(u32),
    /// `cleanup_push`, the body, then `pop(execute)`.
    Push(Vec<Op>, bool),
}

/// What the thread records, in order. `id`s are the pre-order indices of the operations.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    /// The operation `id` has completed (for `Push`, after its pop).
    Done(u32),
    /// A cleanup handler, pushed by the operation `id`, ran.
    Handler(u32),
    /// What `set_cancel_state` or `enable_and_test` returned.
    PrevState(CancelState),
    /// What `set_cancel_type` returned.
    PrevType(CancelType),
}

/// How the thread ended, comparable.
#[derive(Debug, PartialEq, Eq)]
enum End {
    Returned(u32),
    Exited(u32),
    Canceled,
    Panicked(String),
}

/// The value the thread's start function returns when the operations run to the end.
const RETURNED: u32 = 0xC0FFEE;

type Log = Arc<Mutex<Vec<Event>>>;

fn record(log: &Log, e: Event) {
    log.lock().unwrap_or_else(PoisonError::into_inner).push(e);
}

// ---------------------------------------------------------------------------------------------
// The model.

struct Model {
    enabled: bool,
    asynchronous: bool,
    pending: bool,
    /// Ids of the handlers currently pushed, innermost last.
    handlers: Vec<u32>,
    next_id: u32,
    log: Vec<Event>,
}

/// Why the model stopped before the end of the operations.
enum Stop {
    Canceled,
    Exited(u32),
}

impl Model {
    fn new() -> Self {
        Self {
            enabled: true,
            asynchronous: false,
            pending: false,
            handlers: Vec::new(),
            next_id: 0,
            log: Vec::new(),
        }
    }

    /// All handlers run, innermost first.
    fn unwind(&mut self, stop: Stop) -> Result<(), Stop> {
        while let Some(id) = self.handlers.pop() {
            self.log.push(Event::Handler(id));
        }
        Err(stop)
    }

    fn act_if(&mut self, cond: bool) -> Result<(), Stop> {
        if cond {
            self.unwind(Stop::Canceled)
        } else {
            Ok(())
        }
    }

    fn state(&self) -> CancelState {
        if self.enabled {
            CancelState::Enabled
        } else {
            CancelState::Disabled
        }
    }

    fn run(&mut self, ops: &[Op]) -> Result<(), Stop> {
        for op in ops {
            let id = self.next_id;
            self.next_id += 1;
            match op {
                Op::SetState(s) => {
                    let prev = self.state();
                    self.enabled = *s == CancelState::Enabled;
                    self.act_if(self.enabled && self.asynchronous && self.pending)?;
                    // The previous state is returned (and logged) only if it did not act.
                    self.log.push(Event::PrevState(prev));
                }
                Op::SetType(t) => {
                    let prev = if self.asynchronous {
                        CancelType::Asynchronous
                    } else {
                        CancelType::Deferred
                    };
                    self.asynchronous = *t == CancelType::Asynchronous;
                    self.act_if(self.enabled && self.asynchronous && self.pending)?;
                    self.log.push(Event::PrevType(prev));
                }
                Op::Test => self.act_if(self.enabled && self.pending)?,
                Op::Cancel => self.pending = true,
                Op::EnableAndTest => {
                    let prev = self.state();
                    self.enabled = true;
                    // Acts on a pending request whatever the type; the previous state is
                    // returned (and logged) only when it does not.
                    self.act_if(self.pending)?;
                    self.log.push(Event::PrevState(prev));
                }
                Op::Exit(v) => self.unwind(Stop::Exited(*v))?,
                Op::Push(body, execute) => {
                    self.handlers.push(id);
                    self.run(body)?;
                    let popped = self.handlers.pop();
                    assert_eq!(popped, Some(id), "model: push/pop mismatch");
                    if *execute {
                        self.log.push(Event::Handler(id));
                    }
                }
            }
            self.log.push(Event::Done(id));
        }
        Ok(())
    }
}

/// The model's prediction: the full event log and the outcome.
fn predict(ops: &[Op]) -> (Vec<Event>, End) {
    let mut m = Model::new();
    let end = match m.run(ops) {
        Ok(()) => End::Returned(RETURNED),
        Err(Stop::Canceled) => End::Canceled,
        Err(Stop::Exited(v)) => End::Exited(v),
    };
    (m.log, end)
}

// ---------------------------------------------------------------------------------------------
// The real run.

fn run_real(ops: &[Op], next_id: &mut u32, log: &Log) {
    for op in ops {
        let id = *next_id;
        *next_id += 1;
        match op {
            Op::SetState(s) => {
                let prev = thread_cancel::set_cancel_state(*s);
                record(log, Event::PrevState(prev));
            }
            Op::SetType(t) => {
                let prev = thread_cancel::set_cancel_type(*t);
                record(log, Event::PrevType(prev));
            }
            Op::Test => thread_cancel::testcancel(),
            Op::Cancel => {
                let c = thread_cancel::current();
                std::thread::spawn(move || c.cancel())
                    .join()
                    .expect("the canceling helper panicked")
                    .expect("the thread under test is alive");
            }
            Op::EnableAndTest => {
                let prev = thread_cancel::enable_and_test();
                record(log, Event::PrevState(prev));
            }
            Op::Exit(v) => thread_cancel::exit(*v),
            Op::Push(body, execute) => {
                let l = log.clone();
                let g = thread_cancel::cleanup_push(move || record(&l, Event::Handler(id)));
                run_real(body, next_id, log);
                g.pop(*execute);
            }
        }
        record(log, Event::Done(id));
    }
}

fn observe(ops: &[Op]) -> (Vec<Event>, End) {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let ops = ops.to_vec();
    let h = thread_cancel::spawn(move || {
        let mut next_id = 0;
        run_real(&ops, &mut next_id, &l);
        RETURNED
    });
    let end = match h.join() {
        Outcome::Returned(v) => End::Returned(v),
        Outcome::Exited(v) => End::Exited(v),
        Outcome::Canceled => End::Canceled,
        Outcome::Panicked(p) => End::Panicked(panic_message(&*p)),
    };
    let events = std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner));
    (events, end)
}

// ---------------------------------------------------------------------------------------------
// Strategies.

fn leaf() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop_oneof![Just(CancelState::Enabled), Just(CancelState::Disabled)]
            .prop_map(Op::SetState),
        3 => prop_oneof![Just(CancelType::Deferred), Just(CancelType::Asynchronous)]
            .prop_map(Op::SetType),
        3 => Just(Op::Test),
        2 => Just(Op::Cancel),
        1 => Just(Op::EnableAndTest),
        1 => any::<u32>().prop_map(Op::Exit),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    // Nesting depth <= 3, about 30 operations in all.
    leaf().prop_recursive(3, 30, 5, |inner| {
        (prop::collection::vec(inner, 0..5), any::<bool>())
            .prop_map(|(body, execute)| Op::Push(body, execute))
    })
}

fn count(ops: &[Op]) -> usize {
    ops.iter()
        .map(|o| match o {
            Op::Push(body, _) => 1 + count(body),
            _ => 1,
        })
        .sum()
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 0..10).prop_filter("at most 30 operations", |o| count(o) <= 30)
}

fn check(ops: &[Op]) -> Result<(), TestCaseError> {
    let (want_log, want_end) = predict(ops);
    let (got_log, got_end) = observe(ops);
    prop_assert_eq!(&got_end, &want_end, "outcome; log was {:?}", got_log);
    prop_assert_eq!(got_log, want_log);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1024,
        // No regression files: this test must not write beside the sources.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random nested sequences of state/type changes, tests, requests from another thread,
    /// cleanup push/pop and exit: the real thread's event log (operations completed, handlers
    /// run, previous state/type returned) and its outcome equal the model's.
    #[test]
    fn r02_r03_r05_r11_r12_r13_r14_r15_r16_r21_model_random_sequences(ops in ops()) {
        check(&ops)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed sequences for the rules the random search may hit rarely.

fn must_match(ops: &[Op]) {
    check(ops).unwrap_or_else(|e| panic!("{ops:?}: {e}"));
}

/// A request that arrives while enabled + asynchronous is acted on at the next state/type
/// transition to asynchronous/enabled, not before.
#[test]
fn r03_r06_r13_async_request_acted_at_next_transition() {
    use CancelState::*;
    use CancelType::*;
    must_match(&[
        Op::SetType(Asynchronous),
        Op::Push(vec![Op::Cancel, Op::SetType(Asynchronous)], false),
    ]);
    must_match(&[Op::SetType(Asynchronous), Op::Cancel, Op::SetState(Enabled)]);
    must_match(&[
        Op::SetType(Asynchronous),
        Op::SetState(Disabled),
        Op::Cancel,
        Op::SetType(Deferred),
        Op::SetType(Asynchronous),
        Op::SetState(Enabled),
    ]);
    let (log, end) = predict(&[Op::SetType(Asynchronous), Op::Cancel, Op::SetState(Enabled)]);
    assert_eq!(end, End::Canceled);
    assert_eq!(
        log,
        vec![Event::PrevType(Deferred), Event::Done(0), Event::Done(1)]
    );
}

/// With cancellation disabled a request stays pending through tests and type changes; several
/// requests count as one; enabling while deferred acts only at the next point.
#[test]
fn r03_r04_r13_r14_disabled_request_waits_for_the_next_point() {
    use CancelState::*;
    use CancelType::*;
    let ops = [Op::Push(
        vec![
            Op::SetState(Disabled),
            Op::Cancel,
            Op::Cancel,
            Op::Test,
            Op::SetType(Asynchronous),
            Op::SetType(Deferred),
            Op::SetState(Enabled),
            Op::Push(vec![Op::Test], true),
        ],
        true,
    )];
    must_match(&ops);
    let (log, end) = predict(&ops);
    assert_eq!(end, End::Canceled);
    // Both handlers ran, the inner one first, after the test inside the inner push.
    assert_eq!(log[log.len() - 2..], [Event::Handler(8), Event::Handler(0)]);
}

/// `exit` runs every pushed handler, last pushed first, and a pending request does not turn it
/// into a cancellation; popped handlers run only with `pop(true)`.
#[test]
fn r15_r16_r21_exit_runs_handlers_lifo() {
    use CancelState::*;
    must_match(&[
        Op::Push(vec![], true),
        Op::Push(vec![], false),
        Op::Push(
            vec![
                Op::SetState(Disabled),
                Op::Cancel,
                Op::Push(vec![Op::Exit(7)], true),
            ],
            true,
        ),
    ]);
    must_match(&[Op::Push(vec![Op::Push(vec![], true)], false)]);
}
