//! System-call cancellation points (every one POSIX lists that Linux has) with the "never both"
//! guarantee: a call
//! that a request interrupts either completed — and returns its result, the request waiting
//! for the next point — or had no effect and the thread acts on the request.
//!
//! A thread blocked in one of these is woken by the cancel signal (a real-time signal,
//! [`set_signal`]); see ARCHITECTURE.md for why the trampoline's address range makes the
//! decision exact. A thread that blocks the signal is still canceled at its next point.
//!
//! # Invalid arguments
//!
//! The safe functions here never let the kernel read or write outside what they were lent.
//! Where the C call would trust a length or a count that the borrowed value does not back (an
//! `nfds` beyond an `fd_set`, a System V message shorter than its type, a path with a NUL
//! byte inside), the function makes no system call and returns the error C's call returns
//! for an invalid argument: an [`io::Error`] with `raw_os_error() == Some(EINVAL)` (its kind
//! is [`io::ErrorKind::InvalidInput`]). Such a call is still a cancellation point: a pending
//! request is acted on first, as the C call would, so a loop that retries it can be canceled.
//! Everything else (too many buffers for `readv`, an empty `epoll_wait` event slice, a buffer
//! shorter than a POSIX message queue's message size) the kernel itself rejects, with C's
//! error.
//!
//! # Errors
//!
//! A function here returns the error of its system call as the kernel reports it: an
//! [`io::Error`] whose [`raw_os_error`](io::Error::raw_os_error) is C's `errno` (`EBADF`,
//! `EAGAIN` for a non-blocking descriptor, `EPIPE`, ...), or the `EINVAL` of "Invalid
//! arguments" above where a function says so. Each function's `# Errors` names the usual ones.
//!
//! - `EINTR` ([`io::ErrorKind::Interrupted`]) is returned as C returns it: when a signal
//!   handler interrupts a call that the kernel does not restart (the handler was installed
//!   without `SA_RESTART`, or the call is one that is never restarted, such as `poll`,
//!   `select`, `epoll_wait`, `sigsuspend`, `pause` or the System V message calls). The cancel
//!   signal's own handler is installed with `SA_RESTART`.
//! - A cancellation is not an error: a call that acts on a request does not return (the thread
//!   unwinds). A call made while the thread is already unwinding (in a `Drop` during a panic or
//!   a cancellation) does not act, and returns its result.

use crate::point::raw;
// The rows of the table of points that the Rust face writes by hand (`own`: `poll`, `pause`,
// `select`, `sigsuspend`, and in `linux.rs` `preadv`, `pwritev`, `epoll_wait`, `sigtimedwait`).
use crate::point::syscall::cp;
use crate::sys::{self, calls, without_cancel_signal};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

/// Chooses the real-time signal used to interrupt blocked calls (default `SIGRTMIN + 7`; with
/// the feature `interpose`, the C library's first real-time signal);
/// only before the crate's first thread: the handler is installed when the first thread is
/// spawned by the crate or adopted by it (`spawn`, `current()`, ...), so call this first thing
/// in `main`.
///
/// Why `SIGRTMIN + 7`: a Rust program sees the C library's `SIGRTMIN` as is, so no signal of
/// the real-time range can be hidden from it, and applications that use real-time signals
/// usually count up from `SIGRTMIN` (glibc keeps its own two below it). The C library of this
/// project (`thread-cancel-ffi`) chooses differently for C programs: it calls `set_signal` with
/// the system's `SIGRTMIN` before `main`, and its compatibility header makes the program's
/// `SIGRTMIN` the next signal, so a C program keeps its whole `SIGRTMIN..=SIGRTMAX`, as with
/// glibc. A process has one cancel signal: whichever is chosen first stays.
///
/// With the feature `interpose` (the crate then defines the C library's functions for the whole
/// process), the default is the C library's first real-time signal instead, and the crate's
/// definition of `__libc_current_sigrtmin` — which `libc::SIGRTMIN()` and C's `SIGRTMIN` call —
/// makes `SIGRTMIN` the next one for every module: Rust code and C libraries built for plain
/// glibc see one range, above the cancel signal, so a library's handler on its `SIGRTMIN` never
/// takes it. Another of the C library's first eight real-time signals, chosen here or by the
/// environment variable `THREAD_CANCEL_SIGNAL` (its number, read when the program is loaded,
/// before any library's constructor reads `SIGRTMIN`), moves `SIGRTMIN` to the one after it; a
/// signal chosen higher gives the C library's `SIGRTMIN` back as it is.
///
/// The signal belongs to the crate from then on:
///
/// - **Before the start**, a handler of someone else's for the signal is never replaced:
///   `set_signal` returns an error ([`io::ErrorKind::ResourceBusy`]) for such a signal, and if
///   the default signal has one when the first thread is spawned or adopted, that spawn (or
///   adoption) panics with a message saying to choose another signal here. `SIG_DFL` and
///   `SIG_IGN` are taken over (an ignored signal is inherited across `exec`, so it says
///   nothing about the program).
/// - **After the start**, a handler, `SIG_IGN` or `SIG_DFL` installed for the signal by
///   someone else disables the interruption of blocked calls. `cancel()` checks the handler
///   before it sends the signal: if it is not the crate's, it sends nothing (`SIG_DFL` would
///   end the process), reports the replacement once on stderr, and the request is acted on at
///   the thread's next cancellation point.
///
/// # Errors
/// - [`io::ErrorKind::InvalidInput`]: `sig` is not a real-time signal (`SIGRTMIN..=SIGRTMAX`).
/// - [`io::ErrorKind::Other`], with a message saying "too late": the crate has started and
///   `sig` is not the signal in use (choosing the signal in use is `Ok`).
/// - [`io::ErrorKind::ResourceBusy`]: before the start, `sig` has someone else's handler (see
///   above).
///
/// On a platform without the Linux layer no signal is used, and every `sig` is `Ok`.
///
/// ```
/// // Too late if a thread was already spawned or adopted in this process; otherwise Ok.
/// let _ = thread_cancel::io::set_signal(libc::SIGRTMIN() + 7);
/// assert_eq!(
///     thread_cancel::io::set_signal(libc::SIGINT).unwrap_err().kind(),
///     std::io::ErrorKind::InvalidInput
/// );
/// // The crate has started now; choosing another signal is too late.
/// thread_cancel::spawn(|| ()).join();
/// let e = thread_cancel::io::set_signal(libc::SIGRTMIN() + 9).unwrap_err();
/// assert!(e.to_string().contains("too late"));
/// ```
pub fn set_signal(sig: i32) -> io::Result<()> {
    sys::set_signal(sig).map_err(|e: sys::SignalError| io::Error::new(e.kind(), e.to_string()))
}

/// The error of a call rejected before it is made (see "Invalid arguments" in the module
/// docs): `EINVAL`, after acting on a pending request as the call itself would have.
#[cold]
#[inline(never)]
fn invalid_argument() -> io::Error {
    crate::testcancel();
    io::Error::from_raw_os_error(libc::EINVAL)
}

fn fd_arg(fd: BorrowedFd<'_>) -> libc::c_long {
    fd.as_raw_fd() as libc::c_long
}

/// A count of buffers as `readv`/`writev` take it (an `int`): a count beyond `int` is passed as
/// `INT_MAX`, which the kernel rejects (`EINVAL`, over `IOV_MAX`) as it rejected the whole count.
fn iov_count(n: usize) -> libc::c_int {
    libc::c_int::try_from(n).unwrap_or(libc::c_int::MAX)
}

/// `read(2)` as a cancellation point.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)), e.g. `EBADF` if `fd` is not open for
/// reading, `EAGAIN` if it is non-blocking and no data is ready, `EISDIR` for a directory, `EINTR`
/// if a signal handler interrupted the wait. The end of the file is `Ok(0)`, not an error.
///
/// ```
/// let (r, mut w) = std::io::pipe().unwrap();
/// std::io::Write::write_all(&mut w, b"hi").unwrap();
/// let mut b = [0u8; 2];
/// use std::os::fd::AsFd;
/// assert_eq!(thread_cancel::io::read(r.as_fd(), &mut b).unwrap(), 2);
/// ```
#[inline]
pub fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe { raw::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) }.map(|n| n as usize)
}

/// `write(2)` as a cancellation point.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)), e.g. `EBADF` if `fd` is not open for
/// writing, `EAGAIN` if it is non-blocking and full, `EPIPE` for a pipe or socket whose reading end
/// is closed (with a `SIGPIPE`, which Rust programs ignore by default), `ENOSPC`, `EFBIG`, `EINTR`
/// if a signal handler interrupted the wait.
///
/// ```
/// use std::os::fd::AsFd;
/// let (_r, w) = std::io::pipe().unwrap();
/// assert_eq!(thread_cancel::io::write(w.as_fd(), b"abc").unwrap(), 3);
/// ```
#[inline]
pub fn write(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe { raw::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) }.map(|n| n as usize)
}

/// `pread(2)` as a cancellation point.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)), e.g. `ESPIPE` if `fd` is a pipe, socket or
/// FIFO, `EINVAL` for an `offset` above `i64::MAX` (negative for the kernel), and [`read()`]'s
/// errors.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = std::fs::File::open("/proc/self/status").unwrap();
/// let mut b = [0u8; 4];
/// assert_eq!(thread_cancel::io::pread(f.as_fd(), &mut b, 0).unwrap(), 4);
/// ```
#[inline]
pub fn pread(fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe {
        raw::pread(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            offset as libc::off_t,
        )
    }
    .map(|n| n as usize)
}

/// `pwrite(2)` as a cancellation point.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)), e.g. `ESPIPE` if `fd` is a pipe, socket or
/// FIFO, `EINVAL` for an `offset` above `i64::MAX` (negative for the kernel), and [`write()`]'s
/// errors.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = tempfile_for_doc();
/// # fn tempfile_for_doc() -> std::fs::File {
/// #     let p = std::env::temp_dir().join(format!("tc-doc-{}", std::process::id()));
/// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).open(&p).unwrap();
/// #     std::fs::remove_file(&p).unwrap();
/// #     f
/// # }
/// assert_eq!(thread_cancel::io::pwrite(f.as_fd(), b"xy", 10).unwrap(), 2);
/// ```
#[inline]
pub fn pwrite(fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> io::Result<usize> {
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe {
        raw::pwrite(
            fd.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            offset as libc::off_t,
        )
    }
    .map(|n| n as usize)
}

/// `recv(2)` (`recvfrom` without an address) as a cancellation point. The kernel writes at
/// most `buf.len()` bytes; with `MSG_TRUNC` the result is the datagram's real length, which can
/// be larger than `buf` (as in C).
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)), e.g. `EAGAIN` if the socket is
/// non-blocking (or its `SO_RCVTIMEO` passed) and nothing arrived, `ECONNRESET`, `ENOTCONN`,
/// `ENOTSOCK`, `EINTR` if a signal handler interrupted the wait. A peer's orderly shutdown is
/// `Ok(0)`, not an error.
///
/// ```
/// use std::os::fd::AsFd;
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// std::io::Write::write_all(&mut &a, b"x").unwrap();
/// let mut buf = [0u8; 1];
/// assert_eq!(thread_cancel::io::recv(b.as_fd(), &mut buf, 0).unwrap(), 1);
/// ```
#[inline]
pub fn recv(fd: BorrowedFd<'_>, buf: &mut [u8], flags: i32) -> io::Result<usize> {
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe { raw::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), flags) }
        .map(|n| n as usize)
}

/// `send(2)` (`sendto` without an address) as a cancellation point. `MSG_NOSIGNAL` is added, so
/// a closed peer is an `EPIPE` error rather than a `SIGPIPE`.
///
/// `MSG_ZEROCOPY` is refused: with it the kernel may read `buf` after the call returns, when
/// the slice is no longer borrowed and may have changed or been freed. Use [`sendmsg`]
/// (`unsafe`) for zero-copy sends.
///
/// # Errors
/// `EINVAL`, without a system call, if `flags` has `MSG_ZEROCOPY`. Otherwise the kernel's error
/// ([module docs](crate::io#errors)), e.g. `EPIPE` if the peer has shut down (no `SIGPIPE`),
/// `ECONNRESET`, `EAGAIN` if the socket is non-blocking (or its `SO_SNDTIMEO` passed) and its
/// buffer is full, `EMSGSIZE` for a datagram too large to send at once, `ENOTSOCK`, `EINTR`.
///
/// ```
/// use std::os::fd::AsFd;
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// assert_eq!(thread_cancel::io::send(a.as_fd(), b"xyz", 0).unwrap(), 3);
/// let e = thread_cancel::io::send(a.as_fd(), b"xyz", libc::MSG_ZEROCOPY).unwrap_err();
/// assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
/// ```
#[inline]
pub fn send(fd: BorrowedFd<'_>, buf: &[u8], flags: i32) -> io::Result<usize> {
    if calls::zerocopy(flags) {
        return Err(invalid_argument());
    }
    let flags = flags | calls::MSG_NOSIGNAL;
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe { raw::send(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len(), flags) }.map(|n| n as usize)
}

/// `accept4(2)` with `SOCK_CLOEXEC` as a cancellation point: either a connection is accepted
/// and returned, or none was taken (it stays queued for the next `accept`).
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)), e.g. `EAGAIN` if the socket is
/// non-blocking and no connection is pending, `EINVAL` if it is not listening, `ENOTSOCK`,
/// `EMFILE`/`ENFILE` (out of descriptors), `ECONNABORTED`, `EINTR` if a signal handler interrupted
/// the wait. No connection was taken from the queue.
///
/// ```
/// use std::os::fd::AsFd;
/// let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// let _c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
/// let conn = thread_cancel::io::accept(l.as_fd()).unwrap();
/// let _ = conn;
/// ```
pub fn accept(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    // SAFETY: only integers (and null pointers) are passed.
    let n = unsafe {
        raw::accept4(
            fd.as_raw_fd(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            calls::SOCK_CLOEXEC,
        )
    }?;
    // SAFETY: a successful accept4 returns a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(n as i32) })
}

/// `poll(2)` (through `ppoll`) as a cancellation point; `timeout_ms < 0` waits forever.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `EINVAL` if `fds` has more entries than
/// the `RLIMIT_NOFILE` limit, `ENOMEM`, `EINTR` if a signal handler ran (`poll` is never
/// restarted). A bad descriptor is not an error: its entry's `revents` has `POLLNVAL`.
///
/// ```
/// let mut fds: [libc::pollfd; 0] = [];
/// assert_eq!(thread_cancel::io::poll(&mut fds, 1).unwrap(), 0);
/// ```
pub fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> io::Result<usize> {
    let ts = (timeout_ms >= 0).then(|| libc::timespec {
        tv_sec: (timeout_ms / 1000) as _,
        tv_nsec: ((timeout_ms % 1000) as libc::c_long) * 1_000_000,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    let a = [fds.as_mut_ptr() as _, fds.len() as _, tsp as _, 0, 0, 0];
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the
    // type the call expects; `nfds` is the slice's length (the kernel takes its low 32 bits,
    // never more), so the kernel reads and writes only entries of `fds`.
    unsafe { cp(calls::PPOLL, a) }.map(|n| n as usize)
}

/// `close(2)` as a cancellation point that releases the descriptor exactly once: the
/// descriptor is always closed (Linux releases it even when close fails), and a pending
/// request is acted on after that — never leaked, never closed twice.
///
/// # Errors
/// The kernel's error for the close ([module docs](crate::io#errors)): `EIO` (or `ENOSPC`/`EDQUOT`
/// on a network file system) for a write that failed after it was accepted. The descriptor is
/// closed all the same. An interrupted close (`EINTR`) is `Ok`: Linux released the descriptor.
///
/// ```
/// let (r, _w) = std::io::pipe().unwrap();
/// thread_cancel::io::close(r.into()).unwrap();
/// ```
pub fn close(fd: OwnedFd) -> io::Result<()> {
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` was owned by `fd`, which gave it up: this is its only close.
    let r = unsafe { libc::close(raw) };
    let result = if r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    };
    crate::testcancel();
    result
}

fn path_arg(path: &std::path::Path) -> io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| invalid_argument())
}

/// `openat(2)` as a cancellation point (`O_CLOEXEC` is added): either the file is opened and
/// returned, or nothing was opened (no descriptor leaks). `dir: None` is `AT_FDCWD`.
///
/// # Errors
/// `EINVAL`, without a system call, if `path` has a NUL byte inside (it is never cut at the
/// NUL). Otherwise the kernel's error ([module docs](crate::io#errors)), e.g. `ENOENT`,
/// `EACCES`, `EEXIST` (with `O_CREAT | O_EXCL`), `ENOTDIR`, `EISDIR` (a directory opened for
/// writing), `ELOOP`, `EMFILE`/`ENFILE` (out of descriptors), `EBADF` if `dir` is not open,
/// `EINTR` (an open that waits, such as of a FIFO with no other end, interrupted by a handler).
///
/// ```
/// let fd = thread_cancel::io::openat(None, "/proc/self/status".as_ref(), libc::O_RDONLY, 0).unwrap();
/// drop(fd);
/// let e = thread_cancel::io::open("/proc/self/status\0x".as_ref(), libc::O_RDONLY, 0).unwrap_err();
/// assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
/// ```
pub fn openat(
    dir: Option<BorrowedFd<'_>>,
    path: &std::path::Path,
    flags: i32,
    mode: u32,
) -> io::Result<OwnedFd> {
    let c = path_arg(path)?;
    let d = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the type the call expects (a NUL-terminated `CString`).
    let n = unsafe { raw::openat(d, c.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::mode_t) }?;
    // SAFETY: a successful openat returns a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(n as i32) })
}

/// `open(2)` as a cancellation point; see [`openat`].
///
/// # Errors
/// As [`openat`]'s: `EINVAL` for a `path` with a NUL byte inside, otherwise the kernel's error
/// ([module docs](crate::io#errors)), e.g. `ENOENT`, `EACCES`, `EMFILE`.
///
/// ```
/// let _fd = thread_cancel::io::open("/dev/null".as_ref(), libc::O_WRONLY, 0).unwrap();
/// ```
pub fn open(path: &std::path::Path, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    openat(None, path, flags, mode)
}

/// `creat(2)` (`open` with `O_CREAT | O_WRONLY | O_TRUNC`) as a cancellation point.
///
/// # Errors
/// As [`openat`]'s: `EINVAL` for a `path` with a NUL byte inside, otherwise the kernel's error
/// ([module docs](crate::io#errors)), e.g. `ENOENT` (a missing directory), `EACCES`, `EISDIR`,
/// `EMFILE`.
///
/// ```
/// let p = std::env::temp_dir().join(format!("tc-creat-{}", std::process::id()));
/// let _fd = thread_cancel::io::creat(&p, 0o600).unwrap();
/// std::fs::remove_file(&p).unwrap();
/// ```
pub fn creat(path: &std::path::Path, mode: u32) -> io::Result<OwnedFd> {
    openat(
        None,
        path,
        libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
        mode,
    )
}

/// `readv(2)` as a cancellation point.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `EINVAL` if `bufs` has more than `IOV_MAX`
/// (1024) entries or their lengths add up beyond `isize::MAX`, and [`read()`]'s errors.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = std::fs::File::open("/dev/zero").unwrap();
/// let (mut a, mut b) = ([1u8; 2], [1u8; 3]);
/// let mut bufs = [std::io::IoSliceMut::new(&mut a), std::io::IoSliceMut::new(&mut b)];
/// assert_eq!(thread_cancel::io::readv(f.as_fd(), &mut bufs).unwrap(), 5);
/// ```
#[inline]
pub fn readv(fd: BorrowedFd<'_>, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
    // `IoSliceMut` is ABI-compatible with `struct iovec` on Unix (std guarantees it).
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe {
        raw::readv(
            fd.as_raw_fd(),
            bufs.as_mut_ptr().cast(),
            iov_count(bufs.len()),
        )
    }
    .map(|n| n as usize)
}

/// `writev(2)` as a cancellation point.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `EINVAL` if `bufs` has more than `IOV_MAX`
/// (1024) entries or their lengths add up beyond `isize::MAX`, and [`write()`]'s errors.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = std::fs::OpenOptions::new().write(true).open("/dev/null").unwrap();
/// let bufs = [std::io::IoSlice::new(b"ab"), std::io::IoSlice::new(b"c")];
/// assert_eq!(thread_cancel::io::writev(f.as_fd(), &bufs).unwrap(), 3);
/// ```
#[inline]
pub fn writev(fd: BorrowedFd<'_>, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
    // SAFETY: the pointers and lengths come from slices (or `IoSlice`s) borrowed for the whole call, and the kernel writes only within them.
    unsafe { raw::writev(fd.as_raw_fd(), bufs.as_ptr().cast(), iov_count(bufs.len())) }
        .map(|n| n as usize)
}

/// `fsync(2)` as a cancellation point.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)), e.g. `EIO` if writing the data back
/// failed, `ENOSPC`/`EDQUOT`, `EROFS` or `EINVAL` for a file that cannot be synced (a pipe, a
/// socket, procfs), `EBADF`.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = std::fs::File::open("/proc/self/status").unwrap();
/// let _ = thread_cancel::io::fsync(f.as_fd()); // EINVAL on procfs; the call is what matters
/// ```
pub fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: only integers (and null pointers) are passed.
    unsafe { raw::fsync(fd.as_raw_fd()) }.map(drop)
}

/// `fcntl(fd, F_SETLKW / F_OFD_SETLKW, lock)` — a blocking record lock — as a cancellation
/// point: either the lock was taken, or it was not. (`lockf(F_LOCK)` is `F_SETLKW` on the range.)
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)), e.g. `EDEADLK` if waiting would deadlock
/// (detected for process-associated locks, `ofd == false`), `EBADF` if `fd` is not open for the
/// lock's type (reading for `F_RDLCK`, writing for `F_WRLCK`), `EINVAL` for an invalid `l_type` or
/// `l_whence` (or, with `ofd`, a nonzero `l_pid`), `ENOLCK`, `EINTR` if a signal handler
/// interrupted the wait. The lock was not taken.
///
/// ```
/// use std::os::fd::AsFd;
/// let p = std::env::temp_dir().join(format!("tc-lock-{}", std::process::id()));
/// let f = std::fs::File::create(&p).unwrap();
/// // SAFETY: `flock` is plain data; all-zero (then a lock type) is "the whole file".
/// let mut l: libc::flock = unsafe { std::mem::zeroed() };
/// l.l_type = libc::F_WRLCK as _;
/// thread_cancel::io::fcntl_lock_wait(f.as_fd(), &l, false).unwrap();
/// std::fs::remove_file(&p).unwrap();
/// ```
pub fn fcntl_lock_wait(fd: BorrowedFd<'_>, lock: &libc::flock, ofd: bool) -> io::Result<()> {
    let cmd = if ofd {
        calls::F_OFD_SETLKW
    } else {
        libc::F_SETLKW
    };
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the type the call expects.
    unsafe {
        raw::fcntl(
            fd.as_raw_fd(),
            cmd,
            lock as *const libc::flock as libc::c_long,
        )
    }
    .map(drop)
}

/// `pause(2)`: blocks until a signal handler runs (then `Err(Interrupted)`) or the thread is
/// canceled. A cancellation point.
///
/// # Errors
/// Always, when it returns: `EINTR` ([`io::ErrorKind::Interrupted`]) once a signal handler has run.
///
/// ```
/// let h = thread_cancel::spawn(|| { let _ = thread_cancel::io::pause(); });
/// thread_cancel::sleep(std::time::Duration::from_millis(5));
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// ```
pub fn pause() -> io::Result<()> {
    // ppoll with no descriptors and no timeout: `pause` on every architecture.
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the type the call expects.
    unsafe { cp(calls::PPOLL, [0, 0, 0, 0, 0, 0]) }.map(drop)
}

/// `waitid(2)` as a cancellation point. With `WNOWAIT` in `options` the child is not reaped, so
/// a canceled wait has no effect either way.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `ECHILD` if no child matches `idtype` and
/// `id` (none exists, or all are reaped), `EINVAL` for invalid `options` or `idtype`, `EINTR` if a
/// signal handler interrupted the wait (a `SIGCHLD` handler without `SA_RESTART`, say). With
/// `WNOHANG` and no child ready it is `Ok`, with `si_pid` 0.
///
/// ```
/// let mut child = std::process::Command::new("true").spawn().unwrap();
/// // SAFETY: `siginfo_t` is plain data; all-zero is a valid value to be filled in.
/// let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
/// thread_cancel::io::waitid(libc::P_PID, child.id(), &mut info, libc::WEXITED | libc::WNOWAIT).unwrap();
/// assert!(child.wait().unwrap().success());
/// ```
pub fn waitid(
    idtype: libc::idtype_t,
    id: u32,
    info: &mut libc::siginfo_t,
    options: i32,
) -> io::Result<()> {
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the type the call expects.
    unsafe { raw::waitid(idtype, id as libc::id_t, info, options) }.map(drop)
}

/// `waitpid(2)` (through `wait4`) as a cancellation point; returns the pid and the raw status.
/// `wait()` is `waitpid(-1, 0)`.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `ECHILD` if no child matches `pid` (none
/// exists, or all are reaped), `EINVAL` for invalid `options`, `EINTR` if a signal handler
/// interrupted the wait. With `WNOHANG` and no child ready it is `Ok((0, 0))`.
///
/// ```
/// let child = std::process::Command::new("true").spawn().unwrap();
/// let (pid, status) = thread_cancel::io::waitpid(child.id() as i32, 0).unwrap();
/// assert_eq!(pid, child.id() as i32);
/// assert!(libc::WIFEXITED(status));
/// ```
pub fn waitpid(pid: i32, options: i32) -> io::Result<(i32, i32)> {
    let mut status: i32 = 0;
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the type the call expects.
    let p = unsafe { raw::waitpid(pid, &mut status, options) }?;
    Ok((p as i32, status))
}

/// `msync(2)` as a cancellation point.
///
/// Why `unsafe`: the arguments are a raw address range, and POSIX allows `MS_INVALIDATE` to
/// replace the range's contents with the file's, under any Rust reference into it. Linux never
/// changes memory here (it checks the arguments — an unaligned `addr` is `EINVAL`, an unmapped
/// range `ENOMEM` — and with `MS_SYNC` writes a shared file mapping back), so on Linux no
/// argument is undefined behaviour; the contract below is POSIX's, so that it holds on every
/// platform the crate may be ported to.
///
/// # Errors
/// The kernel's error ([module docs](crate::io#errors)): `EINVAL` for an `addr` that is not
/// page-aligned or `flags` with both `MS_SYNC` and `MS_ASYNC` (or an unknown bit), `ENOMEM` if the
/// range is not mapped, `EBUSY` for `MS_INVALIDATE` on locked pages, `EIO` if writing back failed.
///
/// # Safety
/// `addr..addr+len` must be memory this process mapped (as for `libc::msync`), and with
/// `MS_INVALIDATE` in `flags` no reference into the range may be in use across the call.
///
/// ```
/// // SAFETY: an anonymous private mapping of one page, synced and unmapped here.
/// unsafe {
///     let p = libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ,
///                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
///     assert_ne!(p, libc::MAP_FAILED);
///     thread_cancel::io::msync(p, 4096, libc::MS_SYNC).unwrap();
///     libc::munmap(p, 4096);
/// }
/// ```
pub unsafe fn msync(addr: *mut libc::c_void, len: usize, flags: i32) -> io::Result<()> {
    // SAFETY: forwarded from this function's own safety contract.
    unsafe { raw::msync(addr, len, flags) }.map(drop)
}

/// `recvmsg(2)` as a cancellation point.
///
/// # Errors
/// As [`recv`]'s: the kernel's error ([module docs](crate::io#errors)), e.g. `EAGAIN`,
/// `ECONNRESET`, `ENOTSOCK`, `EINTR`, and `EMSGSIZE` if `msg_iovlen` is above `IOV_MAX`.
///
/// # Safety
/// As for `libc::recvmsg`: every buffer `msg` describes must be valid for writes of its
/// length for the whole call — `msg_name` for `msg_namelen` bytes, each of the `msg_iovlen`
/// `iovec`s at `msg_iov` for its `iov_len` bytes, `msg_control` for `msg_controllen` bytes —
/// and not be in use by Rust references meanwhile. (The kernel updates `msg_namelen`,
/// `msg_controllen` and `msg_flags` in `msg` itself, which is borrowed mutably.)
///
/// ```
/// use std::os::fd::AsFd;
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// std::io::Write::write_all(&mut &a, b"m").unwrap();
/// let mut buf = [0u8; 1];
/// let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: 1 };
/// // SAFETY: `msghdr` is plain data; all-zero then one iovec is a valid request.
/// let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
/// msg.msg_iov = &mut iov;
/// msg.msg_iovlen = 1;
/// // SAFETY: `msg` points at `buf`, alive and writable for the call.
/// assert_eq!(unsafe { thread_cancel::io::recvmsg(b.as_fd(), &mut msg, 0) }.unwrap(), 1);
/// ```
pub unsafe fn recvmsg(fd: BorrowedFd<'_>, msg: &mut libc::msghdr, flags: i32) -> io::Result<usize> {
    // SAFETY: forwarded from this function's own safety contract.
    unsafe { raw::recvmsg(fd.as_raw_fd(), msg, flags) }.map(|n| n as usize)
}

/// `sendmsg(2)` as a cancellation point (`MSG_NOSIGNAL` added).
///
/// # Errors
/// As [`send`]'s (without its `MSG_ZEROCOPY` check): the kernel's error ([module
/// docs](crate::io#errors)), e.g. `EPIPE` (no `SIGPIPE`), `EAGAIN`, `EMSGSIZE` (a datagram too
/// large, or `msg_iovlen` above `IOV_MAX`), `ENOBUFS`, `ENOTSOCK`, `EINTR`.
///
/// # Safety
/// As for `libc::sendmsg`: every buffer `msg` describes (`msg_name`, each `iovec`,
/// `msg_control`, with their lengths) must be valid for reads for the whole call. With
/// `MSG_ZEROCOPY` (on a socket with `SO_ZEROCOPY`) the kernel reads the data after the call
/// returns: the buffers must then stay valid and unchanged until the completion arrives on the
/// socket's error queue.
///
/// ```
/// use std::os::fd::AsFd;
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// let mut buf = *b"s";
/// let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: 1 };
/// // SAFETY: `msghdr` is plain data; all-zero then one iovec is a valid request.
/// let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
/// msg.msg_iov = &mut iov;
/// msg.msg_iovlen = 1;
/// // SAFETY: `msg` points at `buf`, alive for the call.
/// assert_eq!(unsafe { thread_cancel::io::sendmsg(a.as_fd(), &msg, 0) }.unwrap(), 1);
/// ```
pub unsafe fn sendmsg(fd: BorrowedFd<'_>, msg: &libc::msghdr, flags: i32) -> io::Result<usize> {
    let flags = flags | calls::MSG_NOSIGNAL;
    // SAFETY: forwarded from this function's own safety contract.
    unsafe { raw::sendmsg(fd.as_raw_fd(), msg, flags) }.map(|n| n as usize)
}

/// `select(2)`/`pselect(2)` (through `pselect6`, no signal mask) as a cancellation point;
/// `timeout: None` waits forever.
///
/// `nfds` must be in `0..=FD_SETSIZE` (1024), the descriptors an `fd_set` can hold. (The
/// kernel trusts `nfds` up to the size of the descriptor table, which can be larger than an
/// `fd_set`: it would read and write past the sets.)
///
/// # Errors
/// `EINVAL`, without a system call, if `nfds` is outside `0..=FD_SETSIZE`. Otherwise the
/// kernel's error ([module docs](crate::io#errors)): `EBADF` if a set holds a descriptor that
/// is not open, `ENOMEM`, `EINTR` if a signal handler ran (`select` is never restarted).
///
/// ```
/// let r = thread_cancel::io::select(0, None, None, None, Some(std::time::Duration::ZERO));
/// assert_eq!(r.unwrap(), 0);
/// let too_many = libc::FD_SETSIZE as i32 + 1;
/// let e = thread_cancel::io::select(too_many, None, None, None, None).unwrap_err();
/// assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
/// ```
pub fn select(
    nfds: i32,
    read: Option<&mut libc::fd_set>,
    write: Option<&mut libc::fd_set>,
    except: Option<&mut libc::fd_set>,
    timeout: Option<std::time::Duration>,
) -> io::Result<usize> {
    if !(0..=libc::FD_SETSIZE as i64).contains(&i64::from(nfds)) {
        return Err(invalid_argument());
    }
    let ts = timeout.map(sys::timespec);
    let set =
        |s: Option<&mut libc::fd_set>| s.map_or(0, |s| s as *mut libc::fd_set as libc::c_long);
    let tsp = ts
        .as_ref()
        .map_or(0, |t| t as *const libc::timespec as libc::c_long);
    let a = [nfds as _, set(read), set(write), set(except), tsp, 0];
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the
    // type the call expects; with `nfds <= FD_SETSIZE` the kernel touches at most
    // `FD_SETSIZE` bits (`size_of::<fd_set>()` bytes) of each set.
    unsafe { cp(calls::PSELECT6, a) }.map(|n| n as usize)
}

/// `sigsuspend(2)` as a cancellation point: replaces the signal mask with `mask` until a
/// handler runs. The cancel signal ([`set_signal`]) stays unblocked whatever `mask` says (a
/// full mask, say), so the wait can always be canceled; every other signal of `mask` is
/// blocked.
///
/// # Errors
/// Always, when it returns: `EINTR` ([`io::ErrorKind::Interrupted`]) once a signal handler has
/// run, as the C call returns -1/`EINTR`.
///
/// ```
/// let h = thread_cancel::spawn(|| {
///     // SAFETY: sigset_t is plain data; sigemptyset initialises it.
///     let mut m: libc::sigset_t = unsafe { std::mem::zeroed() };
///     unsafe { libc::sigemptyset(&mut m) };
///     let _ = thread_cancel::io::sigsuspend(&m);
/// });
/// thread_cancel::sleep(std::time::Duration::from_millis(5));
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// ```
pub fn sigsuspend(mask: &libc::sigset_t) -> io::Result<()> {
    let mask = without_cancel_signal(mask);
    let a = [
        &mask as *const libc::sigset_t as _,
        calls::SIGSET_SIZE as _,
        0,
        0,
        0,
        0,
    ];
    // SAFETY: every pointer comes from a local that outlives the call, of the type the call
    // expects; the kernel reads `calls::SIGSET_SIZE` bytes of `mask`, which is larger.
    unsafe { cp(calls::RT_SIGSUSPEND, a) }.map(drop)
}

/// `msgrcv(2)` (System V message queue) as a cancellation point. `buf` holds the `long` type
/// followed by the message text; returns the text length.
///
/// # Errors
/// `EINVAL`, without a system call, if `buf` is shorter than the type (`size_of::<c_long>()`,
/// 8 bytes): the kernel would write the type past it. Otherwise the kernel's error ([module
/// docs](crate::io#errors)), e.g. `ENOMSG` with `IPC_NOWAIT` and no message of the type,
/// `E2BIG` for a message longer than the text space without `MSG_NOERROR`, `EIDRM` if the
/// queue was removed, `EACCES`, `EINVAL` for an invalid `qid`, `EINTR` if a signal handler ran
/// (never restarted).
///
/// ```
/// // SAFETY: msgget takes plain integers (a private queue, removed below).
/// let q = unsafe { libc::msgget(libc::IPC_PRIVATE, 0o600) };
/// let mut msg = [0u8; 16];
/// msg[..8].copy_from_slice(&1i64.to_ne_bytes());
/// msg[8] = b'q';
/// thread_cancel::io::msgsnd(q, &msg[..9], 0).unwrap();
/// let mut out = [0u8; 16];
/// assert_eq!(thread_cancel::io::msgrcv(q, &mut out, 0, 0).unwrap(), 1);
/// assert_eq!(out[8], b'q');
/// let e = thread_cancel::io::msgrcv(q, &mut out[..7], 0, libc::IPC_NOWAIT).unwrap_err();
/// assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
/// // SAFETY: removing the queue we created.
/// unsafe { libc::msgctl(q, libc::IPC_RMID, std::ptr::null_mut()) };
/// ```
pub fn msgrcv(qid: i32, buf: &mut [u8], msgtyp: i64, flags: i32) -> io::Result<usize> {
    let Some(text) = buf.len().checked_sub(std::mem::size_of::<libc::c_long>()) else {
        return Err(invalid_argument());
    };
    // SAFETY: `buf` is borrowed for the whole call; the kernel writes the type (a `c_long`)
    // then at most `text` bytes, `buf.len()` in all.
    unsafe {
        raw::msgrcv(
            qid,
            buf.as_mut_ptr().cast(),
            text,
            msgtyp as libc::c_long,
            flags,
        )
    }
    .map(|n| n as usize)
}

/// `msgsnd(2)` as a cancellation point; `msg` is the `long` type followed by the text.
///
/// # Errors
/// `EINVAL`, without a system call, if `msg` is shorter than the type (`size_of::<c_long>()`,
/// 8 bytes): the kernel would read the type past it. Otherwise the kernel's error ([module
/// docs](crate::io#errors)), e.g. `EAGAIN` with `IPC_NOWAIT` and a full queue, `EINVAL` for a
/// type below 1, a text longer than `MSGMAX` or an invalid `qid`, `EIDRM` if the queue was
/// removed, `EACCES`, `EINTR` if a signal handler ran (never restarted).
///
/// ```
/// // SAFETY: msgget takes plain integers (a private queue, removed below).
/// let q = unsafe { libc::msgget(libc::IPC_PRIVATE, 0o600) };
/// let mut msg = 5i64.to_ne_bytes().to_vec();
/// msg.extend_from_slice(b"text");
/// thread_cancel::io::msgsnd(q, &msg, 0).unwrap();
/// let e = thread_cancel::io::msgsnd(q, &msg[..1], 0).unwrap_err();
/// assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
/// // SAFETY: removing the queue we created.
/// unsafe { libc::msgctl(q, libc::IPC_RMID, std::ptr::null_mut()) };
/// ```
pub fn msgsnd(qid: i32, msg: &[u8], flags: i32) -> io::Result<()> {
    let Some(text) = msg.len().checked_sub(std::mem::size_of::<libc::c_long>()) else {
        return Err(invalid_argument());
    };
    // SAFETY: `msg` is borrowed for the whole call; the kernel reads the type (a `c_long`)
    // then `text` bytes, `msg.len()` in all.
    unsafe { raw::msgsnd(qid, msg.as_ptr().cast(), text, flags) }.map(drop)
}

/// Wraps any `AsFd` (a `File`, `TcpStream`, `UnixStream`, `PipeReader`, `OwnedFd`, ...) so that
/// its `Read` and `Write` are cancellation points with the "never both" guarantee (a canceled
/// call had no effect; one that had an effect returns its result).
///
/// ```
/// use std::io::Read;
/// let (r, _w) = std::io::pipe().unwrap();
/// let mut r = thread_cancel::io::Cancelable::new(r);
/// let h = thread_cancel::spawn(move || { let mut b = [0u8; 1]; r.read(&mut b).map(|_| ()) });
/// thread_cancel::sleep(std::time::Duration::from_millis(1));
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// ```
#[derive(Debug)]
pub struct Cancelable<F: AsFd> {
    inner: F,
}

impl<F: AsFd> Cancelable<F> {
    /// Wraps `inner`.
    pub fn new(inner: F) -> Self {
        Self { inner }
    }

    /// The wrapped value.
    pub fn get_ref(&self) -> &F {
        &self.inner
    }

    /// The wrapped value, mutably (for a call the wrapper does not offer; it is not a
    /// cancellation point unless the value's own method is one).
    ///
    /// ```
    /// use std::io::Write;
    /// let f = tempfile_like();
    /// let mut c = thread_cancel::io::Cancelable::new(f);
    /// c.get_mut().set_len(0).unwrap();
    /// c.write_all(b"x").unwrap();
    /// assert_eq!(c.get_ref().metadata().unwrap().len(), 1);
    /// # fn tempfile_like() -> std::fs::File {
    /// #     let p = std::env::temp_dir().join(format!("tc-get-mut-{}", std::process::id()));
    /// #     let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&p).unwrap();
    /// #     std::fs::remove_file(&p).unwrap();
    /// #     f
    /// # }
    /// ```
    pub fn get_mut(&mut self) -> &mut F {
        &mut self.inner
    }

    /// Unwraps.
    pub fn into_inner(self) -> F {
        self.inner
    }
}

/// The wrapped descriptor, so that a `Cancelable` goes wherever an `AsFd` does (the `io`
/// functions of this module among them).
///
/// ```
/// use std::os::fd::AsFd;
/// let (mut r, w) = std::io::pipe().unwrap();
/// let w = thread_cancel::io::Cancelable::new(w);
/// assert_eq!(thread_cancel::io::write(w.as_fd(), b"x").unwrap(), 1);
/// let mut b = [0u8; 1];
/// std::io::Read::read_exact(&mut r, &mut b).unwrap();
/// assert_eq!(&b, b"x");
/// ```
impl<F: AsFd> AsFd for Cancelable<F> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.inner.as_fd()
    }
}

/// Seeks the wrapped value (not a cancellation point: `lseek` never blocks), as `F`'s own
/// `Seek` does; reads and writes through the wrapper continue from the new offset.
///
/// ```
/// use std::io::{Read, Seek, SeekFrom, Write};
/// let p = std::env::temp_dir().join(format!("tc-seek-doc-{}", std::process::id()));
/// let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&p).unwrap();
/// std::fs::remove_file(&p).unwrap();
/// let mut c = thread_cancel::io::Cancelable::new(f);
/// c.write_all(b"hello").unwrap();
/// assert_eq!(c.seek(SeekFrom::Start(1)).unwrap(), 1);
/// let mut s = String::new();
/// c.read_to_string(&mut s).unwrap();
/// assert_eq!(s, "ello");
/// ```
impl<F: AsFd + io::Seek> io::Seek for Cancelable<F> {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

impl<F: AsFd> Read for Cancelable<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        read(self.inner.as_fd(), buf)
    }
}

impl<F: AsFd> Write for Cancelable<F> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        write(self.inner.as_fd(), buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<F: AsFd> Read for &Cancelable<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        read(self.inner.as_fd(), buf)
    }
}

impl<F: AsFd> Write for &Cancelable<F> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        write(self.inner.as_fd(), buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Standard output as a cancellation point (as C's `printf` can be): writes go straight to descriptor 1 through
/// [`write()`], unbuffered.
///
/// ```
/// use std::io::Write;
/// writeln!(thread_cancel::io::stdout(), "hello from a cancellation point").unwrap();
/// ```
pub fn stdout() -> Cancelable<BorrowedFd<'static>> {
    // SAFETY: descriptor 1 is open for the life of the process by convention (as `std`
    // assumes for its own `stdout`).
    Cancelable::new(unsafe { BorrowedFd::borrow_raw(1) })
}

/// Standard input as a cancellation point: reads go straight to descriptor 0 through
/// [`read()`], unbuffered (bypassing `std`'s buffer of `std::io::stdin()`: do not mix the two
/// on one stream). A thread blocked reading it is canceled by a request.
///
/// ```
/// use std::io::Read;
/// let h = thread_cancel::spawn(|| {
///     while !thread_cancel::cancel_requested() {} // (stdin may be at its end: read after the request)
///     let mut b = [0u8; 64];
///     thread_cancel::io::stdin().read(&mut b) // a point: at entry and while it blocks
/// });
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// ```
pub fn stdin() -> Cancelable<BorrowedFd<'static>> {
    // SAFETY: descriptor 0 is open for the life of the process by convention (as `std`
    // assumes for its own `stdin`).
    Cancelable::new(unsafe { BorrowedFd::borrow_raw(0) })
}

// The points only Linux and Android have.
#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use linux::*;

// Typed forms of the functions above that take raw `libc` structs (`io/typed.rs`): the raw
// forms stay, for parity with C.
#[macro_use] // `flags!`, for the epoll types
mod typed;
pub use typed::{poll_fds, PollFd, PollFlags};
#[cfg(any(target_os = "linux", target_os = "android"))]
mod epoll;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use epoll::{Epoll, EpollEvent, EpollFlags};
