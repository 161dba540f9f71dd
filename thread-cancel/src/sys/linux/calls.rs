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

/// `accept4`.
pub const ACCEPT4: Call = libc::SYS_accept4;
/// `clock_nanosleep`.
pub const CLOCK_NANOSLEEP: Call = libc::SYS_clock_nanosleep;
/// `connect`.
pub const CONNECT: Call = libc::SYS_connect;
/// `epoll_pwait`.
pub const EPOLL_PWAIT: Call = libc::SYS_epoll_pwait;
/// `epoll_pwait2`.
pub const EPOLL_PWAIT2: Call = libc::SYS_epoll_pwait2;
/// `fcntl`.
pub const FCNTL: Call = libc::SYS_fcntl;
/// `fdatasync`.
pub const FDATASYNC: Call = libc::SYS_fdatasync;
/// `fsync`.
pub const FSYNC: Call = libc::SYS_fsync;
/// `futex`.
pub const FUTEX: Call = libc::SYS_futex;
/// `ioctl`.
pub const IOCTL: Call = libc::SYS_ioctl;
/// `mq_timedreceive`.
pub const MQ_TIMEDRECEIVE: Call = libc::SYS_mq_timedreceive;
/// `mq_timedsend`.
pub const MQ_TIMEDSEND: Call = libc::SYS_mq_timedsend;
/// `msgrcv`.
pub const MSGRCV: Call = libc::SYS_msgrcv;
/// `msgsnd`.
pub const MSGSND: Call = libc::SYS_msgsnd;
/// `msync`.
pub const MSYNC: Call = libc::SYS_msync;
/// `openat`.
pub const OPENAT: Call = libc::SYS_openat;
/// `ppoll`.
pub const PPOLL: Call = libc::SYS_ppoll;
/// `pread64`.
pub const PREAD64: Call = libc::SYS_pread64;
/// `preadv`.
pub const PREADV: Call = libc::SYS_preadv;
/// `preadv2`.
pub const PREADV2: Call = libc::SYS_preadv2;
/// `pselect6`.
pub const PSELECT6: Call = libc::SYS_pselect6;
/// `pwrite64`.
pub const PWRITE64: Call = libc::SYS_pwrite64;
/// `pwritev`.
pub const PWRITEV: Call = libc::SYS_pwritev;
/// `pwritev2`.
pub const PWRITEV2: Call = libc::SYS_pwritev2;
/// `read`.
pub const READ: Call = libc::SYS_read;
/// `readv`.
pub const READV: Call = libc::SYS_readv;
/// `recvfrom`.
pub const RECVFROM: Call = libc::SYS_recvfrom;
/// `recvmmsg`.
pub const RECVMMSG: Call = libc::SYS_recvmmsg;
/// `recvmsg`.
pub const RECVMSG: Call = libc::SYS_recvmsg;
/// `rt_sigsuspend`.
pub const RT_SIGSUSPEND: Call = libc::SYS_rt_sigsuspend;
/// `rt_sigtimedwait`.
pub const RT_SIGTIMEDWAIT: Call = libc::SYS_rt_sigtimedwait;
/// `sendmmsg`.
pub const SENDMMSG: Call = libc::SYS_sendmmsg;
/// `sendmsg`.
pub const SENDMSG: Call = libc::SYS_sendmsg;
/// `sendto`.
pub const SENDTO: Call = libc::SYS_sendto;
/// `splice`.
pub const SPLICE: Call = libc::SYS_splice;
/// `tee`.
pub const TEE: Call = libc::SYS_tee;
/// `vmsplice`.
pub const VMSPLICE: Call = libc::SYS_vmsplice;
/// `wait4`.
pub const WAIT4: Call = libc::SYS_wait4;
/// `waitid`.
pub const WAITID: Call = libc::SYS_waitid;
/// `write`.
pub const WRITE: Call = libc::SYS_write;
/// `writev`.
pub const WRITEV: Call = libc::SYS_writev;

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
