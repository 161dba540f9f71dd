//! Child processes: killing one **with its descendants** and waiting, bounded, until they have
//! exited; and the plain (never canceled, never interposed) `poll` and `read` that collect what
//! they left in their pipes. The one implementation that the crate's `process` functions and
//! the interposed `fork`/`posix_spawn` bookkeeping (feature `interpose`, `interpose/children.rs`)
//! share.
//!
//! **Linux and Android** (also with `--cfg thread_cancel_portable`): by pidfd, so that a signal
//! never reaches a process that reused the id of one already reaped. Each process of the tree is
//! stopped (`SIGSTOP`), its children are listed once it has stopped (until then it may still
//! start one) from `/proc/<pid>/task/<pid>/children` (those of its main thread), each child is
//! turned into a pidfd while its parent is stopped (it cannot be reaped and its id reused
//! meanwhile, unless that parent ignores `SIGCHLD`) and killed the same way, then the process
//! is killed (`SIGKILL`). Not reached: a descendant that left its parent before the kill (a
//! daemon, reparented to `init` or a subreaper), more than [`CHILDREN_MAX`] children of one
//! process, deeper than [`DEPTH_MAX`] levels, more than [`WAIT_MAX`] processes in all; a kernel
//! without `pidfd_open` and `waitid(P_PIDFD)` (before Linux 5.4) or without `/proc`: then only
//! the direct child is killed, by its caller.
//!
//! Everything on this path is async-signal-safe (the interposed `fork` may be called from a
//! signal handler): raw system calls, no allocation, no lock, buffers on the stack (small: a
//! handler may run on a small alternate stack).
//!
//! **Elsewhere** (macOS, FreeBSD): no pidfd; [`ChildTree::of`] is `None`, and the caller kills
//! the direct child alone.

#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) use linux::*;

#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux {
    use libc::{c_int, c_long, pid_t};
    use std::time::{Duration, Instant};

    /// A raw system call, its result as the kernel gives it (`-errno` on failure): through the
    /// C library's generic `syscall`, which no one interposes and which is not a point.
    fn sys(nr: c_long, a: [c_long; 6]) -> c_long {
        let [a1, a2, a3, a4, a5, a6] = a;
        // SAFETY: every call in this module passes arguments valid for `nr`: scalars, pointers
        // to locals (or to the caller's borrowed buffers) that outlive the call.
        let r = unsafe { libc::syscall(nr, a1, a2, a3, a4, a5, a6) };
        if r == -1 {
            #[cfg(target_os = "android")]
            // SAFETY: the calling thread's errno slot, valid for the thread's life.
            let e = unsafe { *libc::__errno() };
            #[cfg(not(target_os = "android"))]
            // SAFETY: the calling thread's errno slot, valid for the thread's life.
            let e = unsafe { *libc::__errno_location() };
            -(e as c_long)
        } else {
            r
        }
    }

    /// Closes descriptor `fd`.
    pub(crate) fn close(fd: c_int) {
        sys(libc::SYS_close, [fd as c_long, 0, 0, 0, 0, 0]);
    }

    /// A pidfd of process `pid` (`pidfd_open`), or `None` (no such process, or a kernel before
    /// Linux 5.3).
    pub(crate) fn pidfd_open(pid: pid_t) -> Option<c_int> {
        if pid <= 0 {
            return None;
        }
        let fd = sys(libc::SYS_pidfd_open, [pid as c_long, 0, 0, 0, 0, 0]);
        (fd >= 0).then_some(fd as c_int)
    }

    /// `waitid(P_PIDFD, pidfd, ..)` with `options`: the id of the process it reports (0: none,
    /// with `WNOHANG`), or `None` if the call fails (`ECHILD`: not a child of this process, or
    /// already reaped). Linux 5.4.
    pub(crate) fn waitid_pidfd(pidfd: c_int, options: c_int) -> Option<pid_t> {
        // SAFETY: an all-zero `siginfo_t` is a valid value (plain data).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = sys(
            libc::SYS_waitid,
            [
                libc::P_PIDFD as c_long,
                pidfd as c_long,
                &mut info as *mut _ as c_long,
                options as c_long,
                0,
                0,
            ],
        );
        // SAFETY: `info` was written by the kernel, or is zero.
        (r == 0).then(|| unsafe { info.si_pid() })
    }

    /// A pidfd of `pid` if it is an unreaped child of this process (then its id cannot be
    /// reused while the pidfd is open and it is not reaped): `pidfd_open`, then a `waitid` that
    /// neither waits nor reaps. `None`: not a child of ours (any more), or no pidfds.
    pub(crate) fn pidfd_of_child(pid: pid_t) -> Option<c_int> {
        let fd = pidfd_open(pid)?;
        // Still our child: not reaped (by a `SIGCHLD` set to be ignored, or another thread's
        // wait for any child) and its id taken by an unrelated process before the pidfd was
        // opened.
        if waitid_pidfd(fd, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT).is_none() {
            close(fd);
            return None;
        }
        Some(fd)
    }

    /// A direct child of this process, by pidfd, to kill with its descendants: what the crate's
    /// `process` functions hold while they wait for one.
    pub(crate) struct ChildTree {
        pidfd: c_int,
        pid: pid_t,
    }

    impl ChildTree {
        /// The child `pid`, if it is an unreaped child of this process and the kernel has
        /// pidfds ([`pidfd_of_child`]).
        pub(crate) fn of(pid: u32) -> Option<ChildTree> {
            let pid = pid_t::try_from(pid).ok()?;
            pidfd_of_child(pid).map(|pidfd| ChildTree { pidfd, pid })
        }

        /// Kills the child and its descendants ([`Killed::tree`]) and waits at most `bound`
        /// until they have exited. Whether the child was there to be killed (not reaped yet).
        pub(crate) fn kill(&self, bound: Duration) -> bool {
            let mut k = Killed::new();
            let killed = k.tree(self.pidfd, self.pid);
            k.wait_exited(bound);
            killed
        }
    }

    impl Drop for ChildTree {
        fn drop(&mut self) {
            close(self.pidfd);
        }
    }

    /// How many processes one [`Killed`] kills and waits for at most.
    pub(crate) const WAIT_MAX: usize = 64;

    /// How deep below the process given to [`Killed::tree`] its descendants are looked for.
    pub(crate) const DEPTH_MAX: usize = 8;

    /// How many children of one process [`Killed::tree`] kills at most.
    pub(crate) const CHILDREN_MAX: usize = 64;

    /// How long [`Killed::tree`] waits, for all the processes of one [`Killed`] together, for
    /// each to stop before it lists its children.
    pub(crate) const STOP_BOUND: Duration = Duration::from_millis(50);

    /// The processes killed together (one cancel's), to wait for: the first `n` pidfds; those
    /// `opened` here (for descendants) are closed when it is dropped (the others are the
    /// caller's). `stop_end`: until when [`wait_stopped`] waits, for all of them together.
    pub(crate) struct Killed {
        wait: [libc::pollfd; WAIT_MAX],
        opened: [bool; WAIT_MAX],
        n: usize,
        stop_end: Instant,
    }

    impl Killed {
        /// Nothing killed yet; the stops of the processes it kills are waited for at most
        /// [`STOP_BOUND`] from now, in all.
        pub(crate) fn new() -> Killed {
            Killed {
                wait: [libc::pollfd {
                    fd: -1,
                    events: libc::POLLIN,
                    revents: 0,
                }; WAIT_MAX],
                opened: [false; WAIT_MAX],
                n: 0,
                stop_end: Instant::now() + STOP_BOUND,
            }
        }

        /// Kills the process of `pidfd` (id `pid`; the caller's pidfd, which must stay open
        /// until this is dropped) and its descendants (the module's documentation). Returns
        /// whether the process was there to be killed (not reaped).
        pub(crate) fn tree(&mut self, pidfd: c_int, pid: pid_t) -> bool {
            self.kill_tree(pidfd, pid, 0)
        }

        /// Kills the process of `pidfd` and its descendants; at `level` 0 `pidfd` is the
        /// caller's, deeper it is a descendant's, which `self` then owns (closed here if full).
        /// Iterative in effect on the stack: the listing's buffer is gone before the recursion.
        fn kill_tree(&mut self, pidfd: c_int, pid: pid_t, level: usize) -> bool {
            let signal = |fd: c_int, sig: c_int| {
                sys(
                    libc::SYS_pidfd_send_signal,
                    [fd as c_long, sig as c_long, 0, 0, 0, 0],
                ) == 0
            };
            if !signal(pidfd, libc::SIGSTOP) {
                // Already gone (reaped): nothing to kill.
                if level > 0 {
                    close(pidfd);
                }
                return false;
            }
            let added = self.n < WAIT_MAX;
            if added {
                self.wait[self.n].fd = pidfd;
                self.opened[self.n] = level > 0;
                self.n += 1;
            }
            if level < DEPTH_MAX {
                wait_stopped(pid, self.stop_end);
                let (children, n) = children_of(pid);
                for &child in &children[..n] {
                    if let Some(fd) = pidfd_open(child) {
                        self.kill_tree(fd, child, level + 1);
                    }
                }
            }
            signal(pidfd, libc::SIGKILL);
            if !added && level > 0 {
                close(pidfd);
            }
            true
        }

        /// Waits until every process killed has exited (a pidfd polls readable once its
        /// process has exited, its files closed), at most `bound` in all. Whether they all have.
        pub(crate) fn wait_exited(&mut self, bound: Duration) -> bool {
            let end = Instant::now() + bound;
            let mut i = 0;
            while i < self.n {
                let left = end.saturating_duration_since(Instant::now());
                let p = &mut self.wait[i] as *mut libc::pollfd;
                let r = ppoll(p, 1, Some(left));
                if r > 0 {
                    i += 1;
                } else if r == 0 || r != -(libc::EINTR as c_long) {
                    // Out of time (or the call failed): not all exited.
                    return false;
                }
            }
            true
        }
    }

    impl Drop for Killed {
        fn drop(&mut self) {
            for (p, &opened) in self.wait[..self.n].iter().zip(&self.opened) {
                if opened {
                    close(p.fd);
                }
            }
        }
    }

    /// `ppoll` of `n` entries at `fds`, waiting at most `timeout` (`None`: no end); the raw
    /// result.
    fn ppoll(fds: *mut libc::pollfd, n: usize, timeout: Option<Duration>) -> c_long {
        let ts = timeout.map(|t| libc::timespec {
            tv_sec: t.as_secs().min(i32::MAX as u64) as _,
            tv_nsec: t.subsec_nanos() as libc::c_long,
        });
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        sys(
            libc::SYS_ppoll,
            [fds as c_long, n as c_long, tsp as c_long, 0, 0, 0],
        )
    }

    /// `poll` of `fds`, waiting at most `timeout` (`None`: no end), neither a point nor
    /// interposed: how many entries have events, or the error (`-errno`).
    pub(crate) fn poll_plain(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> c_long {
        ppoll(fds.as_mut_ptr(), fds.len(), timeout)
    }

    /// `read` of `fd` into `buf`, neither a point nor interposed: the raw result.
    pub(crate) fn read_plain(fd: c_int, buf: &mut [u8]) -> c_long {
        sys(
            libc::SYS_read,
            [
                fd as c_long,
                buf.as_mut_ptr() as c_long,
                buf.len() as c_long,
                0,
                0,
                0,
            ],
        )
    }

    /// Reads `/proc/<pid>/<rest>` (`rest` ends with a nul) into `buf` (no allocation): how many
    /// bytes, 0 if it cannot be read.
    fn read_proc(pid: pid_t, rest: &[u8], buf: &mut [u8]) -> usize {
        let mut path = [0u8; 64];
        let digits = decimal(pid);
        let mut len = 0;
        for part in [b"/proc/".as_slice(), &digits.0[..digits.1], b"/", rest] {
            path[len..len + part.len()].copy_from_slice(part);
            len += part.len();
        }
        let fd = sys(
            libc::SYS_openat,
            [
                libc::AT_FDCWD as c_long,
                path.as_ptr() as c_long,
                (libc::O_RDONLY | libc::O_CLOEXEC) as c_long,
                0,
                0,
                0,
            ],
        );
        if fd < 0 {
            return 0;
        }
        let r = read_plain(fd as c_int, buf);
        close(fd as c_int);
        r.max(0) as usize
    }

    /// Waits (until `end` at most) until process `pid`, sent `SIGSTOP`, has stopped (or died):
    /// the signal is acted on when the process next returns to user space, and until then it
    /// may still start a child. Its state is the first letter after the `)` closing its name
    /// in `/proc/<pid>/stat`.
    #[inline(never)]
    fn wait_stopped(pid: pid_t, end: Instant) {
        loop {
            let mut buf = [0u8; 512];
            let n = read_proc(pid, b"stat\0", &mut buf);
            let state = buf[..n]
                .iter()
                .rposition(|&b| b == b')')
                .and_then(|i| buf[..n].get(i + 2).copied());
            if !matches!(state, Some(b'R' | b'S' | b'D' | b'W' | b'I' | b'P'))
                || Instant::now() >= end
            {
                return; // Stopped, dead, gone, or not stopping in time.
            }
            sys(libc::SYS_sched_yield, [0; 6]);
        }
    }

    /// The child ids listed in `/proc/<pid>/task/<pid>/children` (at most [`CHILDREN_MAX`]),
    /// and how many. An id is taken only when a separator follows it, or the file ended after
    /// it: a listing cut by the buffer's end never yields part of a number.
    #[inline(never)]
    fn children_of(pid: pid_t) -> ([pid_t; CHILDREN_MAX], usize) {
        let mut rest = [0u8; 32];
        let digits = decimal(pid);
        let mut len = 0;
        for part in [b"task/".as_slice(), &digits.0[..digits.1], b"/children\0"] {
            rest[len..len + part.len()].copy_from_slice(part);
            len += part.len();
        }
        let mut buf = [0u8; 1024];
        let n = read_proc(pid, &rest[..len], &mut buf);
        let mut out = [0; CHILDREN_MAX];
        let mut count = 0;
        let mut id: pid_t = 0;
        for &b in &buf[..n] {
            if b.is_ascii_digit() {
                id = id.saturating_mul(10).saturating_add(pid_t::from(b - b'0'));
            } else if id != 0 {
                if count < CHILDREN_MAX {
                    out[count] = id;
                    count += 1;
                }
                id = 0;
            }
        }
        if id != 0 && n < buf.len() && count < CHILDREN_MAX {
            out[count] = id;
            count += 1;
        }
        (out, count)
    }

    /// The decimal digits of `n` (positive) and how many.
    fn decimal(mut n: pid_t) -> ([u8; 12], usize) {
        let mut d = [0u8; 12];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let len = d.len() - i;
        d.copy_within(i.., 0);
        (d, len)
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod other {
    use std::time::Duration;

    /// No pidfds here: never made, and the caller kills the direct child alone.
    pub(crate) struct ChildTree(std::convert::Infallible);

    impl ChildTree {
        /// Always `None` on this system (no pidfds).
        pub(crate) fn of(_pid: u32) -> Option<ChildTree> {
            None
        }

        /// Never called (no value exists).
        pub(crate) fn kill(&self, _bound: Duration) -> bool {
            match self.0 {}
        }
    }

    /// `poll` of `fds`, waiting at most `timeout` (`None`: no end): how many entries have
    /// events, or the error (`-errno`). No interposition here, so the C library's.
    pub(crate) fn poll_plain(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> libc::c_long {
        // Rounded up to whole milliseconds: never shorter than asked.
        let ms = timeout.map_or(-1, |t| {
            let ms = t.as_nanos().div_ceil(1_000_000);
            ms.min(i32::MAX as u128) as libc::c_int
        });
        // SAFETY: `fds` is a valid slice of `fds.len()` entries for the whole call.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if r < 0 {
            -(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO) as libc::c_long)
        } else {
            r as libc::c_long
        }
    }

    /// `read` of `fd` into `buf`: the raw result (`-errno` on failure).
    pub(crate) fn read_plain(fd: libc::c_int, buf: &mut [u8]) -> libc::c_long {
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the whole call.
        let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if r < 0 {
            -(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO) as libc::c_long)
        } else {
            r as libc::c_long
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) use other::*;
