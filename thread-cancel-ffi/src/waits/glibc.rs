//! glibc's layouts: the owner of a `pthread_mutex_t`, and the `sem_t` word.

use super::Waiter;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// glibc's `struct __pthread_mutex_s`: `int __lock; unsigned __count; int __owner; ...`.
const MUTEX_OWNER_OFFSET: usize = 8;

fn mutex_owner(m: *mut libc::pthread_mutex_t) -> i32 {
    // SAFETY: `m` is a live, initialised glibc mutex (the caller of the wait vouches for it
    // until the wait returns, and a waker only runs before that); the owner field is an
    // aligned int that glibc writes while the mutex is held, read here atomically.
    unsafe { (*m.cast::<u8>().add(MUTEX_OWNER_OFFSET).cast::<AtomicI32>()).load(Ordering::Relaxed) }
}

/// Wakes the waiter (called between `enter` and `leave`, in the canceling thread): glibc
/// records the owner's tid in the mutex, so the broadcast is sent once the waiter no longer
/// owns it, i.e. once it is queued (or done). Limits: with glibc's lock elision turned on (off
/// by default) the owner field is not written, and a recursive mutex locked more than once
/// stays owned during the wait (POSIX leaves that undefined).
pub(super) fn wake(w: &Waiter) {
    while !w.is_done() {
        if mutex_owner(w.mutex.0.cast()) == w.tid {
            // Between its check and its sleep: wait until it is queued (or done).
            std::thread::yield_now();
            continue;
        }
        w.broadcast();
        break;
    }
    w.leave();
}

/// glibc's 64-bit `struct new_sem`: `uint64_t data; int private;` (value in the low half of
/// `data`, the number of waiters in the high half).
const SEM_NWAITERS_ONE: u64 = 1 << 32;
const SEM_PRIVATE_OFFSET: usize = 8;

/// The wait: `sem_trywait`, then a futex wait on the low half of the word through the
/// cancellable system call, counted as a waiter so that `sem_post` wakes it.
///
/// # Safety
/// `sem` is an initialised glibc semaphore; the time of `limit` (if any) a valid timespec on
/// its clock, `CLOCK_REALTIME` or `CLOCK_MONOTONIC`.
pub(super) unsafe fn sem_wait(
    sem: *mut libc::sem_t,
    limit: Option<(libc::clockid_t, *const libc::timespec)>,
) -> i32 {
    // SAFETY: `sem` is an initialised semaphore (the caller's contract); its first 8 bytes are
    // the aligned 64-bit word glibc updates atomically, followed by the futex private flag.
    let (data, private) = unsafe {
        (
            &*sem.cast::<AtomicU64>(),
            *sem.cast::<u8>().add(SEM_PRIVATE_OFFSET).cast::<i32>(),
        )
    };
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
        let private = private ^ libc::FUTEX_PRIVATE_FLAG != 0;
        // SAFETY: the value is the low half of the word on little-endian, which outlives the
        // call; `limit` as the caller's.
        let r = unsafe { super::futex_wait(data.as_ptr().cast(), 0, private, limit) };
        data.fetch_sub(SEM_NWAITERS_ONE, Ordering::SeqCst);
        match r {
            None => crate::threads::act(), // nothing was taken
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
