//! The table of points: what "this C library function is a cancellation point here" means, once.
//!
//! Each row is one C library function: its name, its C signature (written once, here), the
//! system call it is made as (by the platform's name, `sys::calls`) with the
//! registers its arguments go to, and one column per face of the library:
//!
//! | column | face | made from the row where it says `point` |
//! |---|---|---|
//! | `rust` | the crate's own points (`io`, `net`, `process`) | `point::raw::NAME`, an `unsafe fn` of the C signature that the safe function calls |
//! | `interpose` | feature `interpose`: the C library's symbol, defined by the crate | the `#[no_mangle]` function (`interpose/calls.rs`) |
//! | `tc` | the C ABI (`thread-cancel-ffi`) | `tc_NAME` (`syscalls/table.rs` there) |
//!
//! The values of a column:
//!
//! - `point`: made from the row (the regular case: a system call of these registers).
//! - `linux` (`rust` only): as `point`, on Linux and Android only (the crate's Linux-only
//!   points, `io/linux.rs`; other systems have no such call).
//! - `write` (`interpose` only): as `point`, but descriptors 1 and 2 are not points there
//!   (`print!` panics when its write fails).
//! - `shim` (`interpose` only): a C-variadic function, defined in C (`interpose/shim.c`).
//! - `own`: this face has it, written by hand beside the table (named as such there) because
//!   it is more than one system call of its arguments: a converted timeout (`poll`, `select`),
//!   a copied set (`sigtimedwait`), a sleep's remaining time, a child recorded (`fork`), a
//!   signal handler installed behind the trampoline that tells a handler's calls apart
//!   (`sigaction`, `signal`: not points, in the table because they are interposed).
//! - `never`: this face must not have it (`close` interposed would make std's `OwnedFd` drop,
//!   which ignores errors, leak the descriptor; `epoll_wait` failing is fatal to event loops).
//! - `no`: not in this face.
//!
//! The `_FORTIFY_SOURCE` variants (`chk` rows) are the checked forms C code built with
//! `_FORTIFY_SOURCE` calls: the check, then the row they name (64-bit targets only: there
//! `off64_t` is `off_t`). Both C faces have them: the interposed symbol, and `tc_` and the C
//! name (`tc___recv_chk`), which the C ABI's compatibility header redirects the C name to. The `unreached` rows are what a
//! program meets that interposition does not reach (the user docs list them, with the reason).
//! The `c_library` rows are defined by the C ABI's library only, written by hand there (the
//! condition waits: not system calls, and points for a C thread's own cancellation only).
//!
//! The table is a macro that hands its rows to a face's macro (`$face! { points { ... } chk
//! { ... } unreached { ... } }`), so each face expands the rows it has and the others are
//! never compiled there. [`ROWS`] is the same table as data: the keep list of the link
//! (`control/tls.rs`), the check of the linked symbols and of the user docs
//! (`tests/w01_table.rs`) read it. Not public API: hidden, outside semver.
//!
//! Adding a point is one row here and its test.

/// The table of points, handed to the face macro `$face` (see the module documentation).
/// Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __thread_cancel_points {
    ($face:ident) => {
        $crate::__thread_cancel_points! { @each $face }
    };
    (@each $face:ident) => {
        $crate::__thread_cancel_points! { @rows each $face }
    };
    (@all $face:ident) => {
        $crate::__thread_cancel_points! { @rows all $face }
    };
    (@rows $how:ident $face:ident) => {
        $crate::__thread_cancel_points! { @$how $face
        points {
            // C name and signature -> result = system call (registers) [rust interpose tc];
            read(fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t = READ(fd, buf, n) [point point point];
            write(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t = WRITE(fd, buf, n) [point write point];
            readv(fd: c_int, iov: *const iovec, cnt: c_int) -> ssize_t = READV(fd, iov, cnt) [point point point];
            writev(fd: c_int, iov: *const iovec, cnt: c_int) -> ssize_t = WRITEV(fd, iov, cnt) [point write point];
            pread(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t = PREAD64(fd, buf, n, off) [point point point];
            pread64(fd: c_int, buf: *mut c_void, n: size_t, off: off64_t) -> ssize_t = PREAD64(fd, buf, n, off) [no point no];
            pwrite(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t = PWRITE64(fd, buf, n, off) [point point point];
            pwrite64(fd: c_int, buf: *const c_void, n: size_t, off: off64_t) -> ssize_t = PWRITE64(fd, buf, n, off) [no point no];
            preadv(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t = PREADV(fd, iov, cnt, off, 0) [own no own];
            pwritev(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t = PWRITEV(fd, iov, cnt, off, 0) [own no own];
            preadv2(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t, flags: c_int) -> ssize_t = PREADV2(fd, iov, cnt, off, 0, flags) [no no own];
            pwritev2(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t, flags: c_int) -> ssize_t = PWRITEV2(fd, iov, cnt, off, 0, flags) [no no own];
            recv(fd: c_int, buf: *mut c_void, n: size_t, flags: c_int) -> ssize_t = RECVFROM(fd, buf, n, flags, 0, 0) [point point point];
            recvfrom(fd: c_int, buf: *mut c_void, n: size_t, flags: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> ssize_t = RECVFROM(fd, buf, n, flags, addr, len) [no point point];
            recvmsg(fd: c_int, msg: *mut msghdr, flags: c_int) -> ssize_t = RECVMSG(fd, msg, flags) [point point point];
            recvmmsg(fd: c_int, msgs: *mut mmsghdr, n: c_uint, flags: c_int, timeout: *mut timespec) -> c_int = RECVMMSG(fd, msgs, n, flags, timeout) [no no point];
            send(fd: c_int, buf: *const c_void, n: size_t, flags: c_int) -> ssize_t = SENDTO(fd, buf, n, flags, 0, 0) [point point point];
            sendto(fd: c_int, buf: *const c_void, n: size_t, flags: c_int, addr: *const sockaddr, len: socklen_t) -> ssize_t = SENDTO(fd, buf, n, flags, addr, len) [no point point];
            sendmsg(fd: c_int, msg: *const msghdr, flags: c_int) -> ssize_t = SENDMSG(fd, msg, flags) [point point point];
            sendmmsg(fd: c_int, msgs: *mut mmsghdr, n: c_uint, flags: c_int) -> c_int = SENDMMSG(fd, msgs, n, flags) [no no point];
            accept(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> c_int = ACCEPT4(fd, addr, len, 0) [no point point];
            accept4(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t, flags: c_int) -> c_int = ACCEPT4(fd, addr, len, flags) [point point point];
            connect(fd: c_int, addr: *const sockaddr, len: socklen_t) -> c_int = CONNECT(fd, addr, len) [point point point];
            open(path: *const c_char, flags: c_int, mode: mode_t) -> c_int = OPENAT(AT_FDCWD, path, flags, mode) [no shim point];
            open64(path: *const c_char, flags: c_int, mode: mode_t) -> c_int = OPENAT(AT_FDCWD, path, flags, mode) [no shim no];
            openat(dir: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int = OPENAT(dir, path, flags, mode) [point shim point];
            openat64(dir: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int = OPENAT(dir, path, flags, mode) [no shim no];
            creat(path: *const c_char, mode: mode_t) -> c_int = OPENAT(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode) [no no point];
            close(fd: c_int) -> c_int = CLOSE(fd) [own never own];
            fcntl(fd: c_int, cmd: c_int, arg: c_long) -> c_int = FCNTL(fd, cmd, arg) [point shim own];
            fcntl64(fd: c_int, cmd: c_int, arg: c_long) -> c_int = FCNTL(fd, cmd, arg) [no shim no];
            lockf(fd: c_int, cmd: c_int, len: off_t) -> c_int = FCNTL(fd, cmd, len) [no own own];
            lockf64(fd: c_int, cmd: c_int, len: off64_t) -> c_int = FCNTL(fd, cmd, len) [no own no];
            flock(fd: c_int, op: c_int) -> c_int = FLOCK(fd, op) [no point no];
            fsync(fd: c_int) -> c_int = FSYNC(fd) [point point point];
            fdatasync(fd: c_int) -> c_int = FDATASYNC(fd) [linux point point];
            msync(addr: *mut c_void, len: size_t, flags: c_int) -> c_int = MSYNC(addr, len, flags) [point no point];
            tcdrain(fd: c_int) -> c_int = IOCTL(fd, TCSBRK, 1) [linux no point];
            splice(fd_in: c_int, off_in: *mut loff_t, fd_out: c_int, off_out: *mut loff_t, len: size_t, flags: c_uint) -> ssize_t = SPLICE(fd_in, off_in, fd_out, off_out, len, flags) [no no own];
            tee(fd_in: c_int, fd_out: c_int, len: size_t, flags: c_uint) -> ssize_t = TEE(fd_in, fd_out, len, flags) [no no point];
            vmsplice(fd: c_int, iov: *const iovec, n: size_t, flags: c_uint) -> ssize_t = VMSPLICE(fd, iov, n, flags) [no no point];
            aio_suspend(list: *const *const aiocb, n: c_int, timeout: *const timespec) -> c_int = NONE() [no no own];
            poll(fds: *mut pollfd, n: nfds_t, timeout: c_int) -> c_int = PPOLL(fds, n, timeout) [own own own];
            ppoll(fds: *mut pollfd, n: nfds_t, timeout: *const timespec, mask: *const sigset_t) -> c_int = PPOLL(fds, n, timeout, mask) [no own own];
            select(n: c_int, r: *mut fd_set, w: *mut fd_set, e: *mut fd_set, timeout: *mut timeval) -> c_int = PSELECT6(n, r, w, e, timeout) [own own own];
            pselect(n: c_int, r: *mut fd_set, w: *mut fd_set, e: *mut fd_set, timeout: *const timespec, mask: *const sigset_t) -> c_int = PSELECT6(n, r, w, e, timeout, mask) [no own own];
            epoll_wait(ep: c_int, events: *mut epoll_event, n: c_int, timeout: c_int) -> c_int = EPOLL_PWAIT(ep, events, n, timeout) [own never own];
            epoll_pwait(ep: c_int, events: *mut epoll_event, n: c_int, timeout: c_int, mask: *const sigset_t) -> c_int = EPOLL_PWAIT(ep, events, n, timeout, mask) [no never own];
            epoll_pwait2(ep: c_int, events: *mut epoll_event, n: c_int, timeout: *const timespec, mask: *const sigset_t) -> c_int = EPOLL_PWAIT2(ep, events, n, timeout, mask) [no never own];
            nanosleep(req: *const timespec, rem: *mut timespec) -> c_int = CLOCK_NANOSLEEP(req, rem) [no own own];
            clock_nanosleep(clock: clockid_t, flags: c_int, req: *const timespec, rem: *mut timespec) -> c_int = CLOCK_NANOSLEEP(clock, flags, req, rem) [no own own];
            sleep(seconds: c_uint) -> c_uint = CLOCK_NANOSLEEP(seconds) [no own own];
            usleep(usec: useconds_t) -> c_int = CLOCK_NANOSLEEP(usec) [no own own];
            thrd_sleep(req: *const timespec, rem: *mut timespec) -> c_int = CLOCK_NANOSLEEP(req, rem) [no own no];
            pause() -> c_int = PPOLL() [own no own];
            sigsuspend(mask: *const sigset_t) -> c_int = RT_SIGSUSPEND(mask) [own no own];
            sigpause(sig: c_int) -> c_int = RT_SIGSUSPEND(sig) [no no own];
            sigtimedwait(set: *const sigset_t, info: *mut siginfo_t, timeout: *const timespec) -> c_int = RT_SIGTIMEDWAIT(set, info, timeout) [own own own];
            sigwaitinfo(set: *const sigset_t, info: *mut siginfo_t) -> c_int = RT_SIGTIMEDWAIT(set, info) [no own own];
            sigwait(set: *const sigset_t, sig: *mut c_int) -> c_int = RT_SIGTIMEDWAIT(set) [no own own];
            pthread_sigmask(how: c_int, set: *const sigset_t, old: *mut sigset_t) -> c_int = NONE() [no own own];
            sigprocmask(how: c_int, set: *const sigset_t, old: *mut sigset_t) -> c_int = NONE() [no own own];
            wait(status: *mut c_int) -> pid_t = WAIT4(-1, status, 0, 0) [no point point];
            waitpid(pid: pid_t, status: *mut c_int, options: c_int) -> pid_t = WAIT4(pid, status, options, 0) [point point point];
            wait3(status: *mut c_int, options: c_int, usage: *mut rusage) -> pid_t = WAIT4(-1, status, options, usage) [no point point];
            wait4(pid: pid_t, status: *mut c_int, options: c_int, usage: *mut rusage) -> pid_t = WAIT4(pid, status, options, usage) [no point point];
            waitid(idtype: idtype_t, id: id_t, info: *mut siginfo_t, options: c_int) -> c_int = WAITID(idtype, id, info, options, 0) [point point point];
            fork() -> pid_t = NONE() [no own no];
            sigaction(sig: c_int, act: *const sigaction, old: *mut sigaction) -> c_int = NONE() [no own own];
            signal(sig: c_int, handler: sighandler_t) -> sighandler_t = NONE() [no own own];
            bsd_signal(sig: c_int, handler: sighandler_t) -> sighandler_t = NONE() [no own own];
            sysv_signal(sig: c_int, handler: sighandler_t) -> sighandler_t = NONE() [no own own];
            __sysv_signal(sig: c_int, handler: sighandler_t) -> sighandler_t = NONE() [no own no];
            __libc_current_sigrtmin() -> c_int = NONE() [no own no];
            posix_spawn(pid: *mut pid_t, path: *const c_char, actions: *const posix_spawn_file_actions_t, attr: *const posix_spawnattr_t, argv: *const *mut c_char, envp: *const *mut c_char) -> c_int = NONE() [no own no];
            posix_spawnp(pid: *mut pid_t, file: *const c_char, actions: *const posix_spawn_file_actions_t, attr: *const posix_spawnattr_t, argv: *const *mut c_char, envp: *const *mut c_char) -> c_int = NONE() [no own no];
            msgrcv(qid: c_int, msg: *mut c_void, size: size_t, typ: c_long, flags: c_int) -> ssize_t = MSGRCV(qid, msg, size, typ, flags) [point no point];
            msgsnd(qid: c_int, msg: *const c_void, size: size_t, flags: c_int) -> c_int = MSGSND(qid, msg, size, flags) [point no point];
            mq_timedreceive(mq: mqd_t, msg: *mut c_char, len: size_t, prio: *mut c_uint, timeout: *const timespec) -> ssize_t = MQ_TIMEDRECEIVE(mq, msg, len, prio, timeout) [linux no own];
            mq_receive(mq: mqd_t, msg: *mut c_char, len: size_t, prio: *mut c_uint) -> ssize_t = MQ_TIMEDRECEIVE(mq, msg, len, prio, 0) [no no own];
            mq_timedsend(mq: mqd_t, msg: *const c_char, len: size_t, prio: c_uint, timeout: *const timespec) -> c_int = MQ_TIMEDSEND(mq, msg, len, prio, timeout) [linux no own];
            mq_send(mq: mqd_t, msg: *const c_char, len: size_t, prio: c_uint) -> c_int = MQ_TIMEDSEND(mq, msg, len, prio, 0) [no no own];
        }
        chk {
            // The checked form -> result = the row it checks (its arguments), failing if {..};
            __read_chk(fd: c_int, buf: *mut c_void, n: size_t, buflen: size_t) -> ssize_t = read(fd, buf, n) if { n > buflen };
            __pread_chk(fd: c_int, buf: *mut c_void, n: size_t, off: off_t, buflen: size_t) -> ssize_t = pread(fd, buf, n, off) if { n > buflen };
            __pread64_chk(fd: c_int, buf: *mut c_void, n: size_t, off: off64_t, buflen: size_t) -> ssize_t = pread(fd, buf, n, off) if { n > buflen };
            __recv_chk(fd: c_int, buf: *mut c_void, n: size_t, buflen: size_t, flags: c_int) -> ssize_t = recv(fd, buf, n, flags) if { n > buflen };
            __recvfrom_chk(fd: c_int, buf: *mut c_void, n: size_t, buflen: size_t, flags: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> ssize_t = recvfrom(fd, buf, n, flags, addr, len) if { n > buflen };
            __poll_chk(fds: *mut pollfd, n: nfds_t, timeout: c_int, fdslen: size_t) -> c_int = poll(fds, n, timeout) if { (fdslen / ::core::mem::size_of::<pollfd>()) < n as usize };
            __ppoll_chk(fds: *mut pollfd, n: nfds_t, timeout: *const timespec, mask: *const sigset_t, fdslen: size_t) -> c_int = ppoll(fds, n, timeout, mask) if { (fdslen / ::core::mem::size_of::<pollfd>()) < n as usize };
        }
        unreached {
            // What a program meets that interposition does not reach, beside the rows whose
            // `interpose` column is `no` or `never`.
            ioctl, sendfile, copy_file_range, system, popen, pclose, wordexp, getaddrinfo,
            gethostbyname, getnameinfo, fopen, fread, fgets, getline, fwrite, fflush, fclose,
            syslog, __open_2, __open64_2, __openat_2, __openat64_2, __xpg_sigpause, sem_wait,
            sem_timedwait, sem_clockwait, pthread_join, vfork, clone, syscall, io_uring_enter,
            futex, sigset, sigvec, rt_sigaction,
        }
        c_library {
            // Defined by the C ABI's library only, for the code of the process built without
            // its header: a condition wait of another library is a point for a C thread's own
            // cancellation (never a scope's: its callers handle no error;
            // `thread-cancel-ffi/src/waits/interposed.rs`; not reached in Rust, listed as not
            // reached in its docs).
            pthread_cond_wait, pthread_cond_timedwait, pthread_cond_clockwait,
            // Not points: the cancellation calls of that code go to the thread's owner (the
            // library for a thread with a control block, else the C library;
            // `thread-cancel-ffi/src/plain.rs`).
            pthread_cancel, pthread_setcancelstate, pthread_setcanceltype, pthread_testcancel,
            pthread_exit, __pthread_register_cancel, __pthread_unregister_cancel,
            __pthread_register_cancel_defer, __pthread_unregister_cancel_restore, __pthread_unwind_next,
            // Not points: the threads that code created, the C library's, with the library's
            // block linked first, so that the library's points stop their calls only before an
            // effect (`thread-cancel-ffi/src/threads/system_owned.rs`).
            pthread_create, thrd_create,
            // Not points: the signal calls of that code refuse the cancel signal, the C
            // library's own there, as glibc's refuse glibc's (`thread-cancel-ffi/src/syscalls/signal.rs`).
            sigaddset, sigdelset, sigfillset, pthread_kill, pthread_sigqueue, raise, sigset,
            sighold, sigrelse, sigignore, siginterrupt,
        }
        }
    };
    // Hands each row to the face, one invocation per row: `row` (with its three columns),
    // `chk`, `unreached`. A face's macro has an arm for the rows it makes and one that takes
    // any other row to nothing.
    (@all $face:ident $($rows:tt)*) => { $face! { $($rows)* } };
    (@each $face:ident
        points { $( $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty
            = $nr:ident ( $($reg:expr),* ) [$rs:ident $ip:ident $tc:ident] ; )* }
        chk { $( $cname:ident ( $($carg:ident : $ct:ty),* ) -> $cret:ty
            = $base:ident ( $($barg:expr),* ) if $cond:block ; )* }
        unreached { $($un:ident),* $(,)? }
        c_library { $($cl:ident),* $(,)? }
    ) => {
        $( $face! { row [$rs $ip $tc] $name ( $($arg : $t),* ) -> $ret = $nr ( $($reg),* ) } )*
        $( $face! { chk $cname ( $($carg : $ct),* ) -> $cret = $base ( $($barg),* ) if $cond } )*
        $( $face! { unreached $un } )*
        $( $face! { c_library $cl } )*
    };
}
pub(crate) use __thread_cancel_points as table;

/// The C types the table's signatures name, for a face to import (`use ...::ctypes::*`).
#[doc(hidden)]
pub mod ctypes {
    #[cfg(target_os = "linux")]
    pub use libc::mqd_t;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub use libc::{
        epoll_event, loff_t, mmsghdr, off64_t, posix_spawn_file_actions_t, posix_spawnattr_t,
        useconds_t, TCSBRK,
    };
    /// Bionic has no POSIX message queues (the kernel's calls take an `int`): the rows of
    /// `mq_*` still type-check there, and nothing calls them.
    #[cfg(target_os = "android")]
    #[allow(non_camel_case_types)] // the C name
    pub type mqd_t = libc::c_int;
    pub use libc::{
        c_char, c_int, c_long, c_uint, c_void, clockid_t, fd_set, id_t, idtype_t, iovec, mode_t,
        msghdr, nfds_t, off_t, pid_t, pollfd, rusage, sigaction, sighandler_t, siginfo_t, sigset_t,
        size_t, sockaddr, socklen_t, ssize_t, timespec, timeval, AT_FDCWD, O_CREAT, O_TRUNC,
        O_WRONLY,
    };
}

/// One row of the table, as data.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The C library's name.
    pub name: &'static str,
    /// The `rust` column (`"point"`, `"linux"`, `"own"`, `"never"`, `"no"`; `"-"` for an
    /// `unreached` row).
    pub rust: &'static str,
    /// The `interpose` column (also `"write"`, `"shim"`, and `"chk"` for the checked forms).
    pub interpose: &'static str,
    /// The `tc` column.
    pub tc: &'static str,
}

impl Row {
    /// Whether the crate defines this C library symbol with feature `interpose`.
    pub fn interposed(&self) -> bool {
        !matches!(self.interpose, "no" | "never" | "clib")
    }

    /// Whether only the C ABI's library defines this C library symbol (a `c_library` row).
    pub fn c_library_only(&self) -> bool {
        self.interpose == "clib"
    }
}

macro_rules! rows_as_data {
    (
        points { $( $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty
            = $nr:ident ( $($reg:expr),* ) [$rs:ident $ip:ident $tc:ident] ; )* }
        chk { $( $cname:ident ( $($carg:ident : $ct:ty),* ) -> $cret:ty
            = $base:ident ( $($barg:expr),* ) if $cond:block ; )* }
        unreached { $($un:ident),* $(,)? }
        c_library { $($cl:ident),* $(,)? }
    ) => {
        /// Every row of the table, as data: the points, then the checked forms, then what is
        /// not reached, then what only the C ABI's library defines.
        #[doc(hidden)]
        pub const ROWS: &[Row] = &[
            $( Row {
                name: stringify!($name),
                rust: stringify!($rs),
                interpose: stringify!($ip),
                tc: stringify!($tc),
            }, )*
            $( Row { name: stringify!($cname), rust: "no", interpose: "chk", tc: "chk" }, )*
            // (What the other faces do with these is not the table's: `-`.)
            $( Row { name: stringify!($un), rust: "-", interpose: "no", tc: "-" }, )*
            $( Row { name: stringify!($cl), rust: "-", interpose: "clib", tc: "-" }, )*
        ];
    };
}
__thread_cancel_points!(@all rows_as_data);
