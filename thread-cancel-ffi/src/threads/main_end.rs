//! The end of a thread not created here: the main thread (POSIX's `pthread_exit` in `main`, or
//! a cancellation it acted on), or a thread the C library created.
//!
//! Main runs its cleanup handlers and thread-specific-data destructors, then runs nothing more
//! (its system thread sleeps, see [`end_main_thread`]); once no other thread is left (those
//! created without the header too) the last thread created here to end, or main's sleeping
//! thread, calls `exit(0)`. A thread that calls `exit()` is never counted out, and `exit(0)`
//! waits until no other thread of the program runs, so nothing races its status. Main can be
//! joined: the join waits until it has ended and reports its value.

use super::ids::{is_main_thread, process, registry, MY_ID};
use super::CANCELED;
use crate::SendPtr;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;
use thread_cancel::c_abi;

/// The main thread's exit value once it has ended (`PTHREAD_CANCELED` if it was canceled).
pub(super) static MAIN_VALUE: Mutex<Option<SendPtr>> = Mutex::new(None);

/// How a thread not created here ends once it has acted on a cancellation or `tc_exit` in C
/// code (its C and C++ frames unwound to the end of its stack, its cleanup handlers run), with
/// the exit value, or `PTHREAD_CANCELED`:
///
/// - the main thread: [`end_main_thread`];
/// - a thread the C library created (a `SIGEV_THREAD` timer's, say): the system's
///   `pthread_exit`, which unwinds what is left of its stack (frames already unwound, with
///   nothing left to run, and this library's plain frames) to the C library's thread start;
///   the thread's thread-local destructors then run its thread-specific-data destructors.
pub(crate) fn foreign_thread_ends() -> ! {
    let value = c_abi::take_exit_value::<SendPtr>().map_or(CANCELED, |v| v.0);
    if is_main_thread() {
        end_main_thread(value)
    }
    // The C library's own (on glibc the library defines `pthread_exit` for the code built
    // without the header, which would come back here).
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    super::next::system_exit(value);
    // SAFETY: a thread the C library created, whose stack above is C frames (unwound) and this
    // library's frames, which hold nothing to drop here (the forced unwind passes them).
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    unsafe {
        libc::pthread_exit(value)
    }
}

/// Ends the main thread, its cleanup handlers run, as glibc's `pthread_exit` in `main` (also
/// for a cancellation main acted on, `value` then `PTHREAD_CANCELED`): its joiner will get
/// `value`; its thread-specific-data destructors run (before anything waits, so a
/// destructor may release what another thread waits for), and it is marked finished (its
/// joiner wakes); then main runs nothing more, and the process lives on until the last thread
/// created here ends, which calls `exit(0)` (at once if none is left). Main never calls
/// `exit(0)` after waiting, which could race a thread's own `exit()`. Its id stays valid until
/// joined (a thread that has ended): cancel and kill return 0.
pub(crate) fn end_main_thread(value: *mut c_void) -> ! {
    *crate::lock(&MAIN_VALUE) = Some(SendPtr(value));
    c_abi::end_adopted_thread();
    if let Some(e) = registry().get(MY_ID.get()) {
        e.ended = true;
    }
    process().main_ended = true;
    // Main's system thread stays, asleep with every signal blocked (a signal sent to the
    // process goes to a thread that runs), until the process ends: glibc ends it instead
    // (`__exit_thread`), but a thread that has gone can no longer be examined by
    // LeakSanitizer, whose check at the process's exit (in every program built with
    // `-fsanitize=address`) would report what main's thread-local storage refers to (the
    // library's thread-local destructors, registered with the C library) as leaked.
    // SAFETY: a signal set of our own, filled before use.
    unsafe {
        let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_SETMASK, all.as_ptr(), std::ptr::null_mut());
    }
    // It calls `exit(0)` once no other thread is left: none created here (the last of them
    // to end usually calls it first, `create::count_out`), and none created otherwise (by a
    // library compiled without the header, libstdc++), whose end nothing tells us of: it looks
    // every 10 ms while one is left. No lock is held while it sleeps.
    loop {
        let p = process();
        if p.live == 0 && only_the_library_threads_left(None) {
            drop(p);
            // SAFETY: ends the process: no thread of the program is left.
            unsafe { libc::exit(0) }
        }
        drop(p);
        let ten_ms = libc::timespec {
            tv_sec: 0,
            tv_nsec: 10_000_000,
        };
        // SAFETY: a valid relative time; the system call itself (no C library point, and
        // nothing interposed).
        unsafe {
            libc::syscall(
                libc::SYS_clock_nanosleep,
                libc::CLOCK_MONOTONIC,
                0,
                &ten_ms,
                std::ptr::null_mut::<libc::timespec>(),
            )
        };
    }
}

/// The prefix of the names of the library's own helper threads (the deadline timer, ...),
/// which never keep the process alive.
const HELPER_NAME: &[u8] = b"thread-cancel-";

/// How many threads that are not the program's [`NOT_THE_PROGRAMS`] holds at most.
const NOT_THE_PROGRAMS_MAX: usize = 16;

/// The threads that are not the program's: those the process had besides the caller before
/// `main` (recorded by the constructor `thread_cancel.h` gives every program,
/// `tc_signal_init`), recorded again in every forked child right after the fork (a pthread_atfork
/// child handler), where the forking thread is the program's only one. Natively there are none;
/// under a user-mode emulator (qemu-user) they are its own threads, in `/proc/self/task` from
/// the start and never ending — and started again in a forked child (its RCU thread, by its
/// own fork handler, before the guest's fork returns). Atomics, no lock: written before `main`
/// and in a forked child's only thread, read at main's end.
static NOT_THE_PROGRAMS: [AtomicI32; NOT_THE_PROGRAMS_MAX] =
    [const { AtomicI32::new(0) }; NOT_THE_PROGRAMS_MAX];

/// Records the threads of the process other than the caller (see [`NOT_THE_PROGRAMS`]), before
/// `main`; registers the fork child handler that records them again in each forked child.
pub(crate) fn note_threads_before_main() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        note_threads_not_the_programs();
        // SAFETY: the handler only lists `/proc/self/task` with system calls (no allocation, no
        // lock), in the child's only thread. If registration fails (ENOMEM) a forked child
        // keeps the parent's record: natively empty, as it should be.
        unsafe { libc::pthread_atfork(None, None, Some(note_threads_not_the_programs_c)) };
    });
}

extern "C" fn note_threads_not_the_programs_c() {
    note_threads_not_the_programs();
}

fn note_threads_not_the_programs() {
    // SAFETY: a system call without arguments.
    let me = unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t;
    let mut n = 0;
    for_each_task(|tid| {
        if tid != me && n < NOT_THE_PROGRAMS_MAX {
            NOT_THE_PROGRAMS[n].store(tid, Ordering::Relaxed);
            n += 1;
        }
    });
    for slot in &NOT_THE_PROGRAMS[n..] {
        slot.store(0, Ordering::Relaxed);
    }
}

fn is_not_the_programs(tid: libc::pid_t) -> bool {
    NOT_THE_PROGRAMS
        .iter()
        .any(|t| t.load(Ordering::Relaxed) == tid)
}

/// Calls `f` with each thread id in `/proc/self/task` (none without `/proc`), with system calls
/// only: no allocation, no lock (it runs in a fork child handler, see
/// [`note_threads_before_main`]).
fn for_each_task(mut f: impl FnMut(libc::pid_t)) {
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe {
        libc::open(
            c"/proc/self/task".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return;
    }
    let mut buf = [0u64; 256]; // 2 KiB, 8-byte aligned as `linux_dirent64` records are
    loop {
        // SAFETY: `buf` is writable for its whole length.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                fd,
                buf.as_mut_ptr(),
                std::mem::size_of_val(&buf),
            )
        };
        if n <= 0 {
            break;
        }
        // SAFETY: the kernel wrote `n` bytes of records into `buf`.
        let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize) };
        let mut at = 0;
        // A `linux_dirent64`: inode (8 bytes), offset (8), record length (2), type (1), name
        // (NUL-terminated).
        while at + 19 <= bytes.len() {
            let len = usize::from(u16::from_ne_bytes([bytes[at + 16], bytes[at + 17]]));
            if len == 0 || at + len > bytes.len() {
                break;
            }
            let name = &bytes[at + 19..at + len];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if let Some(tid) = parse_tid(name) {
                f(tid);
            }
            at += len;
        }
    }
    // SAFETY: the descriptor opened above.
    unsafe { libc::close(fd) };
}

/// A decimal thread id (`.` and `..` are not).
fn parse_tid(name: &[u8]) -> Option<libc::pid_t> {
    if name.is_empty() || name.len() > 9 || !name.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        name.iter()
            .fold(0, |v, &d| v * 10 + libc::pid_t::from(d - b'0')),
    )
}

/// Whether no thread of the process is left other than main, `me` (the caller), the threads
/// that are not the program's ([`NOT_THE_PROGRAMS`]) and the library's own helper threads
/// (known by name): the threads of `/proc/self/task`. Without `/proc`, true (only the threads
/// created here are then waited for).
pub(super) fn only_the_library_threads_left(me: Option<libc::pid_t>) -> bool {
    // SAFETY: no preconditions.
    let main = unsafe { libc::getpid() };
    let mut left = false;
    // The library's own reads: not cancellation points of the calling thread.
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    let _own = thread_cancel::c_abi::LibraryCode::enter();
    for_each_task(|tid| {
        if left || tid == main || Some(tid) == me || is_not_the_programs(tid) {
            return;
        }
        // A thread that has gone since the listing has no name to read: it is not left.
        if let Ok(name) = std::fs::read(format!("/proc/self/task/{tid}/comm")) {
            left = !name.starts_with(HELPER_NAME);
        }
    });
    !left
}
