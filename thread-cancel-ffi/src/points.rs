//! The system-call cancellation points (SPEC §3) for C, each one system call through
//! `thread_cancel::ffi::syscall_point`: either the call ran and its result is returned (with
//! `errno`), or it had no effect and the thread acts on its cancellation (R10).
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use crate::threads;
use libc::{c_int, c_long, c_void, size_t, sockaddr, socklen_t, ssize_t};
use thread_cancel::ffi::{self, calls};

/// The system call's raw result, or act if the call was canceled without effect.
///
/// # Safety
/// The arguments must be valid for system call `nr`.
unsafe fn call(nr: calls::Call, a: [c_long; 6]) -> c_long {
    // SAFETY: forwarded from the caller.
    match unsafe { ffi::syscall_point(nr, a) } {
        None => threads::act(),
        Some(r) => r,
    }
}

/// `call` with the C convention: -1 and `errno` on failure.
///
/// # Safety
/// As [`call`].
unsafe fn c(nr: calls::Call, a: [c_long; 6]) -> c_long {
    // SAFETY: forwarded from the caller.
    let r = unsafe { call(nr, a) };
    if (-4095..0).contains(&r) {
        crate::set_errno(-r as i32);
        -1
    } else {
        r
    }
}

macro_rules! args {
    ($($a:expr),*) => {{
        let mut v = [0 as c_long; 6];
        let given = [$($a as c_long),*];
        v[..given.len()].copy_from_slice(&given);
        v
    }};
}

#[no_mangle]
pub unsafe extern "C" fn tc_read(fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::READ, args!(fd, buf, n)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_write(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::WRITE, args!(fd, buf, n)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_pread(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    off: libc::off_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::PREAD64, args!(fd, buf, n, off)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_pwrite(
    fd: c_int,
    buf: *const c_void,
    n: size_t,
    off: libc::off_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::PWRITE64, args!(fd, buf, n, off)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_readv(fd: c_int, iov: *const libc::iovec, cnt: c_int) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::READV, args!(fd, iov, cnt)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_writev(fd: c_int, iov: *const libc::iovec, cnt: c_int) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::WRITEV, args!(fd, iov, cnt)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_openat(
    dir: c_int,
    path: *const libc::c_char,
    flags: c_int,
    mode: libc::mode_t,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::OPENAT, args!(dir, path, flags, mode)) as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn tc_open(
    path: *const libc::c_char,
    flags: c_int,
    mode: libc::mode_t,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_openat(libc::AT_FDCWD, path, flags, mode) }
}

#[no_mangle]
pub unsafe extern "C" fn tc_creat(path: *const libc::c_char, mode: libc::mode_t) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_open(path, libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC, mode) }
}

/// `close`: the descriptor is released exactly once, then a pending request is acted on.
#[no_mangle]
pub unsafe extern "C" fn tc_close(fd: c_int) -> c_int {
    // SAFETY: closing a descriptor is sound whatever it is (the caller owns it).
    let r = unsafe { libc::close(fd) };
    // On Linux the descriptor is released even when close fails with EINTR.
    let r = if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
        0
    } else {
        r
    };
    threads::point();
    r
}

#[no_mangle]
pub unsafe extern "C" fn tc_fsync(fd: c_int) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::FSYNC, args!(fd)) as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn tc_fdatasync(fd: c_int) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::FDATASYNC, args!(fd)) as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn tc_accept4(
    fd: c_int,
    addr: *mut sockaddr,
    len: *mut socklen_t,
    flags: c_int,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::ACCEPT4, args!(fd, addr, len, flags)) as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn tc_accept(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_accept4(fd, addr, len, 0) }
}

#[no_mangle]
pub unsafe extern "C" fn tc_connect(fd: c_int, addr: *const sockaddr, len: socklen_t) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::CONNECT, args!(fd, addr, len)) as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn tc_recvfrom(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    flags: c_int,
    addr: *mut sockaddr,
    len: *mut socklen_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::RECVFROM, args!(fd, buf, n, flags, addr, len)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_recv(fd: c_int, buf: *mut c_void, n: size_t, flags: c_int) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe {
        tc_recvfrom(
            fd,
            buf,
            n,
            flags,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn tc_sendto(
    fd: c_int,
    buf: *const c_void,
    n: size_t,
    flags: c_int,
    addr: *const sockaddr,
    len: socklen_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::SENDTO, args!(fd, buf, n, flags, addr, len)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_send(
    fd: c_int,
    buf: *const c_void,
    n: size_t,
    flags: c_int,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_sendto(fd, buf, n, flags, std::ptr::null(), 0) }
}

#[no_mangle]
pub unsafe extern "C" fn tc_recvmsg(fd: c_int, msg: *mut libc::msghdr, flags: c_int) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::RECVMSG, args!(fd, msg, flags)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_sendmsg(fd: c_int, msg: *const libc::msghdr, flags: c_int) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::SENDMSG, args!(fd, msg, flags)) as ssize_t }
}

const SIGSET_SIZE: c_long = calls::SIGSET_SIZE as c_long;

/// A signal mask or set given by C code, as passed to the kernel: a copy without the cancel
/// signal (`ffi::cancel_signal`), or null. A mask that blocks the cancel signal would make the
/// call (or, set with `sigprocmask`, the thread) impossible to interrupt; a set of signals to
/// wait for that holds it would take the request's signal as the call's result. glibc never
/// lets its own cancel signal be blocked or waited for either.
struct Mask(Option<libc::sigset_t>);

impl Mask {
    /// # Safety
    /// `set` must be null or point to an initialised `sigset_t`.
    unsafe fn of(set: *const libc::sigset_t) -> Mask {
        if set.is_null() {
            return Mask(None);
        }
        // SAFETY: non-null: the caller's initialised set (plain data).
        let mut copy = unsafe { *set };
        // SAFETY: `copy` is initialised; the cancel signal is a valid signal number.
        unsafe { libc::sigdelset(&mut copy, ffi::cancel_signal()) };
        Mask(Some(copy))
    }

    /// The copy (or null), valid while `self` lives.
    fn ptr(&self) -> *const libc::sigset_t {
        self.0
            .as_ref()
            .map_or(std::ptr::null(), |s| s as *const libc::sigset_t)
    }
}

/// The mask argument of `sigprocmask`/`pthread_sigmask` as passed on: without the cancel
/// signal for `SIG_BLOCK` and `SIG_SETMASK` (`SIG_UNBLOCK` can only help; any other `how` is
/// the system's `EINVAL`).
///
/// # Safety
/// As [`Mask::of`].
unsafe fn new_mask(how: c_int, set: *const libc::sigset_t) -> Mask {
    if how == libc::SIG_BLOCK || how == libc::SIG_SETMASK {
        // SAFETY: forwarded from the caller.
        unsafe { Mask::of(set) }
    } else {
        Mask(None)
    }
}

/// `pthread_sigmask`: the system's, except that the cancel signal is never blocked.
///
/// # Safety
/// As `pthread_sigmask`.
#[no_mangle]
pub unsafe extern "C" fn tc_pthread_sigmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's set (module docs).
    let m = unsafe { new_mask(how, set) };
    let p = if m.0.is_some() { m.ptr() } else { set };
    // SAFETY: `p` is the caller's set or its copy, alive for the call; `old` is the caller's.
    unsafe { libc::pthread_sigmask(how, p, old) }
}

/// `sigprocmask`: the system's, except that the cancel signal is never blocked.
///
/// # Safety
/// As `sigprocmask`.
#[no_mangle]
pub unsafe extern "C" fn tc_sigprocmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's set (module docs).
    let m = unsafe { new_mask(how, set) };
    let p = if m.0.is_some() { m.ptr() } else { set };
    // SAFETY: as in `tc_pthread_sigmask`.
    unsafe { libc::sigprocmask(how, p, old) }
}

/// `sigpause` (X/Open: `sig` is removed from the thread's mask for the wait): a cancellation
/// point, as `sigsuspend`; -1 with `EINTR`, or `EINVAL` for an invalid signal.
#[no_mangle]
pub extern "C" fn tc_sigpause(sig: c_int) -> c_int {
    // SAFETY: sigset_t is plain data; all-zero is a valid (empty) set.
    let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new set only reads the thread's mask into `mask`.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask) };
    // SAFETY: `mask` is initialised; sigdelset checks `sig`.
    if unsafe { libc::sigdelset(&mut mask, sig) } != 0 {
        crate::set_errno(libc::EINVAL);
        return -1;
    }
    // SAFETY: `mask` is a local set, alive for the call.
    unsafe { tc_sigsuspend(&mask) }
}

#[no_mangle]
pub unsafe extern "C" fn tc_ppoll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    timeout: *const libc::timespec,
    mask: *const libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    // SAFETY: the caller's arguments (module docs); the mask copy lives for the call.
    unsafe {
        c(
            calls::PPOLL,
            args!(fds, n, timeout, mask.ptr(), SIGSET_SIZE),
        ) as c_int
    }
}

fn ms_timespec(ms: c_int) -> libc::timespec {
    libc::timespec {
        tv_sec: (ms / 1000) as _,
        tv_nsec: ((ms % 1000) * 1_000_000) as libc::c_long,
    }
}

#[no_mangle]
pub unsafe extern "C" fn tc_poll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    timeout_ms: c_int,
) -> c_int {
    let ts = ms_timespec(timeout_ms.max(0));
    let t = if timeout_ms < 0 {
        std::ptr::null()
    } else {
        &ts as *const libc::timespec
    };
    // SAFETY: the caller's arguments (module docs); `t` is null or `ts`, alive for the call.
    unsafe { tc_ppoll(fds, n, t, std::ptr::null()) }
}

#[no_mangle]
pub unsafe extern "C" fn tc_select(
    n: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    timeout: *mut libc::timeval,
) -> c_int {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let t = if timeout.is_null() {
        std::ptr::null_mut()
    } else {
        // SAFETY: a non-null timeout is the caller's valid timeval.
        let tv = unsafe { *timeout };
        ts = libc::timespec {
            tv_sec: tv.tv_sec,
            tv_nsec: tv.tv_usec * 1000,
        };
        &mut ts as *mut libc::timespec
    };
    // SAFETY: the caller's arguments (module docs); `t` is null or `ts`, alive for the call.
    let res = unsafe { c(calls::PSELECT6, args!(n, r, w, e, t, 0)) as c_int };
    if !timeout.is_null() {
        // Linux's select reports the time left, as pselect6 does in `ts`.
        // SAFETY: as above.
        unsafe {
            (*timeout).tv_sec = ts.tv_sec;
            (*timeout).tv_usec = ts.tv_nsec / 1000;
        }
    }
    res
}

#[no_mangle]
pub unsafe extern "C" fn tc_epoll_wait(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe {
        c(
            calls::EPOLL_PWAIT,
            args!(epfd, ev, max, timeout, 0, SIGSET_SIZE),
        ) as c_int
    }
}

/// `clock_nanosleep`: returns the error number (not -1), as POSIX says.
#[no_mangle]
pub unsafe extern "C" fn tc_clock_nanosleep(
    clock: libc::clockid_t,
    flags: c_int,
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    let r = unsafe { call(calls::CLOCK_NANOSLEEP, args!(clock, flags, req, rem)) };
    (-r) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn tc_nanosleep(
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    let e = unsafe { tc_clock_nanosleep(libc::CLOCK_REALTIME, 0, req, rem) };
    if e == 0 {
        0
    } else {
        crate::set_errno(e);
        -1
    }
}

#[no_mangle]
pub extern "C" fn tc_sleep(seconds: libc::c_uint) -> libc::c_uint {
    let req = libc::timespec {
        tv_sec: seconds as _,
        tv_nsec: 0,
    };
    let mut rem = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: both timespecs are locals, alive for the call.
    if unsafe { tc_clock_nanosleep(libc::CLOCK_REALTIME, 0, &req, &mut rem) } == 0 {
        0
    } else {
        // Interrupted by a signal: the seconds left, rounded up.
        (rem.tv_sec as libc::c_uint).saturating_add(u32::from(rem.tv_nsec > 0))
    }
}

#[no_mangle]
pub extern "C" fn tc_usleep(usec: libc::useconds_t) -> c_int {
    let req = libc::timespec {
        tv_sec: (usec / 1_000_000) as _,
        tv_nsec: ((usec % 1_000_000) * 1000) as libc::c_long,
    };
    // SAFETY: `req` is a local, alive for the call.
    unsafe { tc_nanosleep(&req, std::ptr::null_mut()) }
}

/// `pause`: blocks until a signal is handled; -1 with `EINTR`.
#[no_mangle]
pub extern "C" fn tc_pause() -> c_int {
    // SAFETY: no descriptors, no timeout, no mask: waits for a signal.
    unsafe { tc_ppoll(std::ptr::null_mut(), 0, std::ptr::null(), std::ptr::null()) }
}

#[no_mangle]
pub unsafe extern "C" fn tc_waitpid(
    pid: libc::pid_t,
    status: *mut c_int,
    options: c_int,
) -> libc::pid_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::WAIT4, args!(pid, status, options, 0)) as libc::pid_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_wait(status: *mut c_int) -> libc::pid_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_waitpid(-1, status, 0) }
}

/// `sigwait`: returns 0 and the signal in `*sig`, or the error number.
#[no_mangle]
pub unsafe extern "C" fn tc_sigwait(set: *const libc::sigset_t, sig: *mut c_int) -> c_int {
    // SAFETY: the caller's set (module docs).
    let set = unsafe { Mask::of(set) };
    loop {
        // SAFETY: the caller's arguments (module docs); the set's copy lives for the call.
        let r = unsafe { call(calls::RT_SIGTIMEDWAIT, args!(set.ptr(), 0, 0, SIGSET_SIZE)) };
        if r == -(libc::EINTR as c_long) {
            continue; // sigwait is not interrupted by other signals
        }
        if r < 0 {
            return (-r) as c_int;
        }
        // SAFETY: the caller passes a writable int.
        unsafe { *sig = r as c_int };
        return 0;
    }
}

#[no_mangle]
pub unsafe extern "C" fn tc_sigsuspend(mask: *const libc::sigset_t) -> c_int {
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    // SAFETY: the caller's arguments (module docs); the mask's copy lives for the call.
    unsafe { c(calls::RT_SIGSUSPEND, args!(mask.ptr(), SIGSET_SIZE)) as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn tc_tcdrain(fd: c_int) -> c_int {
    // SAFETY: TCSBRK with a nonzero argument waits for the output to drain.
    unsafe { c(calls::IOCTL, args!(fd, libc::TCSBRK, 1)) as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn tc_pselect(
    n: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    timeout: *const libc::timespec,
    mask: *const libc::sigset_t,
) -> c_int {
    // pselect6's last argument: the mask and its size. A copy of the timeout, which pselect
    // (unlike the system call) does not update.
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    let sig = [mask.ptr() as c_long, SIGSET_SIZE];
    // SAFETY: a non-null timeout is the caller's valid timespec.
    let mut ts = (!timeout.is_null()).then(|| unsafe { *timeout });
    let t = ts
        .as_mut()
        .map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
    let sig_arg = if mask.ptr().is_null() {
        std::ptr::null()
    } else {
        sig.as_ptr()
    };
    // SAFETY: the caller's arguments (module docs); `t` and `sig` live for the call.
    unsafe { c(calls::PSELECT6, args!(n, r, w, e, t, sig_arg)) as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn tc_epoll_pwait(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
    mask: *const libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    // SAFETY: the caller's arguments (module docs); the mask's copy lives for the call.
    unsafe {
        c(
            calls::EPOLL_PWAIT,
            args!(epfd, ev, max, timeout, mask.ptr(), SIGSET_SIZE),
        ) as c_int
    }
}

/// `epoll_pwait2` (a timespec timeout; null waits forever).
#[no_mangle]
pub unsafe extern "C" fn tc_epoll_pwait2(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: *const libc::timespec,
    mask: *const libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    // SAFETY: the caller's arguments (module docs); the mask's copy lives for the call.
    unsafe {
        c(
            calls::EPOLL_PWAIT2,
            args!(epfd, ev, max, timeout, mask.ptr(), SIGSET_SIZE),
        ) as c_int
    }
}

#[no_mangle]
pub unsafe extern "C" fn tc_sigtimedwait(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const libc::timespec,
) -> c_int {
    // SAFETY: the caller's set (module docs).
    let set = unsafe { Mask::of(set) };
    // SAFETY: the caller's arguments (module docs); the set's copy lives for the call.
    unsafe {
        c(
            calls::RT_SIGTIMEDWAIT,
            args!(set.ptr(), info, timeout, SIGSET_SIZE),
        ) as c_int
    }
}

#[no_mangle]
pub unsafe extern "C" fn tc_sigwaitinfo(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_sigtimedwait(set, info, std::ptr::null()) }
}

#[no_mangle]
pub unsafe extern "C" fn tc_waitid(
    idtype: libc::idtype_t,
    id: libc::id_t,
    info: *mut libc::siginfo_t,
    options: c_int,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    let r = unsafe { c(calls::WAITID, args!(idtype, id, info, options, 0)) };
    if r < 0 {
        -1
    } else {
        0
    }
}

/// `fcntl` with one argument (an integer or a pointer); a cancellation point for the waiting
/// lock commands (`F_SETLKW`, `F_OFD_SETLKW`), the system's call for the others.
#[no_mangle]
pub unsafe extern "C" fn tc_fcntl(fd: c_int, cmd: c_int, arg: c_long) -> c_int {
    if cmd == libc::F_SETLKW || cmd == libc::F_OFD_SETLKW {
        // SAFETY: the caller's arguments (module docs): `arg` points to a `struct flock`.
        unsafe { c(calls::FCNTL, args!(fd, cmd, arg)) as c_int }
    } else {
        // SAFETY: the caller's arguments, as for fcntl.
        unsafe { libc::fcntl(fd, cmd, arg) }
    }
}

/// `lockf`: `F_LOCK` waits (a cancellation point); the other commands are the system's.
#[no_mangle]
pub unsafe extern "C" fn tc_lockf(fd: c_int, cmd: c_int, len: libc::off_t) -> c_int {
    if cmd != libc::F_LOCK {
        // SAFETY: the caller's arguments, as for lockf.
        return unsafe { libc::lockf(fd, cmd, len) };
    }
    // SAFETY: all-zero is a valid `flock`.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_CUR as libc::c_short;
    fl.l_len = len;
    // SAFETY: `fl` lives for the call.
    unsafe { tc_fcntl(fd, libc::F_SETLKW, &mut fl as *mut libc::flock as c_long) }
}

#[no_mangle]
pub unsafe extern "C" fn tc_msync(addr: *mut c_void, len: size_t, flags: c_int) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::MSYNC, args!(addr, len, flags)) as c_int }
}

#[no_mangle]
pub unsafe extern "C" fn tc_msgrcv(
    qid: c_int,
    msg: *mut c_void,
    size: size_t,
    typ: c_long,
    flags: c_int,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::MSGRCV, args!(qid, msg, size, typ, flags)) as ssize_t }
}

#[no_mangle]
pub unsafe extern "C" fn tc_msgsnd(
    qid: c_int,
    msg: *const c_void,
    size: size_t,
    flags: c_int,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::MSGSND, args!(qid, msg, size, flags)) as c_int }
}

#[cfg(not(target_os = "android"))] // bionic has neither
#[no_mangle]
pub unsafe extern "C" fn tc_mq_timedreceive(
    mq: libc::mqd_t,
    msg: *mut libc::c_char,
    len: size_t,
    prio: *mut libc::c_uint,
    timeout: *const libc::timespec,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::MQ_TIMEDRECEIVE, args!(mq, msg, len, prio, timeout)) as ssize_t }
}

#[cfg(not(target_os = "android"))] // bionic has neither
#[no_mangle]
pub unsafe extern "C" fn tc_mq_receive(
    mq: libc::mqd_t,
    msg: *mut libc::c_char,
    len: size_t,
    prio: *mut libc::c_uint,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_mq_timedreceive(mq, msg, len, prio, std::ptr::null()) }
}

#[cfg(not(target_os = "android"))] // bionic has neither
#[no_mangle]
pub unsafe extern "C" fn tc_mq_timedsend(
    mq: libc::mqd_t,
    msg: *const libc::c_char,
    len: size_t,
    prio: libc::c_uint,
    timeout: *const libc::timespec,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::MQ_TIMEDSEND, args!(mq, msg, len, prio, timeout)) as c_int }
}

#[cfg(not(target_os = "android"))] // bionic has neither
#[no_mangle]
pub unsafe extern "C" fn tc_mq_send(
    mq: libc::mqd_t,
    msg: *const libc::c_char,
    len: size_t,
    prio: libc::c_uint,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_mq_timedsend(mq, msg, len, prio, std::ptr::null()) }
}

/// `preadv`: `readv` at `off` (the file offset is not changed).
#[no_mangle]
pub unsafe extern "C" fn tc_preadv(
    fd: c_int,
    iov: *const libc::iovec,
    cnt: c_int,
    off: libc::off_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_preadv2(fd, iov, cnt, off, 0) }
}

/// `pwritev`: `writev` at `off`.
#[no_mangle]
pub unsafe extern "C" fn tc_pwritev(
    fd: c_int,
    iov: *const libc::iovec,
    cnt: c_int,
    off: libc::off_t,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_pwritev2(fd, iov, cnt, off, 0) }
}

/// The offset of `preadv`/`pwritev` as the kernel takes it: low and high halves (the high
/// half is shifted out on 64-bit targets).
fn lo_hi(off: libc::off_t) -> (c_long, c_long) {
    (off as c_long, ((off as u64) >> 32) as c_long)
}

/// `preadv2` (`off` -1: at the file offset; `RWF_*` flags).
#[no_mangle]
pub unsafe extern "C" fn tc_preadv2(
    fd: c_int,
    iov: *const libc::iovec,
    cnt: c_int,
    off: libc::off_t,
    flags: c_int,
) -> ssize_t {
    let (lo, hi) = lo_hi(off);
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::PREADV2, args!(fd, iov, cnt, lo, hi, flags)) as ssize_t }
}

/// `pwritev2` (`off` -1: at the file offset; `RWF_*` flags).
#[no_mangle]
pub unsafe extern "C" fn tc_pwritev2(
    fd: c_int,
    iov: *const libc::iovec,
    cnt: c_int,
    off: libc::off_t,
    flags: c_int,
) -> ssize_t {
    let (lo, hi) = lo_hi(off);
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::PWRITEV2, args!(fd, iov, cnt, lo, hi, flags)) as ssize_t }
}

/// `sendmmsg`: the number of messages sent. As `sendmsg`, a canceled call sent nothing.
#[no_mangle]
pub unsafe extern "C" fn tc_sendmmsg(
    fd: c_int,
    msgs: *mut libc::mmsghdr,
    n: libc::c_uint,
    flags: c_int,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::SENDMMSG, args!(fd, msgs, n, flags)) as c_int }
}

/// `recvmmsg`: the number of messages received. A canceled call received nothing.
#[no_mangle]
pub unsafe extern "C" fn tc_recvmmsg(
    fd: c_int,
    msgs: *mut libc::mmsghdr,
    n: libc::c_uint,
    flags: c_int,
    timeout: *mut libc::timespec,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::RECVMMSG, args!(fd, msgs, n, flags, timeout)) as c_int }
}

/// `wait4`: `waitpid` that also reports the child's resource usage.
#[no_mangle]
pub unsafe extern "C" fn tc_wait4(
    pid: libc::pid_t,
    status: *mut c_int,
    options: c_int,
    usage: *mut libc::rusage,
) -> libc::pid_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::WAIT4, args!(pid, status, options, usage)) as libc::pid_t }
}

/// `wait3`: `wait4` for any child.
#[no_mangle]
pub unsafe extern "C" fn tc_wait3(
    status: *mut c_int,
    options: c_int,
    usage: *mut libc::rusage,
) -> libc::pid_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_wait4(-1, status, options, usage) }
}

/// `splice` (between a pipe and another descriptor).
#[no_mangle]
pub unsafe extern "C" fn tc_splice(
    fd_in: c_int,
    off_in: *mut libc::loff_t,
    fd_out: c_int,
    off_out: *mut libc::loff_t,
    len: size_t,
    flags: libc::c_uint,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe {
        c(
            calls::SPLICE,
            args!(fd_in, off_in, fd_out, off_out, len, flags),
        ) as ssize_t
    }
}

/// `tee` (duplicates pipe content).
#[no_mangle]
pub unsafe extern "C" fn tc_tee(
    fd_in: c_int,
    fd_out: c_int,
    len: size_t,
    flags: libc::c_uint,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::TEE, args!(fd_in, fd_out, len, flags)) as ssize_t }
}

/// `vmsplice` (user pages into a pipe).
#[no_mangle]
pub unsafe extern "C" fn tc_vmsplice(
    fd: c_int,
    iov: *const libc::iovec,
    n: size_t,
    flags: libc::c_uint,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { c(calls::VMSPLICE, args!(fd, iov, n, flags)) as ssize_t }
}

/// `aio_suspend`: glibc's, in slices of at most [`AIO_SLICE`], with a cancellation point
/// before each (glibc's wait is on a futex of its own that no signal of ours can end early;
/// waiting in slices bounds the time a request waits to be acted on). It takes nothing from
/// the requests, so a canceled wait had no effect. -1 with `EAGAIN` once `timeout` (relative,
/// null for none) has passed; `EINTR` if a signal handler ran.
#[cfg(not(target_os = "android"))] // bionic has neither
#[no_mangle]
pub unsafe extern "C" fn tc_aio_suspend(
    list: *const *const libc::aiocb,
    n: c_int,
    timeout: *const libc::timespec,
) -> c_int {
    let deadline = (!timeout.is_null()).then(|| {
        // SAFETY: a non-null timeout is the caller's valid timespec.
        let t = unsafe { *timeout };
        let d = std::time::Duration::new(
            t.tv_sec.max(0) as u64,
            t.tv_nsec.clamp(0, 999_999_999) as u32,
        );
        std::time::Instant::now().checked_add(d)
    });
    loop {
        threads::point();
        let left = match deadline {
            None | Some(None) => AIO_SLICE,
            Some(Some(d)) => d
                .saturating_duration_since(std::time::Instant::now())
                .min(AIO_SLICE),
        };
        let slice = libc::timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as c_long,
        };
        // SAFETY: the caller's list (module docs); `slice` is a local, alive for the call.
        if unsafe { libc::aio_suspend(list, n, &slice) } == 0 {
            return 0;
        }
        let e = std::io::Error::last_os_error().raw_os_error();
        if e != Some(libc::EAGAIN) || left < AIO_SLICE {
            return -1; // EINTR, EINVAL, ... or the caller's timeout (EAGAIN)
        }
    }
}

/// The longest `aio_suspend` wait between two cancellation points.
#[cfg(not(target_os = "android"))]
const AIO_SLICE: std::time::Duration = std::time::Duration::from_millis(10);
