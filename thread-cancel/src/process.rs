//! Waiting for a child process as a cancellation point (C's `wait`, `waitid`, `waitpid`).

use std::io;
use std::process::{Child, ExitStatus};

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
