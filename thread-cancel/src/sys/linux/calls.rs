//! The system calls that the portable code (`io/mod.rs`, `net.rs`, the C ABI's points) makes
//! through the trampoline, by name: on Linux a call is its system-call number, so every use
//! is a constant (no table, no indirection). A port names the same calls in its own
//! `calls.rs`: the type [`Call`] is whatever its `syscall_cp` takes.
//!
//! Also here: the few kernel facts those callers need (the kernel's signal-set size, the
//! split of a 64-bit offset, flags not in every C library's headers).
// The table serves the C ABI too: the calls only it makes are unused without its feature.
#![cfg_attr(not(feature = "c-abi"), allow(dead_code))]

/// A system call the trampoline can make: on Linux, its number.
pub type Call = libc::c_long;

/// Declares each call's constant (`NAME = SYS_name`) and [`NAMES`], the same list with the
/// kernel's name of each, which the diagnostic prints (one list: a call named here has its
/// name there).
macro_rules! calls {
    ($( $(#[$m:meta])* $name:ident = $sys:ident ),* $(,)?) => {
        $(
            $(#[$m])*
            #[doc = concat!("`", stringify!($sys), "`.")]
            pub const $name: Call = libc::$sys;
        )*
        /// Every call named in this file and its kernel name (`SYS_read` is `read`).
        pub const NAMES: &[(Call, &str)] = &[$( $(#[$m])* (libc::$sys, stringify!($sys)), )*];
    };
}

calls! {
    ACCEPT4 = SYS_accept4,
    CLOCK_NANOSLEEP = SYS_clock_nanosleep,
    CLOSE = SYS_close,
    CONNECT = SYS_connect,
    EPOLL_PWAIT = SYS_epoll_pwait,
    EPOLL_PWAIT2 = SYS_epoll_pwait2,
    FCNTL = SYS_fcntl,
    FDATASYNC = SYS_fdatasync,
    FLOCK = SYS_flock,
    #[cfg(not(target_os = "android"))]
    FSTAT = SYS_fstat,
    FSYNC = SYS_fsync,
    FUTEX = SYS_futex,
    GETPID = SYS_getpid,
    GETSOCKOPT = SYS_getsockopt,
    GETTID = SYS_gettid,
    IOCTL = SYS_ioctl,
    MQ_TIMEDRECEIVE = SYS_mq_timedreceive,
    MQ_TIMEDSEND = SYS_mq_timedsend,
    MMAP = SYS_mmap,
    MSGRCV = SYS_msgrcv,
    MSGSND = SYS_msgsnd,
    MSYNC = SYS_msync,
    MUNMAP = SYS_munmap,
    NANOSLEEP = SYS_nanosleep,
    OPENAT = SYS_openat,
    PIDFD_OPEN = SYS_pidfd_open,
    PIDFD_SEND_SIGNAL = SYS_pidfd_send_signal,
    PPOLL = SYS_ppoll,
    PREAD64 = SYS_pread64,
    PREADV = SYS_preadv,
    PREADV2 = SYS_preadv2,
    PSELECT6 = SYS_pselect6,
    PWRITE64 = SYS_pwrite64,
    PWRITEV = SYS_pwritev,
    PWRITEV2 = SYS_pwritev2,
    READ = SYS_read,
    READV = SYS_readv,
    RECVFROM = SYS_recvfrom,
    RECVMMSG = SYS_recvmmsg,
    RECVMSG = SYS_recvmsg,
    RT_SIGPROCMASK = SYS_rt_sigprocmask,
    RT_SIGSUSPEND = SYS_rt_sigsuspend,
    RT_SIGTIMEDWAIT = SYS_rt_sigtimedwait,
    SCHED_YIELD = SYS_sched_yield,
    SENDMMSG = SYS_sendmmsg,
    SENDMSG = SYS_sendmsg,
    SENDTO = SYS_sendto,
    SPLICE = SYS_splice,
    TEE = SYS_tee,
    VMSPLICE = SYS_vmsplice,
    WAIT4 = SYS_wait4,
    WAITID = SYS_waitid,
    WRITE = SYS_write,
    WRITEV = SYS_writev,
    // Not made by the crate; named for the diagnostic (what other code blocks in).
    #[cfg(target_arch = "x86_64")]
    ACCEPT = SYS_accept,
    #[cfg(target_arch = "x86_64")]
    EPOLL_WAIT = SYS_epoll_wait,
    #[cfg(target_arch = "x86_64")]
    OPEN = SYS_open,
    #[cfg(target_arch = "x86_64")]
    POLL = SYS_poll,
    #[cfg(target_arch = "x86_64")]
    SELECT = SYS_select,
}

/// The size of the kernel's signal set (`_NSIG / 8`), which the `rt_sig*` calls, `ppoll` and
/// `epoll_pwait` take: the kernel reads that many bytes of a `libc::sigset_t` (glibc's is
/// larger, 128 bytes).
pub const SIGSET_SIZE: usize = 8;
const _: () = assert!(std::mem::size_of::<libc::sigset_t>() >= SIGSET_SIZE);

/// `MSG_NOSIGNAL` (`io::send` adds it: a closed peer is `EPIPE`, not `SIGPIPE`).
pub const MSG_NOSIGNAL: i32 = libc::MSG_NOSIGNAL;

/// `SOCK_CLOEXEC`, for `accept4`.
pub const SOCK_CLOEXEC: i32 = libc::SOCK_CLOEXEC;

/// `F_OFD_SETLKW`: a blocking open-file-description lock.
pub const F_OFD_SETLKW: i32 = libc::F_OFD_SETLKW;

/// `POLLRDHUP`: the peer closed its writing end.
pub const POLLRDHUP: i16 = libc::POLLRDHUP;

/// A socket of `family` and `ty`, closed on `exec` (`SOCK_CLOEXEC`).
pub fn socket_cloexec(family: i32, ty: i32) -> i32 {
    // SAFETY: `socket` takes plain integers.
    unsafe { libc::socket(family, ty | libc::SOCK_CLOEXEC, 0) }
}

/// Linux's `MSG_ZEROCOPY` (not in every C library's headers).
pub const MSG_ZEROCOPY: i32 = 0x400_0000;

/// Whether `flags` of a send ask for zero-copy ([`MSG_ZEROCOPY`]).
#[inline(always)]
pub fn zerocopy(flags: i32) -> bool {
    flags & MSG_ZEROCOPY != 0
}

/// An offset as the two `long`s that `preadv`/`pwritev` take: the kernel computes
/// `(high << (BITS/2)) << (BITS/2) | low`, so on a 64-bit target `low` carries the whole
/// offset (glibc's `LO_HI_LONG`).
#[inline(always)]
pub fn lo_hi(offset: u64) -> (libc::c_long, libc::c_long) {
    (offset as libc::c_long, (offset >> 32) as libc::c_long)
}

/// System call `nr` without cancellation, as a raw result (`-errno` on failure).
///
/// # Safety
/// The arguments must be valid for system call `nr`: every pointer valid (for reads or
/// writes, as the call does them) for the sizes passed, for the whole call.
#[inline]
pub unsafe fn plain(nr: Call, a: [libc::c_long; 6]) -> libc::c_long {
    let [a1, a2, a3, a4, a5, a6] = a;
    // SAFETY: forwarded from the caller.
    let r = unsafe { libc::syscall(nr, a1, a2, a3, a4, a5, a6) };
    if r == -1 {
        -(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as libc::c_long)
    } else {
        r
    }
}
