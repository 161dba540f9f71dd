//! The child processes a run started, as the interposed `fork`, `posix_spawn` and `posix_spawnp`
//! see them, and what a cancel of the run does to them.
//!
//! A child started inside a run is part of the run's work. When a cancel of that run (or of the
//! thread) is acted on by an interposed call (the call fails with `ECANCELED`/`ETIMEDOUT`), the
//! run's children that are still tracked are **killed** with their descendants
//! (`sys::process::Killed`, shared with the crate's `process` functions: each stopped, its
//! children listed once it has stopped, then killed), and the call waits,
//! bounded, until they have exited. From then on the run may **collect what they left**: in
//! that canceled run a `read`/`readv`/`recv`/`recvfrom`/`recvmsg` of a pipe whose writers are
//! all gone or of a Unix socket whose peer is gone, or a `poll` of pipes and Unix sockets only,
//! completes, and so does a wait for one of the killed children that has exited (`waitpid`,
//! `wait4`, `waitid` for its id or for any child; made with `WNOHANG`). None of them can block
//! for long: the read or poll waits for the hang-up until [`HANG_UP_BOUND`] after the kill at
//! most (a process that another thread is starting holds copies of the run's descriptors until
//! its `exec`), the wait not at all. A pipe or stream socket that another process still holds
//! then (a daemon the child left, a process forked before its `exec` that never executes
//! anything) reads as ended all the same: what is in it now, then end of file, and a poll
//! reports it hung up ([`leftover`]). Everything else still fails at once. So std's `Command::output` returns
//! the output the child wrote before the kill and its status (killed by `SIGKILL`), and
//! `Command::status` / `Child::wait` return that status; on std's fork path (`pre_exec` and the
//! like) its wait for the child's `exec`, a `recv` on a socket pair, reads end of file, as
//! after an `exec`: no panic inside std, no child left running, no zombie. The run reports the
//! cancel, acted on.
//!
//! **Tracked while they run.** Bookkeeping is per thread, in thread-locals with constant
//! initializers (no allocation, no lock: the interposed `fork` may be called from a signal
//! handler; a handler's call nested in the bookkeeping leaves it alone, [`exclusive`]). Each
//! entry holds a pidfd of the child, so a signal can never reach a process that reused a reaped
//! child's id; the process that started it (a child made by other means than `fork`, which
//! forgets them at once, may inherit its parent thread's entries: it ignores and closes them);
//! the depth of the run that started it. Before each child a run starts, the entries of
//! children already reaped (by the run's code, a `waitpid(-1)` of the program's, or the kernel
//! for a `SIGCHLD` set to be ignored) are dropped ([`prune`]; those killed by a cancel stay until
//! the run ends, for the collection), so the table holds the children that run or wait to be
//! reaped. The first [`INLINE`] are in a thread-local array; beyond, the table **grows** in an
//! anonymous mapping (`mmap`: async-signal-safe), unmapped when the thread's last entry is
//! forgotten. So a run's child is never left untracked for want of room: if the table cannot
//! grow (no memory) or no descriptor is left for the child's pidfd, the `fork`/`posix_spawn`
//! fails in the run before starting it, with `EAGAIN` or `EMFILE`/`ENFILE` ([`reserve`]: a
//! descriptor is held across the call and given up for the pidfd). An entry is forgotten (its
//! pidfd closed) when its run ends, whether the child was killed, waited for or neither: a run
//! that returns a running child leaves it alone.
//!
//! Not tracked: children started by `vfork`, `clone`, `_Fork` or by the C library's internals
//! (`system`, `popen`), a `fork` made by a signal handler that interrupted this module, and
//! every child on a kernel without pidfds and `waitid(P_PIDFD)` (before Linux 5.4).
//! Descendants are found through the children of each process's main thread: a daemon that
//! left its parent (double fork, `setsid`) is not reached (if it kept the child's output pipe,
//! that pipe reads as ended once the wait for the hang-up is over).

use crate::point::runs;
use crate::sys::calls;
use crate::sys::process::{self, waitid_pidfd};
use libc::{c_int, c_long, pid_t};
use std::cell::Cell;
use std::time::{Duration, Instant};

/// How many children of its runs one thread keeps in its thread-local array; more go to an
/// area mapped for it ([`MORE`]), grown as needed.
const INLINE: usize = 16;

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
    /// How many entries are in use (the first ones: `CHILDREN`, then `MORE`).
    static COUNT: Cell<usize> = const { Cell::new(0) };
    static CHILDREN: [Cell<Entry>; INLINE] = const { [const { Cell::new(EMPTY) }; INLINE] };
    /// The entries beyond the first [`INLINE`]: an anonymous mapping (`mmap`, async-signal-safe,
    /// unlike an allocation) and how many entries it holds; unmapped when no entry is left.
    static MORE: Cell<(*mut Entry, usize)> = const { Cell::new((std::ptr::null_mut(), 0)) };
    /// Whether this thread is inside one of the functions below: a signal handler that
    /// interrupts one of them and calls another (`fork`, or an interposed call that acts on a
    /// cancel) finds the table being changed and leaves it alone (see [`exclusive`]).
    static BUSY: Cell<bool> = const { Cell::new(false) };
    /// Until when a collecting read or poll waits for a hang-up: [`HANG_UP_BOUND`] after the
    /// last kill that killed something.
    static HANG_UP_END: Cell<Option<Instant>> = const { Cell::new(None) };
    /// How many bytes the collecting reads took since the last kill from pipes and sockets that
    /// had not hung up by [`HANG_UP_END`] (at most [`LEFT_MAX`]).
    static TAKEN: Cell<usize> = const { Cell::new(0) };
}

/// Entry `i` (below `COUNT`, or below the room [`make_room`] made).
fn get(i: usize) -> Entry {
    if i < INLINE {
        return CHILDREN.with(|k| k[i].get());
    }
    let (more, cap) = MORE.with(Cell::get);
    debug_assert!(i - INLINE < cap);
    // SAFETY: `more` maps `cap` entries, and `i - INLINE < cap` (the callers stay within the
    // room made); every entry of it was written before it is read.
    unsafe { *more.add(i - INLINE) }
}

/// Sets entry `i` (as [`get`]).
fn set(i: usize, e: Entry) {
    if i < INLINE {
        return CHILDREN.with(|k| k[i].set(e));
    }
    let (more, cap) = MORE.with(Cell::get);
    debug_assert!(i - INLINE < cap);
    // SAFETY: as in `get`: within the mapping, which only this thread uses.
    unsafe { *more.add(i - INLINE) = e };
}

/// Makes room for one more entry: maps a larger area for the entries beyond [`INLINE`] if
/// they are all in use (twice as large; a page at first), and copies them into it. `false`:
/// no memory (the system refused the mapping).
fn make_room() -> bool {
    let n = COUNT.with(Cell::get);
    let (more, cap) = MORE.with(Cell::get);
    if n < INLINE + cap {
        return true;
    }
    let size = std::mem::size_of::<Entry>();
    let new_cap = (cap * 2).max(4096 / size);
    let p = sys(
        calls::MMAP,
        [
            0,
            (new_cap * size) as c_long,
            (libc::PROT_READ | libc::PROT_WRITE) as c_long,
            (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as c_long,
            -1,
            0,
        ],
    );
    if (-4095..0).contains(&p) {
        return false;
    }
    let p = p as *mut Entry;
    if cap != 0 {
        // SAFETY: the old mapping holds `cap` entries, all in use (`n == INLINE + cap`); the
        // new one has room for `new_cap > cap`, and they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(more, p, cap) };
        unmap(more, cap);
    }
    MORE.with(|m| m.set((p, new_cap)));
    true
}

/// Unmaps the area of `cap` entries at `more`.
fn unmap(more: *mut Entry, cap: usize) {
    let len = cap * std::mem::size_of::<Entry>();
    sys(calls::MUNMAP, [more as c_long, len as c_long, 0, 0, 0, 0]);
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
    // locals that outlive the call, a mapping of this module's, or the interposed caller's own
    // arguments, in `collect`).
    unsafe { crate::point::conv::plain_raw(nr, a) }
}

fn getpid() -> pid_t {
    sys(calls::GETPID, [0; 6]) as pid_t
}

fn close(fd: c_int) {
    sys(calls::CLOSE, [fd as c_long, 0, 0, 0, 0, 0]);
}

/// Calls `f` on each entry in use; `f` returns the entry to keep, or `None` to forget it (its
/// pidfd closed). The area beyond [`INLINE`] is unmapped once no entry is left.
fn retain(mut f: impl FnMut(Entry) -> Option<Entry>) {
    let mut n = COUNT.with(Cell::get);
    let mut i = 0;
    while i < n {
        match f(get(i)) {
            Some(e) => {
                set(i, e);
                i += 1;
            }
            None => {
                close(get(i).pidfd);
                n -= 1;
                set(i, get(n));
                set(n, EMPTY);
            }
        }
    }
    COUNT.with(|c| c.set(n));
    if n == 0 {
        let (more, cap) = MORE.with(Cell::get);
        if cap != 0 {
            unmap(more, cap);
            MORE.with(|m| m.set((std::ptr::null_mut(), 0)));
        }
    }
}

/// Whether the child of `pidfd` has been reaped (by a wait of this program's, or by the kernel
/// for a `SIGCHLD` set to be ignored): a `waitid` for it that neither waits nor reaps fails
/// (`ECHILD`). Its id may be another process's by now; the pidfd still names the reaped one.
fn reaped(pidfd: c_int) -> bool {
    waitid_pidfd(pidfd, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT).is_none()
}

/// Forgets the entries that are not the calling process's (a child made by other means than
/// `fork`, which forgets them at once, may inherit its parent thread's) and those of children
/// reaped already (by the run's code, or by anyone), unless they were killed (a canceled run
/// may still collect what those left).
fn prune(me: pid_t) {
    retain(|e| (e.owner == me && (e.killed || !reaped(e.pidfd))).then_some(e));
}

/// What the interposed `fork`/`posix_spawn` hold while they start a child in a run: room in the
/// table, and a descriptor (a pidfd of the calling process) that is closed just before the
/// child's pidfd is opened, so that the child can be tracked even if the process is at its
/// limit of descriptors. Closed when dropped (in a forked child too: it is the parent's).
pub(super) struct Room {
    fd: c_int,
}

impl Drop for Room {
    fn drop(&mut self) {
        if self.fd >= 0 {
            close(self.fd);
        }
    }
}

/// Before `fork`/`posix_spawn` in the calling thread: if the thread is in a run, forgets the
/// entries of children already reaped and makes sure that the child about to start can be
/// tracked. `Err(errno)`: it cannot, and the call must fail with that error without starting
/// it: `EAGAIN` (no memory for the table: `fork`'s error for a lack of resources) or `EMFILE`/
/// `ENFILE` (no descriptor left for its pidfd). Outside a run, without pidfds (before Linux
/// 5.3), or in a signal handler that interrupted this module: room for nothing, no failure.
pub(super) fn reserve() -> Result<Room, c_int> {
    let none = Room { fd: -1 };
    if runs::top().is_null() {
        return Ok(none);
    }
    exclusive(|| {
        let me = getpid();
        prune(me);
        if !make_room() {
            return Err(libc::EAGAIN);
        }
        let fd = sys(calls::PIDFD_OPEN, [me as c_long, 0, 0, 0, 0, 0]);
        match fd as c_int {
            fd if fd >= 0 => Ok(Room { fd }),
            e if [libc::EMFILE, libc::ENFILE].contains(&-e) => Err(-e),
            e if -e == libc::ENOMEM => Err(libc::EAGAIN),
            // No pidfds: nothing is tracked.
            _ => Ok(Room { fd: -1 }),
        }
    })
    .unwrap_or(Ok(none))
}

/// After `fork`/`posix_spawn` started child `pid` in the calling thread with `room` from
/// [`reserve`]: tracks it if the thread is in a run.
pub(super) fn record(pid: pid_t, room: Room) {
    let top = runs::top();
    if top.is_null() || pid <= 0 {
        return;
    }
    // SAFETY: `top` is the innermost run in progress on this thread (see `runs::any_frame`).
    let depth = unsafe { (*top).depth };
    exclusive(|| record_at(pid, depth, room));
}

fn record_at(pid: pid_t, depth: usize, mut room: Room) {
    let me = getpid();
    // A signal handler's `fork` between `reserve` and here may have taken the room made.
    if !make_room() {
        return;
    }
    let fd = process::pidfd_of_child(pid).or_else(|| {
        // Perhaps no descriptor was left: the one reserved is.
        close(std::mem::replace(&mut room.fd, -1));
        process::pidfd_of_child(pid)
    });
    let Some(fd) = fd else {
        // Reaped already (or no pidfds): nothing to track.
        return;
    };
    let e = Entry {
        pidfd: fd,
        pid,
        owner: me,
        depth,
        killed: false,
    };
    let n = COUNT.with(Cell::get);
    set(n, e);
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
/// copies), forgotten at once, before the child can reuse those descriptor numbers (and so is
/// the parent's `room`, dropped here).
pub(super) fn after_fork_in_child(room: Room) {
    drop(room);
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
    let mut killed = process::Killed::new();
    let mut any = false;
    retain(|mut e| {
        if e.owner != me {
            return None;
        }
        if e.depth >= depth && !e.killed {
            e.killed = killed.tree(e.pidfd, e.pid);
            any |= e.killed;
        }
        Some(e)
    });
    // Their ends of pipes closed once they have exited; the descendants' pidfds closed when
    // `killed` is dropped (the entries' stay open until their runs end).
    killed.wait_exited(EXIT_BOUND);
    if any {
        HANG_UP_END.with(|t| t.set(Some(Instant::now() + HANG_UP_BOUND)));
        TAKEN.with(|t| t.set(0));
    }
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

/// Whether the process of `pidfd` has exited and not been reaped.
fn zombie(pidfd: c_int) -> bool {
    waitid_pidfd(pidfd, libc::WEXITED | libc::WNOWAIT | libc::WNOHANG).is_some_and(|p| p != 0)
}

/// What descriptor `fd` is, if a child may hold its other end: a pipe or FIFO, or a Unix
/// socket (std's `Command::spawn` on its fork path waits for the child's `exec` with a `recv` on
/// a socket pair; a program may give a child a socket pair as its standard I/O). `None`:
/// something else.
fn end_kind(fd: c_long) -> Option<End> {
    // SAFETY: an all-zero `stat` is a valid value (plain data).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if sys(calls::FSTAT, [fd, &mut st as *mut _ as c_long, 0, 0, 0, 0]) != 0 {
        return None;
    }
    let option = |name: c_int| {
        let mut v: c_int = 0;
        let mut len = std::mem::size_of::<c_int>() as libc::socklen_t;
        let r = sys(
            calls::GETSOCKOPT,
            [
                fd,
                libc::SOL_SOCKET as c_long,
                name as c_long,
                &mut v as *mut _ as c_long,
                &mut len as *mut _ as c_long,
                0,
            ],
        );
        (r == 0).then_some(v)
    };
    match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO => Some(End::Pipe),
        libc::S_IFSOCK if option(libc::SO_DOMAIN) == Some(libc::AF_UNIX) => {
            match option(libc::SO_TYPE) {
                Some(libc::SOCK_STREAM | libc::SOCK_SEQPACKET) => Some(End::Stream),
                _ => Some(End::Datagram),
            }
        }
        _ => None,
    }
}

/// A descriptor whose other end a child may hold ([`end_kind`]).
#[derive(Clone, Copy, PartialEq)]
enum End {
    /// A pipe or FIFO: hung up once no writer is left.
    Pipe,
    /// A Unix stream or sequenced-packet socket: hung up once its peer is closed.
    Stream,
    /// A Unix datagram socket: never hung up (a read of nothing is an empty datagram, not end
    /// of file).
    Datagram,
}

impl End {
    fn hangs_up(self) -> bool {
        self != End::Datagram
    }
}

/// How long after a kill the calls that collect what the killed children left wait for their
/// pipes and sockets to be closed by every other holder: a process that another thread of the
/// program started (`fork`, `posix_spawn`) while one of the run's was being started holds
/// copies of the run's descriptors until its own `exec` closes them; a daemon the child left,
/// or a process forked before its `exec` that never executes anything, holds them for good.
/// Later, such a call waits no more: a pipe or stream socket that has not hung up reads as
/// ended ([`leftover`]).
const HANG_UP_BOUND: Duration = EXIT_BOUND;

/// How many bytes in all the collecting reads take, after [`HANG_UP_BOUND`], from pipes and
/// sockets that another process still holds, before they read as ended with nothing taken:
/// more than the children could have left in their pipes (a pipe holds 1 MiB at most unless
/// the system's limit was raised), so that a holder that writes on for ever cannot keep a
/// canceled run reading.
const LEFT_MAX: usize = 4 << 20;

/// What is left of [`HANG_UP_BOUND`] since the last kill.
fn hang_up_wait() -> Duration {
    HANG_UP_END.with(Cell::get).map_or(Duration::ZERO, |end| {
        end.saturating_duration_since(Instant::now())
    })
}

/// `ppoll` of the `n` entries at `fds` with signal mask `mask` (the kernel's two arguments, as
/// the caller gave them), waiting at most `bound`, made again when a signal handler interrupts
/// it: its raw result (0: nothing within `bound`).
fn ppoll_within(fds: c_long, n: c_long, mask: [c_long; 2], bound: Duration) -> c_long {
    let end = Instant::now() + bound;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let ts = libc::timespec {
            tv_sec: left.as_secs() as libc::time_t,
            tv_nsec: left.subsec_nanos() as c_long,
        };
        let r = sys(
            calls::PPOLL,
            [fds, n, &ts as *const _ as c_long, mask[0], mask[1], 0],
        );
        if r != -(libc::EINTR as c_long) || left.is_zero() {
            return r;
        }
    }
}

/// Whether every writer of pipe `fd` is gone, or the peer of Unix socket `fd` is (`POLLHUP`: a
/// stream or sequenced-packet socket whose peer was closed is shut down both ways), waiting for
/// it until [`HANG_UP_BOUND`] after the last kill at most: then a read of it cannot block (what
/// is left in it, then end of file), whatever another thread does meanwhile. `false`: another
/// process still holds its other end (see [`leftover`]).
fn hung_up(fd: c_long) -> bool {
    // No event asked for: only a hang-up (or an error) ends the wait.
    let mut p = libc::pollfd {
        fd: fd as c_int,
        events: 0,
        revents: 0,
    };
    ppoll_within(&mut p as *mut _ as c_long, 1, [0, 0], hang_up_wait()) > 0
        && p.revents & libc::POLLHUP != 0
}

/// Read `nr` (`read`, `readv`, `recvfrom`, `recvmsg`; arguments `a`) of a pipe or stream
/// socket that has not hung up by the end of [`HANG_UP_BOUND`]: another process still holds its
/// other end (a daemon the killed child left, a process forked before its `exec`). It reads as
/// ended: what is in it now is taken without waiting (while the reads since the kill took less
/// than [`LEFT_MAX`]), then end of file (0), with nothing taken and the call's outputs as after
/// an end of file. An error the call would make anyway (a bad buffer) is returned as it is.
///
/// # Safety
/// The arguments are valid for system call `nr` (the interposed function's caller's contract).
unsafe fn leftover(nr: c_long, a: [c_long; 6]) -> c_long {
    if TAKEN.with(Cell::get) < LEFT_MAX {
        // The same read, made so that it cannot wait.
        let iov = libc::iovec {
            iov_base: a[1] as *mut libc::c_void,
            iov_len: a[2] as usize,
        };
        let nowait = libc::RWF_NOWAIT as c_long;
        let r = match nr {
            calls::READ => sys(
                calls::PREADV2,
                [a[0], &iov as *const _ as c_long, 1, -1, -1, nowait],
            ),
            calls::READV => sys(calls::PREADV2, [a[0], a[1], a[2], -1, -1, nowait]),
            calls::RECVFROM => sys(
                nr,
                [
                    a[0],
                    a[1],
                    a[2],
                    a[3] | libc::MSG_DONTWAIT as c_long,
                    a[4],
                    a[5],
                ],
            ),
            _ => sys(
                nr,
                [
                    a[0],
                    a[1],
                    a[2] | libc::MSG_DONTWAIT as c_long,
                    a[3],
                    a[4],
                    a[5],
                ],
            ),
        };
        if r > 0 {
            TAKEN.with(|t| t.set(t.get() + r as usize));
        }
        // Nothing there now (`EAGAIN`), or a kernel whose pipes cannot be read without waiting
        // (`EOPNOTSUPP`: an older kernel): end of file below.
        if r >= 0 || ![libc::EAGAIN, libc::EOPNOTSUPP].contains(&(-r as c_int)) {
            return r;
        }
    }
    // End of file, with the outputs an end of file leaves: no address, no ancillary data.
    match nr {
        calls::RECVFROM if a[5] != 0 => {
            // SAFETY: the caller's address length, valid when non-null (its contract).
            unsafe { *(a[5] as *mut libc::socklen_t) = 0 };
        }
        calls::RECVMSG => {
            // SAFETY: the caller's `msghdr` (its contract).
            let m = unsafe { &mut *(a[1] as *mut libc::msghdr) };
            if !m.msg_name.is_null() {
                m.msg_namelen = 0;
            }
            m.msg_controllen = 0;
            m.msg_flags = 0;
        }
        _ => {}
    }
    0
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
        // `recv` is `recvfrom` with no address; std's `recv_pidfd` is a `recvmsg`.
        calls::READ | calls::READV | calls::RECVFROM | calls::RECVMSG => {
            if !killed_child(None, false) {
                return None;
            }
            let end = end_kind(a[0])?;
            if hung_up(a[0]) {
                Some(sys(nr, a))
            } else if end.hangs_up() {
                // SAFETY: forwarded from the caller.
                Some(unsafe { leftover(nr, a) })
            } else {
                None
            }
        }
        calls::PPOLL => {
            let (fds, n) = (a[0] as *const libc::pollfd, a[1] as usize);
            if n == 0 || n > 64 || fds.is_null() || !killed_child(None, false) {
                return None;
            }
            // SAFETY: the caller's `poll` array of `n` entries (its contract).
            let set = unsafe { std::slice::from_raw_parts(fds, n) };
            let mut all_hang_up = true;
            for p in set.iter().filter(|p| p.fd >= 0) {
                all_hang_up &= end_kind(p.fd as c_long)?.hangs_up();
            }
            // Made with a bound (what is left of [`HANG_UP_BOUND`] since the kill, or the
            // caller's timeout if shorter): once the killed children's copies are closed, their
            // pipes are hung up.
            let asked = a[2] as *const libc::timespec;
            let wait = hang_up_wait();
            let (bound, ends_the_wait) = if asked.is_null() {
                (wait, true)
            } else {
                // SAFETY: the caller's timeout (its contract).
                let t = unsafe { *asked };
                let t = Duration::new(
                    t.tv_sec.max(0) as u64,
                    t.tv_nsec.clamp(0, 999_999_999) as u32,
                );
                (t.min(wait), t >= wait)
            };
            let r = ppoll_within(a[0], a[1], [a[3], a[4]], bound);
            if r > 0 {
                return Some(r);
            }
            if r != 0 || !ends_the_wait || !all_hang_up {
                return None;
            }
            // The wait for the hang-up is over and another process still holds them: they are
            // reported hung up, as their reads then end ([`leftover`]).
            // SAFETY: the caller's array, as above; nothing else refers to it during the call.
            let set = unsafe { std::slice::from_raw_parts_mut(fds as *mut libc::pollfd, n) };
            let mut hung = 0;
            for p in set {
                p.revents = if p.fd >= 0 { libc::POLLHUP } else { 0 };
                hung += c_long::from(p.fd >= 0);
            }
            (hung > 0).then_some(hung)
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
