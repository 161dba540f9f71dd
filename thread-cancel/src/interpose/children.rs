//! The child processes a run started, as the interposed `fork`, `posix_spawn` and `posix_spawnp`
//! see them, and what a cancel of the run does to them.
//!
//! A child started inside a run is part of the run's work. When a cancel of that run (or of the
//! thread) is acted on by an interposed call (the call fails with `ECANCELED`/`ETIMEDOUT`), the
//! run's children that are still tracked are **killed** with their descendants ([`kill_tree`]:
//! each stopped, its children listed once it has stopped, then killed), and the call waits,
//! bounded, until they have exited. From then on the run may **collect what they left**: in
//! that canceled run a `read`/`readv` of a pipe whose writers are all gone, or a `poll` of pipes
//! only (made with no timeout), completes, and so does a wait for one of the killed children
//! that has exited (`waitpid`, `wait4`, `waitid` for its id or for any child; made with
//! `WNOHANG`). None of them can block. Everything else still fails at once. So std's
//! `Command::output` returns the output the child wrote before the kill and its status (killed
//! by `SIGKILL`), and `Command::status` / `Child::wait` return that status: no panic inside
//! std, no child left running, no zombie. The run reports the cancel, acted on.
//!
//! Bookkeeping is per thread, in thread-locals with constant initializers (no allocation, no
//! lock: the interposed `fork` may be called from a signal handler; a handler's call nested in
//! the bookkeeping leaves it alone, [`exclusive`]). Each entry holds a pidfd of the child, so a
//! signal can never reach a process that reused a reaped child's id; the process that started
//! it (a child made by other means than `fork`, which forgets them at once, may inherit its
//! parent thread's entries: it ignores and closes them); the depth of the run that started it.
//! An entry is forgotten (its pidfd closed) when that run ends, whether the child was killed,
//! waited for or neither: a run that returns a running child leaves it alone.
//!
//! Not tracked: more than [`MAX`] children of one thread's runs at once, children started by
//! `vfork`, `clone`, `_Fork` or by the C library's internals (`system`, `popen`), and a kernel
//! without pidfds and `waitid(P_PIDFD)` (before Linux 5.4). Descendants are found through the
//! children of each process's main thread: a daemon that left its parent is not reached.

use crate::point::runs;
use crate::sys::calls;
use libc::{c_int, c_long, pid_t};
use std::cell::Cell;
use std::time::{Duration, Instant};

/// How many children of its runs one thread keeps track of at once.
const MAX: usize = 16;

/// How long a canceled call waits for the children it killed to exit (a process killed while in
/// an uninterruptible sleep may take longer: the call then goes on, and their pipes may still
/// be open).
const EXIT_BOUND: Duration = Duration::from_millis(200);

#[derive(Clone, Copy)]
struct Entry {
    /// A pidfd of the child: it refers to this very process, reaped or not.
    pidfd: c_int,
    pid: pid_t,
    /// The process that started it.
    owner: pid_t,
    /// The depth of the run that started it.
    depth: usize,
    killed: bool,
}

const EMPTY: Entry = Entry {
    pidfd: -1,
    pid: 0,
    owner: 0,
    depth: 0,
    killed: false,
};

thread_local! {
    /// How many entries of `CHILDREN` are in use (the first ones).
    static COUNT: Cell<usize> = const { Cell::new(0) };
    static CHILDREN: [Cell<Entry>; MAX] = const { [const { Cell::new(EMPTY) }; MAX] };
    /// Whether this thread is inside one of the functions below: a signal handler that
    /// interrupts one of them and calls another (`fork`, or an interposed call that acts on a
    /// cancel) finds the table being changed and leaves it alone (see [`exclusive`]).
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the table to itself, or returns `None` if this thread is already inside a
/// function of this module (a signal handler interrupted it): the nested call then tracks,
/// kills and collects nothing. Nothing in `f` panics.
fn exclusive<R>(f: impl FnOnce() -> R) -> Option<R> {
    if BUSY.with(|b| b.replace(true)) {
        return None;
    }
    let r = f();
    BUSY.with(|b| b.set(false));
    Some(r)
}

/// A raw system call, its result as the kernel gives it (`-errno` on failure).
fn sys(nr: c_long, a: [c_long; 6]) -> c_long {
    // SAFETY: every call in this module passes arguments valid for `nr` (scalars, pointers to
    // locals that outlive the call, or the interposed caller's own arguments, in `collect`).
    unsafe { crate::point::conv::plain_raw(nr, a) }
}

fn getpid() -> pid_t {
    sys(calls::GETPID, [0; 6]) as pid_t
}

fn close(fd: c_int) {
    sys(calls::CLOSE, [fd as c_long, 0, 0, 0, 0, 0]);
}

/// Calls `f` on each entry in use, with its index; `f` returns the entry to keep, or `None` to
/// forget it (its pidfd closed).
fn retain(mut f: impl FnMut(Entry) -> Option<Entry>) {
    CHILDREN.with(|kids| {
        let mut n = COUNT.with(Cell::get);
        let mut i = 0;
        while i < n {
            match f(kids[i].get()) {
                Some(e) => {
                    kids[i].set(e);
                    i += 1;
                }
                None => {
                    close(kids[i].get().pidfd);
                    n -= 1;
                    kids[i].set(kids[n].get());
                    kids[n].set(EMPTY);
                }
            }
        }
        COUNT.with(|c| c.set(n));
    });
}

/// After `fork`/`posix_spawn` started child `pid` in the calling thread: tracks it if the
/// thread is in a run.
pub(super) fn record(pid: pid_t) {
    let top = runs::top();
    if top.is_null() || pid <= 0 {
        return;
    }
    // SAFETY: `top` is the innermost run in progress on this thread (see `runs::any_frame`).
    let depth = unsafe { (*top).depth };
    exclusive(|| record_at(pid, depth));
}

fn record_at(pid: pid_t, depth: usize) {
    let me = getpid();
    // Entries a child made by other means than `fork` (which forgets them at once) inherited
    // from its parent's thread are not its own.
    retain(|e| (e.owner == me).then_some(e));
    if COUNT.with(Cell::get) == MAX {
        return;
    }
    let fd = sys(calls::PIDFD_OPEN, [pid as c_long, 0, 0, 0, 0, 0]);
    if fd < 0 {
        return;
    }
    // Still our child: not reaped (by a `SIGCHLD` set to be ignored, or another thread's wait
    // for any child) and its id taken by an unrelated process before the pidfd was opened.
    if waitid_pidfd(fd as c_int, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT).is_none() {
        close(fd as c_int);
        return;
    }
    let e = Entry {
        pidfd: fd as c_int,
        pid,
        owner: me,
        depth,
        killed: false,
    };
    let n = COUNT.with(Cell::get);
    CHILDREN.with(|kids| kids[n].set(e));
    COUNT.with(|c| c.set(n + 1));
}

/// The end of the run at `depth`: its children (and those of the runs inside it) are forgotten.
#[inline(always)]
pub(crate) fn forget_from(depth: usize) {
    if COUNT.with(Cell::get) != 0 {
        forget_from_cold(depth);
    }
}

#[cold]
#[inline(never)]
fn forget_from_cold(depth: usize) {
    exclusive(|| retain(|e| (e.depth < depth).then_some(e)));
}

/// In the child of the interposed `fork`: the entries are the parent's (their pidfds are
/// copies), forgotten at once, before the child can reuse those descriptor numbers.
pub(super) fn after_fork_in_child() {
    if COUNT.with(Cell::get) != 0 {
        exclusive(|| retain(|_| None));
    }
}

/// A cancel is acted on by an interposed call: kills the children that the calling thread's
/// runs at `depth` and inside it started (the outermost canceled run's depth for a scope's
/// cancel; 0, every run, for a thread cancel) and that are not killed yet, then waits (at most
/// [`EXIT_BOUND`]) until they have exited, so that their ends of pipes are closed.
#[cold]
pub(super) fn kill(depth: Option<usize>) {
    if COUNT.with(Cell::get) == 0 {
        return;
    }
    let Some(depth) = depth else {
        return;
    };
    exclusive(|| kill_from(depth));
}

fn kill_from(depth: usize) {
    let me = getpid();
    let mut killed = Killed {
        wait: [libc::pollfd {
            fd: -1,
            events: libc::POLLIN,
            revents: 0,
        }; WAIT_MAX],
        opened: [false; WAIT_MAX],
        n: 0,
        stop_end: Instant::now() + STOP_BOUND,
    };
    retain(|mut e| {
        if e.owner != me {
            return None;
        }
        if e.depth >= depth && !e.killed {
            e.killed = kill_tree(e.pidfd, e.pid, 0, &mut killed);
        }
        Some(e)
    });
    // A pidfd polls readable once its process has exited (its files closed).
    let end = Instant::now() + EXIT_BOUND;
    let (wait, n) = (&mut killed.wait, killed.n);
    let mut i = 0;
    while i < n {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let ts = libc::timespec {
            tv_sec: left.as_secs() as libc::time_t,
            tv_nsec: left.subsec_nanos() as libc::c_long,
        };
        let p = &mut wait[i] as *mut libc::pollfd;
        let r = sys(
            calls::PPOLL,
            [p as c_long, 1, &ts as *const _ as c_long, 0, 0, 0],
        );
        if r != -(libc::EINTR as c_long) {
            i += 1;
        }
    }
    for (p, &opened) in wait[..n].iter().zip(&killed.opened) {
        if opened {
            close(p.fd);
        }
    }
}

/// How many processes one cancel kills and waits for at most (the run's children and their
/// descendants).
const WAIT_MAX: usize = 64;

/// How deep below a child of the run its descendants are looked for.
const DEPTH_MAX: usize = 8;

/// The processes a cancel killed, to wait for (the first `n` pidfds); those `opened` for
/// descendants are closed after the wait (the others are the entries'). `stop_end`: until when
/// [`wait_stopped`] waits, for all the processes of this cancel together.
struct Killed {
    wait: [libc::pollfd; WAIT_MAX],
    opened: [bool; WAIT_MAX],
    n: usize,
    stop_end: Instant,
}

/// Kills the process of `pidfd` (id `pid`) and its descendants: stopped first, then (once it
/// has stopped: until then it may still start a child) its children are listed
/// (`/proc/<pid>/task/<pid>/children`: those of its main thread), then it is killed. A
/// descendant's id is turned into a pidfd while its parent is stopped (it cannot be reaped and
/// its id reused meanwhile, unless that parent ignores `SIGCHLD`). Each killed process is added
/// to `k` to be waited for; at `level` 0 `pidfd` is an entry's, deeper it is a descendant's,
/// which `k` then owns (closed here if `k` is full). Returns whether the process was there to
/// be killed. Iterative in effect on the stack: the listing's buffer is gone before the
/// recursion (a call from a signal handler may run on a small alternate stack).
fn kill_tree(pidfd: c_int, pid: pid_t, level: usize, k: &mut Killed) -> bool {
    let signal = |fd: c_int, sig: c_int| {
        sys(
            calls::PIDFD_SEND_SIGNAL,
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
    let added = k.n < WAIT_MAX;
    if added {
        k.wait[k.n].fd = pidfd;
        k.opened[k.n] = level > 0;
        k.n += 1;
    }
    if level < DEPTH_MAX {
        wait_stopped(pid, k.stop_end);
        let (children, n) = children_of(pid);
        for &child in &children[..n] {
            let fd = sys(calls::PIDFD_OPEN, [child as c_long, 0, 0, 0, 0, 0]);
            if fd >= 0 {
                kill_tree(fd as c_int, child, level + 1, k);
            }
        }
    }
    signal(pidfd, libc::SIGKILL);
    if !added && level > 0 {
        close(pidfd);
    }
    true
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
        calls::OPENAT,
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
    let r = sys(
        calls::READ,
        [fd, buf.as_mut_ptr() as c_long, buf.len() as c_long, 0, 0, 0],
    );
    close(fd as c_int);
    r.max(0) as usize
}

/// Waits (until `end` at most) until process `pid`, sent `SIGSTOP`, has stopped (or died):
/// the signal is acted on when the process next returns to user space, and until then it may
/// still start a child. Its state is the first letter after the `)` closing its name in
/// `/proc/<pid>/stat`.
#[inline(never)]
fn wait_stopped(pid: pid_t, end: Instant) {
    loop {
        let mut buf = [0u8; 512];
        let n = read_proc(pid, b"stat\0", &mut buf);
        let state = buf[..n]
            .iter()
            .rposition(|&b| b == b')')
            .and_then(|i| buf[..n].get(i + 2).copied());
        if !matches!(state, Some(b'R' | b'S' | b'D' | b'W' | b'I' | b'P')) || Instant::now() >= end
        {
            return; // Stopped, dead, gone, or not stopping in time.
        }
        sys(calls::SCHED_YIELD, [0; 6]);
    }
}

/// How long [`kill_tree`] waits, for all the processes of one cancel together, for each to stop
/// before it lists its children.
const STOP_BOUND: Duration = Duration::from_millis(50);

/// How many children of one process [`kill_tree`] kills at most.
const CHILDREN_MAX: usize = 64;

/// The child ids listed in `/proc/<pid>/task/<pid>/children` (at most [`CHILDREN_MAX`]), and
/// how many. An id is taken only when a separator follows it, or the file ended after it: a
/// listing cut by the buffer's end never yields part of a number.
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

/// Whether a child of this process killed by [`kill`] is tracked; `pid` if given must be its
/// id, and `unreaped` asks that it has exited and waits to be reaped (its id cannot have been
/// reused).
fn killed_child(pid: Option<pid_t>, unreaped: bool) -> bool {
    if COUNT.with(Cell::get) == 0 {
        return false;
    }
    let me = getpid();
    let mut found = false;
    retain(|e| {
        if e.killed && e.owner == me && pid.is_none_or(|p| p == e.pid) {
            found |= !unreaped || zombie(e.pidfd);
        }
        Some(e)
    });
    found
}

/// `waitid(P_PIDFD, pidfd, ..)` with `options`: the id of the process it reports (0: none,
/// with `WNOHANG`), or `None` if the call fails (`ECHILD`: not a child of this process, or
/// already reaped). Linux 5.4.
fn waitid_pidfd(pidfd: c_int, options: c_int) -> Option<pid_t> {
    // SAFETY: an all-zero `siginfo_t` is a valid value (plain data).
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = sys(
        calls::WAITID,
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

/// Whether the process of `pidfd` has exited and not been reaped.
fn zombie(pidfd: c_int) -> bool {
    waitid_pidfd(pidfd, libc::WEXITED | libc::WNOWAIT | libc::WNOHANG).is_some_and(|p| p != 0)
}

/// Whether descriptor `fd` is a pipe or FIFO.
fn is_pipe(fd: c_long) -> bool {
    // SAFETY: an all-zero `stat` is a valid value (plain data).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    sys(calls::FSTAT, [fd, &mut st as *mut _ as c_long, 0, 0, 0, 0]) == 0
        && st.st_mode & libc::S_IFMT == libc::S_IFIFO
}

/// Whether every writer of pipe `fd` is gone (`POLLHUP`): a read of it cannot block (what is
/// left in it, then end of file), whatever another thread does meanwhile.
fn hung_up(fd: c_long) -> bool {
    let mut p = libc::pollfd {
        fd: fd as c_int,
        events: libc::POLLIN,
        revents: 0,
    };
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    sys(
        calls::PPOLL,
        [
            &mut p as *mut _ as c_long,
            1,
            &zero as *const _ as c_long,
            0,
            0,
            0,
        ],
    ) > 0
        && p.revents & libc::POLLHUP != 0
}

/// In a canceled run whose children were killed: system call `nr` with arguments `a` if it
/// collects what they left without blocking (see the module documentation), made now: its raw
/// result. `None`: it fails as any call.
///
/// # Safety
/// The arguments are valid for system call `nr` (the interposed function's caller's contract).
#[cold]
pub(super) unsafe fn collect(nr: c_long, a: [c_long; 6]) -> Option<c_long> {
    if COUNT.with(Cell::get) == 0 {
        return None;
    }
    // SAFETY: forwarded from the caller.
    exclusive(|| unsafe { collect_now(nr, a) }).flatten()
}

/// [`collect`] with the table to itself.
///
/// # Safety
/// As [`collect`].
unsafe fn collect_now(nr: c_long, a: [c_long; 6]) -> Option<c_long> {
    match nr {
        calls::READ | calls::READV => {
            (killed_child(None, false) && is_pipe(a[0]) && hung_up(a[0])).then(|| sys(nr, a))
        }
        calls::PPOLL => {
            let (fds, n) = (a[0] as *const libc::pollfd, a[1] as usize);
            if n == 0 || n > 64 || fds.is_null() || !killed_child(None, false) {
                return None;
            }
            // SAFETY: the caller's `poll` array of `n` entries (its contract).
            let set = unsafe { std::slice::from_raw_parts(fds, n) };
            if !set.iter().all(|p| p.fd < 0 || is_pipe(p.fd as c_long)) {
                return None;
            }
            // Made with no timeout: it cannot block.
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let r = sys(nr, [a[0], a[1], &zero as *const _ as c_long, a[3], a[4], 0]);
            (r > 0).then_some(r)
        }
        calls::WAIT4 => {
            let waits = match a[0] as pid_t {
                -1 => killed_child(None, true),
                p if p > 0 => killed_child(Some(p), true),
                _ => false,
            };
            if !waits {
                return None;
            }
            // Made with `WNOHANG`, so that it cannot block (another thread may reap the child
            // first): nothing to report is a failure as any call's.
            let mut b = a;
            b[2] |= libc::WNOHANG as c_long;
            let r = sys(nr, b);
            (r != 0).then_some(r)
        }
        calls::WAITID => {
            let info = a[2] as *const libc::siginfo_t;
            let waits = match a[0] as libc::idtype_t {
                libc::P_ALL => killed_child(None, true),
                libc::P_PID => killed_child(Some(a[1] as pid_t), true),
                _ => false,
            };
            if !waits || info.is_null() {
                return None;
            }
            // As for `wait4`: with `WNOHANG`; nothing reported (`si_pid` zero) is a failure.
            let mut b = a;
            b[3] |= libc::WNOHANG as c_long;
            let r = sys(nr, b);
            // SAFETY: the caller's `siginfo_t`, written by the call.
            (r != 0 || unsafe { (*info).si_pid() } != 0).then_some(r)
        }
        _ => None,
    }
}
