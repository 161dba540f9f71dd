//! The system-call points only Linux (and Android) has: `preadv`/`pwritev` (Linux's offset
//! split), `fdatasync`, `epoll_wait`, `tcdrain` (`ioctl(TCSBRK)`), `sigtimedwait` and the POSIX
//! message queues. Part of [`crate::io`] on those systems.

use super::{cp, fd_arg, without_cancel_signal};
use crate::point::raw;
use crate::sys::{self, calls};
use std::io;
use std::os::fd::AsRawFd;
use std::os::fd::BorrowedFd;

/// `preadv(2)` as a cancellation point.
///
/// # Errors
/// As [`pread`](super::pread)'s and [`readv`](super::readv)'s: the kernel's error ([module
/// docs](crate::io#errors)), e.g. `ESPIPE` for a pipe, socket or FIFO, `EINVAL` for more than
/// `IOV_MAX` buffers, `EBADF`, `EINTR`.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = std::fs::File::open("/proc/self/status").unwrap();
/// let mut a = [0u8; 4];
/// let mut bufs = [std::io::IoSliceMut::new(&mut a)];
/// assert_eq!(thread_cancel::io::preadv(f.as_fd(), &mut bufs, 0).unwrap(), 4);
/// ```
pub fn preadv(
    fd: BorrowedFd<'_>,
    bufs: &mut [io::IoSliceMut<'_>],
    offset: u64,
) -> io::Result<usize> {
    let (lo, hi) = calls::lo_hi(offset);
    let a = [
        fd_arg(fd),
        bufs.as_mut_ptr() as _,
        bufs.len() as _,
        lo,
        hi,
        0,
    ];
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe { cp(calls::PREADV, a) }.map(|n| n as usize)
}

/// `pwritev(2)` as a cancellation point.
///
/// # Errors
/// As [`pwrite`](super::pwrite)'s and [`writev`](super::writev)'s: the kernel's error ([module
/// docs](crate::io#errors)), e.g. `ESPIPE` for a pipe, socket or FIFO, `EINVAL` for more than
/// `IOV_MAX` buffers, `EBADF`, `ENOSPC`, `EINTR`.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = std::fs::OpenOptions::new().write(true).open("/dev/null").unwrap();
/// let bufs = [std::io::IoSlice::new(b"ab")];
/// assert_eq!(thread_cancel::io::pwritev(f.as_fd(), &bufs, 0).unwrap(), 2);
/// ```
pub fn pwritev(fd: BorrowedFd<'_>, bufs: &[io::IoSlice<'_>], offset: u64) -> io::Result<usize> {
    let (lo, hi) = calls::lo_hi(offset);
    let a = [fd_arg(fd), bufs.as_ptr() as _, bufs.len() as _, lo, hi, 0];
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe { cp(calls::PWRITEV, a) }.map(|n| n as usize)
}

/// `fdatasync(2)` as a cancellation point.
///
/// # Errors
/// As [`fsync`](super::fsync)'s: the kernel's error ([module docs](crate::io#errors)), e.g. `EIO`
/// if writing the data back failed, `ENOSPC`/`EDQUOT`, `EROFS` or `EINVAL` for a file that cannot
/// be synced, `EBADF`.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = std::fs::File::open("/proc/self/status").unwrap();
/// let _ = thread_cancel::io::fdatasync(f.as_fd());
/// ```
pub fn fdatasync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: only integers (and null pointers) are passed.
    unsafe { raw::fdatasync(fd.as_raw_fd()) }.map(drop)
}

/// `epoll_wait(2)` (through `epoll_pwait`) as a cancellation point; `timeout_ms < 0` waits
/// forever.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `EINVAL` if `events` is empty or `epfd` is
/// not an epoll instance, `EBADF` if `epfd` is not open, `EINTR` if a signal handler ran
/// (`epoll_wait` is never restarted).
///
/// ```
/// use std::os::fd::{AsFd, FromRawFd, OwnedFd};
/// // SAFETY: epoll_create1 takes a flag and returns a new descriptor that we then own.
/// let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
/// assert!(raw >= 0);
/// // SAFETY: `raw` is a valid descriptor nothing else owns.
/// let ep = unsafe { OwnedFd::from_raw_fd(raw) };
/// let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 4];
/// assert_eq!(thread_cancel::io::epoll_wait(ep.as_fd(), &mut evs, 1).unwrap(), 0);
/// ```
pub fn epoll_wait(
    epfd: BorrowedFd<'_>,
    events: &mut [libc::epoll_event],
    timeout_ms: i32,
) -> io::Result<usize> {
    // The kernel takes an `int`: a longer slice is offered in part (at most `i32::MAX`).
    let max = events.len().min(i32::MAX as usize);
    let a = [
        fd_arg(epfd),
        events.as_mut_ptr() as _,
        max as _,
        timeout_ms as _,
        0,
        0,
    ];
    // SAFETY: `events` is borrowed for the whole call; the kernel writes at most `max <=
    // events.len()` entries (an empty slice is its `EINVAL`).
    unsafe { cp(calls::EPOLL_PWAIT, a) }.map(|n| n as usize)
}

/// `tcdrain(3)` (`ioctl(fd, TCSBRK, 1)`) as a cancellation point.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `ENOTTY` if `fd` is not a terminal,
/// `EBADF`, `EIO`, `EINTR` if a signal handler interrupted the wait.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = std::fs::File::open("/dev/null").unwrap();
/// assert!(thread_cancel::io::tcdrain(f.as_fd()).is_err()); // not a terminal
/// ```
pub fn tcdrain(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: only integers (and null pointers) are passed.
    unsafe { raw::tcdrain(fd.as_raw_fd()) }.map(drop)
}

/// `sigtimedwait(2)` as a cancellation point: waits for one of `set` (which the caller should
/// block) and returns its number; `timeout: None` is `sigwaitinfo`/`sigwait`. The cancel signal
/// ([`set_signal`](super::set_signal)) is never taken, even if `set` holds it (a full set, say): it is removed
/// from the set the call waits on.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `EAGAIN` if `timeout` passed with no
/// signal of `set` pending, `EINTR` if the handler of a signal outside `set` ran (never restarted).
///
/// ```
/// // SAFETY: sigset_t is plain data; sigemptyset initialises it.
/// let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
/// unsafe { libc::sigemptyset(&mut set) };
/// let r = thread_cancel::io::sigtimedwait(&set, Some(std::time::Duration::from_millis(1)));
/// assert_eq!(r.unwrap_err().raw_os_error(), Some(libc::EAGAIN));
/// ```
pub fn sigtimedwait(set: &libc::sigset_t, timeout: Option<std::time::Duration>) -> io::Result<i32> {
    let ts = timeout.map(sys::timespec);
    let tsp = ts
        .as_ref()
        .map_or(0, |t| t as *const libc::timespec as libc::c_long);
    let set = without_cancel_signal(set);
    let a = [
        &set as *const libc::sigset_t as _,
        0,
        tsp,
        calls::SIGSET_SIZE as _,
        0,
        0,
    ];
    // SAFETY: every pointer comes from a local that outlives the call, of the type the call
    // expects; the kernel reads `calls::SIGSET_SIZE` bytes of `set`, which is larger.
    unsafe { cp(calls::RT_SIGTIMEDWAIT, a) }.map(|n| n as i32)
}

/// `mq_timedreceive(3)` (POSIX message queue) as a cancellation point; `timeout: None` is
/// `mq_receive`. `deadline` is absolute `CLOCK_REALTIME`, as in C. Returns the length.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `EMSGSIZE` if `buf` is shorter than the
/// queue's message size (nothing is written), `EAGAIN` if the queue is empty and was opened
/// with `O_NONBLOCK`, `ETIMEDOUT` if `deadline` passed first, `EINVAL` for a `deadline` whose
/// `tv_nsec` is outside `0..1_000_000_000`, `EBADF` if `mq` is not open for reading, `EINTR`
/// if a signal handler interrupted the wait.
///
/// ```
/// let name = std::ffi::CString::new(format!("/tc-doc-mq-{}", std::process::id())).unwrap();
/// // SAFETY: mq_attr is plain data.
/// let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
/// attr.mq_maxmsg = 1;
/// attr.mq_msgsize = 16;
/// // SAFETY: a NUL-terminated name, valid flags and a pointer to an mq_attr; the queue is
/// // unlinked at once (the descriptor keeps it).
/// let mq = unsafe {
///     let mq = libc::mq_open(name.as_ptr(), libc::O_RDWR | libc::O_CREAT, 0o600 as libc::mode_t,
///                            &attr as *const libc::mq_attr);
///     libc::mq_unlink(name.as_ptr());
///     mq
/// };
/// assert!(mq >= 0);
/// thread_cancel::io::mq_timedsend(mq, b"hi", 3, None).unwrap();
/// let mut short = [0u8; 8];
/// let e = thread_cancel::io::mq_timedreceive(mq, &mut short, None, None).unwrap_err();
/// assert_eq!(e.raw_os_error(), Some(libc::EMSGSIZE));
/// let (mut buf, mut prio) = ([0u8; 16], 0);
/// assert_eq!(thread_cancel::io::mq_timedreceive(mq, &mut buf, Some(&mut prio), None).unwrap(), 2);
/// assert_eq!((&buf[..2], prio), (&b"hi"[..], 3));
/// // SAFETY: closing the descriptor opened above, once.
/// unsafe { libc::mq_close(mq) };
/// ```
#[cfg(not(target_os = "android"))] // (bionic has no POSIX message queues)
pub fn mq_timedreceive(
    mq: libc::mqd_t,
    buf: &mut [u8],
    prio: Option<&mut u32>,
    deadline: Option<&libc::timespec>,
) -> io::Result<usize> {
    let p = prio.map_or(std::ptr::null_mut(), |p| p as *mut u32);
    let t = deadline.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the type the call expects; the buffer is a borrowed slice.
    unsafe { raw::mq_timedreceive(mq, buf.as_mut_ptr().cast(), buf.len(), p, t) }
        .map(|n| n as usize)
}

/// `mq_timedsend(3)` as a cancellation point; `deadline: None` is `mq_send` (see
/// [`mq_timedreceive`]).
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `EMSGSIZE` if `msg` is longer than the
/// queue's message size, `EAGAIN` if the queue is full and was opened with `O_NONBLOCK`,
/// `ETIMEDOUT` if `deadline` passed first, `EINVAL` for an invalid `deadline` or a `prio` of
/// `MQ_PRIO_MAX` or more, `EBADF` if `mq` is not open for writing, `EINTR` if a signal handler
/// interrupted the wait.
///
/// ```
/// let n = std::ffi::CString::new(format!("/tc-doc-mq-send-{}", std::process::id())).unwrap();
/// // SAFETY: a NUL-terminated name, valid flags, default attributes; unlinked at once.
/// let mq = unsafe {
///     let mq = libc::mq_open(n.as_ptr(), libc::O_RDWR | libc::O_CREAT, 0o600 as libc::mode_t,
///                            std::ptr::null::<libc::mq_attr>());
///     libc::mq_unlink(n.as_ptr());
///     mq
/// };
/// assert!(mq >= 0);
/// thread_cancel::io::mq_timedsend(mq, b"x", 0, None).unwrap();
/// // SAFETY: closing the descriptor opened above, once.
/// unsafe { libc::mq_close(mq) };
/// ```
#[cfg(not(target_os = "android"))] // (bionic has no POSIX message queues)
pub fn mq_timedsend(
    mq: libc::mqd_t,
    msg: &[u8],
    prio: u32,
    deadline: Option<&libc::timespec>,
) -> io::Result<()> {
    let t = deadline.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the type the call expects; the message is a borrowed slice.
    unsafe { raw::mq_timedsend(mq, msg.as_ptr().cast(), msg.len(), prio, t) }.map(drop)
}
