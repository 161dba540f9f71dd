//! W03: with feature `interpose`, a thread that keeps making failing interposed calls in a
//! canceled run — the back-off loop that ignores its errors, whose sleep fails at once too —
//! is reported by the diagnostic as what it is, not as "running, in no system call".
// Where the interposition is built (the one condition, named by build.rs).
#![cfg(thread_cancel_interpose)]

mod common;

use std::time::{Duration, Instant};

/// `loop { if connect().is_ok() { break } sleep(200 ms) }` inside `with_timeout(100 ms)`: past
/// the deadline every call of the loop fails at once (the connect and the sleep), so it spins
/// until its own limit. The diagnostic (`THREAD_CANCEL_REPORT_MS=200`) says the thread keeps
/// making calls that fail with the cancel. Before the fix it said "running, in no system call:
/// it meets no cancellation point".
#[test]
fn w03_a_back_off_loop_spinning_on_failing_calls_is_reported_by_the_diagnostic() {
    const NAME: &str =
        "w03_a_back_off_loop_spinning_on_failing_calls_is_reported_by_the_diagnostic";
    if common::child_value().is_some() {
        // A port nobody listens on: a listener bound, then closed.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let h = std::thread::Builder::new()
            .name("backoff-worker".into())
            .spawn(move || {
                let _ = thread_cancel::with_timeout(Duration::from_millis(1), || ());
                // The budget grows until the run started its closure (a deadline that passes
                // before the run's entry rightly never starts it: no loop, no report).
                let (r, started) =
                    common::once_started(Duration::from_millis(100), |budget, entered| {
                        let started = Instant::now();
                        let r = thread_cancel::with_timeout(budget, || {
                            entered.store(true, std::sync::atomic::Ordering::SeqCst);
                            let mut tries = 0u64;
                            // The loop's own limit, long past the diagnostic's delay (200 ms
                            // after the deadline), even on a loaded machine where the reporter
                            // runs late.
                            while started.elapsed() < budget + Duration::from_millis(2_900) {
                                tries += 1;
                                if std::net::TcpStream::connect(addr).is_ok() {
                                    break;
                                }
                                std::thread::sleep(Duration::from_millis(200));
                            }
                            tries
                        });
                        (r, started)
                    });
                let tries = r.unwrap_or_else(|e| e.into_value().unwrap_or(0));
                eprintln!("the loop made {tries} tries in {:?}", started.elapsed());
            })
            .unwrap();
        h.join().unwrap();
        return;
    }
    let on = common::run_child_with_env(
        NAME,
        "child",
        Duration::from_secs(20),
        &[("THREAD_CANCEL_REPORT_MS", "200")],
    );
    assert!(on.status.success(), "{}", on.stderr);
    let line = on
        .stderr
        .lines()
        .find(|l| l.starts_with("thread-cancel: thread 'backoff-worker'"))
        .unwrap_or_else(|| panic!("no report:\n{}", on.stderr));
    eprintln!("the diagnostic said: {line}");
    for l in on.stderr.lines().filter(|l| l.starts_with("the loop made")) {
        eprintln!("{l}");
    }
    assert!(
        line.contains("keeps making calls that fail with the cancel"),
        "{line}"
    );
}
