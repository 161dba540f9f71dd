//! Cancellable system calls: the trampoline's Rust face, the cancel signal and its handler.

#[cfg(target_arch = "aarch64")]
use super::aarch64 as arch;
#[cfg(target_arch = "x86_64")]
use super::x86_64 as arch;

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Once;

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
/// # Safety
/// `word` must point to the calling thread's live state word; the arguments must be valid for
/// system call `nr` (pointers to memory that stays valid and appropriately borrowed for the
/// call, as for `libc::syscall`).
#[inline(always)]
pub(crate) unsafe fn syscall_cp(
    word: *const u32,
    nr: libc::c_long,
    a: [libc::c_long; 6],
) -> CpResult {
    let [a1, a2, a3, a4, a5, a6] = a;
    // (A test the compiler folds away: the arguments are constants at nearly every call.)
    // SAFETY (both): forwarded from the caller; the trampoline follows the C calling
    // convention and clobbers only caller-saved registers.
    let r = if a5 == 0 && a6 == 0 {
        unsafe { thread_cancel_syscall_cp4(word, nr, a1, a2, a3, a4) }
    } else {
        unsafe { thread_cancel_syscall_cp(word, nr, a1, a2, a3, a4, a5, a6) }
    };
    if r == CANCELED as libc::c_long {
        CpResult::Canceled
    } else {
        CpResult::Done(r)
    }
}

/// 0 until chosen; then the signal used to interrupt blocked cancellable calls.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();

/// The default cancel signal: `SIGRTMIN + 7` (glibc keeps the first two real-time signals for
/// itself; applications that use real-time signals usually count up from `SIGRTMIN`).
fn default_signal() -> i32 {
    libc::SIGRTMIN() + 7
}

/// Chooses the cancel signal; only before [`prepare`] (the first thread spawned or adopted).
pub(crate) fn set_signal(sig: i32) -> Result<(), &'static str> {
    if !(libc::SIGRTMIN()..=libc::SIGRTMAX()).contains(&sig) {
        return Err("the cancel signal must be a real-time signal");
    }
    let mut done = false;
    INSTALL.call_once(|| {
        super::fence::register();
        SIGNAL.store(sig, Ordering::Relaxed);
        install(sig);
        done = true;
    });
    if done {
        Ok(())
    } else {
        Err("the cancel signal is already in use")
    }
}

/// The cancel signal if the handler is installed (some thread has a control block).
pub(crate) fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::Acquire) {
        0 => None,
        s => Some(s),
    }
}

/// Installs the cancel signal's handler and registers the process for the asymmetric fence
/// (once per process). Called whenever a thread gets a control block (so before it can make
/// a cancellable call, and before anyone can cancel it) and before a region is entered. A
/// canceler needs no call: a thread it could signal has a control block, so the handler is
/// in place.
#[inline]
pub(crate) fn prepare() {
    INSTALL.call_once(|| {
        super::fence::register();
        let sig = default_signal();
        install(sig);
        SIGNAL.store(sig, Ordering::Release);
    });
}

fn install(sig: i32) {
    // SAFETY: `sigaction` is plain data; all-zero is a valid value (empty mask, no flags).
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = on_signal as *const () as usize;
    // SA_RESTART: calls outside our trampoline that the signal interrupts are restarted.
    sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: `sa` is fully initialised and the handler is async-signal-safe (it reads a
    // thread-local pointer and an atomic, and writes the saved program counter).
    let r = unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) };
    assert_eq!(r, 0, "thread-cancel: sigaction failed");
}

extern "C" fn on_signal(_sig: libc::c_int, _info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
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
    if (begin..end).contains(&at) {
        if crate::point::cp_must_act() {
            // SAFETY: as above; the kernel resumes the thread at the new program counter,
            // where the trampoline returns `CANCELED` with the stack as it was at its entry.
            unsafe { *pc = cancel };
        }
    } else if let Some(region) = crate::point::async_must_act() {
        // SAFETY: `uc` is this handler's context; `region` is the thread's current region.
        unsafe { super::region::on_signal(uc, region) };
    }
}

/// Sends the cancel signal to thread `t`.
///
/// # Safety
/// `t` must be a live thread (not yet exited and joined).
pub(crate) unsafe fn kill(t: libc::pthread_t, sig: i32) {
    // SAFETY: the caller guarantees `t` is alive.
    unsafe {
        libc::pthread_kill(t, sig);
    }
}
