//! The interposed functions: the C library's names and signatures, each a system call made by
//! [`point`](super::point). None can unwind: see the module documentation of `interpose`.
//!
//! The regular ones (the rows of the table of points, `sys/points.rs`, whose `interpose` column
//! is `point` or `write`, and the `_FORTIFY_SOURCE` forms) are made from the table below; the
//! rest of this file is the hand-written ones (`own` in the table): a converted timeout, a
//! copied set, a sleep's remaining time, a signal mask, a child recorded.
//!
//! The variadic ones (`open`, `open64`, `openat`, `openat64`, `fcntl`, `fcntl64`) are C shims
//! (`shim.c`: stable Rust cannot define C-variadic functions) that call [`thread_cancel_openat`]
//! and [`thread_cancel_fcntl_lock`] here.

use super::{children, next, point, point_on, signals, sleep_point, Kind};
use crate::point::conv::{self, args, plain_c};
use crate::sys::calls::{self, SIGSET_SIZE};
#[allow(unused_imports)] // the C types of the table's signatures
use crate::sys::points::ctypes::*;
use libc::{c_int, c_long};

/// A pointer to the local copy a call passes to the kernel in place of the caller's, or null.
#[inline(always)]
fn ptr_or_null<T>(copy: &mut Option<T>) -> *mut T {
    copy.as_mut().map_or(std::ptr::null_mut(), |t| t as *mut T)
}

/// Defines the interposed function of each row whose `interpose` column is `point` (or `write`:
/// descriptors 1 and 2 are not points), and each `_FORTIFY_SOURCE` form (`chk`): its check
/// (glibc's `__chk_fail` aborts the process), then the interposed function it checks.
macro_rules! interpose_face {
    (row [$rs:ident point $tc:ident] $($row:tt)*) => { interpose_face!(@define Point $($row)*); };
    (row [$rs:ident write $tc:ident] $($row:tt)*) => { interpose_face!(@define Write $($row)*); };
    (chk $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty
        = $base:ident ( $($barg:expr),* ) if $cond:block) => {
        #[doc = concat!("`", stringify!($name), "`: `", stringify!($base), "` as C code \
            built with `_FORTIFY_SOURCE` calls it.")]
        ///
        /// # Safety
        /// As the C library's function of the same name.
        #[no_mangle]
        pub unsafe extern "C-unwind" fn $name($($arg: $t),*) -> $ret {
            next::next_for_foreign_threads!($name($($arg: $t),*) -> $ret);
            conv::fortify_check($cond);
            // SAFETY: forwarded from the caller.
            unsafe { $base($($barg),*) }
        }
    };
    (@define $kind:ident $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty
        = $nr:ident ( $($reg:expr),* )) => {
        #[doc = concat!("`", stringify!($name), "`, a point that fails with `ECANCELED`/`ETIMEDOUT`.")]
        ///
        /// # Safety
        /// As the C library's function of the same name.
        #[no_mangle]
        pub unsafe extern "C-unwind" fn $name($($arg: $t),*) -> $ret {
            next::next_for_foreign_threads!(cur => $name($($arg: $t),*) -> $ret);
            // SAFETY: forwarded from the caller (the arguments of the C function).
            unsafe { point_on(cur, calls::$nr, args!($($reg),*), Kind::$kind) as $ret }
        }
    };
    ($($other:tt)*) => {};
}

crate::sys::points::table!(interpose_face);

/// `poll(2)`, made as `ppoll` (the kernel writes the time left into a copy).
///
/// # Safety
/// As `poll(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn poll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    timeout: c_int,
) -> c_int {
    next::next_for_foreign_threads!(poll(fds: *mut libc::pollfd, n: libc::nfds_t, timeout: c_int) -> c_int);
    let mut ts = libc::timespec {
        tv_sec: (timeout / 1000) as libc::time_t,
        tv_nsec: ((timeout % 1000) as c_long) * 1_000_000,
    };
    let tsp = if timeout < 0 {
        std::ptr::null_mut()
    } else {
        &raw mut ts
    };
    let a = [
        fds as c_long,
        n as c_long,
        tsp as c_long,
        0,
        SIGSET_SIZE as c_long,
        0,
    ];
    // SAFETY: forwarded from the caller; `ts` outlives the call.
    unsafe { point(calls::PPOLL, a, Kind::Point) as c_int }
}

/// `ppoll(2)` (the timeout is copied: the kernel writes the time left into it). The mask is
/// taken without the crate's cancel signal, as a set filled by the C library leaves out the
/// C library's own: a call with every signal blocked stays cancelable.
///
/// # Safety
/// As `ppoll(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn ppoll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    timeout: *const libc::timespec,
    sigmask: *const libc::sigset_t,
) -> c_int {
    next::next_for_foreign_threads!(ppoll(fds: *mut libc::pollfd, n: libc::nfds_t, timeout: *const libc::timespec, sigmask: *const libc::sigset_t) -> c_int);
    // SAFETY: the caller passed a valid timespec or null.
    let mut ts = unsafe { timeout.as_ref() }.copied();
    let tsp = ptr_or_null(&mut ts);
    // SAFETY: the caller passed a valid set or null.
    let mut mask = unsafe { sigmask.as_ref() }.map(crate::sys::without_cancel_signal);
    let a = [
        fds as c_long,
        n as c_long,
        tsp as c_long,
        ptr_or_null(&mut mask) as c_long,
        SIGSET_SIZE as c_long,
        0,
    ];
    // SAFETY: forwarded from the caller; `ts` and `mask` outlive the call.
    unsafe { point(calls::PPOLL, a, Kind::Point) as c_int }
}

/// `nanosleep(2)`: canceled, it fails with `EINTR` and zero time left.
///
/// # Safety
/// As `nanosleep(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn nanosleep(
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    next::next_for_foreign_threads!(nanosleep(req: *const libc::timespec, rem: *mut libc::timespec) -> c_int);
    // SAFETY: forwarded from the caller.
    match unsafe { sleep_point(libc::CLOCK_REALTIME, req, rem) } {
        0 => 0,
        e => {
            conv::set_errno(e);
            -1
        }
    }
}

/// `clock_nanosleep(2)`: a relative sleep canceled returns `EINTR` with zero time left; an
/// absolute one (`TIMER_ABSTIME`) is not a point.
///
/// # Safety
/// As `clock_nanosleep(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn clock_nanosleep(
    clock: libc::clockid_t,
    flags: c_int,
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    next::next_for_foreign_threads!(clock_nanosleep(clock: libc::clockid_t, flags: c_int, req: *const libc::timespec, rem: *mut libc::timespec) -> c_int);
    if flags & libc::TIMER_ABSTIME != 0 {
        let a = [
            clock as c_long,
            flags as c_long,
            req as c_long,
            rem as c_long,
            0,
            0,
        ];
        // SAFETY: forwarded from the caller.
        return match unsafe { plain_c(calls::CLOCK_NANOSLEEP, a) } {
            -1 => conv::errno(),
            _ => 0,
        };
    }
    // SAFETY: forwarded from the caller.
    unsafe { sleep_point(clock, req, rem) }
}

/// `sleep(3)` (the C library's calls its own `nanosleep` by a hidden alias, which no interposed
/// symbol sees): 0 when the time has passed; interrupted by a handled signal, the whole seconds
/// left with errno `EINTR`, as glibc; canceled, 0 — nothing left to sleep, as `nanosleep`'s
/// remaining time of zero, so a loop that sleeps again for what is left ends — with errno
/// `EINTR`. errno is left alone otherwise.
///
/// # Safety
/// As `sleep(3)` (none: an integer argument).
#[no_mangle]
pub unsafe extern "C-unwind" fn sleep(seconds: c_uint) -> c_uint {
    next::next_for_foreign_threads!(sleep(seconds: c_uint) -> c_uint);
    let req = libc::timespec {
        tv_sec: libc::time_t::from(seconds),
        tv_nsec: 0,
    };
    let mut rem = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: both timespecs are locals, alive for the call.
    match unsafe { sleep_point(libc::CLOCK_REALTIME, &req, &mut rem) } {
        0 => 0,
        e => {
            conv::set_errno(e);
            // The whole seconds left (zero when canceled: `sleep_point` wrote it).
            rem.tv_sec as c_uint
        }
    }
}

/// `usleep(3)` (the C library's calls its own `nanosleep`): 0, or -1 with errno `EINTR` when a
/// handled signal interrupted it or a cancel acted (its documented interruption).
///
/// # Safety
/// As `usleep(3)` (none: an integer argument).
#[no_mangle]
pub unsafe extern "C-unwind" fn usleep(usec: useconds_t) -> c_int {
    next::next_for_foreign_threads!(usleep(usec: useconds_t) -> c_int);
    let req = libc::timespec {
        tv_sec: libc::time_t::from(usec / 1_000_000),
        tv_nsec: c_long::from(usec % 1_000_000) * 1000,
    };
    // SAFETY: `req` is a local, alive for the call; no remaining time asked for.
    match unsafe { sleep_point(libc::CLOCK_REALTIME, &req, std::ptr::null_mut()) } {
        0 => 0,
        e => {
            conv::set_errno(e);
            -1
        }
    }
}

/// `thrd_sleep` (the C standard's `<threads.h>`; the C library's calls its own
/// `clock_nanosleep`): 0, -1 when interrupted by a handled signal or a cancel (then with a
/// remaining time of zero), -2 on another error, as glibc.
///
/// # Safety
/// As `thrd_sleep`: `req` valid, `rem` null or valid for a write.
#[no_mangle]
pub unsafe extern "C-unwind" fn thrd_sleep(
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    next::next_for_foreign_threads!(thrd_sleep(req: *const libc::timespec, rem: *mut libc::timespec) -> c_int);
    // SAFETY: forwarded from the caller.
    match unsafe { sleep_point(libc::CLOCK_REALTIME, req, rem) } {
        0 => 0,
        libc::EINTR => -1,
        _ => -2,
    }
}

/// `pselect(2)`, through `pselect6` (its sixth argument is the mask and its size); the mask
/// without the cancel signal, as [`ppoll`]'s.
///
/// # Safety
/// As `pselect(2)`: the sets null or valid for `nfds` bits, `timeout` and `mask` null or valid.
#[no_mangle]
pub unsafe extern "C-unwind" fn pselect(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    timeout: *const libc::timespec,
    mask: *const libc::sigset_t,
) -> c_int {
    next::next_for_foreign_threads!(pselect(nfds: c_int, r: *mut libc::fd_set, w: *mut libc::fd_set, e: *mut libc::fd_set, timeout: *const libc::timespec, mask: *const libc::sigset_t) -> c_int);
    // The kernel may write the time left: a copy, as glibc's wrapper makes (pselect leaves the
    // caller's timeout alone).
    let mut ts = if timeout.is_null() {
        None
    } else {
        // SAFETY: a valid timespec (the caller's contract).
        Some(unsafe { *timeout })
    };
    let tsp = ptr_or_null(&mut ts);
    // SAFETY: the caller passed a valid set or null.
    let mut without = unsafe { mask.as_ref() }.map(crate::sys::without_cancel_signal);
    let data: [c_long; 2] = [ptr_or_null(&mut without) as c_long, SIGSET_SIZE as c_long];
    let sixth = if mask.is_null() {
        0
    } else {
        data.as_ptr() as c_long
    };
    let a = [
        nfds as c_long,
        r as c_long,
        w as c_long,
        e as c_long,
        tsp as c_long,
        sixth,
    ];
    // SAFETY: forwarded from the caller; `ts` and `data` outlive the call.
    unsafe { point(calls::PSELECT6, a, Kind::Point) as c_int }
}

/// `select(2)`, through `pselect6`; on Linux the time left is written back to `timeout`.
///
/// # Safety
/// As `select(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn select(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    timeout: *mut libc::timeval,
) -> c_int {
    next::next_for_foreign_threads!(select(nfds: c_int, r: *mut libc::fd_set, w: *mut libc::fd_set, e: *mut libc::fd_set, timeout: *mut libc::timeval) -> c_int);
    let mut ts = if timeout.is_null() {
        None
    } else {
        // SAFETY: a valid timeval (the caller's contract).
        let tv = unsafe { *timeout };
        if tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1_000_000 {
            conv::set_errno(libc::EINVAL);
            return -1;
        }
        Some(libc::timespec {
            tv_sec: tv.tv_sec,
            tv_nsec: tv.tv_usec * 1000,
        })
    };
    let tsp = ptr_or_null(&mut ts);
    let a = [
        nfds as c_long,
        r as c_long,
        w as c_long,
        e as c_long,
        tsp as c_long,
        0,
    ];
    // SAFETY: forwarded from the caller; `ts` outlives the call.
    let n = unsafe { point(calls::PSELECT6, a, Kind::Point) as c_int };
    if let (Some(t), false) = (ts, timeout.is_null()) {
        // SAFETY: `timeout` is the caller's valid timeval.
        unsafe {
            (*timeout).tv_sec = t.tv_sec;
            (*timeout).tv_usec = t.tv_nsec / 1000;
        }
    }
    n
}

/// The kernel's `si_code` for a signal sent by `tkill`/`tgkill` (`<asm-generic/siginfo.h>`).
const SI_TKILL: c_int = -6;

/// `sigtimedwait(2)`. The crate's cancel signal is taken out of the set (a wait must never
/// take it: the request's signal would be returned as the call's result), as glibc does for
/// its own; `SI_TKILL` (`raise`, `pthread_kill`) is reported as `SI_USER`, as glibc's wrapper
/// does.
///
/// # Safety
/// As `sigtimedwait(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sigtimedwait(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const libc::timespec,
) -> c_int {
    next::next_for_foreign_threads!(sigtimedwait(set: *const libc::sigset_t, info: *mut libc::siginfo_t, timeout: *const libc::timespec) -> c_int);
    // SAFETY: the caller's set, if any, is an initialised `sigset_t` (plain data).
    let mut copy = unsafe { set.as_ref() }.map(crate::sys::without_cancel_signal);
    let setp = ptr_or_null(&mut copy).cast_const();
    let a = [
        setp as c_long,
        info as c_long,
        timeout as c_long,
        SIGSET_SIZE as c_long,
        0,
        0,
    ];
    // SAFETY: forwarded from the caller; `copy` outlives the call.
    let r = unsafe { point(calls::RT_SIGTIMEDWAIT, a, Kind::Point) as c_int };
    if r >= 0 && !info.is_null() {
        // SAFETY: the call succeeded, so the kernel filled the caller's `*info`.
        unsafe {
            if (*info).si_code == SI_TKILL {
                (*info).si_code = libc::SI_USER;
            }
        }
    }
    r
}

/// `sigwaitinfo(2)`: [`sigtimedwait`] without a timeout.
///
/// # Safety
/// As `sigwaitinfo(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sigwaitinfo(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
) -> c_int {
    next::next_for_foreign_threads!(sigwaitinfo(set: *const libc::sigset_t, info: *mut libc::siginfo_t) -> c_int);
    // SAFETY: forwarded from the caller.
    unsafe { sigtimedwait(set, info, std::ptr::null()) }
}

/// `sigwait(3)`: 0 and the signal in `*sig`, or the error number (`ECANCELED`/`ETIMEDOUT`
/// when a cancel acts); other signals' `EINTR` is retried, as glibc does.
///
/// # Safety
/// As `sigwait(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sigwait(set: *const libc::sigset_t, sig: *mut c_int) -> c_int {
    next::next_for_foreign_threads!(sigwait(set: *const libc::sigset_t, sig: *mut c_int) -> c_int);
    loop {
        // SAFETY: forwarded from the caller.
        let r = unsafe { sigtimedwait(set, std::ptr::null_mut(), std::ptr::null()) };
        if r >= 0 {
            // SAFETY: the caller passes a writable int.
            unsafe { *sig = r };
            return 0;
        }
        let e = conv::errno();
        if e != libc::EINTR {
            return e;
        }
    }
}

/// `pthread_sigmask(3)`: the C library's, with the crate's cancel signal taken out of a set
/// that blocks (`SIG_BLOCK`, `SIG_SETMASK`), as the C library does for its own internal
/// signals: a thread that blocks every signal stays cancelable while blocked in a system call.
/// In every thread (one that never met the crate may meet it later).
///
/// # Safety
/// As `pthread_sigmask(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_sigmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { sigmask_without_cancel_signal(how, set, old, &PTHREAD_SIGMASK, false) }
}

/// `sigprocmask(2)`: as [`pthread_sigmask`] (on Linux it sets the calling thread's mask), with
/// `-1` and errno on failure.
///
/// # Safety
/// As `sigprocmask(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sigprocmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { sigmask_without_cancel_signal(how, set, old, &SIGPROCMASK, true) }
}

/// The C library's `pthread_sigmask` and `sigprocmask`, found at load.
static PTHREAD_SIGMASK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static SIGPROCMASK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[used]
#[link_section = ".init_array"]
static RESOLVE_SIGMASKS: extern "C" fn() = {
    extern "C" fn resolve() {
        next::resolve(
            &PTHREAD_SIGMASK,
            "pthread_sigmask\0",
            pthread_sigmask as *const () as usize,
        );
        next::resolve(
            &SIGPROCMASK,
            "sigprocmask\0",
            sigprocmask as *const () as usize,
        );
    }
    resolve
};

/// Calls the C library's mask function in `next` with `set` less the cancel signal when it
/// blocks; the raw system call if the C library's was not found (then `-1` and errno if
/// `errno_style`, as `sigprocmask`, else the error number, as `pthread_sigmask`).
///
/// # Safety
/// As `pthread_sigmask(3)`.
unsafe fn sigmask_without_cancel_signal(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
    next: &std::sync::atomic::AtomicUsize,
    errno_style: bool,
) -> c_int {
    // SAFETY: the caller's set, if any, is an initialised `sigset_t` (plain data).
    let copy = match unsafe { set.as_ref() } {
        Some(s) if how == libc::SIG_BLOCK || how == libc::SIG_SETMASK => {
            Some(crate::sys::without_cancel_signal(s))
        }
        _ => None,
    };
    let setp = copy.as_ref().map_or(set, |s| s as *const libc::sigset_t);
    let f = next.load(std::sync::atomic::Ordering::Relaxed);
    if f != 0 {
        // SAFETY: `f` is the C library's definition of this function (same C signature).
        let f: unsafe extern "C-unwind" fn(
            c_int,
            *const libc::sigset_t,
            *mut libc::sigset_t,
        ) -> c_int = unsafe { std::mem::transmute(f) };
        // SAFETY: the caller's arguments, `set` replaced by a copy alive for the call.
        return unsafe { f(how, setp, old) };
    }
    let a = [
        how as c_long,
        setp as c_long,
        old as c_long,
        SIGSET_SIZE as c_long,
        0,
        0,
    ];
    // SAFETY: as above, for `rt_sigprocmask`.
    match unsafe { plain_c(calls::RT_SIGPROCMASK, a) } {
        -1 if errno_style => -1,
        -1 => conv::errno(),
        _ => 0,
    }
}

/// The body of the C shims `open`, `open64`, `openat`, `openat64`: `openat(2)` as a point
/// (opening a FIFO blocks until the other end is opened).
///
/// # Safety
/// As `openat(2)`.
#[no_mangle]
pub unsafe extern "C" fn thread_cancel_openat(
    dirfd: c_int,
    path: *const libc::c_char,
    flags: c_int,
    mode: libc::mode_t,
) -> c_int {
    let a = [
        dirfd as c_long,
        path as c_long,
        flags as c_long,
        mode as c_long,
        0,
        0,
    ];
    // SAFETY: forwarded from the caller.
    unsafe { point(calls::OPENAT, a, Kind::Point) as c_int }
}

/// The body of the C shims `fcntl`/`fcntl64` for `F_SETLKW` and `F_OFD_SETLKW` (the only
/// commands that are points; the shims make every other command as the plain system call).
///
/// # Safety
/// As `fcntl(2)` with a lock command: `lock` points to a valid `struct flock`.
#[no_mangle]
pub unsafe extern "C" fn thread_cancel_fcntl_lock(
    fd: c_int,
    cmd: c_int,
    lock: *mut c_void,
) -> c_int {
    let a = [fd as c_long, cmd as c_long, lock as c_long, 0, 0, 0];
    // SAFETY: forwarded from the caller.
    unsafe { point(calls::FCNTL, a, Kind::Point) as c_int }
}

/// For the C shims: whether the calling thread has a control block (it met the crate; else the
/// shims call the C library's own definition). One thread-local read; cannot unwind.
#[no_mangle]
pub extern "C" fn thread_cancel_interpose_has_control() -> c_int {
    c_int::from(crate::control::current_ptr().is_some())
}

/// The C library's definition of the interposed function `$f` (declared by
/// `next_for_foreign_threads!` in it), or, if there is none, a return of `$none`.
macro_rules! own_next {
    ($f:ident($($t:ty),* $(,)?) -> $r:ty, $none:expr $(,)?) => {{
        let Some(p) = next::definition(&NEXT, concat!(stringify!($f), "\0"), $f as *const () as usize)
        else {
            return $none;
        };
        // SAFETY: `p` is the C library's definition of this very function (found by its name:
        // the same C signature).
        unsafe { ::std::mem::transmute::<usize, unsafe extern "C-unwind" fn($($t),*) -> $r>(p) }
    }};
}

/// `fork(2)`. In a canceled run it fails with `ECANCELED`/`ETIMEDOUT` and no child (a thread
/// cancel does not refuse it: not a cancellation point); in a run, the child is the run's: a cancel of the run acted on by an interposed call kills it (see
/// `children.rs`). In a run it also fails, with no child, when the child could not be tracked:
/// `EAGAIN` (no memory for the run's table of children) or `EMFILE`/`ENFILE` (no descriptor
/// left for its pidfd).
///
/// # Safety
/// As `fork(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn fork() -> libc::pid_t {
    next::next_for_foreign_threads!(fork() -> libc::pid_t);
    if let Some(e) = super::refusal() {
        conv::set_errno(e);
        return -1;
    }
    let next = own_next!(fork() -> libc::pid_t, {
        conv::set_errno(libc::ENOSYS);
        -1
    });
    // In a run: the child can be tracked, or it is not started.
    let room = match children::reserve() {
        Ok(room) => room,
        Err(e) => {
            conv::set_errno(e);
            return -1;
        }
    };
    // SAFETY: the C library's `fork`, called as the caller called ours.
    let pid = unsafe { next() };
    if pid > 0 {
        children::record(pid, room);
    } else if pid == 0 {
        children::after_fork_in_child(room);
    }
    pid
}

/// `sigaction(2)`, for every thread: the program's handler is installed behind the crate's
/// trampoline, so that a call made from it behaves as the plain call (see `signals.rs`); the
/// old action names the program's handler.
///
/// # Safety
/// As `sigaction(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    next::next_slot!(sigaction);
    let next = own_next!(
        sigaction(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int,
        {
            conv::set_errno(libc::ENOSYS);
            -1
        }
    );
    // SAFETY: forwarded from the caller; `next` is the C library's `sigaction`.
    unsafe { signals::sigaction(next, sig, act, old) }
}

/// Defines the C library's functions that install a handler through its hidden `sigaction`
/// (`signal`, `bsd_signal`: BSD semantics; `sysv_signal`, `__sysv_signal`: System V's), made
/// through the interposed one instead ([`sigaction`]).
macro_rules! interpose_signal {
    ($(#[$doc:meta])* $f:ident, $sysv:expr) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C-unwind" fn $f(sig: c_int, handler: libc::sighandler_t) -> libc::sighandler_t {
            let next = {
                static NEXT: ::std::sync::atomic::AtomicUsize = ::std::sync::atomic::AtomicUsize::new(0);
                let Some(p) = next::definition(&NEXT, "sigaction\0", sigaction as *const () as usize) else {
                    conv::set_errno(libc::ENOSYS);
                    return libc::SIG_ERR;
                };
                // SAFETY: `p` is the C library's `sigaction` (found by its name).
                unsafe {
                    ::std::mem::transmute::<usize, unsafe extern "C-unwind" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int>(p)
                }
            };
            // SAFETY: forwarded from the caller; `next` is the C library's `sigaction`.
            unsafe { signals::signal(next, sig, handler, $sysv) }
        }
    };
}

interpose_signal!(
    /// `signal(3)` (BSD semantics, as the C library's), its handler behind the trampoline.
    ///
    /// # Safety
    /// As `signal(3)`.
    signal, false
);
interpose_signal!(
    /// `bsd_signal(3)`: as [`signal`].
    ///
    /// # Safety
    /// As `signal(3)`.
    bsd_signal, false
);
interpose_signal!(
    /// `sysv_signal(3)` (reset on delivery, not blocked, not restarted), its handler behind the
    /// trampoline.
    ///
    /// # Safety
    /// As `sysv_signal(3)`.
    sysv_signal, true
);
interpose_signal!(
    /// `__sysv_signal`: as [`sysv_signal`] (the name C code built with `-D_XOPEN_SOURCE` calls
    /// for `signal`).
    ///
    /// # Safety
    /// As `sysv_signal(3)`.
    __sysv_signal, true
);

/// `__libc_current_sigrtmin`, which the C library's `SIGRTMIN` calls in every module of the
/// process: the C library's first real-time signal is the crate's cancel signal by default with
/// this feature, and `SIGRTMIN` is then the next one for everyone — Rust code (`libc::SIGRTMIN`)
/// and C libraries built for plain glibc alike — so a module's handler on its `SIGRTMIN` never
/// takes the cancel signal. The cancel signal may be another of the C library's first eight
/// real-time signals (`THREAD_CANCEL_SIGNAL`, `io::set_signal`): `SIGRTMIN` is then the one after
/// it; a signal chosen higher leaves the C library's `SIGRTMIN` as it is. Async-signal-safe:
/// atomic loads (the C library's definition is found at load, [`RESOLVE_SIGRTMIN`]).
#[no_mangle]
pub extern "C" fn __libc_current_sigrtmin() -> c_int {
    let ours = crate::sys::signal().unwrap_or_else(crate::sys::default_signal);
    crate::sys::program_sigrtmin(crate::sys::sigrtmin(), ours)
}

/// At load: finds the C library's `__libc_current_sigrtmin` behind the crate's (a lookup takes
/// the dynamic loader's lock, which a signal handler's call must not), and reads the cancel
/// signal the environment chooses (`THREAD_CANCEL_SIGNAL`).
#[used]
#[link_section = ".init_array"]
static RESOLVE_SIGRTMIN: extern "C" fn() = {
    extern "C" fn resolve() {
        let _ = crate::sys::sigrtmin();
        crate::sys::read_signal_from_environment();
    }
    resolve
};

/// Defines `posix_spawn` or `posix_spawnp` (`$file`: the path or file argument): refused in a
/// canceled run, else the C library's function, its child recorded as the run's ([`spawn`]).
macro_rules! interpose_spawn {
    ($(#[$doc:meta])* $f:ident($file:ident)) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C-unwind" fn $f(
            pid: *mut libc::pid_t,
            $file: *const libc::c_char,
            actions: *const libc::posix_spawn_file_actions_t,
            attr: *const libc::posix_spawnattr_t,
            argv: *const *mut libc::c_char,
            envp: *const *mut libc::c_char,
        ) -> c_int {
            next::next_for_foreign_threads!($f(pid: *mut libc::pid_t, $file: *const libc::c_char, actions: *const libc::posix_spawn_file_actions_t, attr: *const libc::posix_spawnattr_t, argv: *const *mut libc::c_char, envp: *const *mut libc::c_char) -> c_int);
            let next = own_next!(
                $f(
                    *mut libc::pid_t,
                    *const libc::c_char,
                    *const libc::posix_spawn_file_actions_t,
                    *const libc::posix_spawnattr_t,
                    *const *mut libc::c_char,
                    *const *mut libc::c_char,
                ) -> c_int,
                libc::ENOSYS
            );
            // SAFETY: forwarded from the caller (`spawn` passes a valid pid pointer).
            unsafe { spawn(pid, |p| next(p, $file, actions, attr, argv, envp)) }
        }
    };
}

interpose_spawn!(
    /// `posix_spawn(3)`. In a canceled run it fails with `ECANCELED`/`ETIMEDOUT` and no child;
    /// in a run, the child is the run's (see [`fork`]).
    ///
    /// # Safety
    /// As `posix_spawn(3)`.
    posix_spawn(path)
);

interpose_spawn!(
    /// `posix_spawnp(3)`: as [`posix_spawn`].
    ///
    /// # Safety
    /// As `posix_spawnp(3)`.
    posix_spawnp(file)
);

/// The body of [`posix_spawn`] and [`posix_spawnp`]: refused in a canceled run, or in a run
/// whose child could not be tracked (`children::reserve`; the error number returned, as these
/// functions do); else `call` with a valid pid pointer, and the child recorded as the run's.
///
/// # Safety
/// `pid` null or valid for a write; `call` is the C library's function with the caller's other
/// arguments.
unsafe fn spawn(pid: *mut libc::pid_t, call: impl FnOnce(*mut libc::pid_t) -> c_int) -> c_int {
    if let Some(e) = super::refusal() {
        return e;
    }
    // In a run: the child can be tracked, or it is not started.
    let room = match children::reserve() {
        Ok(room) => room,
        Err(e) => return e,
    };
    let mut own = 0;
    let p = if pid.is_null() { &mut own } else { pid };
    let r = call(p);
    if r == 0 {
        // SAFETY: `p` is the caller's valid pointer or `own`, written by the call.
        children::record(unsafe { *p }, room);
    }
    r
}

/// Defines `lockf` or `lockf64` (`$off`: the type of its length): `F_LOCK` waits for the lock
/// as [`lockf_wait`]; the other commands do not wait and are the C library's.
macro_rules! interpose_lockf {
    ($(#[$doc:meta])* $f:ident($off:ty)) => {
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C-unwind" fn $f(fd: c_int, cmd: c_int, len: $off) -> c_int {
            next::next_for_foreign_threads!($f(fd: c_int, cmd: c_int, len: $off) -> c_int);
            if cmd != libc::F_LOCK {
                let next = own_next!($f(c_int, c_int, $off) -> c_int, {
                    conv::set_errno(libc::ENOSYS);
                    -1
                });
                // SAFETY: the C library's function, called as the caller called ours.
                return unsafe { next(fd, cmd, len) };
            }
            // SAFETY: forwarded from the caller (`off_t` is `off64_t` on the 64-bit targets
            // of the feature).
            unsafe { lockf_wait(fd, len as off_t) }
        }
    };
}

interpose_lockf!(
    /// `lockf(3)` (the C library's calls its own `fcntl` by a hidden alias): `F_LOCK` waits
    /// for the lock in a point, as `fcntl(F_SETLKW)`; `F_TLOCK`, `F_ULOCK` and `F_TEST` are the
    /// C library's.
    ///
    /// # Safety
    /// As `lockf(3)`.
    lockf(off_t)
);

interpose_lockf!(
    /// `lockf64`, the name C code built with `_FILE_OFFSET_BITS=64` calls: as [`lockf`].
    ///
    /// # Safety
    /// As `lockf(3)`.
    lockf64(off64_t)
);

/// `lockf(fd, F_LOCK, len)`: a write lock of `len` bytes from the current offset (0: to the
/// end of the file, however it grows), waited for with `fcntl(F_SETLKW)` as a point.
///
/// # Safety
/// As `lockf(3)`.
unsafe fn lockf_wait(fd: c_int, len: off_t) -> c_int {
    // SAFETY: all-zero is a valid `flock` (plain data).
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_CUR as libc::c_short;
    fl.l_len = len;
    let a = [
        fd as c_long,
        libc::F_SETLKW as c_long,
        (&raw mut fl) as c_long,
        0,
        0,
        0,
    ];
    // SAFETY: `fl` outlives the call; the descriptor is the caller's.
    unsafe { point(calls::FCNTL, a, Kind::Point) as c_int }
}
