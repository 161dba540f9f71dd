//! Waits on the system's condition variables and semaphores, as cancellation points.
//!
//! What is the same on every C library lives here; what reads a C library's private layout
//! lives in one file per library, which is all a port to another C library writes:
//! - `glibc.rs`: glibc (the mutex records its owner; the semaphore is a 64-bit futex word);
//! - `any.rs`: any POSIX C library, reading no layout: musl and bionic use it (musl's
//!   semaphore encoding changed between its releases), and on glibc
//!   `--cfg thread_cancel_any_libc` selects it, so that it is tested against both.
//!
//! Condition variables: the wait is the C library's own `pthread_cond_wait`, so it works with
//! every `pthread_cond_signal` of the program, mapped or not. A request wakes it with an
//! `on_cancel` callback that broadcasts the condition (a spurious wake-up, which every waiter
//! tolerates, so no notification is lost: the others re-check their predicate). The broadcast
//! must not fall between the waiter's last check and its sleep, while it still holds the mutex
//! and is not yet queued: the library file's `wake` makes sure of that. The waiter returns only
//! after every waker has stopped touching the condition variable and the mutex ([`Waiter::finish`]),
//! so a waker never touches a condition variable the program has destroyed. A wait that
//! returned (and may have consumed a signal) and must then act broadcasts first, so no signal
//! is lost; the mutex is held again when the first cleanup handler runs.
//!
//! Semaphores: a canceled wait took nothing; a wait that was woken takes its token before it
//! looks at a request (the library file's `sem_wait`).

use crate::threads;
use crate::SendPtr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use thread_cancel::c_abi;

#[cfg(not(all(target_env = "gnu", not(thread_cancel_any_libc))))]
#[path = "any.rs"]
mod imp;
#[cfg(all(target_env = "gnu", not(thread_cancel_any_libc)))]
#[path = "glibc.rs"]
mod imp;

/// A thread in a condition wait, shared with the `on_cancel` callback that wakes it.
struct Waiter {
    cond: SendPtr,
    /// The mutex: glibc's waker reads its owner; the other C libraries' record none.
    #[cfg_attr(
        not(all(target_env = "gnu", not(thread_cancel_any_libc))),
        allow(dead_code)
    )]
    mutex: SendPtr,
    /// The waiting thread.
    tid: i32,
    /// Its wait has returned: no waker may start touching `cond` or `mutex`.
    done: AtomicBool,
    /// How many wakers are touching `cond` or `mutex` (under this lock, with `done`).
    wakers: Mutex<usize>,
    /// Signalled when `done` is set and when `wakers` drops to zero.
    changed: Condvar,
}

impl Waiter {
    fn cond(&self) -> *mut libc::pthread_cond_t {
        self.cond.0.cast()
    }

    fn is_done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }

    /// A waker starts: `false` if the wait has returned (nothing may be touched then).
    fn enter(&self) -> bool {
        let mut n = crate::lock(&self.wakers);
        if self.is_done() {
            return false;
        }
        *n += 1;
        true
    }

    /// A waker has stopped touching `cond` and `mutex`.
    fn leave(&self) {
        let mut n = crate::lock(&self.wakers);
        *n -= 1;
        if *n == 0 {
            self.changed.notify_all();
        }
    }

    /// For the waiter, once its wait has returned: marks it done and waits for the wakers that
    /// are still touching `cond` or `mutex`.
    fn finish(&self) {
        let mut n = crate::lock(&self.wakers);
        self.done.store(true, Ordering::SeqCst);
        self.changed.notify_all();
        while *n > 0 {
            n = self.changed.wait(n).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Broadcasts the condition.
    fn broadcast(&self) {
        // SAFETY: only called by a waker between `enter` and `leave`: the wait has not
        // returned, so the condition variable is alive (the program may not destroy a
        // condition variable a thread waits on).
        unsafe { libc::pthread_cond_broadcast(self.cond()) };
    }
}

/// The `on_cancel` callback: wakes the waiter (the library file's strategy).
fn wake_waiter(w: &Arc<Waiter>) {
    // SAFETY: no preconditions.
    if unsafe { libc::gettid() } == w.tid {
        // Run at registration by the waiter itself (a request was already pending): it has not
        // waited yet and checks for the request before it does.
        return;
    }
    if w.enter() {
        imp::wake(w);
    }
}

/// How long a wait may last.
#[derive(Clone, Copy)]
enum Limit {
    /// No limit (`pthread_cond_wait`, `sem_wait`).
    None,
    /// Until the time on `CLOCK_REALTIME` (`pthread_cond_timedwait`, `sem_timedwait`).
    Timed(*const libc::timespec),
    /// Until the time on the clock, `CLOCK_REALTIME` or `CLOCK_MONOTONIC` (checked by the
    /// callers): `pthread_cond_clockwait`, `sem_clockwait`.
    Clocked(libc::clockid_t, *const libc::timespec),
}

impl Limit {
    /// The clock and the time, `None` for no limit (a null time included).
    fn clock_and_time(self) -> Option<(libc::clockid_t, *const libc::timespec)> {
        match self {
            Limit::None => None,
            Limit::Timed(t) => Some((libc::CLOCK_REALTIME, t)),
            Limit::Clocked(c, t) => Some((c, t)),
        }
        .filter(|(_, t)| !t.is_null())
    }
}

/// The clocks a clock wait takes, as glibc (`EINVAL` for any other).
fn supported_clock(clock: libc::clockid_t) -> bool {
    clock == libc::CLOCK_REALTIME || clock == libc::CLOCK_MONOTONIC
}

/// Whether `t`'s `tv_nsec` is in range.
///
/// # Safety
/// `t` must be valid for a read.
unsafe fn valid_time(t: *const libc::timespec) -> bool {
    // SAFETY: the caller's contract.
    (0..1_000_000_000).contains(&unsafe { (*t).tv_nsec })
}

#[cfg(all(
    target_env = "gnu",
    not(all(target_os = "linux", target_pointer_width = "64"))
))]
extern "C" {
    /// glibc 2.30 and later.
    fn pthread_cond_clockwait(
        cond: *mut libc::pthread_cond_t,
        mutex: *mut libc::pthread_mutex_t,
        clock: libc::clockid_t,
        abstime: *const libc::timespec,
    ) -> i32;
}

/// The C library's `pthread_cond_clockwait`.
///
/// # Safety
/// As `pthread_cond_clockwait`.
#[cfg(all(
    target_env = "gnu",
    not(all(target_os = "linux", target_pointer_width = "64"))
))]
unsafe fn system_cond_clockwait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> i32 {
    // SAFETY: the caller's arguments, as for the system's call.
    unsafe { pthread_cond_clockwait(cond, mutex, clock, abstime) }
}

/// Where the C library may have no `pthread_cond_clockwait`: `pthread_cond_timedwait` until
/// the same time on `CLOCK_REALTIME` (for `CLOCK_MONOTONIC`: the time left, measured now).
///
/// # Safety
/// As `pthread_cond_clockwait`.
#[cfg(not(target_env = "gnu"))]
unsafe fn system_cond_clockwait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> i32 {
    // SAFETY: the caller's valid timespec.
    let at = realtime_deadline(clock, unsafe { *abstime });
    // SAFETY: the caller's arguments; `at` is a local.
    unsafe { libc::pthread_cond_timedwait(cond, mutex, &at) }
}

/// The time on `CLOCK_REALTIME` that `abstime` on `clock` stands for (the same for
/// `CLOCK_REALTIME`; for another clock, now plus the time left on it).
#[cfg_attr(all(target_env = "gnu", not(thread_cancel_any_libc)), allow(dead_code))]
pub(super) fn realtime_deadline(clock: libc::clockid_t, abstime: libc::timespec) -> libc::timespec {
    if clock == libc::CLOCK_REALTIME {
        return abstime;
    }
    let now = |c| {
        // SAFETY: `timespec` is plain integers, for which all-zero is valid.
        let mut t: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: a local, valid for the write; the clocks here always exist.
        unsafe { libc::clock_gettime(c, &mut t) };
        t
    };
    let (on_clock, mut at) = (now(clock), now(libc::CLOCK_REALTIME));
    let nanos = |t: libc::timespec| i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    let left = (nanos(abstime) - nanos(on_clock)).max(0);
    let secs = libc::c_long::try_from(left / 1_000_000_000).unwrap_or(libc::c_long::MAX);
    at.tv_sec = at.tv_sec.saturating_add(secs as _);
    at.tv_nsec += (left % 1_000_000_000) as libc::c_long;
    if at.tv_nsec >= 1_000_000_000 {
        at.tv_nsec -= 1_000_000_000;
        at.tv_sec = at.tv_sec.saturating_add(1);
    }
    at
}

/// The C library's own condition wait (on glibc, where the library defines
/// `pthread_cond_wait` itself, the C library's definition: `interposed.rs`).
#[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
fn system_cond_wait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    limit: Limit,
) -> i32 {
    // SAFETY: the caller's arguments, as for the system's call.
    unsafe {
        match limit {
            Limit::None => libc::pthread_cond_wait(cond, mutex),
            Limit::Timed(t) => libc::pthread_cond_timedwait(cond, mutex, t),
            Limit::Clocked(c, t) => system_cond_clockwait(cond, mutex, c, t),
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod interposed;
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
use interposed::system_cond_wait;

fn cond_wait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    limit: Limit,
) -> i32 {
    threads::enter_point();
    if !c_abi::in_c_region() {
        return system_cond_wait(cond, mutex, limit);
    }
    cond_wait_with(cond, mutex, limit, Wake::Any)
}

/// Which requests a condition wait acts on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wake {
    /// The thread's own, and in the region of a scope's run the scope's (the program's own
    /// waits, through the header).
    Any,
    /// The thread's own only (a wait of code built without the header, `interposed.rs`).
    #[cfg_attr(
        not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")),
        allow(dead_code)
    )]
    ThreadOnly,
}

/// A condition wait of a thread in a C region as a cancellation point for the requests `wake`
/// says: woken by an `on_cancel` callback, acting with the mutex held again.
fn cond_wait_with(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    limit: Limit,
    wake: Wake,
) -> i32 {
    let must_act = || match wake {
        Wake::Any => c_abi::c_must_act(),
        Wake::ThreadOnly => c_abi::c_must_act_on_thread(),
    };
    match wake {
        Wake::Any => threads::point(),
        Wake::ThreadOnly => {
            threads::enter_point();
            if must_act() {
                threads::act();
            }
        }
    }
    let w = Arc::new(Waiter {
        cond: SendPtr(cond.cast()),
        mutex: SendPtr(mutex.cast()),
        // SAFETY: no preconditions.
        tid: unsafe { libc::gettid() },
        done: AtomicBool::new(false),
        wakers: Mutex::new(0),
        changed: Condvar::new(),
    });
    let w2 = w.clone();
    let guard = match wake {
        Wake::Any => thread_cancel::on_cancel(move || wake_waiter(&w2)),
        Wake::ThreadOnly => c_abi::on_thread_cancel(move || wake_waiter(&w2)),
    };
    let r = if must_act() {
        0
    } else {
        system_cond_wait(cond, mutex, limit)
    };
    w.finish();
    drop(guard);
    // The mutex is held again here: a request is acted on with it held (R22). The wait may
    // have consumed a signal meant for another waiter: pass it on (a spurious wake-up for the
    // others, who re-check their predicate) before acting, so none is lost.
    if must_act() {
        // SAFETY: the caller's live condition variable.
        unsafe { libc::pthread_cond_broadcast(cond) };
        drop(w); // nothing of this frame is left to the abandoned stack
        threads::act();
    }
    r
}

/// `pthread_cond_wait` as a cancellation point; a canceled wait holds the mutex again before
/// the first cleanup handler runs.
///
/// # Safety
/// As `pthread_cond_wait`: initialised `cond`, `mutex` locked by the caller.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_cond_wait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
) -> i32 {
    cond_wait(cond, mutex, Limit::None)
}

/// `pthread_cond_timedwait` as a cancellation point; a canceled wait holds the mutex again
/// before the first cleanup handler runs.
///
/// # Safety
/// As `pthread_cond_timedwait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_cond_timedwait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    abstime: *const libc::timespec,
) -> i32 {
    cond_wait(cond, mutex, Limit::Timed(abstime))
}

/// `pthread_cond_clockwait` (glibc 2.30 and later) as a cancellation point, the mutex held
/// again when it acts: `abstime` on `clock`, `CLOCK_REALTIME` or `CLOCK_MONOTONIC`; another
/// clock or a `tv_nsec` out of range is `EINVAL` before anything else, as glibc (no
/// cancellation point then); so is a null `abstime` (glibc's would fault).
///
/// # Safety
/// As `pthread_cond_clockwait`: initialised `cond`, `mutex` locked by the caller, `abstime`
/// valid for a read.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_cond_clockwait(
    cond: *mut libc::pthread_cond_t,
    mutex: *mut libc::pthread_mutex_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> i32 {
    // SAFETY: a non-null `abstime` is readable (the caller's contract).
    if abstime.is_null() || !unsafe { valid_time(abstime) } || !supported_clock(clock) {
        return libc::EINVAL;
    }
    cond_wait(cond, mutex, Limit::Clocked(clock, abstime))
}

fn sem_wait(sem: *mut libc::sem_t, limit: Limit) -> i32 {
    let limit = limit.clock_and_time();
    if let Some((_, t)) = limit {
        // SAFETY: a non-null `abstime` is the caller's valid timespec.
        if !unsafe { valid_time(t) } {
            crate::set_errno(libc::EINVAL);
            return -1;
        }
    }
    threads::point();
    // SAFETY: the caller's initialised semaphore and valid timespec (if any).
    unsafe { imp::sem_wait(sem, limit) }
}

/// `sem_wait` as a cancellation point: a canceled wait decremented nothing.
///
/// # Safety
/// As `sem_wait`: an initialised semaphore.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sem_wait(sem: *mut libc::sem_t) -> i32 {
    sem_wait(sem, Limit::None)
}

/// `sem_timedwait` as a cancellation point (`abstime` on `CLOCK_REALTIME`).
///
/// # Safety
/// As `sem_timedwait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sem_timedwait(
    sem: *mut libc::sem_t,
    abstime: *const libc::timespec,
) -> i32 {
    sem_wait(sem, Limit::Timed(abstime))
}

/// `sem_clockwait` (glibc 2.30 and later) as a cancellation point: `abstime` on `clock`,
/// `CLOCK_REALTIME` or `CLOCK_MONOTONIC`; another clock or a `tv_nsec` out of range fails with
/// `EINVAL` before anything else, as glibc, and so does a null `abstime` (glibc's would
/// fault). A canceled wait decremented nothing.
///
/// # Safety
/// As `sem_clockwait`: an initialised semaphore, `abstime` valid for a read.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sem_clockwait(
    sem: *mut libc::sem_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> i32 {
    if abstime.is_null() || !supported_clock(clock) {
        crate::set_errno(libc::EINVAL);
        return -1;
    }
    sem_wait(sem, Limit::Clocked(clock, abstime))
}

/// A futex wait on a semaphore's word through the cancellable system call, as the C library
/// would make it: `FUTEX_WAIT` while `*word == expected` (or `FUTEX_WAIT_BITSET` until
/// `abstime` on `clock`, `CLOCK_REALTIME` or `CLOCK_MONOTONIC`). `None` if a request was acted on before the call blocked
/// or interrupted it (the call had no effect); `Some(r)` the raw result otherwise.
///
/// # Safety
/// `word` is the live semaphore's futex word; `abstime` null or a valid timespec.
#[cfg(all(target_env = "gnu", not(thread_cancel_any_libc)))]
unsafe fn futex_wait(
    word: *const u32,
    expected: u32,
    private: bool,
    limit: Option<(libc::clockid_t, *const libc::timespec)>,
) -> Option<libc::c_long> {
    let flag = if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    let (op, timeout) = match limit {
        None => (libc::FUTEX_WAIT | flag, 0),
        Some((clock, abstime)) => {
            // Without FUTEX_CLOCK_REALTIME, a FUTEX_WAIT_BITSET time is on CLOCK_MONOTONIC.
            let realtime = if clock == libc::CLOCK_REALTIME {
                libc::FUTEX_CLOCK_REALTIME
            } else {
                0
            };
            (
                libc::FUTEX_WAIT_BITSET | realtime | flag,
                abstime as libc::c_long,
            )
        }
    };
    let args = [
        word as libc::c_long,
        op as libc::c_long,
        expected as libc::c_long,
        timeout,
        0,
        libc::FUTEX_BITSET_MATCH_ANY as libc::c_long,
    ];
    threads::enter_point();
    // SAFETY: a futex wait on a word that outlives the call (the caller's contract); the
    // timeout is null or the caller's valid timespec.
    unsafe { c_abi::syscall_point(c_abi::calls::FUTEX, args) }
}
