//! `tc_join` and glibc's try/timed/clock joins, and `tc_detach`: the two ends of an id's
//! lifetime that its owner chooses.

use super::exit;
use super::ids::{is_me, registry, MAIN_ID};
use super::main_end::MAIN_VALUE;
use super::CANCELED;
use crate::SendPtr;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use thread_cancel::c_abi;
use thread_cancel::{Canceler, Outcome};

/// A thread is joining the main thread (set under the registry lock).
static MAIN_JOINING: AtomicBool = AtomicBool::new(false);

/// Runs `f`, a Rust cancellation point, as a C point: in a thread that acts in C code (created
/// here, or a foreign C thread: `c_abi::in_c_region`) a cancellation is caught (Rust frames only)
/// and acted on the C way; elsewhere `f` runs with cancellation disabled (such threads never
/// act in C code).
pub(crate) fn rust_point<R>(f: impl FnOnce() -> R) -> R {
    if c_abi::in_c_region() {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => r,
            Err(payload) => {
                drop(payload);
                exit::act()
            }
        }
    } else {
        let was = c_abi::set_disabled(true);
        let r = f();
        c_abi::set_disabled(was);
        r
    }
}

/// Like [`rust_point`], but reports a cancellation (`None`) instead of acting, so that the
/// caller can first undo what must be undone.
fn rust_point_reporting<R>(f: impl FnOnce() -> R) -> Option<R> {
    if c_abi::in_c_region() {
        catch_unwind(AssertUnwindSafe(f)).ok()
    } else {
        Some(rust_point(f))
    }
}

/// How a join waits.
#[derive(Clone, Copy)]
enum Wait {
    /// Until the thread ends (`pthread_join`).
    Forever,
    /// Not at all: `EBUSY` if the thread has not ended (`pthread_tryjoin_np`).
    Try,
    /// Until the thread ends or the time is reached (`ETIMEDOUT`); `Err` is the error for a
    /// bad time, reported if the call has to wait.
    Until(Result<Option<Instant>, i32>),
}

/// The instant `abstime` (on `clock`) stands for: `Ok(None)` for a null time (no limit), a
/// time already past for a negative `tv_sec` (glibc: `ETIMEDOUT`), `Err(EINVAL)` for a
/// `tv_nsec` out of range.
///
/// # Safety
/// `abstime` must be null or valid for a read.
unsafe fn deadline(
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> Result<Option<Instant>, i32> {
    if abstime.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null, readable (the caller's contract).
    let t = unsafe { *abstime };
    if t.tv_sec < 0 {
        return Ok(Some(Instant::now()));
    }
    if !(0..1_000_000_000).contains(&t.tv_nsec) {
        return Err(libc::EINVAL);
    }
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock (checked by the callers) and a writable timespec.
    unsafe { libc::clock_gettime(clock, &mut now) };
    let at = |t: libc::timespec| Duration::new(t.tv_sec.max(0) as u64, t.tv_nsec as u32);
    let left = at(t).saturating_sub(at(now));
    Ok(Instant::now().checked_add(left))
}

/// Waits until the thread of `target` has finished, or until `deadline`: `Some(finished)`, or
/// `None` if the caller, canceled while it waited, must act. A caller that no one can cancel
/// (it has no control block) waits without being adopted, which would register a thread-local
/// destructor (a library destructor run by `dlclose` may join: that library is gone by the
/// time the destructor would run).
fn wait_for(target: &Canceler, deadline: Option<Instant>) -> Option<bool> {
    if c_abi::has_control() {
        rust_point_reporting(|| c_abi::wait_finished(target, deadline))
    } else {
        Some(c_abi::wait_finished_uncancelable(target, deadline))
    }
}

/// `pthread_join` and glibc's variants: the result, or `None` if the caller, canceled while it
/// waited, must act (the target stays joinable). `ESRCH` for an id that is not a live thread
/// of ours, `EINVAL` if it is detached (running or ended, as glibc) or already being joined,
/// or a thread not created here other than the main thread; `EDEADLK` for the caller itself (`EBUSY` for `Try`, as glibc:
/// the caller has not ended). The main thread's join waits until main has ended (its cleanup
/// handlers and thread-specific-data destructors run) and reports what it gave `tc_exit`, or
/// `PTHREAD_CANCELED`.
///
/// # Safety
/// `retval` must be null or valid for a write.
unsafe fn join(thread: u64, retval: *mut *mut c_void, wait: Wait) -> Option<i32> {
    let trying = matches!(wait, Wait::Try);
    if is_me(thread) {
        return Some(if trying { libc::EBUSY } else { libc::EDEADLK });
    }
    // The registry's id, the target, its handle (`None` for the main thread, marked as being
    // joined instead) and its stack of the library's, if any.
    let (id, main, target, h, stack) = {
        let mut reg = registry();
        let id = reg.resolve(thread).unwrap_or(0);
        let main = id != 0 && id == MAIN_ID.load(Ordering::Relaxed);
        let Some(e) = reg.get(id) else {
            // A detached thread that has ended: ended (not `EBUSY`), then detached.
            return Some(if reg.ended_detached(thread) {
                libc::EINVAL
            } else {
                libc::ESRCH
            });
        };
        let Some(target) = e.canceler.clone() else {
            return Some(libc::ESRCH); // not reached: filled under the registry lock
        };
        if e.left_in_parent && !e.detached {
            // In a forked child, a thread of the parent: ended, as glibc's descriptor of it
            // says (`tid` 0): 0 at once, a null value, and the id ends.
            reg.release(id);
            if !retval.is_null() {
                // SAFETY: the caller passes null or a writable pointer.
                unsafe { *retval = std::ptr::null_mut() };
            }
            return Some(0);
        }
        // glibc looks at "ended" before "detached".
        if trying && !target.is_finished() {
            return Some(libc::EBUSY);
        }
        if e.detached {
            return Some(libc::EINVAL);
        }
        let h = if main {
            if MAIN_JOINING.swap(true, Ordering::Relaxed) {
                return Some(libc::EINVAL); // already being joined
            }
            None
        } else {
            match e.handle.take() {
                Some(h) => Some(h),
                None => return Some(libc::EINVAL),
            }
        };
        (id, main, target, h, e.stack)
    };
    let waited = match wait {
        Wait::Try => Some(Ok(())),
        Wait::Forever | Wait::Until(Ok(None)) => wait_for(&target, None).map(|_| Ok(())),
        Wait::Until(Err(e)) if !target.is_finished() => Some(Err(e)),
        Wait::Until(Err(_)) => Some(Ok(())),
        Wait::Until(Ok(Some(t))) => wait_for(&target, Some(t)).map(|finished| {
            if finished {
                Ok(())
            } else {
                Err(libc::ETIMEDOUT)
            }
        }),
    };
    drop(target);
    if !matches!(waited, Some(Ok(()))) {
        // Canceled while waiting, timed out or a bad time: the target stays joinable (and
        // nothing of this frame is left where the caller acts: the handle goes back).
        if main {
            MAIN_JOINING.store(false, Ordering::Relaxed);
        } else {
            match registry().get(id) {
                Some(e) => e.handle = h,
                None => drop(h),
            }
        }
        return waited.map(|w| w.err().unwrap_or(0));
    }
    // The thread has finished: its id dies now, before the system thread is joined (after
    // which its system id could be reused), so `tc_kill` never reaches a joined thread.
    registry().release(id);
    let value = match h {
        // Not a cancellation point: the thread has finished.
        Some(h) => {
            let outcome = h.join();
            // The C library is done with the thread: its stack serves a later one.
            #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
            if let Some(base) = stack {
                registry().stacks.joined(base);
            }
            #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
            let _ = stack;
            match outcome {
                Outcome::Returned(SendPtr(p)) | Outcome::Exited(SendPtr(p)) => p,
                Outcome::Canceled | Outcome::Panicked(_) => CANCELED,
            }
        }
        // Stored by `end_main_thread` before main finished.
        None => crate::lock(&MAIN_VALUE).take().map_or(CANCELED, |v| v.0),
    };
    if !retval.is_null() {
        // SAFETY: the caller passes null or a writable pointer.
        unsafe { *retval = value };
    }
    Some(0)
}

/// `pthread_join`: a cancellation point for the caller; if the caller is canceled while it
/// waits, the target stays joinable. `ESRCH` for an id that is not a live thread of ours,
/// `EINVAL` if it is detached (running, or ended: as glibc) or already being joined,
/// `EDEADLK` for the caller itself.
///
/// # Safety
/// `retval` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_join(thread: u64, retval: *mut *mut c_void) -> i32 {
    // Acts from this frame, which holds nothing to drop.
    // SAFETY: forwarded from the caller.
    match unsafe { join(thread, retval, Wait::Forever) } {
        Some(r) => r,
        None => exit::act(),
    }
}

/// `pthread_tryjoin_np`: joins a thread that has ended, `EBUSY` if it has not (the caller
/// itself included); not a cancellation point. Otherwise as `tc_join`.
///
/// # Safety
/// `retval` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_tryjoin_np(thread: u64, retval: *mut *mut c_void) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { join(thread, retval, Wait::Try) }.unwrap_or(libc::EBUSY)
}

/// `pthread_timedjoin_np`: `tc_join` until `abstime` on `CLOCK_REALTIME` (null: no limit),
/// then `ETIMEDOUT`, the thread staying joinable; a cancellation point. A time with a negative
/// `tv_sec` has passed; a `tv_nsec` outside `[0, 1e9)` is `EINVAL` (if the call has to wait).
///
/// # Safety
/// `retval` must be null or valid for a write; `abstime` null or valid for a read.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_timedjoin_np(
    thread: u64,
    retval: *mut *mut c_void,
    abstime: *const libc::timespec,
) -> i32 {
    // SAFETY: forwarded from the caller.
    let until = Wait::Until(unsafe { deadline(libc::CLOCK_REALTIME, abstime) });
    // SAFETY: forwarded from the caller.
    match unsafe { join(thread, retval, until) } {
        Some(r) => r,
        None => exit::act(),
    }
}

/// `pthread_clockjoin_np`: `tc_timedjoin_np` on `clock`, which must be `CLOCK_REALTIME` or
/// `CLOCK_MONOTONIC` (`EINVAL` otherwise, as glibc).
///
/// # Safety
/// As `tc_timedjoin_np`.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_clockjoin_np(
    thread: u64,
    retval: *mut *mut c_void,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> i32 {
    if clock != libc::CLOCK_REALTIME && clock != libc::CLOCK_MONOTONIC {
        return libc::EINVAL;
    }
    // SAFETY: forwarded from the caller.
    let until = Wait::Until(unsafe { deadline(clock, abstime) });
    // SAFETY: forwarded from the caller.
    match unsafe { join(thread, retval, until) } {
        Some(r) => r,
        None => exit::act(),
    }
}

/// `pthread_detach`: `ESRCH` for an id that is not a live thread of ours, `EINVAL` if it is
/// already detached (running, or ended: as glibc); 0 and nothing for a thread another thread is
/// joining (as glibc: the join goes on).
#[no_mangle]
pub extern "C" fn tc_detach(thread: u64) -> i32 {
    let mut reg = registry();
    let id = reg.resolve(thread).unwrap_or(0);
    let Some(e) = reg.get(id) else {
        return if reg.ended_detached(thread) {
            libc::EINVAL
        } else {
            libc::ESRCH
        };
    };
    if e.detached {
        return libc::EINVAL;
    }
    match e.handle.take() {
        // Detaches the system thread; one on a stack of the library's is joined here once it
        // has ended (`stacks.rs`).
        Some(h) if e.stack.is_some() => {
            h.into_unjoined();
        }
        Some(h) => drop(h),
        None if !e.foreign && !e.left_in_parent => return 0, // being joined
        None => {}
    }
    e.detached = true;
    if e.ended {
        reg.release_detached(id);
    }
    0
}
