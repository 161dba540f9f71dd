//! The opt-in diagnostic of cancels nothing acted on: with `THREAD_CANCEL_REPORT_MS=N` in the
//! environment, a thread still in the run of a canceled scope `N` ms after the cancel reached it
//! is reported on standard error, with its name and the system call it is blocked in (read from
//! `/proc/self/task/<tid>/syscall`). Without the variable, a cancel pays one atomic load.
//!
//! One thread of the crate's own, started by the first report due, waits for each due time.
//! Its writes go straight to the system call (`write(2, ..)`), never through the C library's
//! `write`: they are not cancellation points, whatever the program interposes.

use crate::control::{lock, Control};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// The delay after which a cancel not acted on is reported, if the diagnostic is on.
pub(crate) fn delay() -> Option<Duration> {
    static DELAY: OnceLock<Option<Duration>> = OnceLock::new();
    *DELAY.get_or_init(|| {
        std::env::var("THREAD_CANCEL_REPORT_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_millis)
    })
}

/// Records the calling thread's identity in its block (at its first run), if the diagnostic
/// is on.
pub(crate) fn record_identity(c: &Control) {
    if delay().is_none() {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no arguments and cannot fail.
        let tid = unsafe { libc::syscall(crate::sys::calls::GETTID) } as i32;
        c.runs.identity.tid.store(tid, Ordering::Relaxed);
    }
    let name = std::thread::current()
        .name()
        .unwrap_or("<unnamed>")
        .to_owned();
    let _ = c.runs.identity.name.set(name.into_boxed_str());
}

struct Watch {
    due: Instant,
    thread: Weak<Control>,
    scope: usize,
    depth: usize,
    canceled_at: Instant,
    /// The thread's count of interposed calls failed by a cancel when the cancel reached it.
    failed_before: u64,
}

/// A thread still in its canceled run that has made at least this many interposed calls
/// failed by the cancel since the cancel reached it is reported as spinning on them.
pub(crate) const SPINNING_CALLS: u64 = 100;

static WATCHES: Mutex<Vec<Watch>> = Mutex::new(Vec::new());
static WAKE: Condvar = Condvar::new();
static STARTED: OnceLock<bool> = OnceLock::new();

/// A cancel of scope `scope` reached these threads (each in its run at that depth): each is
/// reported if it is still in that run when the delay has passed.
pub(crate) fn watch(
    scope: usize,
    reached: &[(Arc<Control>, usize, Vec<crate::control::Callback>)],
) {
    let Some(d) = delay() else { return };
    if reached.is_empty() {
        return;
    }
    let now = Instant::now();
    {
        let mut w = lock(&WATCHES);
        for (t, depth, _) in reached {
            w.push(Watch {
                due: now + d,
                thread: Arc::downgrade(t),
                scope,
                depth: *depth,
                canceled_at: now,
                failed_before: t.runs.failed_calls.load(Ordering::Relaxed),
            });
        }
    }
    let started = *STARTED.get_or_init(|| {
        std::thread::Builder::new()
            .name("thread-cancel-report".into())
            .spawn(reporter)
            .is_ok()
    });
    if started {
        WAKE.notify_one();
    }
}

fn reporter() {
    let mut w = lock(&WATCHES);
    loop {
        let now = Instant::now();
        let (due, later): (Vec<Watch>, Vec<Watch>) = std::mem::take(&mut *w)
            .into_iter()
            .partition(|x| x.due <= now);
        *w = later;
        if !due.is_empty() {
            drop(w);
            for x in due {
                check(x);
            }
            w = lock(&WATCHES);
            continue;
        }
        w = match w.iter().map(|x| x.due).min() {
            Some(next) => {
                WAKE.wait_timeout(w, next.saturating_duration_since(now))
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            None => WAKE.wait(w).unwrap_or_else(|e| e.into_inner()),
        };
    }
}

/// Reports the thread if it is still in the run the cancel reached.
fn check(x: Watch) {
    let Some(t) = x.thread.upgrade() else { return };
    if !t.in_this_process() || t.runs.depth_of(x.scope) != Some(x.depth) {
        return;
    }
    let tid = t.runs.identity.tid.load(Ordering::Relaxed);
    let name = t.runs.identity.name.get().map_or("<unnamed>", |n| n);
    let failed = t
        .runs
        .failed_calls
        .load(Ordering::Relaxed)
        .wrapping_sub(x.failed_before);
    let elapsed = x.canceled_at.elapsed();
    let what = if failed >= SPINNING_CALLS {
        format!(
            "it keeps making calls that fail with the cancel ({failed} in {} ms, about {} a \
             second): a loop that retries on errors it does not check — a sleep in it fails at \
             once too — spins until its closure returns; stop it on the error, or on \
             thread_cancel::cancel_requested()",
            elapsed.as_millis(),
            (failed as f64 / elapsed.as_secs_f64().max(1e-3)) as u64
        )
    } else {
        blocked_in(tid)
    };
    let msg = format!(
        "thread-cancel: thread '{name}' (tid {tid}) has not acted on the cancel of its scope \
         {} ms after it reached it: {what}\n",
        elapsed.as_millis(),
    );
    write_stderr(msg.as_bytes());
}

/// What thread `tid` is doing, from `/proc`: "blocked in <system call> (arguments)", or
/// "running (in no system call)".
fn blocked_in(tid: i32) -> String {
    if tid == 0 {
        return "its system call is unknown".into();
    }
    let Ok(s) = std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")) else {
        return "its system call is unknown".into();
    };
    let mut f = s.split_whitespace();
    match f.next().map(str::parse::<libc::c_long>) {
        Some(Ok(nr)) if nr >= 0 => {
            let args: Vec<&str> = f.take(3).collect();
            format!(
                "blocked in the system call {} ({}), which is not a cancellation point of the \
                 crate: make it one (thread_cancel::io, net, process) or end it from an \
                 on_cancel callback",
                syscall_name(nr),
                args.join(", ")
            )
        }
        _ => "running, in no system call: it meets no cancellation point".into(),
    }
}

/// The name of system call `nr`: the calls the crate names (`sys::calls`: every call it makes,
/// and what other code usually blocks in), else its number.
fn syscall_name(nr: libc::c_long) -> String {
    #[cfg(target_os = "linux")]
    if let Some((_, n)) = crate::sys::calls::NAMES.iter().find(|(k, _)| *k == nr) {
        return n.trim_start_matches("SYS_").to_owned();
    }
    format!("number {nr}")
}

/// Writes `b` to standard error with the system call itself (not the C library's `write`).
fn write_stderr(mut b: &[u8]) {
    while !b.is_empty() {
        // SAFETY: `b` is valid for reads of its length; descriptor 2 is only written.
        #[cfg(target_os = "linux")]
        let r = unsafe { libc::syscall(crate::sys::calls::WRITE, 2, b.as_ptr(), b.len()) };
        // SAFETY: as above.
        #[cfg(not(target_os = "linux"))]
        let r = unsafe { libc::write(2, b.as_ptr().cast(), b.len()) } as libc::c_long;
        if r <= 0 {
            if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        b = &b[r as usize..];
    }
}
