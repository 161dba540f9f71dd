//! Signal handlers: a call made from a handler behaves as the plain call.
//!
//! A handler runs on whichever thread the signal lands on, and the interposed calls judge a
//! call by the state of its thread: without this, a handler's one-byte `write` to its
//! self-pipe (tokio, mio, glib, libuv) would fail in a thread that is in a canceled run, past a
//! deadline or with a cancel pending, and the wake-up would be lost. So the crate defines
//! `sigaction` and the functions that install a handler without it (`signal`, `bsd_signal`,
//! `sysv_signal`, `__sysv_signal`: the C library's own call `sigaction` through a hidden
//! alias, which interposition does not see): the program's handler is installed behind
//! [`trampoline`], which records the handler's frame in the thread's control block
//! (`control::handlers`) while it runs. An interposed call that would act asks
//! `Frames::inside` first (off the fast path) and, inside a handler, makes the plain call.
//!
//! What the program sees is its own handler: the old action `sigaction` returns names it (and
//! its flags), never the trampoline, so a library that chains to the previous handler (tokio,
//! signal-hook) calls the program's. The crate's own cancel-signal handler is installed as it
//! is. Not reached: a handler installed by the raw `rt_sigaction` system call, or by `sigset`
//! and `sigvec` (no trampoline: its calls are judged as the interrupted thread's).
//!
//! Async-signal-safe, as `sigaction` is: the program's handlers are kept in atomics, one per
//! signal; no allocation, no lock. Two threads that change one signal's action at the same
//! moment end with one of the two handlers, as with the C library, but the old action each is
//! given may name the other's.

use crate::control::handlers::stack_address;
use libc::{c_int, c_void, siginfo_t};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Signals numbered below this (the kernel's `_NSIG`).
const NSIG: usize = 65;

/// Whether `sigaction` (and the calls made through it: `signal`, `bsd_signal`, `sysv_signal`)
/// refuses the cancel signal to the program (`EINVAL`), as glibc's refuses glibc's own: set by
/// the C ABI's library, which makes the cancel signal the C library's
/// ([`refuse_cancel_signal`]). A Rust program's `sigaction` leaves it alone (the crate reports
/// a handler that replaced its own).
static REFUSE_CANCEL_SIGNAL: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// From now on the interposed `sigaction` refuses the cancel signal to the program (the crate's
/// own calls excepted).
pub(crate) fn refuse_cancel_signal() {
    REFUSE_CANCEL_SIGNAL.store(true, Ordering::Relaxed);
}

/// The program's handler of each signal installed behind the trampoline (0: none).
static HANDLER: [AtomicUsize; NSIG] = [const { AtomicUsize::new(0) }; NSIG];
/// The flags the program gave with it (`SA_SIGINFO`, `SA_ONSTACK`, ...), for the old action.
static FLAGS: [AtomicUsize; NSIG] = [const { AtomicUsize::new(0) }; NSIG];

/// Every handler of the program's, installed for it: records the handler's frame in the
/// thread's control block while the handler runs (a thread without one makes plain calls
/// anyway), then calls it with the three arguments a `SA_SIGINFO` handler takes (a handler of
/// one argument ignores the other two, as the C calling conventions allow).
extern "C" fn trampoline(sig: c_int, info: *mut siginfo_t, uc: *mut c_void) {
    let Some(i) = index(sig) else { return };
    let h = HANDLER[i].load(Ordering::Acquire);
    if h == 0 {
        return;
    }
    let c = crate::control::current_ptr();
    let entered = c.map(|c| {
        let alt = if FLAGS[i].load(Ordering::Relaxed) & libc::SA_ONSTACK as usize != 0 {
            alternate_stack()
        } else {
            None
        };
        // SAFETY: `current_ptr` is this thread's control block, alive while it is linked (the
        // handler runs on this thread, inside whatever the thread was doing).
        unsafe { &*c }.handlers.enter(stack_address(), alt)
    });
    // SAFETY: `h` is the handler the program installed for `sig` through `sigaction` (its
    // contract: a function of the C signal-handler signature), called as the kernel would.
    let handler: extern "C" fn(c_int, *mut siginfo_t, *mut c_void) =
        unsafe { std::mem::transmute(h) };
    handler(sig, info, uc);
    if let (Some(c), Some(d)) = (c, entered) {
        // SAFETY: as above.
        unsafe { &*c }.handlers.leave(d);
    }
}

/// The alternate signal stack the calling handler runs on, if it runs on one.
fn alternate_stack() -> Option<(usize, usize)> {
    // SAFETY: `stack_t` is plain data; all-zero is a valid value.
    let mut ss: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new stack only queries; `ss` is valid for writes.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sigaltstack,
            std::ptr::null::<libc::stack_t>(),
            &mut ss,
        )
    };
    (r == 0 && ss.ss_flags & libc::SS_ONSTACK != 0).then(|| {
        let lo = ss.ss_sp as usize;
        (lo, lo + ss.ss_size)
    })
}

/// Whether the calling thread (control block `c`) is inside a handler installed through the
/// trampoline.
pub(super) fn in_handler(c: &crate::control::Control) -> bool {
    c.handlers.inside(stack_address())
}

fn index(sig: c_int) -> Option<usize> {
    usize::try_from(sig).ok().filter(|&i| i > 0 && i < NSIG)
}

/// `sigaction`, with the C library's definition `next`: the program's handler is installed
/// behind the trampoline, and the old action names the program's handler.
///
/// # Safety
/// As `sigaction(2)`: `act` and `old` null or valid.
pub(super) unsafe fn sigaction(
    next: unsafe extern "C-unwind" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int,
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if REFUSE_CANCEL_SIGNAL.load(Ordering::Relaxed)
        && sig == crate::sys::signal().unwrap_or_else(crate::sys::default_signal)
        && !crate::sys::own_signal_call()
    {
        // The C library's own signal, as glibc's `sigaction` refuses glibc's.
        crate::point::conv::set_errno(libc::EINVAL);
        return -1;
    }
    let Some(i) = index(sig) else {
        // SAFETY: forwarded; the C library reports the invalid signal.
        return unsafe { next(sig, act, old) };
    };
    let (prev_h, prev_flags) = (
        HANDLER[i].load(Ordering::Acquire),
        FLAGS[i].load(Ordering::Relaxed),
    );
    // SAFETY: `act` is null or valid (the caller's contract).
    let new = unsafe { act.as_ref() }.copied();
    let wrap = new.filter(|a| {
        let h = a.sa_sigaction;
        h != libc::SIG_DFL
            && h != libc::SIG_IGN
            && h != trampoline as *const () as usize
            && !crate::sys::is_cancel_handler(h)
    });
    let r = match wrap {
        Some(mut a) => {
            FLAGS[i].store(a.sa_flags as usize, Ordering::Relaxed);
            HANDLER[i].store(a.sa_sigaction, Ordering::Release);
            a.sa_sigaction = trampoline as *const () as usize;
            a.sa_flags |= libc::SA_SIGINFO;
            // SAFETY: `a` is the caller's action with the trampoline as its handler; `old` as
            // the caller gave it.
            let r = unsafe { next(sig, &a, old) };
            if r != 0 {
                HANDLER[i].store(prev_h, Ordering::Release);
                FLAGS[i].store(prev_flags, Ordering::Relaxed);
            }
            r
        }
        None => {
            // SAFETY: forwarded.
            let r = unsafe { next(sig, act, old) };
            if r == 0 && new.is_some() {
                // The handler behind the trampoline is no longer installed.
                HANDLER[i].store(0, Ordering::Release);
            }
            r
        }
    };
    if r == 0 {
        // SAFETY: `old` is null or valid for writes (the caller's contract), filled now.
        if let Some(o) = unsafe { old.as_mut() } {
            if o.sa_sigaction == trampoline as *const () as usize && prev_h != 0 {
                o.sa_sigaction = prev_h;
                o.sa_flags = prev_flags as c_int;
            }
        }
    }
    r
}

/// `signal` (`bsd_signal`: the handler stays installed, interrupted calls restart, the signal
/// is blocked while its handler runs) or `sysv_signal` (`sysv`: reset to the default action on
/// delivery, not blocked, calls not restarted), as the C library defines them, made through
/// the interposed [`sigaction`].
///
/// # Safety
/// As `signal(2)`.
pub(super) unsafe fn signal(
    next: unsafe extern "C-unwind" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int,
    sig: c_int,
    handler: libc::sighandler_t,
    sysv: bool,
) -> libc::sighandler_t {
    if handler == libc::SIG_ERR || index(sig).is_none() {
        crate::point::conv::set_errno(libc::EINVAL);
        return libc::SIG_ERR;
    }
    // SAFETY: `sigaction` is plain data; all-zero is a valid value (empty mask, no flags).
    let mut a: libc::sigaction = unsafe { std::mem::zeroed() };
    a.sa_sigaction = handler;
    if sysv {
        a.sa_flags = libc::SA_RESETHAND | libc::SA_NODEFER;
    } else {
        a.sa_flags = libc::SA_RESTART;
        // SAFETY: `a.sa_mask` is a valid set; `sig` is a valid signal number.
        unsafe { libc::sigaddset(&mut a.sa_mask, sig) };
    }
    // SAFETY: as above.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: both actions are valid.
    if unsafe { sigaction(next, sig, &a, &mut old) } != 0 {
        return libc::SIG_ERR;
    }
    old.sa_sigaction
}
