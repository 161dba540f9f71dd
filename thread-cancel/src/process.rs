//! Waiting for a child process as a cancellation point (C's `wait`, `waitid`, `waitpid`), and
//! running one to its end ([`output`]) so that a cancel kills and reaps it.
//!
//! A canceled [`wait_or_kill`] or [`output`] leaves nothing running: the child is killed with
//! its descendants — a shell's own children too — (on Linux and Android; elsewhere, or without
//! pidfds, the child alone), what they wrote before the kill is still collected ([`output`]),
//! and the child is reaped. Then a scope's cancel returns that result (the run reports the
//! cancel, acted on, with it as its value: [`Canceled::value`](crate::Canceled::value)), and a
//! thread cancel goes on unwinding.
//!
//! ```
//! use std::process::Command;
//! let r = thread_cancel::with_timeout(std::time::Duration::from_millis(300), || {
//!     let script = "echo before; sleep 3600; echo after"; // the shell forks the sleep
//!     thread_cancel::process::output(Command::new("sh").args(["-c", script]))
//! });
//! let out = r.unwrap_err().into_value().unwrap().unwrap();
//! assert_eq!(out.stdout, b"before\n"); // kept; the shell and its sleep are killed
//! ```

use crate::control::ScopeUnwind;
use crate::sys::process as process_tree;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// Waits for `child` to exit; a cancellation point. The wait itself does not reap the child
/// (`waitid` with `WNOWAIT`), so a canceled wait has no effect: the child can still be waited
/// for. Once it has exited, `std`'s `Child::wait` reaps it and returns the status.
///
/// # Errors
/// An error of the wait (`waitid`) other than `EINTR`, which is retried, and `ECHILD`, which means
/// `std` already reaped the child (its status is returned); or the error of `Child::wait`, e.g.
/// `ECHILD` if someone else reaped the child (a `waitpid(-1, ...)` elsewhere in the process).
///
/// ```
/// let mut child = std::process::Command::new("sleep").arg("3600").spawn().unwrap();
/// let id = child.id();
/// let h = thread_cancel::spawn(move || thread_cancel::process::wait(&mut child).map(|_| ()));
/// thread_cancel::sleep(std::time::Duration::from_millis(20));
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// // The child is still there, not reaped by the canceled wait.
/// // SAFETY: `kill` takes plain integers; `id` is our child, not yet reaped.
/// assert_eq!(unsafe { libc::kill(id as i32, libc::SIGKILL) }, 0);
/// ```
pub fn wait(child: &mut Child) -> io::Result<ExitStatus> {
    // SAFETY: `siginfo_t` is plain data; all-zero is a valid value for the kernel to fill in.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    loop {
        match crate::io::waitid(
            libc::P_PID,
            child.id(),
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        ) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.raw_os_error() == Some(libc::ECHILD) => break, // already reaped by std
            Err(e) => return Err(e),
            Ok(()) => break,
        }
    }
    child.wait()
}

/// Waits for `child` to exit, as [`wait`] does, and if the wait is canceled (or `f`'s scope's
/// deadline passes), kills the child and its descendants (`SIGKILL`) and reaps the child before
/// the cancel goes on: a canceled operation leaves no child running and no zombie.
///
/// What a cancel does, the same as for [`output`]:
///
/// - **A scope's cancel** ([`CancelScope::run`](crate::CancelScope::run),
///   [`with_timeout`](crate::with_timeout)): `wait_or_kill` returns the status of the killed
///   child (killed by `SIGKILL`, unless it had exited already), and the run reports the cancel,
///   acted on, with that value ([`Canceled::value`](crate::Canceled::value)). `std` recorded the
///   status: a later `child.wait()` returns it.
/// - **A thread cancel**: the child is killed and reaped, then the thread's cancellation goes
///   on (it unwinds).
///
/// The descendants are killed on Linux and Android: each process is stopped, its children are
/// listed (`/proc`), then it is killed, so none can start another meanwhile. Not reached: a
/// descendant that left the tree before the cancel (its parent exited: it was adopted), and
/// everything without pidfds (before Linux 5.4) or without `/proc`, or on other systems: there
/// the child alone is killed.
///
/// # Errors
/// As [`wait`]; after a cancel, the error of the wait that reaps the child.
///
/// ```
/// use std::os::unix::process::ExitStatusExt;
/// use std::time::Duration;
/// let mut child = std::process::Command::new("sh")
///     .args(["-c", "sleep 3600; echo never"]) // the shell waits for a child of its own
///     .spawn()
///     .unwrap();
/// let id = child.id() as i32;
/// let r = thread_cancel::with_timeout(Duration::from_millis(20), || {
///     thread_cancel::process::wait_or_kill(&mut child)
/// });
/// let e = r.unwrap_err();
/// assert!(e.deadline_passed() && e.acted());
/// // The value: the status of the kill.
/// let status = e.into_value().unwrap().unwrap();
/// assert_eq!(status.signal(), Some(libc::SIGKILL));
/// // Killed and reaped (its `sleep` killed too): there is no such process any more.
/// // SAFETY: `kill` with signal 0 only checks that the process exists.
/// assert_eq!(unsafe { libc::kill(id, 0) }, -1);
/// ```
pub fn wait_or_kill(child: &mut Child) -> io::Result<ExitStatus> {
    let mut run = Running::new(child, None);
    run.supervise(|run| wait(run.child))
}

/// Runs `cmd` to its end as [`Command::output`] does — standard output and standard error
/// collected, standard input not inherited (`/dev/null`) — with every wait a cancellation
/// point: reading the pipes and waiting for the child.
///
/// If it is canceled, the child is killed with its descendants (as [`wait_or_kill`] does),
/// then what they wrote before the kill is still collected from the pipes, to their end —
/// for at most 200 ms after the kill: a process that left the tree (a daemon, adopted by
/// another parent) and keeps a pipe open does not hold it up longer — and the child is reaped:
///
/// - **A scope's cancel** ([`CancelScope::run`](crate::CancelScope::run),
///   [`with_timeout`](crate::with_timeout)): `output` returns `Ok` with that output and the
///   child's status (killed by `SIGKILL`, unless it had exited already), and the run reports
///   the cancel, acted on, with that value ([`Canceled::value`](crate::Canceled::value)).
/// - **A thread cancel**: the thread's cancellation goes on (it unwinds) once the child is
///   reaped; the output is dropped.
///
/// # Errors
/// The error of spawning the child (e.g. `NotFound` for a program that does not exist), of
/// reading its output, or of waiting for it (the child is then killed and reaped).
///
/// ```
/// use std::os::unix::process::ExitStatusExt;
/// use std::process::Command;
///
/// let out = thread_cancel::process::output(Command::new("echo").arg("hi")).unwrap();
/// assert!(out.status.success());
/// assert_eq!(out.stdout, b"hi\n");
///
/// // A shell that writes a line, then waits for a child of its own.
/// let r = thread_cancel::with_timeout(std::time::Duration::from_millis(300), || {
///     thread_cancel::process::output(Command::new("sh").args(["-c", "echo before; sleep 3600"]))
/// });
/// let e = r.unwrap_err();
/// assert!(e.acted()); // stopped: the shell and its sleep killed, the shell reaped
/// let out = e.into_value().unwrap().unwrap();
/// assert_eq!(out.stdout, b"before\n"); // what it wrote before the kill
/// assert_eq!(out.status.signal(), Some(libc::SIGKILL));
/// ```
pub fn output(cmd: &mut Command) -> io::Result<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pipes = [
        child.stdout.take().map(OwnedFd::from),
        child.stderr.take().map(OwnedFd::from),
    ];
    let mut run = Running::new(&mut child, Some(pipes));
    let status = run.supervise(|run| {
        run.collect()?;
        wait(run.child)
    });
    let [stdout, stderr] = std::mem::take(&mut run.sinks);
    Ok(Output {
        status: status?,
        stdout,
        stderr,
    })
}

/// How long the output of a killed child is still collected after the kill, at most: what it
/// wrote is in the pipes already; only a process outside the killed tree that holds a pipe
/// keeps it from its end.
const COLLECT_BOUND: Duration = Duration::from_millis(200);

/// How long the kill waits, at most, until the killed processes have exited (their ends of the
/// pipes closed). A process killed in an uninterruptible sleep may take longer: the collection
/// then ends at its bound, and the reaping wait waits for the child.
const EXIT_BOUND: Duration = Duration::from_millis(200);

/// A child being waited for by [`wait_or_kill`] or [`output`]: its pidfd (Linux, Android), the
/// pipes being collected and what they gave.
struct Running<'a> {
    child: &'a mut Child,
    tree: Option<process_tree::ChildTree>,
    /// Standard output and error, until their end of file (`None` then); `None` for
    /// [`wait_or_kill`].
    pipes: [Option<OwnedFd>; 2],
    sinks: [Vec<u8>; 2],
    /// The status of the reaping wait after a kill ([`Running::stop`]).
    stopped: Option<io::Result<ExitStatus>>,
}

impl<'a> Running<'a> {
    fn new(child: &'a mut Child, pipes: Option<[Option<OwnedFd>; 2]>) -> Self {
        let tree = process_tree::ChildTree::of(child.id());
        Running {
            child,
            tree,
            pipes: pipes.unwrap_or_default(),
            sinks: Default::default(),
            stopped: None,
        }
    }

    /// Runs `f` (the waits, cancellation points); if it does not return `Ok` — an error, a
    /// cancel's unwind, a panic —, stops the child ([`Running::stop`]) before going on. A scope's
    /// cancel then returns the status of the kill: its unwind ends here (the run still reports
    /// the cancel, acted on); any other unwind goes on.
    fn supervise(
        &mut self,
        f: impl FnOnce(&mut Self) -> io::Result<ExitStatus>,
    ) -> io::Result<ExitStatus> {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // Stops the child on the way out of `f` unless disarmed: during the unwind, where
            // neither the crate's points nor (in a shield) the interposed calls act.
            let guard = StopOnDrop(&mut *self);
            let r = f(guard.0);
            if r.is_ok() {
                std::mem::forget(guard);
            }
            r
        }));
        match r {
            Ok(r) => r,
            Err(p) if p.is::<ScopeUnwind>() && self.stopped.is_some() => {
                // The run that the cancel ends reports it (acted on: its unwind began) with
                // this value.
                drop(p);
                self.stopped.take().expect("stopped")
            }
            Err(p) => std::panic::resume_unwind(p),
        }
    }

    /// Reads both pipes until their end of file, waiting in `poll`: cancellation points.
    fn collect(&mut self) -> io::Result<()> {
        let mut buf = [0u8; 8192];
        while self.pipes.iter().any(Option::is_some) {
            let mut fds = self.pollfds();
            match crate::io::poll(&mut fds, -1) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => r?,
            };
            for (i, p) in fds.iter().enumerate() {
                if p.revents == 0 {
                    continue;
                }
                let Some(fd) = self.pipes[i].as_ref() else {
                    continue;
                };
                match crate::io::read(fd.as_fd(), &mut buf) {
                    Ok(0) => self.pipes[i] = None,
                    Ok(n) => self.sinks[i].extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// One entry per pipe, in order; a closed one has descriptor -1 (ignored by `poll`).
    fn pollfds(&self) -> [libc::pollfd; 2] {
        self.pipes.each_ref().map(|p| libc::pollfd {
            fd: p.as_ref().map_or(-1, |fd| fd.as_raw_fd()),
            events: libc::POLLIN,
            revents: 0,
        })
    }

    /// Kills the child with its descendants (the child alone without pidfds), collects what
    /// they left in the pipes until their end (at most [`COLLECT_BOUND`]), and reaps the child
    /// (shielded from the cancel under way): the status in `stopped`. No cancellation point
    /// acts here, and no interposed call fails.
    fn stop(&mut self) {
        match &self.tree {
            // By pidfd, with its descendants. (A child reaped already, by someone else, is not
            // killed: its id may be another process's now.)
            Some(tree) => {
                tree.kill(EXIT_BOUND);
            }
            // No pidfd: the child alone, by id (std's kill; nothing if std reaped it).
            None => {
                let _ = self.child.kill();
            }
        }
        self.drain();
        let child = &mut *self.child;
        // The shield's own scope is never canceled: it returns the wait's result.
        let r = crate::CancelScope::new().shield(|| child.wait());
        self.stopped = Some(r.unwrap_or_else(|e| match e.into_value() {
            Some(r) => r,
            None => Err(io::Error::from(io::ErrorKind::Interrupted)),
        }));
    }

    /// What is left in the pipes after the kill, until their end or [`COLLECT_BOUND`]: plain
    /// `poll` and `read`, never a point, never interposed.
    fn drain(&mut self) {
        let end = Instant::now() + COLLECT_BOUND;
        let mut buf = [0u8; 8192];
        while self.pipes.iter().any(Option::is_some) {
            let left = end.saturating_duration_since(Instant::now());
            let mut fds = self.pollfds();
            let r = process_tree::poll_plain(&mut fds, Some(left));
            if r == 0 {
                break; // out of time: a process outside the killed tree holds a pipe
            }
            if r < 0 {
                if r == -(libc::EINTR as libc::c_long) {
                    continue;
                }
                break;
            }
            for (i, p) in fds.iter().enumerate() {
                let Some(fd) = self.pipes[i].as_ref().filter(|_| p.revents != 0) else {
                    continue;
                };
                match process_tree::read_plain(fd.as_raw_fd(), &mut buf) {
                    n if n > 0 => self.sinks[i].extend_from_slice(&buf[..n as usize]),
                    n if n == -(libc::EINTR as libc::c_long) => {}
                    _ => self.pipes[i] = None, // end of file, or an error: nothing more to read
                }
            }
        }
        self.pipes = Default::default();
    }
}

/// Stops the child ([`Running::stop`]) when dropped: on a cancel's unwind, a panic or an error
/// out of the waits of [`Running::supervise`].
struct StopOnDrop<'r, 'a>(&'r mut Running<'a>);

impl Drop for StopOnDrop<'_, '_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}
