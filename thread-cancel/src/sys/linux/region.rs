//! Asynchronous-cancellation regions: the Rust face of the architecture's
//! `thread_cancel_region_enter` / `_leave` / `_act` (see `x86_64.rs`), and the signal handler's
//! part for them.

use super::arch;

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

extern "C" {
    fn thread_cancel_region_enter(
        ctx: *mut RegionCtx,
        f: unsafe extern "C" fn(*mut c_void),
        arg: *mut c_void,
    ) -> u64;
    fn thread_cancel_region_leave(ctx: *mut RegionCtx) -> !;
    static thread_cancel_region_act: u8;
}

/// Whether this layer has asynchronous regions: yes.
pub(crate) const ASYNC_REGIONS: bool = true;

/// What a thread in a region needs to leave it from any instruction. The assembly reads the
/// fields by offset: keep the layout.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct RegionCtx {
    /// The stack pointer to return to, while armed; 0 otherwise (written by the assembly).
    sp: AtomicU64,
    /// The thread's state word.
    word: *const u32,
    /// Called (on the interrupted stack, after the handler returns) instead of leaving at once:
    /// it must end by calling [`leave`] with the same context. `None`: leave at once.
    act: Option<unsafe extern "C-unwind" fn(*mut RegionCtx) -> !>,
}

impl RegionCtx {
    /// A disarmed region for the thread whose state word is `word`.
    pub(crate) fn new(
        word: *const u32,
        act: Option<unsafe extern "C-unwind" fn(*mut RegionCtx) -> !>,
    ) -> Self {
        Self {
            sp: AtomicU64::new(0),
            word,
            act,
        }
    }
}

/// How [`run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    /// `f` returned.
    Returned,
    /// The region was left through [`leave`]: `f` did not run (a request was pending at entry)
    /// or its frames were abandoned.
    Left,
}

/// Runs `f(arg)` in the region `ctx`: armed, so that [`leave`] (or the cancel signal, when the
/// word says so) makes this return [`Exit::Left`] at once.
///
/// # Safety
/// `ctx` must stay at this address for the call and be the region the signal handler finds for
/// this thread (or none); `f(arg)` must not unwind (an `extern "C"` function aborts if it
/// would); every frame `f` creates may be abandoned without its destructors running.
pub(crate) unsafe fn run(
    ctx: &RegionCtx,
    f: unsafe extern "C" fn(*mut c_void),
    arg: *mut c_void,
) -> Exit {
    super::syscall_cp::prepare();
    resolve_sanitizer_hook();
    // SAFETY: forwarded from the caller; the assembly follows the C calling convention and
    // restores every callee-saved register on both ways out.
    let r =
        unsafe { thread_cancel_region_enter(ctx as *const RegionCtx as *mut RegionCtx, f, arg) };
    if r == 0 {
        Exit::Returned
    } else {
        Exit::Left
    }
}

/// Leaves the armed region `ctx` of the calling thread from anywhere inside it: the frames
/// between are abandoned and [`run`] returns [`Exit::Left`].
///
/// # Safety
/// `ctx` must be armed (its [`run`] is on the calling thread's stack), and no frame between
/// may need its destructor to run.
#[cfg(feature = "c-abi")]
pub(crate) unsafe fn leave(ctx: *mut RegionCtx) -> ! {
    // Called at the deepest point, before the frames are abandoned: the sanitizer clears the
    // poisoning of the whole stack below its live part.
    abandoning_frames();
    // SAFETY: forwarded from the caller.
    unsafe { thread_cancel_region_leave(ctx) }
}

/// AddressSanitizer's `__asan_handle_no_return` if the process has it (a program built with
/// `-fsanitize=address`), else [`HOOK_ABSENT`]; [`HOOK_UNRESOLVED`] until the first region.
static SANITIZER_HOOK: AtomicUsize = AtomicUsize::new(HOOK_UNRESOLVED);
const HOOK_UNRESOLVED: usize = 0;
const HOOK_ABSENT: usize = 1;

/// Looks up the sanitizer's "no return" hook once per process, at the entry of a region (a
/// normal context): the region may be left from an asynchronous cancellation, where the
/// dynamic loader's lock of `dlsym` could be held by the interrupted code. The C ABI also calls
/// it in the thread that creates a thread (which may hold that lock: a library destructor run
/// by `dlclose`), so that the new thread never waits for it before its start routine.
pub(crate) fn resolve_sanitizer_hook() {
    if SANITIZER_HOOK.load(Ordering::Relaxed) != HOOK_UNRESOLVED {
        return;
    }
    // SAFETY: a lookup by a NUL-terminated name in the global scope; no other precondition.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__asan_handle_no_return".as_ptr()) };
    let v = if p.is_null() { HOOK_ABSENT } else { p as usize };
    SANITIZER_HOOK.store(v, Ordering::Relaxed);
}

/// Tells AddressSanitizer (when present) that the frames below the caller are about to be
/// abandoned or unwound without returning, as `longjmp` and `throw` do: it clears their stack
/// poisoning, without which its next check of that stack memory aborts the process
/// (`CHECK failed ... kCurrentStackFrameMagic`). A no-op without the sanitizer.
#[cfg(feature = "c-abi")]
pub(crate) fn abandoning_frames() {
    let p = SANITIZER_HOOK.load(Ordering::Relaxed);
    if p > HOOK_ABSENT {
        // SAFETY: `p` is the address `dlsym` gave for `__asan_handle_no_return`, a
        // `void (void)` function of the sanitizer's runtime, which stays loaded.
        let hook = unsafe { std::mem::transmute::<usize, extern "C" fn()>(p) };
        hook();
    }
}

/// Whether the region has an `act` function (a C region).
#[cfg(feature = "c-abi")]
pub(crate) fn has_act(ctx: &RegionCtx) -> bool {
    ctx.act.is_some()
}

/// The region's boundary while armed: the stack pointer recorded at entry, which is the
/// canonical frame address of the function the region calls (the frames inside the region all
/// lie below it); 0 when disarmed.
#[cfg(feature = "c-abi")]
pub(crate) fn boundary(ctx: &RegionCtx) -> usize {
    ctx.sp.load(Ordering::Relaxed) as usize
}

/// Whether the context `ctx` is armed (its `run` is on the stack and `f` may be running).
pub(crate) fn armed(ctx: &RegionCtx) -> bool {
    ctx.sp.load(Ordering::Relaxed) != 0
}

/// From the cancel signal handler, for an interrupted program counter outside the system-call
/// trampoline: if the thread is in an armed region and must act, make it resume leaving the
/// region. Async-signal-safe: reads the thread's control block and writes the context.
///
/// # Safety
/// `uc` must be the handler's context argument; `ctx` the calling thread's current region.
pub(crate) unsafe fn on_signal(uc: *mut c_void, ctx: *mut RegionCtx) {
    // SAFETY: the caller guarantees `ctx` is this thread's live region (its `run` is on this
    // thread's stack, below which the handler runs).
    let r = unsafe { &*ctx };
    if !armed(r) {
        return;
    }
    let (target, fresh) = match r.act {
        None => (thread_cancel_region_leave as *const () as u64, false),
        Some(_) => (&raw const thread_cancel_region_act as u64, true),
    };
    // SAFETY: `uc` is the handler's context; `target` is `leave` (which takes its stack from
    // the armed context) or `act` (which gets a fresh aligned frame below the interrupted one).
    unsafe { arch::divert(uc, target, ctx as u64, fresh) };
}
