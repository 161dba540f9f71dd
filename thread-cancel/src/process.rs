//! Waiting for a child process as a cancellation point (C's `wait`, `waitid`, `waitpid`), and
//! running one to its end ([`output`]) so that a cancel kills and reaps it.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::process::{Child, Command, ExitStatus, Output, Stdio};

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
/// deadline passes), kills the child (`SIGKILL`) and reaps it before the cancel goes on: a
/// canceled operation leaves no child running and no zombie.
///
/// # Errors
/// As [`wait`].
///
/// ```
/// use std::time::Duration;
/// let mut child = std::process::Command::new("sleep").arg("3600").spawn().unwrap();
/// let id = child.id() as i32;
/// let r = thread_cancel::with_timeout(Duration::from_millis(20), || {
///     thread_cancel::process::wait_or_kill(&mut child)
/// });
/// assert!(r.unwrap_err().deadline_passed());
/// // Killed and reaped: there is no such process any more.
/// // SAFETY: `kill` with signal 0 only checks that the process exists.
/// assert_eq!(unsafe { libc::kill(id, 0) }, -1);
/// ```
pub fn wait_or_kill(child: &mut Child) -> io::Result<ExitStatus> {
    let guard = KillOnUnwind(child);
    let r = wait(guard.0);
    std::mem::forget(guard);
    r
}

/// Runs `cmd` to its end as [`Command::output`] does — standard output and standard error
/// collected, standard input not inherited (`/dev/null`) — with every wait a cancellation
/// point: reading the pipes and waiting for the child. If it is canceled, the child is killed
/// and reaped ([`wait_or_kill`]) before the cancel goes on.
///
/// # Errors
/// The error of spawning the child (e.g. `NotFound` for a program that does not exist), of
/// reading its output, or of waiting for it.
///
/// ```
/// let out = thread_cancel::process::output(std::process::Command::new("echo").arg("hi")).unwrap();
/// assert!(out.status.success());
/// assert_eq!(out.stdout, b"hi\n");
///
/// let r = thread_cancel::with_timeout(std::time::Duration::from_millis(20), || {
///     thread_cancel::process::output(std::process::Command::new("sleep").arg("3600"))
/// });
/// assert!(r.unwrap_err().acted()); // stopped; the sleep is killed and reaped
/// ```
pub fn output(cmd: &mut Command) -> io::Result<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let guard = KillOnUnwind(&mut child);
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    {
        let out = guard.0.stdout.take().expect("piped");
        let err = guard.0.stderr.take().expect("piped");
        let mut open = [
            Some((out.as_fd(), &mut stdout)),
            Some((err.as_fd(), &mut stderr)),
        ];
        let mut buf = [0u8; 8192];
        while open.iter().any(Option::is_some) {
            let mut fds: Vec<libc::pollfd> = open
                .iter()
                .flatten()
                .map(|(fd, _)| libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            crate::io::poll(&mut fds, -1)?;
            let mut ready = fds.iter().map(|p| p.revents != 0);
            for slot in open.iter_mut() {
                let Some((fd, sink)) = slot else { continue };
                if !ready.next().unwrap_or(false) {
                    continue;
                }
                match crate::io::read(*fd, &mut buf) {
                    Ok(0) => *slot = None,
                    Ok(n) => sink.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    let status = wait(guard.0)?;
    std::mem::forget(guard);
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// Kills and reaps the child when dropped: on a cancel's unwind (or an error) out of
/// [`wait_or_kill`] / [`output`]. The reaping wait is shielded from the cancel under way.
struct KillOnUnwind<'a>(&'a mut Child);

impl Drop for KillOnUnwind<'_> {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let child = &mut *self.0;
        let _ = crate::CancelScope::new().shield(|| child.wait());
    }
}
