//! `tc_once` (`pthread_once`): the init routine runs once; if it is canceled or calls `tc_exit`,
//! it is as if `tc_once` had never been called, and the next call runs an init routine again.
//!
//! The once-control is the caller's `pthread_once_t` (an `int`), with glibc's encoding:
//! 0 (`PTHREAD_ONCE_INIT`) not run; `fork generation | IN_PROGRESS` while an init routine runs;
//! `DONE` once one has returned. The thread that moves it from "not run" to "in progress" runs
//! the init routine with a C cleanup handler pushed (the thread's cleanup list, as
//! `tc_cleanup_push`), which resets it to "not run" and wakes the waiters when the thread acts
//! on a cancellation or exits inside the routine. Other callers wait on it with a plain futex
//! wait: as in glibc, `pthread_once` is not a cancellation point (only the init routine may
//! hold points).
//!
//! Fork: the child has only the forking thread, so an init routine another thread was running
//! never ends there. The child's fork generation differs (a `pthread_atfork` child handler,
//! registered by the first call that finds the control not done), so the child sees the old
//! "in progress" as abandoned and runs the routine itself, as glibc does.
//!
//! With the asynchronous type, `tc_once`'s own code (claiming the control, pushing the handler,
//! publishing `DONE`) runs with the request held, so a request never lands between the claim
//! and the handler (which would leave the control "in progress" forever). One instant remains,
//! as in glibc, where `pthread_once` is not async-cancel-safe either: a request landing between
//! the routine's return and the hold resets the control, and the routine runs again.
//!
//! An exception (C++'s `throw`) that leaves the init routine passes through `tc_once` to its
//! caller (every frame here is `C-unwind`), as with glibc: a guard in `tc_once`'s frame pops the
//! handler with "execute" on the way out, so the control is reset and the waiters woken, and
//! the next call runs an init routine again. (A forced unwind, a cancellation, may already have
//! run the handler from the cleanup list: the pop then finds it gone and does nothing.)
//!
//! A call on a once-control whose init routine the calling thread is itself running (directly
//! or further up) would wait forever (glibc hangs): it returns `EDEADLK`. The init routines a
//! thread is running are linked through its `tc_once` frames (`RUNNING`).

use crate::cleanup::{tc_cleanup_pop_buffer, tc_cleanup_push_buffer, CleanupBuffer};
use crate::threads;
use std::cell::Cell;
use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use thread_cancel::c_abi;

const IN_PROGRESS: i32 = 1;
const DONE: i32 = 2;
/// The fork generation lives in the bits above `IN_PROGRESS` and `DONE`.
const FORK_GENERATION_STEP: i32 = 4;

static FORK_GENERATION: AtomicI32 = AtomicI32::new(0);
static AT_FORK_REGISTERED: AtomicBool = AtomicBool::new(false);

/// The `pthread_atfork` child handler (the child is single-threaded; wraps after 2^30 forks).
extern "C" fn next_fork_generation() {
    FORK_GENERATION.fetch_add(FORK_GENERATION_STEP, Ordering::Relaxed);
}

/// An init routine the calling thread is running: in the frame of its `tc_once`.
struct Running {
    control: *const AtomicI32,
    prev: *const Running,
}

thread_local! {
    /// The innermost init routine the thread is running (a list through the `tc_once` frames).
    static RUNNING: Cell<*const Running> = const { Cell::new(std::ptr::null()) };
}

/// Whether the calling thread is running the init routine of `control`.
fn running(control: &AtomicI32) -> bool {
    let mut r = RUNNING.get();
    while !r.is_null() {
        // SAFETY: every node is in the frame of a `tc_once` of this thread that has not
        // returned (it unlinks its node before returning, or `reset` does when it acts).
        let node = unsafe { &*r };
        if std::ptr::eq(node.control, control) {
            return true;
        }
        r = node.prev;
    }
    false
}

fn futex(control: &AtomicI32, op: i32, val: i32) {
    // SAFETY: a futex operation on a live, aligned 4-byte word; no timeout (null).
    unsafe {
        libc::syscall(
            thread_cancel::c_abi::calls::FUTEX,
            control.as_ptr(),
            op | libc::FUTEX_PRIVATE_FLAG,
            val,
            std::ptr::null::<libc::timespec>(),
        )
    };
}

/// The cleanup handler of a running init routine: the thread acts on a cancellation or exits
/// inside it. The once-control goes back to "not run"; the waiters wake and one of them runs
/// an init routine.
///
/// # Safety
/// `arg` is the `Running` node of the `tc_once` frame that pushed this handler.
unsafe extern "C-unwind" fn reset(arg: *mut c_void) {
    // SAFETY: the node is in the frame of the `tc_once` that pushed this handler, which is still
    // on the stack (handlers run below the frames they were pushed in).
    let node = unsafe { &*arg.cast::<Running>() };
    RUNNING.set(node.prev);
    // SAFETY: the once-control outlives the `tc_once` call (the caller's contract).
    let control = unsafe { &*node.control };
    control.store(0, Ordering::Release);
    futex(control, libc::FUTEX_WAKE, i32::MAX);
}

/// Resets the once-control if its init routine is left by an unwind (a C++ exception, or a
/// forced unwind that has not yet run the handler): pops the cleanup handler pushed for the
/// claim with "execute", which runs `reset` unless it already ran. Forgotten when the init
/// routine returns.
struct ResetOnUnwind(*mut CleanupBuffer);

impl Drop for ResetOnUnwind {
    fn drop(&mut self) {
        // SAFETY: the buffer pushed for the claim, in the frame of `slow` (which this guard
        // lives in). `tc_cleanup_pop_buffer` ignores it if its handler has already run and
        // unlinked it, and drops deeper entries an exception left without reading them.
        unsafe { tc_cleanup_pop_buffer(self.0, 1) };
    }
}

/// An asynchronous thread's cancellation is held while `tc_once`'s own code runs (claiming the
/// control, pushing the handler, publishing `DONE`), so a request never lands between the claim
/// and the handler; only the init routine runs with the caller's state. Returns the state to
/// restore, if held.
fn hold() -> Option<bool> {
    c_abi::is_async().then(|| c_abi::set_disabled(true))
}

/// Restores what `hold` changed, acting at once on a pending request (as enabling does for an
/// asynchronous thread).
fn unhold(held: Option<bool>) {
    if let Some(was_disabled) = held {
        c_abi::set_disabled(was_disabled);
        if !was_disabled {
            threads::point();
        }
    }
}

/// `pthread_once`: runs `init` if no call with `control` has completed one; returns 0 once one
/// has. `EINVAL` for a null or misaligned `control` or a null `init`; `EDEADLK` if the calling
/// thread is running `control`'s init routine itself.
///
/// # Safety
/// `control` must be null or a `pthread_once_t` that lives until every call with it has
/// returned, initialised with `PTHREAD_ONCE_INIT` and accessed only through `tc_once`; `init`
/// a C function.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_once(
    control: *mut i32,
    init: Option<unsafe extern "C-unwind" fn()>,
) -> i32 {
    let Some(init) = init else {
        return libc::EINVAL;
    };
    if control.is_null() || !control.is_aligned() {
        return libc::EINVAL;
    }
    // SAFETY: non-null and aligned; the caller's once-control, alive for the call and accessed
    // only atomically (only through `tc_once`).
    let control = unsafe { AtomicI32::from_ptr(control) };
    if control.load(Ordering::Acquire) & DONE != 0 {
        return 0;
    }
    // SAFETY: forwarded from the caller.
    unsafe { slow(control, init) }
}

/// The path of a once-control not yet done.
///
/// # Safety
/// As `tc_once`.
#[cold]
unsafe fn slow(control: &AtomicI32, init: unsafe extern "C-unwind" fn()) -> i32 {
    if !AT_FORK_REGISTERED.swap(true, Ordering::Relaxed) {
        // SAFETY: registers a handler that only does an atomic add. If it fails (ENOMEM), or a
        // fork lands between another first caller's swap and its registration, a child forked
        // during an init routine waits for it, as it would have without the handler.
        unsafe { libc::pthread_atfork(None, None, Some(next_fork_generation)) };
    }
    let mut held = hold();
    let claimed = loop {
        let val = control.load(Ordering::Acquire);
        if val & DONE != 0 {
            break false;
        }
        let mine = FORK_GENERATION.load(Ordering::Relaxed) | IN_PROGRESS;
        if val & IN_PROGRESS != 0 {
            if running(control) {
                unhold(held);
                return libc::EDEADLK;
            }
            if val == mine {
                // Another thread runs the init routine: wait for `DONE` or a reset. Not a
                // cancellation point; `EINTR` and a changed word just loop. (An asynchronous
                // thread may act while it waits: it has claimed nothing.)
                unhold(held);
                futex(control, libc::FUTEX_WAIT, val);
                held = hold();
                continue;
            }
            // An init routine of another fork generation: its thread is not in this process.
        }
        if control
            .compare_exchange_weak(val, mine, Ordering::Acquire, Ordering::Acquire)
            .is_ok()
        {
            break true;
        }
    };
    if claimed {
        let node = Running {
            control,
            prev: RUNNING.get(),
        };
        let mut buffer = MaybeUninit::<CleanupBuffer>::uninit();
        let arg = (&node as *const Running).cast_mut().cast::<c_void>();
        // SAFETY: the buffer and the node stay in this frame until the matching pop (or until
        // the thread acts, running `reset` first, below this frame).
        unsafe { tc_cleanup_push_buffer(buffer.as_mut_ptr(), Some(reset), arg) };
        RUNNING.set(&node);
        unhold(held);
        // An exception out of `init` passes on to the caller with the control reset.
        let on_unwind = ResetOnUnwind(buffer.as_mut_ptr());
        // SAFETY: the caller's init routine, called once for this claim. If the thread acts or
        // exits inside it, this frame may be abandoned: the cleanup handler resets the control.
        unsafe { init() };
        std::mem::forget(on_unwind);
        let held = hold();
        // SAFETY: the buffer pushed above, now the top of the list (the routine returned).
        unsafe { tc_cleanup_pop_buffer(buffer.as_mut_ptr(), 0) };
        RUNNING.set(node.prev);
        control.store(DONE, Ordering::Release);
        futex(control, libc::FUTEX_WAKE, i32::MAX);
        unhold(held);
    } else {
        unhold(held);
    }
    0
}
