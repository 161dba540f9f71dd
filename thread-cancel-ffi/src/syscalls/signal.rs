//! Signals: the C library's cancel signal (chosen at load, outside the program's real-time
//! range), the calls that keep it from the program (`sigaction`, `signal` and the older
//! handler and mask calls, `raise`, the set calls, the real-time range), the mask calls (which
//! never block it), `sigpause`, `sigsuspend`, and the waits for a signal.
//!
//! # Safety (every function here)
//! The arguments must be valid for the system call, as for the libc function of the same name.

use super::{c, call, SIGSET_SIZE};
use libc::{c_int, c_long};
use thread_cancel::c_abi::{self, calls};

/// Chooses the C library's cancel signal and installs its handler (once; see
/// `crate::cancel_signal`).
#[no_mangle]
pub extern "C" fn tc_signal_init() {
    init_at_load();
    // The main thread of a program through the header is the library's from the start: its
    // blocking calls through the header are points, and code built without the header reaches
    // it by its system id (its `pthread_cancel` is the library's for a thread the library
    // knows).
    crate::threads::know_main_thread();
}

/// What the library sets up when it is loaded (also from its own constructor, for a process
/// whose program was not built through the header: one given the library with `LD_PRELOAD`,
/// whose main thread stays the C library's).
pub(crate) fn init_at_load() {
    // Before main, as this is called: which threads are not the program's.
    crate::threads::note_threads_before_main();
    // Adopting a thread must not make `std` take one of the program's keys (R20).
    c_abi::adopt_without_std_handle();
    crate::cancel_signal();
    // The cancel signal is the C library's own: the program's `sigaction` & co. refuse it.
    c_abi::refuse_cancel_signal();
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    std::hint::black_box(crate::plain::keep());
}

/// The library's own constructor (a shared library's: the program's include the header's).
#[used]
#[link_section = ".init_array"]
static INIT_AT_LOAD: extern "C" fn() = {
    extern "C" fn init() {
        init_at_load();
        // The main thread's blocking calls are the library's points too, its cancellation the
        // C library's (a program through the header makes it the library's in its own
        // constructor, which runs after this one).
        #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
        crate::threads::link_main_thread();
    }
    init
};

/// The cancel signal, chosen if it was not yet.
fn ours() -> c_int {
    crate::cancel_signal()
}

/// `SIGRTMIN` as programs built through the compatibility header see it (the header's name for
/// `__libc_current_sigrtmin`): the one after the cancel signal, which is the system's first
/// real-time signal, or another of its first eight chosen by `THREAD_CANCEL_SIGNAL` (glibc,
/// read at load); the system's if the crate had started with a signal above those.
#[no_mangle]
pub extern "C" fn tc_current_sigrtmin() -> c_int {
    thread_cancel::c_abi::program_sigrtmin(ours())
}

/// `-1` with `EINVAL`, as glibc answers for its own signals.
fn einval() -> c_int {
    crate::set_errno(libc::EINVAL);
    -1
}

/// `sigaction`: the system's, except for the cancel signal (`EINVAL`, as glibc's for its own
/// signals, a query included).
///
/// # Safety
/// As `sigaction`.
#[no_mangle]
pub unsafe extern "C" fn tc_sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if sig == ours() {
        return einval();
    }
    // SAFETY: the caller's arguments.
    unsafe { libc::sigaction(sig, act, old) }
}

/// `signal`: the system's (BSD semantics, glibc's `signal` with `_DEFAULT_SOURCE`), except for
/// the cancel signal (`SIG_ERR` with `EINVAL`, as glibc's for its own signals).
///
/// # Safety
/// As `signal`.
#[no_mangle]
pub unsafe extern "C" fn tc_signal(sig: c_int, handler: libc::sighandler_t) -> libc::sighandler_t {
    if sig == ours() {
        einval();
        return libc::SIG_ERR;
    }
    // SAFETY: the caller's arguments.
    unsafe { libc::signal(sig, handler) }
}

/// `raise`: the system's, except for the cancel signal (-1 with `EINVAL`, as glibc's for its
/// own signals: the program cannot send it; `tc_kill` refuses it too).
#[no_mangle]
pub extern "C" fn tc_raise(sig: c_int) -> c_int {
    if sig == ours() {
        return einval();
    }
    // SAFETY: no memory arguments.
    unsafe { libc::raise(sig) }
}

/// The C library's older signal calls (X/Open, System V, BSD), which glibc refuses for its own
/// signals as `sigaction` does. bionic has the X/Open ones only from API level 26 (they are not
/// mapped there); `sysv_signal` is glibc's.
mod sys {
    use libc::c_int;
    extern "C" {
        #[cfg(not(any(
            target_os = "android",
            all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")
        )))]
        pub(super) fn sigset(sig: c_int, disp: libc::sighandler_t) -> libc::sighandler_t;
        #[cfg(not(target_os = "android"))]
        pub(super) fn bsd_signal(sig: c_int, handler: libc::sighandler_t) -> libc::sighandler_t;
        #[cfg(target_env = "gnu")]
        pub(super) fn sysv_signal(sig: c_int, handler: libc::sighandler_t) -> libc::sighandler_t;
        #[cfg(not(target_os = "android"))]
        pub(super) fn sigignore(sig: c_int) -> c_int;
        #[cfg(not(target_os = "android"))]
        pub(super) fn sighold(sig: c_int) -> c_int;
        #[cfg(not(target_os = "android"))]
        pub(super) fn sigrelse(sig: c_int) -> c_int;
        pub(super) fn siginterrupt(sig: c_int, flag: c_int) -> c_int;
    }
}

/// `SIG_ERR` with `EINVAL`, for the calls that return the old handler.
#[cfg(not(target_os = "android"))]
fn handler_einval() -> libc::sighandler_t {
    einval();
    libc::SIG_ERR
}

/// `sigset` (X/Open): the system's, except for the cancel signal (`SIG_ERR` with `EINVAL`, as
/// glibc's for its own signals, `SIG_HOLD` included).
///
/// # Safety
/// As `sigset`.
#[cfg(not(target_os = "android"))]
#[no_mangle]
pub unsafe extern "C" fn tc_sigset(sig: c_int, disp: libc::sighandler_t) -> libc::sighandler_t {
    if sig == ours() {
        return handler_einval();
    }
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    {
        // The C library's `sigset` reads the old action with its internal `sigaction`, which
        // would report the handler the library installs behind the program's (the program's
        // `sigaction` is the library's, which reports the program's own): glibc's `sigset`,
        // made of the public calls.
        // SAFETY: the caller's arguments.
        unsafe { sigset_public(sig, disp) }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    // SAFETY: the caller's arguments.
    unsafe {
        sys::sigset(sig, disp)
    }
}

/// glibc's `SIG_HOLD` (`<signal.h>`), which the `libc` crate does not name.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
const SIG_HOLD: libc::sighandler_t = 2;

/// glibc's `sigset`, made of `sigaction` and `sigprocmask` (the library's: the program's view).
///
/// # Safety
/// As `sigset`.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
unsafe fn sigset_public(sig: c_int, disp: libc::sighandler_t) -> libc::sighandler_t {
    // SAFETY: plain values; every pointer below is to a local.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut oset: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        if libc::sigaddset(&mut set, sig) < 0 {
            return libc::SIG_ERR;
        }
        let mut old: libc::sigaction = std::mem::zeroed();
        if disp == SIG_HOLD {
            if libc::sigprocmask(libc::SIG_BLOCK, &set, &mut oset) < 0 {
                return libc::SIG_ERR;
            }
            if libc::sigismember(&oset, sig) == 1 {
                return SIG_HOLD;
            }
            if libc::sigaction(sig, std::ptr::null(), &mut old) < 0 {
                return libc::SIG_ERR;
            }
            return old.sa_sigaction;
        }
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = disp;
        libc::sigemptyset(&mut act.sa_mask);
        if libc::sigaction(sig, &act, &mut old) < 0
            || libc::sigprocmask(libc::SIG_UNBLOCK, &set, &mut oset) < 0
        {
            return libc::SIG_ERR;
        }
        if libc::sigismember(&oset, sig) == 1 {
            SIG_HOLD
        } else {
            old.sa_sigaction
        }
    }
}

/// `bsd_signal`: as `tc_signal` (the same BSD semantics).
///
/// # Safety
/// As `bsd_signal`.
#[cfg(not(target_os = "android"))]
#[no_mangle]
pub unsafe extern "C" fn tc_bsd_signal(
    sig: c_int,
    handler: libc::sighandler_t,
) -> libc::sighandler_t {
    if sig == ours() {
        return handler_einval();
    }
    // SAFETY: the caller's arguments.
    unsafe { sys::bsd_signal(sig, handler) }
}

/// `sysv_signal` (glibc's): the system's, except for the cancel signal (`SIG_ERR` with
/// `EINVAL`, as glibc's for its own signals).
///
/// # Safety
/// As `sysv_signal`.
#[cfg(target_env = "gnu")]
#[no_mangle]
pub unsafe extern "C" fn tc_sysv_signal(
    sig: c_int,
    handler: libc::sighandler_t,
) -> libc::sighandler_t {
    if sig == ours() {
        return handler_einval();
    }
    // SAFETY: the caller's arguments.
    unsafe { sys::sysv_signal(sig, handler) }
}

/// `sigignore` (X/Open): the system's, except for the cancel signal (-1 with `EINVAL`, as
/// glibc's for its own signals).
#[cfg(not(target_os = "android"))]
#[no_mangle]
pub extern "C" fn tc_sigignore(sig: c_int) -> c_int {
    if sig == ours() {
        return einval();
    }
    // SAFETY: no memory arguments.
    unsafe { sys::sigignore(sig) }
}

/// `sighold` (X/Open): the system's, except for the cancel signal (-1 with `EINVAL`, as
/// glibc's: the signal is never blocked).
#[cfg(not(target_os = "android"))]
#[no_mangle]
pub extern "C" fn tc_sighold(sig: c_int) -> c_int {
    if sig == ours() {
        return einval();
    }
    // SAFETY: no memory arguments.
    unsafe { sys::sighold(sig) }
}

/// `sigrelse` (X/Open): the system's, except for the cancel signal (-1 with `EINVAL`, as
/// glibc's).
#[cfg(not(target_os = "android"))]
#[no_mangle]
pub extern "C" fn tc_sigrelse(sig: c_int) -> c_int {
    if sig == ours() {
        return einval();
    }
    // SAFETY: no memory arguments.
    unsafe { sys::sigrelse(sig) }
}

/// `siginterrupt`: the system's, except for the cancel signal (-1 with `EINVAL`, as glibc's:
/// the flags of its handler are the library's).
#[no_mangle]
pub extern "C" fn tc_siginterrupt(sig: c_int, flag: c_int) -> c_int {
    if sig == ours() {
        return einval();
    }
    // SAFETY: no memory arguments.
    unsafe { sys::siginterrupt(sig, flag) }
}

/// `sigaddset`: the system's, except for the cancel signal (`EINVAL`, as glibc's for its own).
///
/// # Safety
/// As `sigaddset`.
#[no_mangle]
pub unsafe extern "C" fn tc_sigaddset(set: *mut libc::sigset_t, sig: c_int) -> c_int {
    if sig == ours() {
        return einval();
    }
    // SAFETY: the caller's arguments.
    unsafe { libc::sigaddset(set, sig) }
}

/// `sigdelset`: the system's, except for the cancel signal (`EINVAL`, as glibc's for its own).
///
/// # Safety
/// As `sigdelset`.
#[no_mangle]
pub unsafe extern "C" fn tc_sigdelset(set: *mut libc::sigset_t, sig: c_int) -> c_int {
    if sig == ours() {
        return einval();
    }
    // SAFETY: the caller's arguments.
    unsafe { libc::sigdelset(set, sig) }
}

/// `sigfillset`: the system's, without the cancel signal (as glibc's fills without its own).
///
/// # Safety
/// As `sigfillset`.
#[no_mangle]
pub unsafe extern "C" fn tc_sigfillset(set: *mut libc::sigset_t) -> c_int {
    let sig = ours();
    // SAFETY: the caller's set; a filled set is initialised for sigdelset.
    unsafe {
        let r = libc::sigfillset(set);
        if r == 0 {
            libc::sigdelset(set, sig);
        }
        r
    }
}

/// A signal mask or set given by C code, as passed to the kernel: a copy without the cancel
/// signal (`c_abi::cancel_signal`), or null. A mask that blocks the cancel signal would make the
/// call (or, set with `sigprocmask`, the thread) impossible to interrupt; a set of signals to
/// wait for that holds it would take the request's signal as the call's result. glibc never
/// lets its own cancel signal be blocked or waited for either.
pub(super) struct Mask(Option<libc::sigset_t>);

impl Mask {
    /// # Safety
    /// `set` must be null or point to an initialised `sigset_t`.
    pub(super) unsafe fn of(set: *const libc::sigset_t) -> Mask {
        if set.is_null() {
            return Mask(None);
        }
        // SAFETY: non-null: the caller's initialised set (plain data).
        Mask(Some(c_abi::without_cancel_signal(unsafe { &*set })))
    }

    /// The copy (or null), valid while `self` lives.
    pub(super) fn ptr(&self) -> *const libc::sigset_t {
        self.0
            .as_ref()
            .map_or(std::ptr::null(), |s| s as *const libc::sigset_t)
    }
}

/// Calls `set_mask` (the system's `pthread_sigmask` or `sigprocmask`) with the mask argument as
/// passed on: without the cancel signal for `SIG_BLOCK` and `SIG_SETMASK` (`SIG_UNBLOCK` can
/// only help; any other `how` is the system's `EINVAL`), or the caller's `set` itself.
///
/// # Safety
/// As [`Mask::of`].
unsafe fn pass_mask(
    how: c_int,
    set: *const libc::sigset_t,
    set_mask: impl FnOnce(*const libc::sigset_t) -> c_int,
) -> c_int {
    if how == libc::SIG_BLOCK || how == libc::SIG_SETMASK {
        // SAFETY: forwarded from the caller.
        let m = unsafe { Mask::of(set) };
        let p = if m.0.is_some() { m.ptr() } else { set };
        set_mask(p)
    } else {
        set_mask(set)
    }
}

/// `pthread_sigmask`: the system's, except that the cancel signal is never blocked.
///
/// # Safety
/// As `pthread_sigmask`.
#[no_mangle]
pub unsafe extern "C" fn tc_pthread_sigmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: the caller's set (module docs); `p` is the caller's set or its copy, alive for
    // the call; `old` is the caller's.
    unsafe { pass_mask(how, set, |p| libc::pthread_sigmask(how, p, old)) }
}

/// `sigprocmask`: the system's, except that the cancel signal is never blocked.
///
/// # Safety
/// As `sigprocmask`.
#[no_mangle]
pub unsafe extern "C" fn tc_sigprocmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    // SAFETY: as in `tc_pthread_sigmask`.
    unsafe { pass_mask(how, set, |p| libc::sigprocmask(how, p, old)) }
}

/// `sigpause` (X/Open: `sig` is removed from the thread's mask for the wait): a cancellation
/// point, as `sigsuspend`; -1 with `EINTR`, or `EINVAL` for an invalid signal.
#[no_mangle]
pub extern "C-unwind" fn tc_sigpause(sig: c_int) -> c_int {
    // SAFETY: sigset_t is plain data; all-zero is a valid (empty) set.
    let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new set only reads the thread's mask into `mask`.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask) };
    // SAFETY: `mask` is initialised; sigdelset checks `sig`.
    if unsafe { libc::sigdelset(&mut mask, sig) } != 0 {
        crate::set_errno(libc::EINVAL);
        return -1;
    }
    // SAFETY: `mask` is a local set, alive for the call.
    unsafe { tc_sigsuspend(&mask) }
}

/// `sigwait`: returns 0 and the signal in `*sig`, or the error number.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sigwait(set: *const libc::sigset_t, sig: *mut c_int) -> c_int {
    // SAFETY: the caller's set (module docs).
    let set = unsafe { Mask::of(set) };
    loop {
        // SAFETY: the caller's arguments (module docs); the set's copy lives for the call.
        let r = unsafe { call(calls::RT_SIGTIMEDWAIT, args!(set.ptr(), 0, 0, SIGSET_SIZE)) };
        if r == -(libc::EINTR as c_long) {
            continue; // sigwait is not interrupted by other signals
        }
        if r < 0 {
            return (-r) as c_int;
        }
        // SAFETY: the caller passes a writable int.
        unsafe { *sig = r as c_int };
        return 0;
    }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sigsuspend(mask: *const libc::sigset_t) -> c_int {
    // SAFETY: the caller's mask (module docs).
    let mask = unsafe { Mask::of(mask) };
    // SAFETY: the caller's arguments (module docs); the mask's copy lives for the call.
    unsafe { c(calls::RT_SIGSUSPEND, args!(mask.ptr(), SIGSET_SIZE)) as c_int }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sigtimedwait(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const libc::timespec,
) -> c_int {
    // SAFETY: the caller's set (module docs).
    let set = unsafe { Mask::of(set) };
    // SAFETY: the caller's arguments (module docs); the set's copy lives for the call.
    let r = unsafe {
        c(
            calls::RT_SIGTIMEDWAIT,
            args!(set.ptr(), info, timeout, SIGSET_SIZE),
        ) as c_int
    };
    // As glibc's wrapper: the kernel's SI_TKILL (`raise`, `pthread_kill`, any `tgkill`) is
    // reported as SI_USER.
    if r >= 0 && !info.is_null() {
        // SAFETY: the call succeeded, so the kernel filled the caller's `*info`.
        unsafe {
            if (*info).si_code == SI_TKILL {
                (*info).si_code = libc::SI_USER;
            }
        }
    }
    r
}

/// The kernel's `si_code` for a signal sent by `tkill`/`tgkill` (`<asm-generic/siginfo.h>`).
const SI_TKILL: c_int = -6;

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_sigwaitinfo(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_sigtimedwait(set, info, std::ptr::null()) }
}

/// glibc (64-bit Linux): the signal calls of the code built without the header (a program given
/// the library with `LD_PRELOAD`, another library), defined for the process as the header
/// defines them for a program built with it: the cancel signal is the C library's own there, so
/// each refuses it as glibc's refuse glibc's own signals, and is the C library's call otherwise
/// (`sigaction`, `signal`, `bsd_signal` and `sysv_signal` refuse it in the interposed
/// definitions: `c_abi::refuse_cancel_signal`). The library's own code never passes the cancel
/// signal to them (it builds its sets bit by bit, and sends its signal with `tgkill`).
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod for_the_process {
    use super::{einval, handler_einval, ours, sigset_public};
    use crate::threads::next::system_fn as system;
    use libc::c_int;

    /// `sigaddset`: `EINVAL` for the cancel signal.
    ///
    /// # Safety
    /// As `sigaddset`.
    #[no_mangle]
    pub unsafe extern "C" fn sigaddset(set: *mut libc::sigset_t, sig: c_int) -> c_int {
        if sig == ours() {
            return einval();
        }
        let f = system!(c"sigaddset" => unsafe extern "C" fn(*mut libc::sigset_t, c_int) -> c_int);
        // SAFETY: the caller's arguments.
        unsafe { f(set, sig) }
    }

    /// `sigdelset`: `EINVAL` for the cancel signal.
    ///
    /// # Safety
    /// As `sigdelset`.
    #[no_mangle]
    pub unsafe extern "C" fn sigdelset(set: *mut libc::sigset_t, sig: c_int) -> c_int {
        if sig == ours() {
            return einval();
        }
        let f = system!(c"sigdelset" => unsafe extern "C" fn(*mut libc::sigset_t, c_int) -> c_int);
        // SAFETY: the caller's arguments.
        unsafe { f(set, sig) }
    }

    /// `sigfillset`: without the cancel signal, as glibc's fills without its own.
    ///
    /// # Safety
    /// As `sigfillset`.
    #[no_mangle]
    pub unsafe extern "C" fn sigfillset(set: *mut libc::sigset_t) -> c_int {
        let f = system!(c"sigfillset" => unsafe extern "C" fn(*mut libc::sigset_t) -> c_int);
        // SAFETY: the caller's set; filled, it is initialised.
        unsafe {
            let r = f(set);
            if r == 0 {
                *set = thread_cancel::c_abi::without_cancel_signal(&*set);
            }
            r
        }
    }

    /// `pthread_kill`: `EINVAL` for the cancel signal (the program cannot send it).
    ///
    /// # Safety
    /// As `pthread_kill`.
    #[no_mangle]
    pub unsafe extern "C" fn pthread_kill(thread: libc::pthread_t, sig: c_int) -> c_int {
        if sig == ours() {
            return libc::EINVAL;
        }
        let f = system!(c"pthread_kill" => unsafe extern "C" fn(libc::pthread_t, c_int) -> c_int);
        // SAFETY: the caller's arguments.
        unsafe { f(thread, sig) }
    }

    /// `pthread_sigqueue`: `EINVAL` for the cancel signal.
    ///
    /// # Safety
    /// As `pthread_sigqueue`.
    #[no_mangle]
    pub unsafe extern "C" fn pthread_sigqueue(
        thread: libc::pthread_t,
        sig: c_int,
        value: libc::sigval,
    ) -> c_int {
        if sig == ours() {
            return libc::EINVAL;
        }
        let f = system!(c"pthread_sigqueue" => unsafe extern "C" fn(libc::pthread_t, c_int, libc::sigval) -> c_int);
        // SAFETY: the caller's arguments.
        unsafe { f(thread, sig, value) }
    }

    /// `raise`: -1 with `EINVAL` for the cancel signal.
    #[no_mangle]
    pub extern "C" fn raise(sig: c_int) -> c_int {
        if sig == ours() {
            return einval();
        }
        let f = system!(c"raise" => unsafe extern "C" fn(c_int) -> c_int);
        // SAFETY: no memory arguments.
        unsafe { f(sig) }
    }

    /// `sigset` (X/Open): `SIG_ERR` with `EINVAL` for the cancel signal; glibc's `sigset` made
    /// of the public calls otherwise (as the header's).
    ///
    /// # Safety
    /// As `sigset`.
    #[no_mangle]
    pub unsafe extern "C" fn sigset(sig: c_int, disp: libc::sighandler_t) -> libc::sighandler_t {
        if sig == ours() {
            return handler_einval();
        }
        // SAFETY: the caller's arguments.
        unsafe { sigset_public(sig, disp) }
    }

    /// Defines an X/Open call of one signal (and an `int`), -1 with `EINVAL` for the cancel
    /// signal, the C library's otherwise.
    macro_rules! refusing {
        ($(#[$doc:meta])* $name:ident = $cname:literal ($($arg:ident: $t:ty),*)) => {
            $(#[$doc])*
            #[no_mangle]
            pub extern "C" fn $name(sig: c_int $(, $arg: $t)*) -> c_int {
                if sig == ours() {
                    return einval();
                }
                let f = system!($cname => unsafe extern "C" fn(c_int $(, $t)*) -> c_int);
                // SAFETY: no memory arguments.
                unsafe { f(sig $(, $arg)*) }
            }
        };
    }

    refusing!(
        /// `sighold`: -1 with `EINVAL` for the cancel signal (it is never blocked).
        sighold = c"sighold"()
    );
    refusing!(
        /// `sigrelse`: -1 with `EINVAL` for the cancel signal.
        sigrelse = c"sigrelse"()
    );
    refusing!(
        /// `sigignore`: -1 with `EINVAL` for the cancel signal.
        sigignore = c"sigignore"()
    );
    refusing!(
        /// `siginterrupt`: -1 with `EINVAL` for the cancel signal (its handler's flags are the
        /// library's).
        siginterrupt = c"siginterrupt"(flag: c_int)
    );
}
