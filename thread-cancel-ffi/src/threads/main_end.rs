//! The end of a thread not created here: the main thread (POSIX's `pthread_exit` in `main`, or
//! a cancellation it acted on), or a thread the C library created.
//!
//! Main runs its cleanup handlers and thread-specific-data destructors, then runs nothing more
//! (its system thread sleeps, see [`end_main_thread`]); once no other thread is left (those
//! created without the header too) the last thread created here to end, or main's sleeping
//! thread, calls `exit(0)`. A thread that calls `exit()` is never counted out, and `exit(0)`
//! waits until no other thread of the program runs, so nothing races its status. Main can be
//! joined: the join waits until it has ended and reports its value.

use super::ids::{process, registry, MY_ID};
use super::CANCELED;
use crate::SendPtr;
use std::ffi::c_void;
use std::sync::Mutex;
use thread_cancel::c_abi;

/// The main thread's exit value once it has ended (`PTHREAD_CANCELED` if it was canceled).
pub(super) static MAIN_VALUE: Mutex<Option<SendPtr>> = Mutex::new(None);

pub(super) fn is_main_thread() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::getpid() == libc::gettid() }
}

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
    // SAFETY: a thread the C library created, whose stack above is C frames (unwound) and this
    // library's frames, which hold nothing to drop here (the forced unwind passes them).
    unsafe { libc::pthread_exit(value) }
}

/// Ends the main thread, its cleanup handlers run, as glibc's `pthread_exit` in `main` (also
/// for a cancellation main acted on, `value` then `PTHREAD_CANCELED`): its joiner will get
/// `value`; its thread-specific-data destructors run (R07: before anything waits, so a
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

/// Whether main's `pthread_exit` also waits for the threads created without the header (read
/// from `/proc/self/task`). Off: under qemu-user the emulator's own threads (some started
/// after `main`, one again in a forked child) are in `/proc/self/task` and never end, so
/// programs hung there at main's end; only the threads made here are waited for until a way
/// to tell the emulator's threads apart is found.
const WAIT_FOR_THREADS_MADE_ELSEWHERE: bool = false;

/// The prefix of the names of the library's own helper threads (the deadline timer, ...),
/// which never keep the process alive.
const HELPER_NAME: &[u8] = b"thread-cancel-";

/// The threads the process had before `main` besides the main thread (recorded by the
/// constructor `thread_cancel.h` gives every program, `tc_signal_init`): not the program's —
/// under a user-mode emulator (qemu-user) its own threads are in `/proc/self/task` from the
/// start and never end; natively there are none.
static BEFORE_MAIN: std::sync::OnceLock<Vec<libc::pid_t>> = std::sync::OnceLock::new();

/// Records the threads of the process other than the caller, once, before `main`.
pub(crate) fn note_threads_before_main() {
    BEFORE_MAIN.get_or_init(|| {
        // SAFETY: a system call without arguments.
        let me = unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t;
        task_ids().into_iter().filter(|&t| t != me).collect()
    });
}

/// The thread ids in `/proc/self/task` (none without `/proc`).
fn task_ids() -> Vec<libc::pid_t> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect()
}

/// Whether no thread of the process is left other than main, `me` (the caller), the threads
/// that were there before `main` ([`BEFORE_MAIN`]) and the library's own helper threads: the
/// threads of `/proc/self/task` by name. Without `/proc`, true (only the threads created here
/// are then waited for).
pub(super) fn only_the_library_threads_left(me: Option<libc::pid_t>) -> bool {
    if !WAIT_FOR_THREADS_MADE_ELSEWHERE {
        return true;
    }
    // SAFETY: no preconditions.
    let main = unsafe { libc::getpid() };
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return true;
    };
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if tid == main || Some(tid) == me || BEFORE_MAIN.get().is_some_and(|b| b.contains(&tid)) {
            continue;
        }
        // A thread that has gone since the listing has no name to read: it is not left.
        if let Ok(name) = std::fs::read(task.path().join("comm")) {
            if !name.starts_with(HELPER_NAME) {
                return false;
            }
        }
    }
    true
}
