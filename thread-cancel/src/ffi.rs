//! Support for the C ABI crate (`thread-cancel-ffi`): not a public API; no stability promise.
//!
//! A thread created from C runs its start routine inside a *C region* (the mechanism of
//! [`async_region`](crate::async_region), with an `act` function). Acting on a cancellation or
//! an exit in C code ([`c_unwind`]) is a *forced unwind* of the foreign frames, as glibc's:
//! every C++ destructor between the point and the region's boundary runs, and the C cleanup
//! handlers run as their frames are passed; the unwind stops at the boundary, where
//! [`c_leave`] resets the stack to the region's entry inside the Rust root, and the
//! cancellation goes on from there as an ordinary Rust unwind through Rust frames only, to the
//! thread's root, where the thread-specific-data destructors run and the outcome is recorded.
//! Frames the unwinder cannot pass (no unwind information; an asynchronous cancellation's
//! interrupted frame) are abandoned instead, after the remaining cleanup handlers ran.

use crate::current::{current_control, with_current};
use crate::point::raise;
use crate::state;
use crate::sys::{
    abandoning_frames, region_boundary, region_has_act, region_leave, region_run, RegionCtx,
    RegionExit,
};
use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

/// The `act` function of a C region: called with the region (as an opaque pointer) on the
/// interrupted C stack when an asynchronous request interrupts it; must end with [`c_unwind`]
/// or [`c_leave`].
pub type ActFn = unsafe extern "C" fn(*mut c_void) -> !;

/// A C start routine.
pub type StartFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;

/// A C region's start routine, its argument and its result.
struct Call {
    start: StartFn,
    arg: *mut c_void,
    ret: *mut c_void,
}

/// The function a C region calls: runs the start routine. A forced unwind stops at this frame
/// (see [`stop`]): it is Rust, and the region's assembly frame is below it.
unsafe extern "C" fn call_start(p: *mut c_void) {
    // SAFETY: `p` is the `Call` of `c_region`, alive for the region.
    let c = unsafe { &mut *p.cast::<Call>() };
    // SAFETY: the caller of `c_region` vouches for `start`.
    c.ret = unsafe { (c.start)(c.arg) };
}

/// Runs `start(arg)` in a C region of the calling thread, whose `act` is `act`. Returns what
/// `start` returned; if the region is left ([`c_leave`], or `act` after the signal), the
/// thread acts on its cancellation or exit: this unwinds (Rust frames only) and does not return.
///
/// # Safety
/// `start` must be a C function that does not unwind; `act` must end with [`c_unwind`] or
/// [`c_leave`]; the frames that `start` creates may be unwound by a forced unwind or
/// abandoned.
pub unsafe fn c_region(start: StartFn, arg: *mut c_void, act: ActFn) -> *mut c_void {
    let c = current_control();
    // SAFETY: an `ActFn` and the region's `act` differ only in the pointer type of their
    // argument (both are thin pointers passed in the same register).
    let act =
        unsafe { std::mem::transmute::<ActFn, unsafe extern "C" fn(*mut RegionCtx) -> !>(act) };
    let ctx = RegionCtx::new(c.state.as_ptr(), Some(act));
    let mut call = Call {
        start,
        arg,
        ret: std::ptr::null_mut(),
    };
    let outer = c
        .region
        .swap(&ctx as *const RegionCtx as *mut RegionCtx, Ordering::SeqCst);
    // SAFETY: `ctx` stays on this frame for the region and is the thread's region meanwhile;
    // `call` does not unwind (C code); its frames may be abandoned (the caller's contract).
    let exit = unsafe { region_run(&ctx, call_start, (&mut call as *mut Call).cast()) };
    c.region.store(outer, Ordering::SeqCst);
    match exit {
        RegionExit::Returned => call.ret,
        RegionExit::Left => {
            // Entered asynchronous with a request pending, or left by `act`/`c_leave` (which
            // began the cancellation or exit already).
            if c.state.load() & state::TERMINATING == 0 {
                c.state.begin_cancel();
            }
            drop(c);
            raise()
        }
    }
}

/// Whether the calling thread is in a C region (created from C): only such threads act on a
/// cancellation in C code.
pub fn in_c_region() -> bool {
    with_current(|c| {
        let r = c.region.load(Ordering::Relaxed);
        // SAFETY: a non-null region of the calling thread is alive (its `run` is on the stack).
        !r.is_null() && region_has_act(unsafe { &*r })
    })
    .unwrap_or(false)
}

/// Whether the calling thread, in a C region, must act on a request now (enabled, pending,
/// not already terminating).
pub fn c_must_act() -> bool {
    with_current(|c| c.state.load() & state::CP_MASK == state::PENDING).unwrap_or(false)
        && in_c_region()
}

/// Begins acting on the pending request: from now on cancellation is disabled (R19).
pub fn begin_cancel() {
    with_current(|c| {
        if c.state.load() & state::TERMINATING == 0 {
            c.state.begin_cancel();
        }
    });
}

/// Whether the calling thread has begun to act on a cancellation or an exit.
pub fn terminating() -> bool {
    with_current(|c| c.state.load() & state::TERMINATING != 0).unwrap_or(false)
}

/// Begins `exit(value)` in the calling thread (the value is type-checked against the thread's
/// result type, as [`exit`](crate::exit)); the caller then runs its cleanup handlers and calls
/// [`c_leave`]. Returns false if the thread was already terminating (the value is dropped).
pub fn begin_exit<V: Send + 'static>(value: V) -> bool {
    let c = current_control();
    if c.state.load() & state::TERMINATING != 0 {
        return false;
    }
    if let Some(expected) = c.exit_type {
        assert!(
            expected == std::any::TypeId::of::<V>(),
            "thread-cancel: exit value of the wrong type"
        );
    }
    c.set_exit_value(Box::new(value));
    c.state.begin_exit();
    true
}

/// Leaves the calling thread's C region: its frames are abandoned and the thread goes on
/// terminating from the region's boundary. Aborts if the thread is not in a C region.
///
/// # Safety
/// No frame between the caller and the region's boundary may need its destructor to run.
pub unsafe fn c_leave() -> ! {
    let r = with_current(|c| c.region.load(Ordering::Relaxed)).unwrap_or(std::ptr::null_mut());
    // SAFETY: checked non-null: the thread's current region, whose `run` is on the stack.
    if r.is_null() || !region_has_act(unsafe { &*r }) {
        eprintln!("thread-cancel: a C thread left a region it is not in; aborting");
        std::process::abort();
    }
    // SAFETY: the region is armed (its `run` is on this stack); the caller vouches for the
    // frames in between.
    unsafe { region_leave(r) }
}

/// The C side's cleanup handlers, for [`c_unwind`]: runs and unlinks, last pushed first, every
/// handler whose buffer lies below the address `bound` on the stack (all of them for
/// `usize::MAX`), and stops at the first one that does not.
pub type RunHandlersFn = fn(bound: usize);

/// libgcc's unwinder, level I of the Itanium C++ ABI (`unwind.h`), as far as the forced
/// unwind needs it. Rust's standard library links the same unwinder (`libgcc_s`) on Linux.
mod unwinder {
    use std::ffi::{c_int, c_void};

    /// `struct _Unwind_Exception` (two private words on x86_64 and aarch64).
    #[repr(C, align(16))]
    pub(super) struct Exception {
        pub(super) class: u64,
        pub(super) cleanup: Option<unsafe extern "C" fn(c_int, *mut Exception)>,
        pub(super) private: [usize; 2],
    }

    /// `struct _Unwind_Context`: opaque.
    #[repr(C)]
    pub(super) struct Context {
        _opaque: [u8; 0],
    }

    /// `_Unwind_Stop_Fn`.
    pub(super) type Stop =
        unsafe extern "C" fn(c_int, c_int, u64, *mut Exception, *mut Context, *mut c_void) -> c_int;

    pub(super) const URC_NO_REASON: c_int = 0;
    pub(super) const UA_END_OF_STACK: c_int = 16;

    extern "C-unwind" {
        /// Unwinds (landing pads run as if the call unwound) until `stop` leaves; returns
        /// only if the unwind could not proceed.
        pub(super) fn _Unwind_ForcedUnwind(
            exc: *mut Exception,
            stop: Stop,
            arg: *mut c_void,
        ) -> c_int;
    }
    extern "C" {
        pub(super) fn _Unwind_GetCFA(ctx: *mut Context) -> usize;
        pub(super) fn _Unwind_GetRegionStart(ctx: *mut Context) -> usize;
    }
}

/// The calling thread's forced unwind (its exception object must outlive the frames the unwind
/// passes, so it is not on the stack).
struct ForcedUnwind {
    exc: unwinder::Exception,
    /// The region's boundary: the canonical frame address of the region's own callee (Rust);
    /// the unwind stops before it.
    boundary: usize,
    run_handlers: Option<RunHandlersFn>,
    /// A forced unwind of this thread is under way (a nested exit from a destructor or a
    /// handler abandons the rest instead of starting another).
    active: bool,
}

thread_local! {
    static UNWIND: UnsafeCell<ForcedUnwind> = const {
        UnsafeCell::new(ForcedUnwind {
            exc: unwinder::Exception { class: 0, cleanup: None, private: [0; 2] },
            boundary: 0,
            run_handlers: None,
            active: false,
        })
    };
}

/// The exception class of the forced unwind ("tcancel\0"), foreign to C++ and Rust: C++'s
/// `catch (...)` sees it (and must rethrow it, as with glibc's), typed handlers do not.
const EXCEPTION_CLASS: u64 = u64::from_be_bytes(*b"tcancel\0");

/// Acts on the cancellation or exit that the calling thread, in its C region, has begun: a
/// forced unwind of the frames between the caller and the region's boundary, which runs every
/// C++ destructor (landing pad) on the way, and `run_handlers` as frames are passed, so the C
/// cleanup handlers and the destructors run interleaved, last in first out (as glibc). At the
/// boundary the remaining handlers run and the thread leaves the region ([`c_leave`]).
///
/// Fallback: where the unwinder cannot go on (a frame without unwind information: assembly,
/// code built with `-fno-asynchronous-unwind-tables`; the trampoline of an asynchronous
/// cancellation), the remaining handlers run and the frames left are abandoned, as
/// [`c_leave`] does. Aborts if the thread is not in a C region.
///
/// # Safety
/// Every Rust frame between the caller and the C frames must hold nothing that needs dropping
/// (the unwind passes them as "plain old frames") and no `catch_unwind`; the foreign frames may
/// be unwound or abandoned.
pub unsafe fn c_unwind(run_handlers: RunHandlersFn) -> ! {
    let r = with_current(|c| c.region.load(Ordering::Relaxed)).unwrap_or(std::ptr::null_mut());
    // SAFETY: checked non-null: the thread's current region, whose `run` is on the stack.
    if r.is_null() || !region_has_act(unsafe { &*r }) {
        eprintln!("thread-cancel: a C thread left a region it is not in; aborting");
        std::process::abort();
    }
    // SAFETY: as above.
    let boundary = region_boundary(unsafe { &*r });
    let st = UNWIND.with(UnsafeCell::get);
    // SAFETY: the calling thread's own state; no reference to it is alive (the stop function
    // and nested calls use it through the raw pointer, one access at a time).
    let nested = unsafe { (*st).active };
    if nested || boundary == 0 {
        run_handlers(usize::MAX);
        // SAFETY: the caller vouches for the frames in between.
        unsafe { c_leave() }
    }
    // SAFETY: as above.
    unsafe {
        *st = ForcedUnwind {
            exc: unwinder::Exception {
                class: EXCEPTION_CLASS,
                cleanup: Some(not_rethrown),
                private: [0; 2],
            },
            boundary,
            run_handlers: Some(run_handlers),
            active: true,
        };
    }
    // The landing pads run on stack that deeper frames used: clear their sanitizer poisoning.
    abandoning_frames();
    // SAFETY: the exception object is the thread's, alive until the thread ends; `stop` ends
    // the unwind at the boundary at the latest; the caller vouches for the frames passed.
    unsafe { unwinder::_Unwind_ForcedUnwind(&raw mut (*st).exc, stop, st.cast()) };
    // The unwinder could not start (no unwind information from the first frame on): fallback.
    // SAFETY: as above.
    unsafe { (*st).active = false };
    run_handlers(usize::MAX);
    // SAFETY: the caller vouches for the frames in between.
    unsafe { c_leave() }
}

/// The stop function of [`c_unwind`]: called by the unwinder for each frame before its
/// personality routine (which runs the frame's landing pad, if any). Leaves the region at its
/// boundary, where the unwind information ends; otherwise runs the cleanup handlers of the
/// frames already left.
///
/// The context's canonical frame address is the one of the frame's callee, i.e. the frame's
/// own stack pointer at the call: every frame below it has been left (its landing pad has
/// run), so the handlers whose buffers lie below it are due; those in this frame wait until it
/// has been left too (a C++ handler is a destructor of this frame's landing pad).
unsafe extern "C" fn stop(
    _version: c_int,
    actions: c_int,
    _class: u64,
    _exc: *mut unwinder::Exception,
    ctx: *mut unwinder::Context,
    arg: *mut c_void,
) -> c_int {
    let st = arg.cast::<ForcedUnwind>();
    // SAFETY: `arg` is the thread's `ForcedUnwind`, given to `_Unwind_ForcedUnwind` by
    // `c_unwind` on this thread; read field by field (the handlers may use it too).
    let (boundary, run) = unsafe { ((*st).boundary, (*st).run_handlers) };
    let Some(run) = run else {
        std::process::abort(); // set by `c_unwind` before the unwind starts
    };
    let end = actions & unwinder::UA_END_OF_STACK != 0
        // SAFETY (both calls): `ctx` is the unwinder's context for the current frame.
        || unsafe { unwinder::_Unwind_GetRegionStart(ctx) } == call_start as *const () as usize;
    let sp = if end {
        usize::MAX
    } else {
        // SAFETY: as above.
        unsafe { unwinder::_Unwind_GetCFA(ctx) }
    };
    if sp >= boundary {
        // The region's callee (Rust, never unwound by a foreign unwind) or the end of the
        // unwind information: the remaining handlers run and the rest is abandoned.
        run(usize::MAX);
        // SAFETY: as above.
        unsafe { (*st).active = false };
        // SAFETY: every frame left below the boundary has been unwound or holds nothing to
        // run (C frames past the unwind information, the unwinder's frames and this one).
        unsafe { c_leave() }
    }
    run(sp);
    unwinder::URC_NO_REASON
}

/// The forced unwind's `exception_cleanup`: reached only if a C++ `catch (...)` block ended
/// without rethrowing the cancellation (glibc aborts too).
unsafe extern "C" fn not_rethrown(_reason: c_int, _exc: *mut unwinder::Exception) {
    eprintln!(
        "thread-cancel: a C++ catch (...) block caught a thread's cancellation or exit and did \
         not rethrow it (`throw;`); the thread cannot go on; aborting"
    );
    std::process::abort();
}

/// A system call as a C cancellation point: `Some(raw result)` (`-errno` on failure) if the
/// call ran, `None` if the thread must act on a cancellation instead (the call had no effect;
/// the cancellation has begun). Only threads in a C region act; in others this is the plain
/// call.
///
/// # Safety
/// The arguments must be valid for system call `nr`, as for `libc::syscall`.
pub unsafe fn syscall_point(nr: libc::c_long, a: [libc::c_long; 6]) -> Option<libc::c_long> {
    // A thread in a C region has a control block (borrowed: no `Arc` count per call).
    let c = match crate::current::current_ptr() {
        // SAFETY: the calling thread's control block, alive until its thread-local destructors.
        Some(c) if in_c_region() => unsafe { &*c },
        // SAFETY: forwarded from the caller.
        _ => return Some(unsafe { crate::io::plain(nr, a) }),
    };
    // As in `io::cp_on`: a call nested in a signal handler leaves the flag as it found it.
    let outer = c.in_syscall.load(Ordering::Relaxed);
    crate::sys::publish_in_syscall(&c.in_syscall);
    // SAFETY: the word is this thread's (`c` outlives the call); the arguments are valid for
    // `nr` by this function's contract.
    let r = unsafe { crate::sys::syscall_cp(c.state.as_ptr(), nr, a) };
    c.in_syscall.store(outer, Ordering::Release);
    let s = c.state.load();
    let must = s & state::CP_MASK == state::PENDING;
    match r {
        crate::sys::CpResult::Done(r) if !(r == -(libc::EINTR as libc::c_long) && must) => Some(r),
        // Already acting (a cleanup handler's call, R19): the call is made.
        // SAFETY: forwarded from the caller.
        _ if s & state::TERMINATING != 0 => Some(unsafe { crate::io::plain(nr, a) }),
        _ => {
            c.state.begin_cancel();
            None
        }
    }
}

/// Sets the calling thread's cancel state (`disabled`) without acting; returns the previous
/// one. The C side acts itself (`c_must_act`) when it enables.
pub fn set_disabled(disabled: bool) -> bool {
    crate::current::with_own(|c| c.state.set_disabled(disabled))
}

/// Sets the calling thread's cancel type (`asynchronous`) without acting; returns the previous
/// one.
pub fn set_async(asynchronous: bool) -> bool {
    crate::current::with_own(|c| c.state.set_async(asynchronous))
}

/// Whether the calling thread's type is asynchronous.
pub fn is_async() -> bool {
    with_current(|c| c.state.load() & state::ASYNC != 0).unwrap_or(false)
}

/// The cancel signal: the one in use, or (before the first thread is spawned or adopted) the
/// one that will be used, as the C side cannot choose another. Masks that C code sets or
/// passes to a call never block it, and signal waits never take it.
pub fn cancel_signal() -> i32 {
    crate::sys::signal().unwrap_or_else(crate::sys::default_signal)
}
