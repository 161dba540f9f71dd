//! Cancellable system calls: the trampoline's Rust face, the cancel signal and its handler.

use super::arch;

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

#[cfg(not(target_arch = "x86_64"))]
extern "C" {
    fn thread_cancel_syscall_cp(
        word: *const u32,
        nr: libc::c_long,
        a1: libc::c_long,
        a2: libc::c_long,
        a3: libc::c_long,
        a4: libc::c_long,
        a5: libc::c_long,
        a6: libc::c_long,
    ) -> libc::c_long;
    fn thread_cancel_syscall_cp4(
        word: *const u32,
        nr: libc::c_long,
        a1: libc::c_long,
        a2: libc::c_long,
        a3: libc::c_long,
        a4: libc::c_long,
    ) -> libc::c_long;
}

extern "C" {
    static thread_cancel_cp_begin: u8;
    static thread_cancel_cp_end: u8;
    static thread_cancel_cp_cancel: u8;
}

/// Returned by the trampoline instead of a system-call result: act on the request. Outside
/// the kernel's return range `-4095..=isize::MAX`.
pub(crate) const CANCELED: i64 = i64::MIN;

/// The result of a cancellable system call.
pub(crate) enum CpResult {
    /// The call ran (and completed or failed): the raw return value (`-errno` on failure).
    Done(libc::c_long),
    /// The call was not made, or was aborted before it had any effect: act on the request.
    Canceled,
}

/// Issues system call `nr` such that it is aborted without effect if the state word pointed to
/// by `word` says (now, or when the cancel signal arrives while it blocks) that a request must
/// be acted on.
///
/// The hot path: no check that the handler is installed. It was installed by [`prepare`] when
/// the calling thread got its state word, and only a canceler that found the thread inside
/// this call sends the signal.
///
/// The call's arguments are returned too, as they are after the call: the same values, but on
/// x86_64 read back from the registers the trampoline preserved, so that a caller that needs
/// them afterwards (to make the call again on a rare path) keeps no copies of its own across
/// the call (the cost of an interposed call over the raw system call).
///
/// # Safety
/// `word` must point to the calling thread's live state word; the arguments must be valid for
/// system call `nr` (pointers to memory that stays valid and appropriately borrowed for the
/// call, as for `libc::syscall`).
#[inline(always)]
pub(crate) unsafe fn syscall_cp(
    word: *const u32,
    nr: libc::c_long,
    a: [libc::c_long; 6],
) -> (CpResult, [libc::c_long; 6]) {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let [mut a1, mut a2, mut a3, mut a4, mut a5, mut a6] = a;
    #[cfg(target_arch = "x86_64")]
    let r = if reads_three_arguments(nr) {
        let r: libc::c_long;
        // SAFETY: as below; a call whose kernel side reads only its first three arguments
        // (`reads_three_arguments`) needs nothing in `r10`, `r8` and `r9`, so they are left to
        // the compiler: the trampoline preserves them, and the values the caller keeps across
        // the call (its control block, the flag it restores) stay there instead of in
        // callee-saved registers that the function would have to save and restore.
        unsafe {
            core::arch::asm!(
                "call thread_cancel_cp_begin",
                inout("rax") nr => r,
                inout("rdi") a1,
                inout("rsi") a2,
                inout("rdx") a3,
                inout("r11") word => _,
                out("rcx") _,
            );
        }
        r
    } else {
        let r: libc::c_long;
        // SAFETY: forwarded from the caller. The trampoline (`arch/x86_64.rs`) takes the
        // system call's own registers and the word's address in `r11`, and changes only `rax`
        // (the result), `rcx`, `r11` and the flags; every other register, the argument
        // registers included, is as it was (the kernel preserves them across `syscall`, and
        // the cancel label only sets `rax`). It uses the stack only for the `call`'s return
        // address (no `nostack`: the red zone is free). It reads the word and the kernel
        // reads and writes the memory the arguments point to (no `nomem`).
        unsafe {
            core::arch::asm!(
                "call thread_cancel_cp_begin",
                inout("rax") nr => r,
                inout("rdi") a1,
                inout("rsi") a2,
                inout("rdx") a3,
                inout("r10") a4,
                inout("r8") a5,
                inout("r9") a6,
                inout("r11") word => _,
                out("rcx") _,
            );
        }
        r
    };
    // (A test the compiler folds away: the arguments are constants at nearly every call.)
    // SAFETY (both): forwarded from the caller; the trampoline follows the C calling
    // convention and clobbers only caller-saved registers.
    #[cfg(not(target_arch = "x86_64"))]
    let r = if a5 == 0 && a6 == 0 {
        unsafe { thread_cancel_syscall_cp4(word, nr, a1, a2, a3, a4) }
    } else {
        unsafe { thread_cancel_syscall_cp(word, nr, a1, a2, a3, a4, a5, a6) }
    };
    let r = if r == CANCELED as libc::c_long {
        CpResult::Canceled
    } else {
        CpResult::Done(r)
    };
    (r, [a1, a2, a3, a4, a5, a6])
}

/// Whether the kernel's side of system call `nr` reads no argument beyond the third (so the
/// registers of the fourth to sixth need not be set). Only calls listed here; any other is
/// taken to read all six. Folded away where `nr` is a constant (every call site but the
/// C ABI's generic ones).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn reads_three_arguments(nr: libc::c_long) -> bool {
    matches!(
        nr,
        libc::SYS_read
            | libc::SYS_write
            | libc::SYS_readv
            | libc::SYS_writev
            | libc::SYS_recvmsg
            | libc::SYS_sendmsg
            | libc::SYS_connect
            | libc::SYS_accept
            | libc::SYS_poll
            | libc::SYS_fsync
            | libc::SYS_fdatasync
            | libc::SYS_flock
            | libc::SYS_nanosleep
            | libc::SYS_close
    )
}

/// 0 until the handler is installed; then the signal used to interrupt blocked cancellable
/// calls. Written once, under `INSTALL`.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The control layer's answers to the handler's questions ([`set_decisions`]); null until the
/// first control block exists, when no thread can have been signalled by us.
static DECISIONS: AtomicPtr<crate::sys::Decisions> = AtomicPtr::new(std::ptr::null_mut());

/// The scope layer's answer to "has a deadline of this thread's runs passed?" (a `fn() ->
/// bool` as an address; 0: never asked), set when it first arms a deadline tick
/// ([`arm_deadline_tick`]: no timer thread can mark deadlines). Async-signal-safe.
static DEADLINE_DUE: AtomicUsize = AtomicUsize::new(0);

/// Registers [`DEADLINE_DUE`]'s function.
pub(crate) fn set_deadline_due(f: fn() -> bool) {
    DEADLINE_DUE.store(f as usize, Ordering::Release);
}

/// Whether the handler must stop the trampoline for a deadline that passed (no request yet:
/// nothing marked the scope). The trampoline then returns `CANCELED` with nothing done, and
/// the point expires the deadline in normal context.
fn deadline_due() -> bool {
    let f = DEADLINE_DUE.load(Ordering::Acquire);
    if f == 0 {
        return false;
    }
    // SAFETY: a `fn() -> bool` stored by `set_deadline_due`.
    let due = unsafe { std::mem::transmute::<usize, fn() -> bool>(f) };
    due()
}

/// A kernel timer that sends the cancel signal to the calling thread when a deadline comes:
/// for a run blocked in a system call while no timer thread runs in the process. Deleted when
/// dropped (a signal it queued and not yet delivered is discarded with it).
pub(crate) struct DeadlineTick(libc::timer_t);

/// Arms a [`DeadlineTick`] for the calling thread at `deadline`; `None` if no cancel signal is
/// installed or the system refuses a timer.
pub(crate) fn arm_deadline_tick(deadline: std::time::Instant) -> Option<DeadlineTick> {
    let sig = signal()?;
    // SAFETY: `sigevent` is plain data; all-zero is a valid value before the fields are set.
    let mut ev: libc::sigevent = unsafe { std::mem::zeroed() };
    ev.sigev_notify = libc::SIGEV_THREAD_ID;
    ev.sigev_signo = sig;
    // SAFETY: `gettid` has no arguments and cannot fail.
    ev.sigev_notify_thread_id = unsafe { libc::syscall(libc::SYS_gettid) } as libc::c_int;
    let mut id: libc::timer_t = std::ptr::null_mut();
    // SAFETY: a valid clock, event and out-pointer.
    if unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut ev, &mut id) } != 0 {
        return None;
    }
    let tick = DeadlineTick(id);
    let left = deadline
        .saturating_duration_since(std::time::Instant::now())
        .max(std::time::Duration::from_nanos(1));
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: left.as_secs().min(i32::MAX as u64) as _,
            tv_nsec: left.subsec_nanos() as libc::c_long,
        },
    };
    // SAFETY: `id` is the timer just made; `spec` is valid.
    if unsafe { libc::timer_settime(id, 0, &spec, std::ptr::null_mut()) } != 0 {
        return None;
    }
    Some(tick)
}

impl Drop for DeadlineTick {
    fn drop(&mut self) {
        // SAFETY: the timer made by `arm_deadline_tick`, deleted once.
        unsafe { libc::timer_delete(self.0) };
    }
}

/// Registers the table the signal handler decides with (once, by the first control block).
pub(crate) fn set_decisions(d: &'static crate::sys::Decisions) {
    DECISIONS.store(
        (d as *const crate::sys::Decisions).cast_mut(),
        Ordering::Release,
    );
}
/// Serialises the choice and installation of the signal.
static INSTALL: Mutex<()> = Mutex::new(());

/// The default cancel signal: `SIGRTMIN + 7` (glibc keeps the first two real-time signals for
/// itself; applications that use real-time signals usually count up from `SIGRTMIN`). The C
/// library chooses the system's `SIGRTMIN` instead, before `main`, and hides it from C programs
/// (`io::set_signal`'s docs). With `interpose` the crate defines the C library's
/// `__libc_current_sigrtmin` for the whole process, so it takes the C library's first
/// real-time signal and every module's `SIGRTMIN` is the next one (`interpose/calls.rs`).
pub(crate) fn default_signal() -> i32 {
    #[cfg(thread_cancel_interpose)]
    {
        read_signal_from_environment();
        match ENVIRONMENT_SIGNAL.load(Ordering::Relaxed) {
            0 => sigrtmin(),
            s => s,
        }
    }
    #[cfg(not(thread_cancel_interpose))]
    {
        sigrtmin() + 7
    }
}

/// With `interpose`: the signal `THREAD_CANCEL_SIGNAL` names, read at load
/// ([`read_signal_from_environment`]); 0 if none.
#[cfg(thread_cancel_interpose)]
static ENVIRONMENT_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The real-time signals a program may give the cancel signal from its environment: the C
/// library's first eight (a module's `SIGRTMIN` is then the one after it).
#[cfg(any(feature = "c-abi", thread_cancel_interpose))]
pub(crate) const CHOOSABLE: i32 = 8;

/// With `interpose`, once, at load or at the first use of the default if that comes first (a
/// constructor of higher priority, such as the C header's): the environment variable
/// `THREAD_CANCEL_SIGNAL`, a signal number among the C library's first eight real-time signals,
/// becomes the default cancel signal (for a program, C or Rust, that cannot call
/// `io::set_signal` before its libraries read `SIGRTMIN`). A value that is not such a signal is
/// reported on stderr and the default stays. `getenv` and a parse: no allocation.
#[cfg(thread_cancel_interpose)]
pub(crate) fn read_signal_from_environment() {
    static READ: AtomicBool = AtomicBool::new(false);
    if READ.swap(true, Ordering::Relaxed) {
        return;
    }
    // SAFETY: a nul-terminated name; at load no other thread changes the environment.
    let v = unsafe { libc::getenv(c"THREAD_CANCEL_SIGNAL".as_ptr()) };
    if v.is_null() {
        return;
    }
    // SAFETY: `getenv` returned a nul-terminated string of the environment.
    let text = unsafe { std::ffi::CStr::from_ptr(v) }.to_bytes();
    let min = sigrtmin();
    match std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
    {
        Some(s) if (min..min + CHOOSABLE).contains(&s) => {
            ENVIRONMENT_SIGNAL.store(s, Ordering::Relaxed);
        }
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "thread-cancel: THREAD_CANCEL_SIGNAL={}: not one of the C library's first {} \
                 real-time signals ({}..={}); the cancel signal stays {}",
                String::from_utf8_lossy(text),
                CHOOSABLE,
                min,
                min + CHOOSABLE - 1,
                min
            );
        }
    }
}

/// `SIGRTMIN` as every module of the process sees it (the crate's `__libc_current_sigrtmin`,
/// the C header's): the one after the cancel signal `ours` when that is among the C library's
/// first [`CHOOSABLE`] real-time signals (its first, or the one `THREAD_CANCEL_SIGNAL` chose),
/// so the program's range lies above it; the C library's own (`min`) for a signal chosen higher.
#[cfg(any(feature = "c-abi", thread_cancel_interpose))]
pub(crate) fn program_sigrtmin(min: i32, ours: i32) -> i32 {
    if (min..min + CHOOSABLE).contains(&ours) {
        ours + 1
    } else {
        min
    }
}

/// The C library's `SIGRTMIN`, as its own `__libc_current_sigrtmin` answers. With `interpose`
/// the crate defines that function itself (so that every module of the process sees one
/// `SIGRTMIN`, above the cancel signal: `interpose/calls.rs`) and reads the C library's
/// definition behind it, found once, at load (`interpose` resolves it from an `.init_array`
/// entry: never first in a signal handler).
pub(crate) fn sigrtmin() -> i32 {
    #[cfg(thread_cancel_interpose)]
    {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let mut p = NEXT.load(Ordering::Relaxed);
        if p == 0 {
            // SAFETY: a nul-terminated name; `RTLD_NEXT` is a valid handle for `dlsym`.
            p = unsafe { libc::dlsym(libc::RTLD_NEXT, c"__libc_current_sigrtmin".as_ptr()) }
                as usize;
            if p == 0 {
                return libc::SIGRTMIN();
            }
            NEXT.store(p, Ordering::Relaxed);
        }
        // SAFETY: the C library's `__libc_current_sigrtmin`, of this signature.
        let f = unsafe { std::mem::transmute::<usize, extern "C" fn() -> libc::c_int>(p) };
        f()
    }
    #[cfg(not(thread_cancel_interpose))]
    libc::SIGRTMIN()
}

/// Why the cancel signal could not be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignalError {
    /// Not a real-time signal.
    NotRealtime(i32),
    /// The handler is already installed for another signal (the crate has started).
    TooLate { requested: i32, in_use: i32 },
    /// Someone else's handler is installed for this signal; it is not replaced.
    HasHandler(i32),
}

impl SignalError {
    /// The error's kind for `io::set_signal`.
    pub(crate) fn kind(&self) -> std::io::ErrorKind {
        match self {
            Self::NotRealtime(_) => std::io::ErrorKind::InvalidInput,
            Self::TooLate { .. } => std::io::ErrorKind::Other,
            Self::HasHandler(_) => std::io::ErrorKind::ResourceBusy,
        }
    }
}

impl std::fmt::Display for SignalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rt = |s: i32| s - sigrtmin();
        match *self {
            Self::NotRealtime(s) => write!(
                f,
                "signal {s} is not a real-time signal: the cancel signal must be one \
                 (SIGRTMIN..=SIGRTMAX)"
            ),
            Self::TooLate { requested, in_use } => write!(
                f,
                "too late to choose signal {requested} (SIGRTMIN+{}): the cancel signal is \
                 chosen when the crate's first thread is spawned or adopted, and it is signal \
                 {in_use} (SIGRTMIN+{}); call set_signal first thing in main",
                rt(requested),
                rt(in_use)
            ),
            Self::HasHandler(s) => write!(
                f,
                "signal {s} (SIGRTMIN+{}) already has a handler, which thread-cancel does not \
                 replace; choose a free real-time signal with thread_cancel::io::set_signal \
                 before the first thread is spawned or adopted",
                rt(s)
            ),
        }
    }
}

fn install_lock() -> std::sync::MutexGuard<'static, ()> {
    INSTALL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Chooses the cancel signal; only before [`prepare`] (the first thread spawned or adopted).
/// Choosing the signal already in use is no change.
pub(crate) fn set_signal(sig: i32) -> Result<(), SignalError> {
    if !(sigrtmin()..=libc::SIGRTMAX()).contains(&sig) {
        return Err(SignalError::NotRealtime(sig));
    }
    let _g = install_lock();
    match SIGNAL.load(Ordering::Acquire) {
        0 => install(sig),
        s if s == sig => Ok(()),
        s => Err(SignalError::TooLate {
            requested: sig,
            in_use: s,
        }),
    }
}

/// The cancel signal if the handler is installed (some thread has a control block).
pub(crate) fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::Acquire) {
        0 => None,
        s => Some(s),
    }
}

/// A copy of `set` without the cancel signal (the one in use, or the one that will be if no
/// thread has started yet): the mask of a wait must never block it (the wait could no longer
/// be interrupted) and the set of a signal wait must never take it (the request's signal would
/// be returned as the call's result). glibc does the same for its own cancel signal. For the
/// Rust points and the C ABI's alike.
pub(crate) fn without_cancel_signal(set: &libc::sigset_t) -> libc::sigset_t {
    let mut copy = *set;
    set_member(&mut copy, signal().unwrap_or_else(default_signal), false);
    copy
}

/// Adds (`member`) or removes signal `sig` (1 to the kernel's `_NSIG - 1`) in `set`, by its bit
/// (Linux's layout: bit `sig - 1` of an array of words, in every C library): never through the
/// C library's `sigaddset`/`sigdelset`, which a C library of ours defines for the process to
/// refuse the cancel signal, as glibc's refuse glibc's own.
fn set_member(set: &mut libc::sigset_t, sig: i32, member: bool) {
    const BITS: usize = libc::c_ulong::BITS as usize;
    let words = std::mem::size_of::<libc::sigset_t>() / std::mem::size_of::<libc::c_ulong>();
    let Some(bit) = usize::try_from(sig - 1).ok().filter(|b| b / BITS < words) else {
        return;
    };
    // SAFETY: `sigset_t` is an array of `c_ulong` words on Linux (`words` of them, counted from
    // its size), plain data; the index is below `words`.
    unsafe {
        let w = std::ptr::from_mut(set)
            .cast::<libc::c_ulong>()
            .add(bit / BITS);
        let mask: libc::c_ulong = 1 << (bit % BITS);
        if member {
            *w |= mask;
        } else {
            *w &= !mask;
        }
    }
}

/// A set holding the cancel signal alone (the one in use, or the one that will be).
#[cfg(feature = "c-abi")]
pub(crate) fn cancel_signal_set() -> libc::sigset_t {
    // SAFETY: all-zero is the empty set (Linux's layout, as for `set_member`).
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    set_member(&mut set, signal().unwrap_or_else(default_signal), true);
    set
}

thread_local! {
    /// Whether the calling thread is inside the crate's own `sigaction` call on the cancel
    /// signal ([`own_signal_call`]).
    static OWN_SIGNAL_CALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread's `sigaction` of the cancel signal is the crate's own (its
/// handler's installation, or the check that it is still there): the interposed `sigaction`
/// lets it through where it refuses the program's.
#[cfg(thread_cancel_interpose)]
pub(crate) fn own_signal_call() -> bool {
    OWN_SIGNAL_CALL.with(std::cell::Cell::get)
}

/// Calls the C library's `sigaction` (or the interposed one) as the crate's own call.
///
/// # Safety
/// As `sigaction(2)`.
unsafe fn own_sigaction(sig: i32, act: *const libc::sigaction, old: *mut libc::sigaction) -> i32 {
    let was = OWN_SIGNAL_CALL.with(|o| o.replace(true));
    // SAFETY: the caller's contract.
    let r = unsafe { libc::sigaction(sig, act, old) };
    OWN_SIGNAL_CALL.with(|o| o.set(was));
    r
}

/// Installs the cancel signal's handler and registers the process for the asymmetric fence
/// (once per process). Called whenever a thread gets a control block (so before it can make
/// a cancellable call, and before anyone can cancel it) and before a region is entered. A
/// canceler needs no call: a thread it could signal has a control block, so the handler is
/// in place.
///
/// # Panics
/// If the signal (the default one: none was chosen) already has someone else's handler: the
/// crate cannot work without the signal and does not take it from its owner. The message says
/// to choose another signal with `io::set_signal`; every later call panics the same way until
/// one is chosen.
#[inline]
pub(crate) fn prepare() {
    if SIGNAL.load(Ordering::Acquire) == 0 {
        prepare_cold();
    }
}

#[cold]
#[inline(never)]
fn prepare_cold() {
    let g = install_lock();
    if SIGNAL.load(Ordering::Acquire) != 0 {
        return;
    }
    if let Err(e) = install(default_signal()) {
        drop(g);
        panic!("thread-cancel: {e}");
    }
}

/// The handler installed for `sig` (`SIG_DFL`, `SIG_IGN` or a function's address).
fn current_handler(sig: i32) -> Option<usize> {
    // SAFETY: `sigaction` is plain data; all-zero is a valid value.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only queries; `old` is valid for writes.
    let r = unsafe { own_sigaction(sig, std::ptr::null(), &mut old) };
    (r == 0).then_some(old.sa_sigaction)
}

/// Installs the handler for `sig` unless a handler of someone else's is there (`SIG_DFL` and
/// `SIG_IGN` are taken over: an ignored signal is inherited across `exec`, so it says nothing
/// about this program); then publishes `sig`. Called under `INSTALL`, with no signal yet.
fn install(sig: i32) -> Result<(), SignalError> {
    match current_handler(sig) {
        Some(libc::SIG_DFL | libc::SIG_IGN) => {}
        _ => return Err(SignalError::HasHandler(sig)),
    }
    super::fence::register();
    // SAFETY: `sigaction` is plain data; all-zero is a valid value (empty mask, no flags).
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = on_signal as *const () as usize;
    // SA_RESTART: calls outside our trampoline that the signal interrupts are restarted.
    sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: `sa` is fully initialised and the handler is async-signal-safe (it reads a
    // thread-local pointer and atomics, writes the saved context, and may send a signal).
    let r = unsafe { own_sigaction(sig, &sa, std::ptr::null_mut()) };
    assert_eq!(r, 0, "thread-cancel: sigaction failed");
    SIGNAL.store(sig, Ordering::Release);
    Ok(())
}

/// Whether `handler` (a `sa_sigaction` value) is the crate's own handler of the cancel signal:
/// the interposed `sigaction` installs it as it is (feature `interpose`).
#[cfg(thread_cancel_interpose)]
pub(crate) fn is_cancel_handler(handler: usize) -> bool {
    handler == on_signal as *const () as usize
}

extern "C" fn on_signal(sig: libc::c_int, _info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    // The addresses of the trampoline's labels (never read through).
    let (begin, end, cancel) = (
        &raw const thread_cancel_cp_begin as u64,
        &raw const thread_cancel_cp_end as u64,
        &raw const thread_cancel_cp_cancel as u64,
    );
    // SAFETY: this is an SA_SIGINFO handler, so `uc` is the kernel's context for this thread.
    let pc = unsafe { arch::pc(uc) };
    // SAFETY: `pc` points into that context, valid for the handler's duration.
    let at = unsafe { *pc };
    // SAFETY: null or a `&'static Decisions` (`set_decisions`).
    let Some(decide) = (unsafe { DECISIONS.load(Ordering::Acquire).as_ref() }) else {
        return;
    };
    if (begin..end).contains(&at) {
        if (decide.cp_must_act)() || deadline_due() {
            // SAFETY: as above; the kernel resumes the thread at the new program counter,
            // where the trampoline returns `CANCELED` with the stack as it was at its entry.
            unsafe { *pc = cancel };
        }
    } else if let Some(region) = (decide.async_must_act)() {
        // SAFETY: `uc` is this handler's context; `region` is the thread's current region.
        unsafe { super::region::on_signal(uc, region) };
    } else if at != end && (decide.in_call_must_act)() {
        // SAFETY: `uc` is this handler's context and `sig` the signal being handled.
        unsafe { defer(uc, sig) };
    }
}

/// The signal landed in code that interrupted our call — a handler of the user's. The call
/// resumes (or is restarted by the kernel, `SA_RESTART`) only when that handler returns, at an
/// address in the trampoline's range. So: block `sig` in the interrupted context's mask and
/// send it again to this thread. It stays pending until that context's mask is replaced — by
/// the `sigreturn` that ends the user's handler, which restores the mask from before it —
/// and is then delivered with the program counter back in our call (at the restarted
/// `syscall` instruction: act; or at `cp_end` after `EINTR`: nothing to do, the call's caller
/// acts on `EINTR`). It cannot loop: each delivery here leaves the signal blocked until the
/// interrupted context ends.
///
/// # Safety
/// `uc` must be the context argument of this `SA_SIGINFO` handler, `sig` its signal.
unsafe fn defer(uc: *mut libc::c_void, sig: i32) {
    let uc = uc.cast::<libc::ucontext_t>();
    // SAFETY: `uc` is the kernel's context for the interrupted code; `uc_sigmask` is the mask
    // `sigreturn` restores (the same field on every architecture).
    set_member(unsafe { &mut (*uc).uc_sigmask }, sig, true);
    // SAFETY: `__errno_location` returns this thread's errno; the handler must leave it as it
    // found it. getpid, gettid and tgkill are async-signal-safe system calls with scalar
    // arguments.
    unsafe {
        let errno = *errno_location();
        let tid = libc::syscall(libc::SYS_gettid);
        libc::syscall(libc::SYS_tgkill, libc::getpid() as libc::c_long, tid, sig);
        *errno_location() = errno;
    }
}

/// Whether the replacement of the handler was reported (once per process).
static REPORTED: AtomicBool = AtomicBool::new(false);

/// A thread the cancel signal can be sent to: its pthread id and its kernel thread id, both
/// read by the thread itself ([`Target::current`]; again in a forked child, where the forking
/// thread has a new kernel id: [`Target::after_fork_in_child`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target {
    pub(crate) id: crate::sys::pthread::Id,
    tid: libc::pid_t,
}

impl Target {
    /// The calling thread.
    pub(crate) fn current() -> Self {
        Target {
            id: crate::sys::pthread::Id::current(),
            // SAFETY: a system call without arguments.
            tid: unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t,
        }
    }

    /// In a forked child, in the forking thread (the child's only thread): its new kernel id.
    pub(crate) fn after_fork_in_child(&mut self) {
        *self = Target::current();
    }
}

/// This process's id, read once (0: not yet; a forked child reads it again:
/// [`after_fork_in_child`]).
static PID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// In a forked child, while the forking thread is its only thread (the control blocks' fork
/// handler, registered before any thread can be sent the signal): the child's process id is
/// read again on first use.
pub(crate) fn after_fork_in_child() {
    PID.store(0, Ordering::Relaxed);
}

fn pid() -> libc::pid_t {
    match PID.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: no preconditions.
            let p = unsafe { libc::getpid() };
            PID.store(p, Ordering::Relaxed);
            p
        }
        p => p,
    }
}

/// Sends the cancel signal to thread `t` — unless the signal's handler is no longer ours
/// (someone installed `SIG_DFL`, `SIG_IGN` or a handler of theirs after the start): then no
/// signal is sent (`SIG_DFL` of a real-time signal would end the process), the replacement is
/// reported once on stderr, and the request waits for the thread's next cancellation point.
///
/// The signal goes by `tgkill` to the kernel thread id the thread recorded itself, not by
/// `pthread_kill`, which blocks every signal around its own check that the thread has not
/// exited (three system calls where one does): the caller guarantees it is alive, so its
/// kernel id names it and no other thread.
///
/// # Safety
/// `t` must be a live thread (not yet exited and joined) of this process, recorded by the
/// thread itself in this process (not in a parent before a `fork`).
pub(crate) unsafe fn kill(t: Target, sig: i32) {
    if current_handler(sig) != Some(on_signal as *const () as usize) {
        if !REPORTED.swap(true, Ordering::Relaxed) {
            let _ = writeln!(
                std::io::stderr(),
                "thread-cancel: the handler of the cancel signal {sig} (SIGRTMIN+{}) was \
                 replaced: cancel() cannot interrupt a thread blocked in a system call (the \
                 request waits for its next cancellation point). Leave this signal to \
                 thread-cancel, or choose another with thread_cancel::io::set_signal before \
                 the first thread.",
                sig - sigrtmin()
            );
        }
        return;
    }
    // SAFETY: the caller guarantees the thread is alive, so `t.tid` names it in this process;
    // `tgkill` takes scalar arguments.
    unsafe {
        libc::syscall(
            libc::SYS_tgkill,
            libc::c_long::from(pid()),
            libc::c_long::from(t.tid),
            libc::c_long::from(sig),
        );
    }
}

/// Takes back every instance of the cancel signal pending for the calling thread, and
/// unblocks the signal in its mask (the handler may have left it blocked there: see
/// [`defer`]). Called when a `CancelScope::run` that received a scope request ends, after
/// every delivery to the thread has returned, so every signal sent for it is pending or
/// already handled: afterwards none is on its way (nothing can interrupt later code).
pub(crate) fn drain() {
    let Some(sig) = signal() else {
        return;
    };
    // SAFETY: sigset operations on a local set; `sigtimedwait` with a zero timeout only
    // dequeues a pending signal of the set (it never blocks); `pthread_sigmask` changes the
    // calling thread's mask. errno is saved and restored, as the caller's code may read it.
    unsafe {
        let errno = *errno_location();
        let mut set: libc::sigset_t = std::mem::zeroed();
        set_member(&mut set, sig, true);
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let mut pending: libc::sigset_t = std::mem::zeroed();
        while libc::sigpending(&mut pending) == 0 && libc::sigismember(&pending, sig) == 1 {
            if libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) != sig {
                break;
            }
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        *errno_location() = errno;
    }
}

/// The calling thread's `errno` (glibc and musl: `__errno_location`; bionic: `__errno`).
pub(crate) fn errno_location() -> *mut libc::c_int {
    #[cfg(target_os = "android")]
    // SAFETY: returns the calling thread's errno; no preconditions.
    return unsafe { libc::__errno() };
    #[cfg(not(target_os = "android"))]
    // SAFETY: as above.
    unsafe {
        libc::__errno_location()
    }
}
