//! Waits on the system's condition variables and semaphores, as cancellation points.
//!
//! Condition variables: the wait is glibc's own `pthread_cond_wait`; a request wakes it with an
//! `on_cancel` callback that broadcasts the condition (a spurious wake-up, which every waiter
//! tolerates, so no notification is lost: the others re-check their predicate). The callback
//! broadcasts only once the waiter no longer holds the mutex (glibc records the owner's tid in
//! the mutex), i.e. once it is queued, so the broadcast cannot fall between the waiter's last
//! check and its sleep. The waiter returns only after a running callback has finished, so the
//! callback never touches a condition variable the program has destroyed. Limits: with glibc's
//! lock elision turned on (off by default) the owner field is not written, and a recursive
//! mutex locked more than once stays owned during the wait (POSIX leaves that undefined). A wait that returned
//! (and may have consumed a signal) and must then act broadcasts first, so no signal is lost.
//!
//! Semaphores: glibc's `sem_t` is a 64-bit word (value in the low half, waiters in the high
//! half) whose `sem_post` wakes the low half's futex; the wait is `sem_trywait` and a futex wait
//! through the cancellable system call, so a canceled wait took nothing (R10); a wait that was
//! woken takes its token before it looks at a request.

// The waits below read glibc's `pthread_mutex_t` and `sem_t` layouts.
#[cfg(not(target_env = "gnu"))]
compile_error!(
    "thread-cancel-ffi: the condition and semaphore waits need glibc's layouts (waits.rs)"
);

use crate::cancel;
use crate::SendPtr;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use thread_cancel::ffi;

/// glibc's `struct __pthread_mutex_s`: `int __lock; unsigned __count; int __owner; ...`.
const MUTEX_OWNER_OFFSET: usize = 8;

fn mutex_owner(m: *mut libc::pthread_mutex_t) -> i32 {
    // SAFETY: `m` is a live, initialised glibc mutex (the caller of the wait vouches for it
    // until the wait returns, and the callback only runs before that); the owner field is an
    // aligned int that glibc writes while the mutex is held, read here atomically.
    unsafe { (*m.cast::<u8>().add(MUTEX_OWNER_OFFSET).cast::<AtomicI32>()).load(Ordering::Relaxed) }
}

struct Waiter {
    cond: SendPtr,
    mutex: SendPtr,
    tid: i32,
    done: AtomicBool,
    running: AtomicBool,
}

fn wake(w: &Waiter) {
    // SAFETY: no preconditions.
    if unsafe { libc::gettid() } == w.tid {
        // Run at registration by the waiter itself (a request was already pending): it has not
        // waited yet and checks for the request before it does.
        return;
    }
    w.running.store(true, Ordering::SeqCst);
    while !w.done.load(Ordering::SeqCst) {
        if mutex_owner(w.mutex.0.cast()) == w.tid {
            // Between its check and its sleep: wait until it is queued (or done).
            std::thread::yield_now();
            continue;
        }
        // SAFETY: the waiter is not done, so the condition variable is alive.
        unsafe { libc::pthread_cond_broadcast(w.cond.0.cast()) };
        break;
    }
    w.running.store(false, Ordering::SeqCst);
}

fn cond_wait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    abstime: *const libc::timespec,
) -> i32 {
    if !ffi::in_c_region() {
        // SAFETY: the caller's arguments, as for the system's call.
        return unsafe {
            if abstime.is_null() {
                libc::pthread_cond_wait(cond, mutex)
            } else {
                libc::pthread_cond_timedwait(cond, mutex, abstime)
            }
        };
    }
    cancel::point();
    let w = Arc::new(Waiter {
        cond: SendPtr(cond.cast()),
        mutex: SendPtr(mutex.cast()),
        // SAFETY: no preconditions.
        tid: unsafe { libc::gettid() },
        done: AtomicBool::new(false),
        running: AtomicBool::new(false),
    });
    let w2 = w.clone();
    let guard = thread_cancel::on_cancel(move || wake(&w2));
    let r = if ffi::c_must_act() {
        0
    } else {
        // SAFETY: the caller's arguments, as for the system's call.
        unsafe {
            if abstime.is_null() {
                libc::pthread_cond_wait(cond, mutex)
            } else {
                libc::pthread_cond_timedwait(cond, mutex, abstime)
            }
        }
    };
    w.done.store(true, Ordering::SeqCst);
    while w.running.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    drop(guard);
    // The mutex is held again here: a request is acted on with it held (R22). The wait may
    // have consumed a signal meant for another waiter: pass it on (a spurious wake-up for the
    // others, who re-check their predicate) before acting, so none is lost.
    if ffi::c_must_act() {
        // SAFETY: the caller's live condition variable.
        unsafe { libc::pthread_cond_broadcast(cond) };
        drop(w); // nothing of this frame is left to the abandoned stack
        cancel::act();
    }
    r
}

/// `pthread_cond_wait` as a cancellation point (R22).
///
/// # Safety
/// As `pthread_cond_wait`: initialised `cond`, `mutex` locked by the caller.
#[no_mangle]
pub unsafe extern "C" fn tc_cond_wait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
) -> i32 {
    cond_wait(cond, mutex, std::ptr::null())
}

/// `pthread_cond_timedwait` as a cancellation point (R22).
///
/// # Safety
/// As `pthread_cond_timedwait`.
#[no_mangle]
pub unsafe extern "C" fn tc_cond_timedwait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    abstime: *const libc::timespec,
) -> i32 {
    cond_wait(cond, mutex, abstime)
}

/// glibc's 64-bit `struct new_sem`: `uint64_t data; int private;`.
const SEM_NWAITERS_ONE: u64 = 1 << 32;
const SEM_PRIVATE_OFFSET: usize = 8;

fn sem_wait(sem: *mut libc::sem_t, abstime: *const libc::timespec) -> i32 {
    // SAFETY: a non-null `abstime` is the caller's valid timespec.
    if !abstime.is_null() && !(0..1_000_000_000).contains(&unsafe { (*abstime).tv_nsec }) {
        crate::set_errno(libc::EINVAL);
        return -1;
    }
    // SAFETY: `sem` is an initialised semaphore (the caller's contract); its first 8 bytes are
    // the aligned 64-bit word glibc updates atomically, followed by the futex private flag.
    let (data, private) = unsafe {
        (
            &*sem.cast::<AtomicU64>(),
            *sem.cast::<u8>().add(SEM_PRIVATE_OFFSET).cast::<i32>(),
        )
    };
    cancel::point();
    loop {
        // After a wake-up, the token is taken before a request is looked at: a wait that was
        // woken by `sem_post` completes (R10), and the next wait acts instead.
        // SAFETY: as above.
        if unsafe { libc::sem_trywait(sem) } == 0 {
            return 0;
        }
        data.fetch_add(SEM_NWAITERS_ONE, Ordering::SeqCst);
        // glibc stores 0 for a process-private semaphore and FUTEX_PRIVATE_FLAG for a shared
        // one, and uses `op | (private ^ FUTEX_PRIVATE_FLAG)` itself.
        let flag = private ^ libc::FUTEX_PRIVATE_FLAG;
        let (op, timeout) = if abstime.is_null() {
            (libc::FUTEX_WAIT | flag, 0)
        } else {
            (
                libc::FUTEX_WAIT_BITSET | libc::FUTEX_CLOCK_REALTIME | flag,
                abstime as libc::c_long,
            )
        };
        let args = [
            data.as_ptr() as libc::c_long, // the value: the low half on little-endian
            op as libc::c_long,
            0,
            timeout,
            0,
            libc::FUTEX_BITSET_MATCH_ANY as libc::c_long,
        ];
        // SAFETY: a futex wait on the semaphore's value word, which outlives the call; the
        // timeout is null or the caller's valid timespec.
        let r = unsafe { ffi::syscall_point(ffi::calls::FUTEX, args) };
        data.fetch_sub(SEM_NWAITERS_ONE, Ordering::SeqCst);
        match r {
            None => cancel::act(), // nothing was taken
            // Woken, or the value changed before the wait: take it, or wait again.
            Some(r) if r == 0 || r == -(libc::EAGAIN as libc::c_long) => {}
            // A timeout, a signal handled by the program (EINTR, as glibc), or an error.
            Some(r) => {
                crate::set_errno(-r as i32);
                return -1;
            }
        }
    }
}

/// `sem_wait` as a cancellation point: a canceled wait decremented nothing.
///
/// # Safety
/// As `sem_wait`: an initialised glibc semaphore.
#[no_mangle]
pub unsafe extern "C" fn tc_sem_wait(sem: *mut libc::sem_t) -> i32 {
    sem_wait(sem, std::ptr::null())
}

/// `sem_timedwait` as a cancellation point (`abstime` on `CLOCK_REALTIME`).
///
/// # Safety
/// As `sem_timedwait`.
#[no_mangle]
pub unsafe extern "C" fn tc_sem_timedwait(
    sem: *mut libc::sem_t,
    abstime: *const libc::timespec,
) -> i32 {
    sem_wait(sem, abstime)
}
