//! System-call cancellation points (SPEC §3) with the "never both" guarantee (R10): a call
//! that a request interrupts either completed — and returns its result, the request waiting
//! for the next point — or had no effect and the thread acts on the request.
//!
//! A thread blocked in one of these is woken by the cancel signal (a real-time signal,
//! [`set_signal`]); see ARCHITECTURE.md for why the trampoline's address range makes the
//! decision exact. A thread that blocks the signal is still canceled at its next point.

use crate::control::Control;
use crate::current::with_current;
use crate::sys::{self, CpResult};
use crate::wait::{act, must_act};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

/// Chooses the real-time signal used to interrupt blocked calls (default `SIGRTMIN + 7`);
/// only before the first cancellable system call of the process.
///
/// ```
/// // Too late if a cancellable call already ran in this process; otherwise Ok.
/// let _ = thread_cancel::io::set_signal(libc::SIGRTMIN() + 7);
/// assert!(thread_cancel::io::set_signal(libc::SIGINT).is_err());
/// ```
pub fn set_signal(sig: i32) -> io::Result<()> {
    sys::set_signal(sig).map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m))
}

/// Runs system call `nr` as a cancellation point.
fn cp(nr: libc::c_long, a: [libc::c_long; 6]) -> io::Result<libc::c_long> {
    // A thread without a control block cannot be canceled, and a point inside an unwind does
    // not act: both make the plain call.
    let r = with_current(|c| (!std::thread::panicking()).then(|| cp_on(c, nr, a))).flatten();
    let r = r.unwrap_or_else(|| {
        // SAFETY: the callers below pass arguments valid for `nr`.
        let r = unsafe { libc::syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]) };
        if r == -1 {
            -(io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO) as libc::c_long)
        } else {
            r
        }
    });
    if (-4095..0).contains(&r) {
        Err(io::Error::from_raw_os_error(-r as i32))
    } else {
        Ok(r)
    }
}

fn cp_on(c: &Control, nr: libc::c_long, a: [libc::c_long; 6]) -> libc::c_long {
    use std::sync::atomic::Ordering;
    c.in_syscall.store(true, Ordering::SeqCst);
    // SAFETY: the word is this thread's (borrowed `c` outlives the call); the callers below
    // pass arguments valid for `nr`.
    let r = unsafe { sys::syscall_cp(c.state.as_ptr(), nr, a) };
    c.in_syscall.store(false, Ordering::Release);
    match r {
        CpResult::Canceled => act(c),
        // A call that cannot be restarted, interrupted by our signal: nothing happened.
        CpResult::Done(r) if r == -(libc::EINTR as libc::c_long) && must_act(c.state.load()) => {
            act(c)
        }
        CpResult::Done(r) => r,
    }
}

fn fd_arg(fd: BorrowedFd<'_>) -> libc::c_long {
    fd.as_raw_fd() as libc::c_long
}

/// `read(2)` as a cancellation point.
///
/// ```
/// let (r, mut w) = std::io::pipe().unwrap();
/// std::io::Write::write_all(&mut w, b"hi").unwrap();
/// let mut b = [0u8; 2];
/// use std::os::fd::AsFd;
/// assert_eq!(thread_cancel::io::read(r.as_fd(), &mut b).unwrap(), 2);
/// ```
pub fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    let a = [fd_arg(fd), buf.as_mut_ptr() as _, buf.len() as _, 0, 0, 0];
    cp(libc::SYS_read, a).map(|n| n as usize)
}

/// `write(2)` as a cancellation point.
///
/// ```
/// use std::os::fd::AsFd;
/// let (_r, w) = std::io::pipe().unwrap();
/// assert_eq!(thread_cancel::io::write(w.as_fd(), b"abc").unwrap(), 3);
/// ```
pub fn write(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    let a = [fd_arg(fd), buf.as_ptr() as _, buf.len() as _, 0, 0, 0];
    cp(libc::SYS_write, a).map(|n| n as usize)
}

/// `pread(2)` as a cancellation point.
///
/// ```
/// use std::os::fd::AsFd;
/// let f = std::fs::File::open("/proc/self/status").unwrap();
/// let mut b = [0u8; 4];
/// assert_eq!(thread_cancel::io::pread(f.as_fd(), &mut b, 0).unwrap(), 4);
/// ```
pub fn pread(fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let a = [
        fd_arg(fd),
        buf.as_mut_ptr() as _,
        buf.len() as _,
        offset as _,
        0,
        0,
    ];
    cp(libc::SYS_pread64, a).map(|n| n as usize)
}

/// `pwrite(2)` as a cancellation point.
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
pub fn pwrite(fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> io::Result<usize> {
    let a = [
        fd_arg(fd),
        buf.as_ptr() as _,
        buf.len() as _,
        offset as _,
        0,
        0,
    ];
    cp(libc::SYS_pwrite64, a).map(|n| n as usize)
}

/// `recv(2)` (`recvfrom` without an address) as a cancellation point.
///
/// ```
/// use std::os::fd::AsFd;
/// let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
/// std::io::Write::write_all(&mut &a, b"x").unwrap();
/// let mut buf = [0u8; 1];
/// assert_eq!(thread_cancel::io::recv(b.as_fd(), &mut buf, 0).unwrap(), 1);
/// ```
pub fn recv(fd: BorrowedFd<'_>, buf: &mut [u8], flags: i32) -> io::Result<usize> {
    let a = [
        fd_arg(fd),
        buf.as_mut_ptr() as _,
        buf.len() as _,
        flags as _,
        0,
        0,
    ];
    cp(libc::SYS_recvfrom, a).map(|n| n as usize)
}

/// `send(2)` (`sendto` without an address) as a cancellation point. `MSG_NOSIGNAL` is added, so
/// a closed peer is an `EPIPE` error rather than a `SIGPIPE`.
///
/// ```
/// use std::os::fd::AsFd;
/// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
/// assert_eq!(thread_cancel::io::send(a.as_fd(), b"xyz", 0).unwrap(), 3);
/// ```
pub fn send(fd: BorrowedFd<'_>, buf: &[u8], flags: i32) -> io::Result<usize> {
    let flags = flags | libc::MSG_NOSIGNAL;
    let a = [
        fd_arg(fd),
        buf.as_ptr() as _,
        buf.len() as _,
        flags as _,
        0,
        0,
    ];
    cp(libc::SYS_sendto, a).map(|n| n as usize)
}

/// `accept4(2)` with `SOCK_CLOEXEC` as a cancellation point: either a connection is accepted
/// and returned, or none was taken (it stays queued for the next `accept`).
///
/// ```
/// use std::os::fd::AsFd;
/// let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// let _c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
/// let conn = thread_cancel::io::accept(l.as_fd()).unwrap();
/// let _ = conn;
/// ```
pub fn accept(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let a = [fd_arg(fd), 0, 0, libc::SOCK_CLOEXEC as _, 0, 0];
    let n = cp(libc::SYS_accept4, a)?;
    // SAFETY: a successful accept4 returns a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(n as i32) })
}

/// `poll(2)` (through `ppoll`) as a cancellation point; `timeout_ms < 0` waits forever.
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
    cp(libc::SYS_ppoll, a).map(|n| n as usize)
}

/// `close(2)` as a cancellation point that releases the descriptor exactly once: the
/// descriptor is always closed (Linux releases it even when close fails), and a pending
/// request is acted on after that — never leaked, never closed twice.
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

/// Wraps any `AsFd` (a `File`, `TcpStream`, `UnixStream`, `PipeReader`, `OwnedFd`, ...) so that
/// its `Read` and `Write` are cancellation points with the R10 guarantee.
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

    /// Unwraps.
    pub fn into_inner(self) -> F {
        self.inner
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

/// Standard output as a cancellation point (R23): writes go straight to descriptor 1 through
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
