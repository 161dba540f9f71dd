//! Code the crate does not own, inside a deadline: std's sleep, net, fs and process calls, and
//! the documented `on_cancel` workaround. Each row of the table runs inside
//! `with_timeout(100 ms)`; the call itself would take about 600 ms (six budgets: on a loaded
//! or emulated machine the deadline can pass before the run's entry, which then rightly never
//! starts the closure, and the budget is doubled until a run started it).
//!
//! Without interposition (this file's rows, rule C08): such a call is not a cancellation point,
//! so it runs to its end; the run then reports the deadline (`TimedOut`, `deadline_passed()`)
//! with the call's result kept (`into_value()`), and says whether anything acted on it —
//! never `Ok` in silence. With the feature, these calls are points: `tests/interpose.rs` has
//! the same table, ending at the deadline.
#![cfg(not(thread_cancel_interpose))]

mod common;

use common::HANG;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use thread_cancel::{with_timeout, TimedOut};

/// The first budget of a row.
const BUDGET: Duration = Duration::from_millis(100);
/// How many budgets a row's call takes.
const CALL: u32 = 6;

/// How a row ended: its error (the run must report the deadline), when, and its budget.
struct Row<R> {
    name: &'static str,
    took: Duration,
    budget: Duration,
    result: Result<R, TimedOut<R>>,
}

/// Runs `f` under `with_timeout`, its budget `BUDGET` doubled until the run started its
/// closure (a deadline that passes before the run's entry rightly never starts it, and there
/// is no value); `f` is given the time its call takes: `CALL` budgets.
fn row<R>(name: &'static str, mut f: impl FnMut(Duration) -> R) -> Row<R> {
    // The timer thread is started by a first deadline, so that no row spends its own on it.
    let _ = with_timeout(Duration::from_millis(1), || ());
    common::once_started(BUDGET, |budget, started| {
        let t = Instant::now();
        let result = with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            f(budget * CALL)
        });
        Row {
            name,
            took: t.elapsed(),
            budget,
            result,
        }
    })
}

/// The run reported the deadline, kept the completed call's value, and said nothing acted.
fn missed<R: std::fmt::Debug>(r: Row<R>) -> R {
    let e = r
        .result
        .unwrap_err_or_else(|v| panic!("{}: Ok({v:?}) in silence", r.name));
    eprintln!(
        "{:<44} Err(TimedOut), acted {}, value kept, after {:?}",
        r.name,
        e.acted(),
        r.took
    );
    assert!(e.deadline_passed(), "{}", r.name);
    assert!(!e.acted(), "{}: nothing could act", r.name);
    // Never before the deadline; that the call ran to its end is shown by its value, kept.
    assert!(
        r.took >= r.budget,
        "{}: ended after {:?}, before its deadline {:?}",
        r.name,
        r.took,
        r.budget
    );
    e.into_value()
        .expect("the call completed: its value is kept")
}

trait UnwrapErrOr<R, E> {
    fn unwrap_err_or_else(self, f: impl FnOnce(R) -> E) -> E;
}

impl<R, E> UnwrapErrOr<R, E> for Result<R, E> {
    fn unwrap_err_or_else(self, f: impl FnOnce(R) -> E) -> E {
        match self {
            Ok(v) => f(v),
            Err(e) => e,
        }
    }
}

#[test]
fn c08_std_sleep_past_its_deadline_is_reported() {
    missed(row("std::thread::sleep(6 budgets)", std::thread::sleep));
}

#[test]
fn c08_std_tcp_read_past_its_deadline_is_reported_with_the_data() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    // The server replies the call's time after the run's closure started (which tells it).
    let (call_tx, call_rx) = mpsc::channel();
    let server = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        std::thread::sleep(call_rx.recv().unwrap());
        s.write_all(b"reply").unwrap();
    });
    let got = missed(row(
        "std TcpStream::read_to_string (reply at 6 budgets)",
        |call| {
            call_tx.send(call).unwrap();
            let mut s = TcpStream::connect(addr).unwrap();
            let mut text = String::new();
            s.read_to_string(&mut text).map(|_| text)
        },
    ));
    assert_eq!(got.unwrap(), "reply", "the data is not lost");
    server.join().unwrap();
}

#[test]
fn c08_std_command_output_past_its_deadline_is_reported_with_the_status() {
    let out = missed(row("Command::output() of a sleep of 6 budgets", |call| {
        std::process::Command::new("sleep")
            .arg(call.as_secs_f64().to_string())
            .output()
    }));
    assert!(out.unwrap().status.success());
}

#[test]
fn c08_std_fs_read_of_a_fifo_past_its_deadline_is_reported_with_the_data() {
    let dir = std::env::temp_dir().join(format!("tc-reach-fifo-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string and a mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let p = dir.clone();
    // The writer writes the call's time after the run's closure started (which tells it).
    let (call_tx, call_rx) = mpsc::channel();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(call_rx.recv().unwrap());
        std::fs::write(p, b"fifo data").unwrap();
    });
    let got = missed(row("std::fs::read of a FIFO (data at 6 budgets)", |call| {
        call_tx.send(call).unwrap();
        std::fs::read(&dir)
    }));
    assert_eq!(got.unwrap(), b"fifo data");
    writer.join().unwrap();
    std::fs::remove_file(&dir).unwrap();
}

/// The documented workaround: an `on_cancel` callback shuts the socket down, so std's read
/// returns at the deadline — with an empty answer, which the run reports as the deadline having
/// acted (not `Ok(Ok(""))`).
#[test]
fn c08_std_read_ended_by_an_on_cancel_shutdown_is_reported_as_acted() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    // The server holds the connection open until the row is done (or `HANG`): only the
    // callback's shutdown can end the read early.
    let (done, done_rx) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        let _ = done_rx.recv_timeout(HANG);
        drop(s);
    });
    let r = row("std read + on_cancel(shutdown)", |_| {
        let s = TcpStream::connect(addr).unwrap();
        let s2 = s.try_clone().unwrap();
        let _g = thread_cancel::on_cancel(move || {
            let _ = s2.shutdown(Shutdown::Both);
        });
        let mut text = String::new();
        (&s).read_to_string(&mut text).map(|_| text)
    });
    let e = r
        .result
        .unwrap_err_or_else(|v| panic!("Ok({v:?}) in silence"));
    eprintln!(
        "{:<44} Err(TimedOut), acted {}, value {:?}, after {:?}",
        r.name,
        e.acted(),
        e.value(),
        r.took
    );
    assert!(e.deadline_passed() && e.acted());
    assert!(r.took < HANG, "not ended by the callback: {:?}", r.took);
    assert_eq!(e.into_value().unwrap().unwrap(), "");
    done.send(()).unwrap();
    server.join().unwrap();
}

/// The crate's own wait is a point: `process::wait_or_kill` of `sleep 3` ends at the deadline,
/// and the child is killed and reaped (plain `process::wait` leaves it running: no effect); the
/// run's value is the status of the kill. (`sleep 3` is not made longer with the budget: a run
/// that starts by its fourth budget, 1.5 s in all, still finds it running.)
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "a blocked system call is not interrupted there"
)]
fn c08_process_wait_or_kill_ends_at_the_deadline_and_leaves_no_child() {
    let mut child = std::process::Command::new("sleep")
        .arg("3")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let r = row("process::wait_or_kill of sleep 3", |_| {
        thread_cancel::process::wait_or_kill(&mut child)
    });
    let e = r.result.unwrap_err_or_else(|v| panic!("Ok({v:?})"));
    eprintln!(
        "{:<44} Err(TimedOut), acted {}, after {:?}",
        r.name,
        e.acted(),
        r.took
    );
    assert!(e.acted());
    let status = e.into_value().expect("the status of the kill").unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    assert!(r.took < HANG, "not ended by the deadline: {:?}", r.took);
    // SAFETY: signal 0 only asks whether the process exists.
    assert_eq!(
        unsafe { libc::kill(pid, 0) },
        -1,
        "the child is still there"
    );
}
