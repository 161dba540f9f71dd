//! The C ABI of thread-cancel: `libthread_cancel.so` / `libthread_cancel.a`, declared by
//! `include/thread_cancel.h` of this crate (and `include/thread_cancel/pthread_compat.h`, which
//! maps the POSIX names onto it); `examples/c/` holds a C program built against it.
//!
//! Layout, each module using only those listed before it:
//! - `oom.rs`: the allocator's reserve (out of memory is an error on the C paths);
//! - `cleanup.rs`: the cleanup-handler stack (`tc_cleanup_push` / `tc_cleanup_pop`);
//! - `threads/`: the threads, one file per job: `ids.rs` (the id registry, `tc_self`,
//!   `tc_equal`), `create.rs` (`tc_create` and the end of a created thread), `join.rs` (join,
//!   glibc's try/timed/clock joins, detach), `cancel.rs` (`tc_cancel`), `native.rs` (glibc's
//!   other calls on a `pthread_t`), `exit.rs` (`tc_exit`, acting on a cancellation),
//!   `main_end.rs` (the end of main and of other threads not created here);
//! - `cancelability.rs`: `tc_setcancelstate`, `tc_setcanceltype`, `tc_testcancel`;
//! - `syscalls/`: the C library's system-call cancellation points, one file per family;
//! - `waits/`: condition variables and semaphores of the system's C library, one file per C
//!   library for what reads its layout;
//! - `stdio.rs` (with `stdio.c`, built by `build.rs`): stdio as cancellation points;
//! - `system.rs`: `system` (not on Android); `once.rs`: `pthread_once`, restartable when its
//!   init routine is canceled; `tsd.rs`: thread-specific-data keys;
//! - `cancel_scope.rs`: `tc_scope_*`, handles on `CancelScope` (cancel an operation, not the
//!   thread).
//!
//! Acting on a cancellation in C is a forced unwind of the C and C++ frames (C++ destructors
//! run, the cleanup handlers as their frames are passed) up to the thread's *C region*
//! (`thread_cancel::c_abi::c_unwind`), whose boundary lies inside the thread's Rust root; from
//! there an ordinary Rust unwind (Rust frames only) reaches the root, which runs the
//! thread-specific-data destructors.
//!
//! So every exported function that can act (each cancellation point, `tc_testcancel`,
//! `tc_exit`, the joins and waits, `tc_once`, `tc_cleanup_pop_buffer`, whose handler may exit,
//! `tc_scope_run`, `tc_cancel` of the caller itself) is `extern "C-unwind"`, and so are the
//! C functions it calls that can act (the stdio of `stdio.c`, the start and init routines, the
//! cleanup handlers): the forced unwind starts inside the library and passes these frames,
//! and an unwind must never cross a plain `extern "C"` Rust frame. When one of them was
//! `extern "C"` and called another (`tc_usleep` → `tc_nanosleep` → `tc_clock_nanosleep`,
//! `tc_poll` → `tc_ppoll`, stdio → `tc_poll`), Rust took the inner call for one that cannot
//! unwind and gave it no entry in the outer frame's exception table; the Rust personality
//! stopped the unwind there with an error, and the fallback abandoned the C++ frames above
//! without their destructors. The calls that cannot act (`tc_self`, the key and scope handle
//! calls, `tc_pthread_sigmask`, ...) stay `extern "C"`: a panic there aborts at the boundary.

#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(any(
    not(any(target_os = "linux", target_os = "android")),
    thread_cancel_portable
))]
compile_error!(
    "thread-cancel-ffi (the C ABI) supports Linux and Android only: it needs thread-cancel's \
     Linux platform layer (asynchronous regions, the forced unwind of C frames, the cancel \
     signal), which other targets and `--cfg thread_cancel_portable` do not have"
);

mod cancel_scope;
mod cancelability;
mod cleanup;
mod once;
mod oom;
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod plain;
mod stdio;
mod syscalls;
#[cfg(not(target_os = "android"))]
mod system;
mod threads;
mod tsd;
mod waits;

/// A raw pointer that crosses threads (the C caller vouches for what it points to).
#[derive(Clone, Copy, Debug)]
struct SendPtr(*mut libc::c_void);

// SAFETY: the pointer is only handed back to C code, which owns the synchronisation of what
// it points to, as with pthread_create's argument and return value.
unsafe impl Send for SendPtr {}
// SAFETY: as above; the wrapper itself is only read.
unsafe impl Sync for SendPtr {}

/// Locks `m`, also when a thread panicked while it held it: every lock of the C ABI is taken
/// this way (a C caller has no use for a poisoned lock, and a panic never crosses into C).
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

use thread_cancel::c_abi::conv::set_errno;

/// The C library's cancel signal, chosen (and its handler installed) if it was not yet: the
/// system's first real-time signal (glibc's, musl's or bionic's `SIGRTMIN`), and programs built
/// through the compatibility header see the range after it: `SIGRTMIN` is
/// `tc_current_sigrtmin()`, one more. So every signal from the program's `SIGRTMIN` to
/// `SIGRTMAX` is the program's, as glibc keeps its own signals below the `SIGRTMIN` it reports.
/// Chosen once per process: by the constructor that `thread_cancel.h` gives every translation
/// unit that includes it (`tc_signal_init`), before the program's own constructors, and by
/// every call that needs it (the signal calls that refuse it, `tc_kill`). If the crate had
/// already started with another signal (a Rust thread of the process, or an explicit
/// `io::set_signal`), or if another library holds that signal, the crate's choice stands and
/// the program's range is the system's (see `tc_current_sigrtmin`).
fn cancel_signal() -> libc::c_int {
    static CHOSEN: std::sync::Once = std::sync::Once::new();
    CHOSEN.call_once(|| {
        // An error leaves the crate's own choice (see above).
        // The system's first real-time signal; on glibc, another of the first eight if the
        // environment chose it (`THREAD_CANCEL_SIGNAL`, read at load: the crate's default).
        #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
        let sig = thread_cancel::c_abi::default_cancel_signal();
        #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
        let sig = thread_cancel::c_abi::system_sigrtmin();
        if thread_cancel::io::set_signal(sig)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::ResourceBusy)
        {
            // Another copy of the library in the process (a plugin that links
            // `libthread_cancel.a`) has that signal: this copy takes the one seven above it, as
            // a Rust program without `interpose` would.
            let _ = thread_cancel::io::set_signal(thread_cancel::c_abi::system_sigrtmin() + 7);
        }
    });
    thread_cancel::c_abi::cancel_signal()
}
