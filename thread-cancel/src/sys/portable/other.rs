//! The calls of the portable layer on systems other than Linux: each one a function over the
//! C library's call of that name, taking the arguments the Linux system call takes (so that
//! `io/mod.rs` passes the same ones everywhere) and returning the raw result (`-errno` on
//! failure). Calls only Linux has are absent; the `io` functions over them are Linux-only.

use libc::{c_int, c_long, c_void};

/// A call the portable layer can make: a function over the C library.
pub type Call = unsafe fn([c_long; 6]) -> c_long;

/// The size of the signal set the `rt_sig*`-style calls take (unused here but by the
/// argument lists `io/mod.rs` builds).
pub const SIGSET_SIZE: usize = std::mem::size_of::<libc::sigset_t>();

/// Whether `flags` of a send ask for zero-copy (Linux's `MSG_ZEROCOPY`): never here.
#[inline(always)]
pub fn zerocopy(_flags: i32) -> bool {
    false
}

/// `MSG_NOSIGNAL` where the system has it (0 on Apple's systems, which have no such flag).
#[cfg(target_vendor = "apple")]
pub const MSG_NOSIGNAL: i32 = 0;
/// `MSG_NOSIGNAL` where the system has it (0 on Apple's systems, which have no such flag).
#[cfg(not(target_vendor = "apple"))]
pub const MSG_NOSIGNAL: i32 = libc::MSG_NOSIGNAL;

/// No `POLLRDHUP` event here: 0 (never reported, never asked for).
pub const POLLRDHUP: i16 = 0;

/// No open-file-description locks here: an invalid command (the call fails with `EINVAL`).
pub const F_OFD_SETLKW: c_int = -1;

/// A C library result (`-1` and `errno` on failure) as a raw one (`-errno`).
#[inline]
fn raw(r: c_long) -> c_long {
    if r == -1 {
        -(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as c_long)
    } else {
        r
    }
}

/// Call `nr` without cancellation, as a raw result (`-errno` on failure).
///
/// # Safety
/// The arguments must be valid for call `nr`, as for the C function it wraps.
#[inline]
pub unsafe fn plain(nr: Call, a: [c_long; 6]) -> c_long {
    // SAFETY: forwarded from the caller.
    unsafe { nr(a) }
}

/// A socket of `family` and `ty`, closed on `exec`.
pub fn socket_cloexec(family: c_int, ty: c_int) -> c_int {
    // SAFETY: `socket` takes plain integers.
    let fd = unsafe { libc::socket(family, ty, 0) };
    if fd >= 0 {
        set_cloexec(fd);
    }
    fd
}

/// No `SOCK_CLOEXEC` flag for `accept` here: [`ACCEPT4`] sets close-on-exec itself.
pub const SOCK_CLOEXEC: c_int = 0;

fn set_cloexec(fd: c_int) {
    // SAFETY: `fcntl` on a descriptor the caller just got; integer arguments.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
}

/// System V message queues: Apple's C library has them, the `libc` crate does not declare them
/// for it.
#[cfg(target_vendor = "apple")]
mod sysv {
    use libc::{c_int, c_long, c_void, size_t, ssize_t};
    extern "C" {
        pub(super) fn msgrcv(
            qid: c_int,
            msg: *mut c_void,
            size: size_t,
            typ: c_long,
            flags: c_int,
        ) -> ssize_t;
        pub(super) fn msgsnd(qid: c_int, msg: *const c_void, size: size_t, flags: c_int) -> c_int;
    }
}
#[cfg(not(target_vendor = "apple"))]
use libc as sysv;

macro_rules! calls {
    ($($(#[$m:meta])* $name:ident = |$a:ident| $body:expr;)*) => {$(
        $(#[$m])*
        pub const $name: Call = {
            /// # Safety
            /// The arguments must be valid for the wrapped call.
            unsafe fn f($a: [c_long; 6]) -> c_long {
                // SAFETY: the caller passes arguments valid for the C function (this
                // module's `Call` contract).
                raw(unsafe { $body } as c_long)
            }
            f
        };
    )*};
}

calls! {
    /// `read(fd, buf, len)`.
    READ = |a| libc::read(a[0] as c_int, a[1] as *mut c_void, a[2] as usize);
    /// `write(fd, buf, len)`.
    WRITE = |a| libc::write(a[0] as c_int, a[1] as *const c_void, a[2] as usize);
    /// `pread(fd, buf, len, offset)`.
    PREAD64 = |a| libc::pread(a[0] as c_int, a[1] as *mut c_void, a[2] as usize, a[3] as libc::off_t);
    /// `pwrite(fd, buf, len, offset)`.
    PWRITE64 = |a| libc::pwrite(a[0] as c_int, a[1] as *const c_void, a[2] as usize, a[3] as libc::off_t);
    /// `recvfrom(fd, buf, len, flags, addr, addrlen)`.
    RECVFROM = |a| libc::recvfrom(
        a[0] as c_int, a[1] as *mut c_void, a[2] as usize, a[3] as c_int,
        a[4] as *mut libc::sockaddr, a[5] as *mut libc::socklen_t,
    );
    /// `sendto(fd, buf, len, flags, addr, addrlen)`.
    SENDTO = |a| libc::sendto(
        a[0] as c_int, a[1] as *const c_void, a[2] as usize, a[3] as c_int,
        a[4] as *const libc::sockaddr, a[5] as libc::socklen_t,
    );
    /// `accept(fd, addr, addrlen)`, then close-on-exec on the new descriptor (the flags, Linux's
    /// fourth argument, are ignored).
    ACCEPT4 = |a| {
        let fd = libc::accept(a[0] as c_int, a[1] as *mut libc::sockaddr, a[2] as *mut libc::socklen_t);
        if fd >= 0 {
            set_cloexec(fd);
        }
        fd
    };
    /// `connect(fd, addr, addrlen)`.
    CONNECT = |a| libc::connect(a[0] as c_int, a[1] as *const libc::sockaddr, a[2] as libc::socklen_t);
    /// Linux's `ppoll(fds, n, timeout, NULL)` as `poll` (the timeout rounded up to whole
    /// milliseconds; the signal mask, always null from `io`, is ignored).
    PPOLL = |a| {
        let ts = a[2] as *const libc::timespec;
        let ms = if ts.is_null() {
            -1
        } else {
            #[allow(clippy::unnecessary_cast)] // `time_t` and `long` are 32 bits on some targets
            let (s, ns) = ((*ts).tv_sec as i64, (*ts).tv_nsec as i64);
            (s.saturating_mul(1000).saturating_add((ns + 999_999) / 1_000_000)).min(c_int::MAX as i64) as c_int
        };
        libc::poll(a[0] as *mut libc::pollfd, a[1] as libc::nfds_t, ms)
    };
    /// `openat(dir, path, flags, mode)`.
    OPENAT = |a| libc::openat(a[0] as c_int, a[1] as *const libc::c_char, a[2] as c_int, a[3] as libc::c_uint);
    /// `readv(fd, iov, count)`.
    READV = |a| libc::readv(a[0] as c_int, a[1] as *const libc::iovec, a[2] as c_int);
    /// `writev(fd, iov, count)`.
    WRITEV = |a| libc::writev(a[0] as c_int, a[1] as *const libc::iovec, a[2] as c_int);
    /// `fsync(fd)`.
    FSYNC = |a| libc::fsync(a[0] as c_int);
    /// `fcntl(fd, cmd, lock)`.
    FCNTL = |a| libc::fcntl(a[0] as c_int, a[1] as c_int, a[2] as *mut libc::flock);
    /// `waitid(idtype, id, info, options)`.
    WAITID = |a| libc::waitid(a[0] as libc::idtype_t, a[1] as libc::id_t, a[2] as *mut libc::siginfo_t, a[3] as c_int);
    /// `wait4(pid, status, options, rusage)`.
    WAIT4 = |a| libc::wait4(a[0] as libc::pid_t, a[1] as *mut c_int, a[2] as c_int, a[3] as *mut libc::rusage);
    /// `msync(addr, len, flags)`.
    MSYNC = |a| libc::msync(a[0] as *mut c_void, a[1] as usize, a[2] as c_int);
    /// `recvmsg(fd, msg, flags)`.
    RECVMSG = |a| libc::recvmsg(a[0] as c_int, a[1] as *mut libc::msghdr, a[2] as c_int);
    /// `sendmsg(fd, msg, flags)`.
    SENDMSG = |a| libc::sendmsg(a[0] as c_int, a[1] as *const libc::msghdr, a[2] as c_int);
    /// Linux's `pselect6(n, r, w, e, timeout, NULL)` as `pselect` without a mask.
    PSELECT6 = |a| libc::pselect(
        a[0] as c_int, a[1] as *mut libc::fd_set, a[2] as *mut libc::fd_set,
        a[3] as *mut libc::fd_set, a[4] as *const libc::timespec, std::ptr::null(),
    );
    /// `sigsuspend(mask)`.
    RT_SIGSUSPEND = |a| libc::sigsuspend(a[0] as *const libc::sigset_t);
    /// `msgrcv(qid, buf, size, type, flags)`.
    MSGRCV = |a| sysv::msgrcv(a[0] as c_int, a[1] as *mut c_void, a[2] as usize, a[3] as c_long, a[4] as c_int);
    /// `msgsnd(qid, buf, size, flags)`.
    MSGSND = |a| sysv::msgsnd(a[0] as c_int, a[1] as *const c_void, a[2] as usize, a[3] as c_int);
}
