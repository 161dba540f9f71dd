//! Helpers shared by the integration tests (each test binary says `mod common;`).
//!
//! - Stress counts: [`stress_iters`] / [`stress_count`] read `THREAD_CANCEL_STRESS`,
//!   [`enough`] adds the optional time cap `THREAD_CANCEL_STRESS_SECS`.
//! - Hangs: [`HANG`], the one bound after which something that must happen counts as hung
//!   (hangs are detected with it, never asserted on elapsed time); [`wait_for`];
//!   [`once_started`] (a deadline's budget grown until the run started its closure).
//! - Races: [`Rng`] (a seeded, replayable generator), [`spin_for`], [`raw_sleep`] (a sleep that
//!   is no point, interposed or not).
//! - Threads seen from the kernel: [`gettid`], [`wait_blocked`], [`wait_blocked_in_read`],
//!   [`Tid`] (a thread's id published by the thread itself, to wait until it is blocked).
//! - Watchdogs: [`within_hang`] (a call that would hang fails the test, naming what it waited
//!   for).
//! - Re-executing the test binary: [`run_child`] (through `THREAD_CANCEL_TEST_RUNNER` under
//!   emulation; [`run_child_under`] through a wrapper command such as `unshare`), [`CHILD_ENV`].
//! - Small values: [`Log`], [`SetOnDrop`], [`panic_message`], [`drain`],
//!   [`cancel_while_blocked`].
//! - Intentional panics: [`quiet_expected_panics`] and [`EXPECTED_PANIC`].
//!
//! Not every binary uses every helper.
#![allow(dead_code)]

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thread_cancel::{cleanup_push, JoinHandle};

// ---------------------------------------------------------------------------------------------
// Stress counts and hangs

/// The races (or rounds) a stress test runs: `THREAD_CANCEL_STRESS`, else `default`.
pub fn stress_count(default: usize) -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The races a stress test runs: `THREAD_CANCEL_STRESS`, default 2,000.
pub fn stress_iters() -> usize {
    stress_count(2_000)
}

/// An optional time limit per stress test (`THREAD_CANCEL_STRESS_SECS`): a long run stops
/// there and reports the exact number of races it ran.
pub fn time_limit() -> Option<Duration> {
    std::env::var("THREAD_CANCEL_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs)
}

/// Whether a stress test started at `started` has run its races or its time.
pub fn enough(races: usize, started: Instant) -> bool {
    races >= stress_iters() || time_limit().is_some_and(|l| started.elapsed() >= l)
}

/// Longer than any legitimate wake-up takes on a loaded machine: something that must happen
/// and has not after this is hung (reported, not waited for).
pub const HANG: Duration = Duration::from_secs(20);

/// Waits until `done()` holds; false if it still does not after [`HANG`].
pub fn wait_for(mut done: impl FnMut() -> bool) -> bool {
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

/// Runs `attempt` with a deadline budget that doubles from `first` until the closure it runs
/// under that budget has started (sets `started`), and returns that attempt's result. On a
/// loaded or emulated machine a short deadline can pass before the run's entry, which then
/// rightly never starts its closure: a test of what a started closure does (a missed deadline,
/// a value kept) waits for an attempt that started, never for a lucky schedule.
pub fn once_started<T>(first: Duration, mut attempt: impl FnMut(Duration, &AtomicBool) -> T) -> T {
    let mut budget = first;
    loop {
        let started = AtomicBool::new(false);
        let r = attempt(budget, &started);
        if started.load(Ordering::SeqCst) {
            return r;
        }
        assert!(
            budget < HANG,
            "no run started its closure within a budget of {budget:?}"
        );
        budget = (budget * 2).max(Duration::from_millis(1));
    }
}

/// Sleeps `d` with the raw system call (neither interposed nor a point): async-signal-safe,
/// for a `pre_exec` closure.
pub fn raw_sleep(d: Duration) {
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: a valid `timespec`; no remaining time asked for.
    unsafe {
        libc::syscall(
            libc::SYS_nanosleep,
            &ts,
            std::ptr::null_mut::<libc::timespec>(),
        )
    };
}

// ---------------------------------------------------------------------------------------------
// Races

/// Busy-waits `d` (finer than `sleep`; no cancellation point, no system call).
pub fn spin_for(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// A small deterministic generator (xorshift), seeded per round: the races vary, and a
/// failing round can be replayed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: usize) -> Self {
        Self((seed as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True once in `one_in` on average.
    pub fn coin(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    /// Shuffles `v` (Fisher–Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
    /// A pause of varied length, so cancels land before, during and after the waits.
    pub fn jitter(&mut self) {
        match self.below(8) {
            0 | 1 => {}
            2 | 3 => std::thread::yield_now(),
            4 | 5 => spin_for(Duration::from_micros(self.below(20) as u64)),
            6 => spin_for(Duration::from_micros(20 + self.below(100) as u64)),
            _ => std::thread::sleep(Duration::from_micros(50)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Threads seen from the kernel

/// The calling thread's kernel id.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// The state letter of thread `tid` of this process (`S` when it sleeps in the kernel).
fn thread_state(tid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap_or_default();
    // The state follows the parenthesised command name.
    stat.rsplit_once(") ").and_then(|(_, r)| r.chars().next())
}

/// Whether thread `tid` is in the system call `read` on descriptor `fd`. Under an emulator
/// (`THREAD_CANCEL_TEST_RUNNER`, qemu-user) `/proc` shows the host's system calls, not the
/// program's: there it cannot tell, and says yes (the thread is then only known to sleep in
/// the kernel).
fn in_read_of(tid: i32, fd: i32) -> bool {
    if std::env::var_os("THREAD_CANCEL_TEST_RUNNER").is_some() {
        return true;
    }
    let sc = std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")).unwrap_or_default();
    let mut f = sc.split_whitespace();
    let nr = f.next().and_then(|n| n.parse::<i64>().ok());
    let arg0 = f
        .next()
        .and_then(|a| i64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
    nr == Some(libc::SYS_read) && arg0 == Some(i64::from(fd))
}

/// Whether thread `tid` sleeps in a `futex` wait on a word in `range` (the addresses of a lock
/// of the crate's, say). It cannot tell, and says yes, under an emulator
/// (`THREAD_CANCEL_TEST_RUNNER`: `/proc` shows the host's calls) and in the portable layer
/// (`--cfg thread_cancel_portable`: the crate's futex is emulated on `std`'s condition
/// variables, so the kernel's futex word is not the lock's).
pub fn in_futex_wait_within(tid: i32, range: std::ops::Range<usize>) -> bool {
    if std::env::var_os("THREAD_CANCEL_TEST_RUNNER").is_some() || cfg!(thread_cancel_portable) {
        return true;
    }
    let sc = std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")).unwrap_or_default();
    let mut f = sc.split_whitespace();
    let nr = f.next().and_then(|n| n.parse::<i64>().ok());
    let arg0 = f
        .next()
        .and_then(|a| usize::from_str_radix(a.trim_start_matches("0x"), 16).ok());
    thread_state(tid) == Some('S')
        && nr == Some(libc::SYS_futex)
        && arg0.is_some_and(|a| range.contains(&a))
}

/// Waits until thread `tid` sleeps in the kernel (state `S`, seen three times in a row), and,
/// with `read_fd`, in `read` on that descriptor: a signal or request sent next finds it
/// blocked, not on its way in. Fails the test after [`HANG`].
fn wait_until_blocked(tid: i32, read_fd: Option<i32>) {
    let t0 = Instant::now();
    let mut seen = 0;
    while seen < 3 {
        let blocked =
            thread_state(tid) == Some('S') && read_fd.is_none_or(|fd| in_read_of(tid, fd));
        seen = if blocked { seen + 1 } else { 0 };
        assert!(t0.elapsed() < HANG, "thread {tid} never blocked");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Waits until thread `tid` of this process sleeps in the kernel.
pub fn wait_blocked(tid: i32) {
    wait_until_blocked(tid, None);
}

/// Waits until thread `tid` of this process sleeps in the kernel in `read(fd, ...)`.
pub fn wait_blocked_in_read(tid: i32, fd: i32) {
    wait_until_blocked(tid, Some(fd));
}

/// A thread's kernel id, published by the thread itself ([`Tid::set`]) so that another can
/// wait until it is blocked: the order "the thread is in its call, then act" without a sleep.
#[derive(Clone, Default)]
pub struct Tid(Arc<AtomicI32>);

impl Tid {
    pub fn new() -> Self {
        Self::default()
    }
    /// Publishes the calling thread's id.
    pub fn set(&self) {
        self.0.store(gettid(), Ordering::SeqCst);
    }
    /// The published id; waits for it, and fails the test after [`HANG`].
    pub fn get(&self) -> i32 {
        assert!(
            wait_for(|| self.0.load(Ordering::SeqCst) != 0),
            "the thread never published its id (never started) within {HANG:?}"
        );
        self.0.load(Ordering::SeqCst)
    }
    /// Waits until the thread has published its id and sleeps in the kernel ([`wait_blocked`]).
    pub fn wait_blocked(&self) {
        wait_blocked(self.get());
    }
    /// Waits until the thread has published its id and sleeps in `read(fd, ...)`.
    pub fn wait_blocked_in_read(&self, fd: i32) {
        wait_blocked_in_read(self.get(), fd);
    }
}

/// `thread_cancel::spawn(f)`, the thread publishing its kernel id before it runs `f`: the
/// test can then wait until it is blocked in its call ([`Tid::wait_blocked`]).
pub fn spawn_watched<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> (JoinHandle<T>, Tid) {
    let tid = Tid::new();
    let t2 = tid.clone();
    let h = thread_cancel::spawn(move || {
        t2.set();
        f()
    });
    (h, tid)
}

/// Waits until `flag` is set; fails the test, naming `what`, after [`HANG`].
pub fn wait_flag(flag: &AtomicBool, what: &str) {
    assert!(
        wait_for(|| flag.load(Ordering::SeqCst)),
        "{what}: not seen within {HANG:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Watchdogs

/// Runs `f` on another thread and returns its value; if it has not returned after [`HANG`],
/// calls `release` (which should let it end, so the process is not left with a stuck thread)
/// and fails the test naming `what`: a call that would hang fails instead.
pub fn within_hang<T: Send + 'static>(
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
    release: impl FnOnce(),
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(HANG) {
        Ok(v) => {
            t.join().unwrap();
            v
        }
        Err(_) => {
            release();
            panic!("hung: {what} did not return within {HANG:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Re-executing the test binary

/// Set in a child process started by [`run_child`]; its value tells the test what to do
/// (which scenario, or which mode).
pub const CHILD_ENV: &str = "THREAD_CANCEL_TEST_CHILD";

/// The value of [`CHILD_ENV`] in a child process, `None` in the test process itself.
pub fn child_value() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

/// How a child process ended.
pub struct ChildRun {
    pub status: ExitStatus,
    pub stderr: String,
}

/// A command that runs this test binary again: directly, or through the emulator named by
/// `THREAD_CANCEL_TEST_RUNNER` (words separated by spaces, as Cargo's `runner`) when the tests
/// run under user-mode emulation, where the binary cannot be executed by the host.
fn self_command() -> Command {
    self_command_under(&[])
}

/// [`self_command`], run by the command `wrapper` (a program and its arguments, e.g.
/// `unshare --net`), which is given the test binary (or its emulator) to run.
fn self_command_under(wrapper: &[&str]) -> Command {
    let exe = std::env::current_exe().unwrap();
    let runner = std::env::var("THREAD_CANCEL_TEST_RUNNER").unwrap_or_default();
    let mut words: Vec<std::ffi::OsString> = wrapper.iter().map(Into::into).collect();
    words.extend(runner.split_whitespace().map(Into::into));
    words.push(exe.into());
    let mut c = Command::new(&words[0]);
    c.args(&words[1..]);
    c
}

/// Runs the test `name` of this binary alone in a child process with [`CHILD_ENV`] set to
/// `value`, and returns how it ended; a child still running after `limit` is killed and the
/// test fails with its standard error.
pub fn run_child(name: &str, value: &str, limit: Duration) -> ChildRun {
    run_child_with_env(name, value, limit, &[])
}

/// [`run_child`], with more variables in the child's environment.
pub fn run_child_with_env(
    name: &str,
    value: &str,
    limit: Duration,
    env: &[(&str, &str)],
) -> ChildRun {
    run_child_under(&[], name, value, limit, env)
}

/// [`run_child_with_env`], the child run by the command `wrapper` (see [`self_command_under`];
/// empty: none).
pub fn run_child_under(
    wrapper: &[&str],
    name: &str,
    value: &str,
    limit: Duration,
    env: &[(&str, &str)],
) -> ChildRun {
    let mut child = self_command_under(wrapper)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, value)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).unwrap();
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            let _ = child.wait();
            panic!(
                "{name}: the child hung; its stderr:\n{}",
                reader.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    ChildRun {
        status,
        stderr: reader.join().unwrap(),
    }
}

// ---------------------------------------------------------------------------------------------
// Small values

/// An ordered event log shared by threads and the test.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    pub fn get(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Sets its flag when dropped.
pub struct SetOnDrop(pub Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The message of a panic payload (`&str` or `String`), or "".
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Makes `fd` non-blocking.
pub fn set_nonblocking(fd: &impl AsRawFd) {
    // SAFETY: fcntl on a descriptor we own, with valid flags.
    unsafe {
        let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

/// Reads everything left in a descriptor (made non-blocking); returns the byte count.
pub fn drain(fd: &OwnedFd) -> usize {
    set_nonblocking(fd);
    let mut f = std::fs::File::from(fd.try_clone().unwrap());
    let mut buf = [0u8; 4096];
    let mut n = 0;
    while let Ok(k) = f.read(&mut buf) {
        if k == 0 {
            break;
        }
        n += k;
    }
    n
}

/// Runs `body` in a thread made by `spawn`, behind a cleanup handler; once the thread is seen
/// blocked in the kernel (`body` must block there), cancels it and checks that it reports `Canceled` after the
/// handler ran, woken at once (not by a timeout).
pub fn cancel_while_blocked_on(
    spawn: impl FnOnce(Box<dyn FnOnce() + Send>) -> JoinHandle<()>,
    body: impl FnOnce() + Send + 'static,
) {
    let cleaned = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (c, s) = (cleaned.clone(), started.clone());
    let tid = Tid::new();
    let t2 = tid.clone();
    let h = spawn(Box::new(move || {
        let _g = cleanup_push(move || c.store(true, Ordering::SeqCst));
        t2.set();
        s.store(true, Ordering::SeqCst);
        body();
        panic!("the blocking call returned");
    }));
    assert!(wait_for(|| started.load(Ordering::SeqCst)), "never started");
    tid.wait_blocked(); // blocked in its call: the cancel interrupts it, not its start
    let t = Instant::now();
    h.cancel().unwrap();
    let o = h.join();
    assert!(o.is_canceled(), "outcome: {o:?}");
    assert!(cleaned.load(Ordering::SeqCst));
    // The bodies' own timeouts are an hour: woken by the cancel, not by one.
    let took = t.elapsed();
    assert!(
        took < HANG,
        "woken by the cancel, not a timeout: took {took:?}"
    );
}

/// [`cancel_while_blocked_on`] a thread of `thread_cancel::spawn`.
pub fn cancel_while_blocked(body: impl FnOnce() + Send + 'static) {
    cancel_while_blocked_on(thread_cancel::spawn, body);
}

// ---------------------------------------------------------------------------------------------
// Intentional panics

/// Carried by the message of every panic a test causes on purpose.
pub const EXPECTED_PANIC: &str = "(expected by the test)";

/// Installs, once per process, a panic hook that prints nothing for a panic whose message
/// carries [`EXPECTED_PANIC`] and hands every other panic to the hook that was there before
/// (the default one prints it as usual). Call it first in a test that panics on purpose where
/// the test harness does not capture the output (a thread the harness does not know of), and
/// before installing another hook that should still see those panics.
pub fn quiet_expected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !panic_message(info.payload()).contains(EXPECTED_PANIC) {
                prev(info);
            }
        }));
    });
}

/// Spins (no cancellation point) until `flag` is set.
pub fn spin_until(flag: &AtomicBool) {
    while !flag.load(Ordering::SeqCst) {
        std::hint::spin_loop();
    }
}
