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

use crate::control::with_current;
use crate::control::Control;
use crate::current::current_control;
use crate::point::raise;
use crate::sys::{
    abandoning_frames, region_boundary, region_has_act, region_leave, region_run, RegionCtx,
    RegionExit,
};
use crate::{word, Canceler, Outcome};

/// The system calls a point makes (by name, `calls::READ`, ...: on Linux, their numbers) and
/// the kernel facts their callers need, for [`syscall_point`].
pub use crate::sys::calls;
use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

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
    // SAFETY: forwarded from the caller.
    unsafe { region_call(start, arg, act, false) }
}

/// [`c_region`]'s body; `scope`: the region of a scope's run ([`c_scope_run`]), where a C point
/// acts on the scope's cancel too, and which a scope's unwind leaves as a Rust [`ScopeUnwind`]
/// (caught by the run).
///
/// [`ScopeUnwind`]: crate::ScopeUnwind
///
/// # Safety
/// As [`c_region`].
unsafe fn region_call(start: StartFn, arg: *mut c_void, act: ActFn, scope: bool) -> *mut c_void {
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
    let me = &ctx as *const RegionCtx as *mut RegionCtx;
    let outer = c.region.swap(me, Ordering::SeqCst);
    let outer_scope =
        SCOPE_REGION.with(|r| r.replace(if scope { me } else { std::ptr::null_mut() }));
    // SAFETY: `ctx` stays on this frame for the region and is the thread's region meanwhile;
    // `call` does not unwind (C code); its frames may be abandoned (the caller's contract).
    let exit = unsafe { region_run(&ctx, call_start, (&mut call as *mut Call).cast()) };
    SCOPE_REGION.with(|r| r.set(outer_scope));
    c.region.store(outer, Ordering::SeqCst);
    match exit {
        RegionExit::Returned => call.ret,
        RegionExit::Left => {
            // Entered asynchronous with a request pending, or left by `act`/`c_leave` (which
            // began the cancellation, the exit or the scope's unwind already).
            let s = c.state.load();
            if scope && s & word::TERMINATING == 0 {
                if s & word::SCOPE_UNWIND != 0 {
                    crate::point::runs::raise_scope(&c, false);
                }
                if !word::thread_acts(s) && word::acts(s) {
                    crate::point::runs::raise_scope(&c, true); // at entry, asynchronous
                }
            }
            if s & word::TERMINATING == 0 {
                c.state.begin_cancel();
            }
            drop(c);
            raise()
        }
    }
}

/// Whether the calling thread has a control block (created by the crate, or adopted): a thread
/// without one cannot be canceled.
pub fn has_control() -> bool {
    crate::control::current_ptr().is_some()
}

/// Whether the calling thread acts on a cancellation in C code: a thread created from C (in
/// its C region), or a *foreign C thread*: one the library did not create (the main thread, a
/// thread the C library created, such as a `SIGEV_THREAD` timer's) whose stack holds only C and
/// C++ frames (and this library's own). Threads spawned by the Rust API, and threads with Rust
/// frames of another copy of `std` on their stack (a Rust program's main or `std` threads), never
/// act in C code: they unwind to their own root in Rust.
pub fn in_c_region() -> bool {
    with_current(|c| in_region(c) || (c.exit_type.is_none() && foreign_stack_is_c()))
        .unwrap_or(false)
}

/// Whether the calling thread, whose control block is `c`, is in a C region.
fn in_region(c: &Control) -> bool {
    let r = c.region.load(Ordering::Relaxed);
    // SAFETY: a non-null region of the calling thread is alive (its `run` is on the stack).
    !r.is_null() && region_has_act(unsafe { &*r })
}

thread_local! {
    /// The calling thread's innermost region of a scope's run ([`c_scope_run`]), while it is
    /// the thread's current region; null otherwise (owner-only).
    static SCOPE_REGION: std::cell::Cell<*mut RegionCtx> =
        const { std::cell::Cell::new(std::ptr::null_mut()) };
}

/// Whether the calling thread, whose control block is `c`, runs C code in the region of a
/// scope's run (its current region is the innermost such region).
fn in_scope_region(c: &Control) -> bool {
    let r = c.region.load(Ordering::Relaxed);
    !r.is_null() && SCOPE_REGION.with(std::cell::Cell::get) == r
}

/// What a C point of a thread that acts in C code does with the word `s`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CAct {
    /// Nothing (the call is made).
    No,
    /// Act on the thread's own request (it wins over a scope's).
    Thread,
    /// Act on a scope's request: only in the region of a scope's run, whose boundary the C
    /// frames are unwound to.
    Scope,
}

fn c_decide(c: &Control, s: u32) -> CAct {
    if word::thread_acts(s) {
        CAct::Thread
    } else if word::acts(s) && in_scope_region(c) {
        CAct::Scope
    } else {
        CAct::No
    }
}

thread_local! {
    /// For a thread the library did not create: whether its stack is C (`C_STACK_YES`), as
    /// found by [`stack::only_c_frames`] the first time it was asked.
    static C_STACK: std::cell::Cell<u8> = const { std::cell::Cell::new(C_STACK_UNKNOWN) };
}
const C_STACK_UNKNOWN: u8 = 0;
const C_STACK_YES: u8 = 1;
const C_STACK_NO: u8 = 2;

/// Whether the calling thread (not created by the library) has a C stack: decided once per
/// thread (its bottom frames, which say who started it, do not change); [`c_unwind`] checks
/// again, the whole stack, before it unwinds.
fn foreign_stack_is_c() -> bool {
    match C_STACK.with(std::cell::Cell::get) {
        C_STACK_YES => true,
        C_STACK_NO => false,
        _ => {
            let yes = stack::only_c_frames();
            C_STACK.with(|v| v.set(if yes { C_STACK_YES } else { C_STACK_NO }));
            yes
        }
    }
}

/// Whether the calling thread, in a C region, must act on a request now (enabled, pending,
/// not already terminating): its own, or, in the region of a scope's run, a scope's.
pub fn c_must_act() -> bool {
    with_current(|c| c_decide(c, c.state.load()) != CAct::No).unwrap_or(false) && in_c_region()
}

/// Begins acting on the pending request: from now on cancellation is disabled. In the region
/// of a scope's run with only a scope's request pending, begins the scope's unwind instead.
/// Nothing if an unwind has begun already (the thread's termination, or a scope's: it goes on).
pub fn begin_cancel() {
    with_current(|c| {
        let s = c.state.load();
        if s & word::UNWINDING != 0 {
            return;
        }
        if c_decide(c, s) == CAct::Scope {
            crate::point::runs::begin_scope_unwind_in_c(c);
        } else {
            c.state.begin_cancel();
        }
    });
}

/// Whether the calling thread has begun to act on a cancellation or an exit.
pub fn terminating() -> bool {
    with_current(|c| c.state.load() & word::TERMINATING != 0).unwrap_or(false)
}

/// Begins `exit(value)` in the calling thread (the value is type-checked against the thread's
/// result type, as [`exit`](crate::exit)); the caller then runs its cleanup handlers and calls
/// [`c_leave`]. Returns false if the thread was already terminating (the value is dropped).
pub fn begin_exit<V: Send + 'static>(value: V) -> bool {
    let c = current_control();
    if c.state.load() & word::TERMINATING != 0 {
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

/// The exit value that [`begin_exit`] stored for the calling thread, if any (for a thread the
/// library did not create, whose end the C side handles itself).
pub fn take_exit_value<V: 'static>() -> Option<V> {
    let c = current_control();
    c.take_exit_value()
        .and_then(|b| b.downcast::<V>().ok())
        .map(|b| *b)
}

/// For a thread the crate did not spawn that ends without its thread-local destructors (the
/// main thread's `pthread_exit`, or a cancellation it acted on in C code, after which it runs
/// nothing more): runs its thread-specific-data destructors now (they would otherwise run at
/// its thread-local teardown, which never comes), and marks it finished, so that requests
/// report it gone and its waiters wake.
pub fn end_adopted_thread() {
    crate::tsd::run_destructors();
    if let Some(c) = crate::current::try_current_control() {
        c.finish();
    }
}

/// Waits until the thread of `c` has finished, or until `deadline` (`None`: no limit);
/// returns whether it finished. A cancellation point for the caller (as
/// [`JoinHandle::wait`](crate::JoinHandle::wait)), which is adopted if it has no control
/// block.
pub fn wait_finished(c: &Canceler, deadline: Option<Instant>) -> bool {
    crate::thread::wait_finished(&c.control, deadline, false)
}

/// [`wait_finished`] for a caller that no one can cancel (it has no control block, see
/// [`has_control`]): not a cancellation point, and the caller is not adopted (adopting it
/// would register a thread-local destructor, which takes the dynamic loader's lock: a library
/// destructor run by `dlclose` may be the caller, and its library is gone by the time such a
/// destructor would run).
pub fn wait_finished_uncancelable(c: &Canceler, deadline: Option<Instant>) -> bool {
    let target = &c.control;
    let finished = || target.state.load() & word::FINISHED != 0;
    if finished() {
        return true;
    }
    let me = Arc::new(Control::new(None)); // a parker for this wait only
    target.add_waiter(me.clone());
    let wake = crate::point::wait::wait_until(&me, finished, deadline);
    target.remove_waiter(&me);
    wake == crate::point::wait::Wake::Ready
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
    /// The cleanup handlers that run at the boundary: those whose buffers lie below this
    /// address. All of them (`usize::MAX`) for the thread's own region or the end of a foreign
    /// thread's stack; for the region of a scope's run, only those below its boundary (pushed
    /// inside the run): the others belong to frames the thread returns to.
    handlers_below: usize,
    run_handlers: Option<RunHandlersFn>,
    /// A forced unwind of this thread is under way (a nested exit from a destructor or a
    /// handler abandons the rest instead of starting another).
    active: bool,
    /// For a thread not created by the library (no region): how it ends once its handlers ran.
    foreign_end: Option<fn() -> !>,
}

thread_local! {
    static UNWIND: UnsafeCell<ForcedUnwind> = const {
        UnsafeCell::new(ForcedUnwind {
            exc: unwinder::Exception { class: 0, cleanup: None, private: [0; 2] },
            boundary: 0,
            handlers_below: usize::MAX,
            run_handlers: None,
            active: false,
            foreign_end: None,
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
/// [`c_leave`] does.
///
/// A thread the library did not create (a foreign C thread, see [`in_c_region`]) has no region:
/// the unwind goes to the end of its stack (the end of the unwind information: the C library's
/// thread start, or `_start` for the main thread), as glibc's; then the remaining handlers run
/// and `foreign_end` ends the thread from there (the frames left are not returned to). Aborts
/// if the thread is neither in a C region nor a foreign C thread, or if its stack now holds
/// frames that must not be unwound (Rust frames of another copy of `std`).
///
/// # Safety
/// Every Rust frame between the caller and the C frames must hold nothing that needs dropping
/// (the unwind passes them as "plain old frames") and no `catch_unwind`; the foreign frames may
/// be unwound or abandoned.
pub unsafe fn c_unwind(run_handlers: RunHandlersFn, foreign_end: fn() -> !) -> ! {
    let (r, foreign) = with_current(|c| (c.region.load(Ordering::Relaxed), c.exit_type.is_none()))
        .unwrap_or((std::ptr::null_mut(), false));
    // SAFETY: checked non-null: the thread's current region, whose `run` is on the stack.
    let in_region = !r.is_null() && region_has_act(unsafe { &*r });
    if !(in_region || (foreign && foreign_stack_is_c())) {
        eprintln!("thread-cancel: a C thread left a region it is not in; aborting");
        std::process::abort();
    }
    if !in_region && !stack::only_c_frames() {
        eprintln!(
            "thread-cancel: a thread not created by the library acts on a cancellation or exit \
             in C code called from Rust code that cannot be unwound; aborting"
        );
        std::process::abort();
    }
    let (boundary, end) = if in_region {
        // SAFETY: as above.
        (region_boundary(unsafe { &*r }), None)
    } else {
        (usize::MAX, Some(foreign_end))
    };
    let handlers_below = if in_region && SCOPE_REGION.with(std::cell::Cell::get) == r {
        boundary
    } else {
        usize::MAX
    };
    let st = UNWIND.with(UnsafeCell::get);
    // SAFETY: the calling thread's own state; no reference to it is alive (the stop function
    // and nested calls use it through the raw pointer, one access at a time).
    let nested = unsafe { (*st).active };
    if nested || boundary == 0 {
        run_handlers(handlers_below);
        if let Some(end) = end {
            end();
        }
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
            handlers_below,
            run_handlers: Some(run_handlers),
            active: true,
            foreign_end: end,
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
    run_handlers(handlers_below);
    if let Some(end) = end {
        end();
    }
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
    let (boundary, below, run, foreign_end) = unsafe {
        (
            (*st).boundary,
            (*st).handlers_below,
            (*st).run_handlers,
            (*st).foreign_end,
        )
    };
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
        run(below);
        // SAFETY: as above.
        unsafe { (*st).active = false };
        if let Some(end) = foreign_end {
            // A thread without region: the end of its stack. It ends from here (the frames
            // above, all unwound, are never returned to).
            end();
        }
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
/// the cancellation, or in the region of a scope's run the scope's unwind, has begun: the
/// caller goes on with [`c_unwind`]). Only threads in a C region act; in others this is the
/// plain call.
///
/// # Safety
/// The arguments must be valid for system call `nr`, as for `libc::syscall`.
pub unsafe fn syscall_point(nr: calls::Call, a: [libc::c_long; 6]) -> Option<libc::c_long> {
    // A thread in a C region has a control block (borrowed: no `Arc` count per call).
    let c = match crate::control::current_ptr() {
        // SAFETY: the calling thread's control block, alive until its thread-local destructors.
        Some(c) if in_c_region() => unsafe { &*c },
        // SAFETY: forwarded from the caller.
        _ => return Some(unsafe { crate::sys::calls::plain(nr, a) }),
    };
    // As in `io::cp_on`: a call nested in a signal handler leaves the flag as it found it.
    let outer = c.in_syscall.load(Ordering::Relaxed);
    crate::sys::publish_in_syscall(&c.in_syscall);
    // SAFETY: the word is this thread's (`c` outlives the call); the arguments are valid for
    // `nr` by this function's contract.
    let r = unsafe { crate::sys::syscall_cp(c.state.as_ptr(), nr, a) };
    c.in_syscall.store(outer, Ordering::Release);
    let s = c.state.load();
    let act = c_decide(c, s);
    match r {
        crate::sys::CpResult::Done(r)
            if !(r == -(libc::EINTR as libc::c_long) && act != CAct::No) =>
        {
            Some(r)
        }
        _ => match act {
            CAct::Thread => {
                c.state.begin_cancel();
                None
            }
            CAct::Scope => {
                crate::point::runs::begin_scope_unwind_in_c(c);
                None
            }
            // Already acting (a cleanup handler's call, R19), or a scope's request, which C
            // code outside a `tc_scope_run` does not act on: the call is made.
            // SAFETY: forwarded from the caller.
            CAct::No => Some(unsafe { crate::sys::calls::plain(nr, a) }),
        },
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
    with_current(|c| c.state.load() & word::ASYNC != 0).unwrap_or(false)
}

/// The cancel signal: the one in use, or (before the first thread is spawned or adopted) the
/// one that will be used, as the C side cannot choose another. Masks that C code sets or
/// passes to a call never block it, and signal waits never take it.
pub fn cancel_signal() -> i32 {
    crate::sys::signal().unwrap_or_else(crate::sys::default_signal)
}

/// A thread created for the C ABI by [`spawn_c`]: like [`JoinHandle`](crate::JoinHandle), but
/// the thread is the system's (`pthread_create`), not `std`'s. Waiting for it goes through its
/// [`canceler`](Self::canceler) ([`wait_finished`], [`wait_finished_uncancelable`]); dropping
/// the handle detaches the thread.
pub struct CJoinHandle<T> {
    control: Arc<Control>,
    thread: crate::sys::pthread::Thread,
    outcome: Arc<Mutex<Option<Outcome<T>>>>,
}

/// What a thread created by [`spawn_c`] starts with.
struct CStart<T> {
    control: Arc<Control>,
    body: Box<dyn FnOnce() -> T + Send>,
    outcome: Arc<Mutex<Option<Outcome<T>>>>,
    at_end: fn(),
}

/// Creates a thread of this crate with the system's `pthread_create` (stack size `stack`, the
/// system's default if 0) that runs `body`, then the thread-specific-data destructors, then
/// `at_end`. Unlike `std::thread::spawn`:
///
/// - the new thread registers no thread-local destructor before `body` (nor after it, unless
///   `body` uses thread-specific data): registering one takes the dynamic loader's lock, which
///   the creating thread may hold (a library destructor run by `dlclose` that creates and joins
///   a thread);
/// - everything the creating side allocates comes from the global allocator, which the C ABI
///   crate makes fail softly when memory runs out (`std`'s spawn allocates its thread handle
///   from `System` and aborts): the caller can undo the spawn and report `EAGAIN`.
///
/// Errors are `pthread_create`'s (`EAGAIN`, `EINVAL`).
pub fn spawn_c<T: Send + 'static>(
    stack: usize,
    body: impl FnOnce() -> T + Send + 'static,
    at_end: fn(),
) -> Result<CJoinHandle<T>, c_int> {
    // Process-wide set-up in the creating thread (the signal handler, the fence's
    // registration, the sanitizer hook's lookup, which takes the loader's lock).
    let control = crate::thread::new_control::<T>();
    crate::sys::resolve_sanitizer_hook();
    let outcome = Arc::new(Mutex::new(None));
    let start = CStart {
        control: control.clone(),
        body: Box::new(body),
        outcome: outcome.clone(),
        at_end,
    };
    let thread = crate::sys::pthread::spawn(stack, move || c_thread_main(start))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EAGAIN))?;
    Ok(CJoinHandle {
        control,
        thread,
        outcome,
    })
}

/// The body of a thread created by [`spawn_c`]: the thread's root (as `thread::root`, without
/// a thread-local destructor). Nothing unwinds out of it: the body runs in `catch_unwind`.
fn c_thread_main<T: Send + 'static>(start: CStart<T>) {
    let CStart {
        control,
        body,
        outcome,
        at_end,
    } = start;
    crate::current::link_unregistered(&control);
    let result = catch_unwind(AssertUnwindSafe(body));
    let s = control.state.enter_root();
    let o = if s & word::CANCELING != 0 {
        Outcome::Canceled
    } else if s & word::EXITING != 0 {
        match control.take_exit_value().map(|b| b.downcast::<T>()) {
            Some(Ok(v)) => Outcome::Exited(*v),
            _ => Outcome::Canceled, // `begin_exit` checks the type: not reached
        }
    } else {
        match result {
            Ok(v) => Outcome::Returned(v),
            Err(p) => Outcome::Panicked(p),
        }
    };
    *outcome.lock().unwrap_or_else(PoisonError::into_inner) = Some(o);
    drop(outcome);
    crate::tsd::run_destructors();
    crate::current::unlink_unregistered();
    control.finish();
    drop(control);
    at_end();
}

impl<T> CJoinHandle<T> {
    /// A handle that can cancel the thread.
    pub fn canceler(&self) -> Canceler {
        Canceler {
            control: self.control.clone(),
        }
    }

    /// The system's thread id.
    pub fn as_pthread_t(&self) -> libc::pthread_t {
        self.thread.id()
    }

    /// Joins the system thread (call once [`wait_finished`] has seen it finish: this is not a
    /// cancellation point) and reports how it ended.
    pub fn join(self) -> Outcome<T> {
        self.thread.join();
        let o = self
            .outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        o.unwrap_or(Outcome::Canceled) // the root always stores one before it ends
    }
}

/// Which frames a thread's stack holds, for a thread the library did not create: a forced
/// unwind to the end of its stack must pass only C frames, C++ frames (their destructors run,
/// as with glibc) and this library's own (plain at the points that act). A Rust frame of
/// another copy of `std` (a Rust program's `main`, its `std` threads' start) has a
/// `catch_unwind` or destructors, which a foreign unwind must not reach. Frames are told apart
/// by their personality routine, read from the unwind information (`.eh_frame`).
mod stack {
    use super::unwinder::Context;
    use std::ffi::{c_int, c_void, CStr};
    use std::sync::OnceLock;

    /// `struct dwarf_eh_bases` of libgcc's `unwind-dw2-fde.h`.
    #[repr(C)]
    struct Bases {
        tbase: usize,
        dbase: usize,
        func: usize,
    }

    const URC_NO_REASON: c_int = 0;
    const URC_NORMAL_STOP: c_int = 4;

    extern "C" {
        fn _Unwind_Backtrace(
            trace: unsafe extern "C" fn(*mut Context, *mut c_void) -> c_int,
            arg: *mut c_void,
        ) -> c_int;
        fn _Unwind_GetIPInfo(ctx: *mut Context, before: *mut c_int) -> usize;
        fn _Unwind_Find_FDE(pc: *const c_void, bases: *mut Bases) -> *const u8;
    }

    /// The personality routines whose frames a foreign unwind may pass: this library's own
    /// Rust code, C++'s and C's (`-fexceptions` with cleanups).
    fn allowed() -> &'static [usize; 3] {
        static ALLOWED: OnceLock<[usize; 3]> = OnceLock::new();
        ALLOWED.get_or_init(|| {
            let look = |name: &CStr| {
                // SAFETY: a lookup by a NUL-terminated name in the global scope.
                unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
            };
            [
                own_personality().unwrap_or(0),
                look(c"__gxx_personality_v0"),
                look(c"__gcc_personality_v0"),
            ]
        })
    }

    /// A function of ours with a landing pad, whose unwind information names our personality.
    #[inline(never)]
    fn probe() {
        struct Guard;
        impl Drop for Guard {
            fn drop(&mut self) {
                std::hint::black_box(());
            }
        }
        let _g = Guard;
        let f: fn() = std::hint::black_box(|| {});
        f();
    }

    fn own_personality() -> Option<usize> {
        // SAFETY: `probe` is a function of this library: its address is inside its code.
        unsafe { personality_at(probe as *const () as usize + 1) }
            .ok()
            .flatten()
    }

    /// Whether every frame of the calling thread's stack, up to where the unwind information
    /// ends, has no personality routine or an allowed one.
    pub(super) fn only_c_frames() -> bool {
        allowed(); // looked up before the walk (`dlsym`), once per process
        let mut ok = true;
        // SAFETY: `trace` gets `ok` back as its argument, for the duration of the walk.
        unsafe { _Unwind_Backtrace(trace, (&raw mut ok).cast()) };
        return ok;

        unsafe extern "C" fn trace(ctx: *mut Context, arg: *mut c_void) -> c_int {
            let mut before = 0;
            // SAFETY: `ctx` is the unwinder's context for this frame.
            let ip = unsafe { _Unwind_GetIPInfo(ctx, &mut before) };
            if ip == 0 {
                return URC_NO_REASON;
            }
            // The call's return address may be the next function's first byte.
            let pc = if before == 0 { ip - 1 } else { ip };
            // SAFETY: `pc` is a code address of a live frame.
            let fine = match unsafe { personality_at(pc) } {
                Ok(None) => true,
                Ok(Some(p)) => p != 0 && allowed().contains(&p),
                Err(()) => false,
            };
            if fine {
                URC_NO_REASON
            } else {
                // SAFETY: `arg` is the `ok` of `only_c_frames`.
                unsafe { *arg.cast::<bool>() = false };
                URC_NORMAL_STOP
            }
        }
    }

    /// The personality routine of the code at `pc` (`Ok(None)`: none, or no unwind
    /// information); `Err` for unwind information this reader does not understand.
    ///
    /// # Safety
    /// `pc` must be inside code mapped in the process.
    unsafe fn personality_at(pc: usize) -> Result<Option<usize>, ()> {
        let mut bases = Bases {
            tbase: 0,
            dbase: 0,
            func: 0,
        };
        // SAFETY: libgcc looks `pc` up in the registered unwind information.
        let fde = unsafe { _Unwind_Find_FDE(pc as *const c_void, &mut bases) };
        if fde.is_null() {
            return Ok(None);
        }
        // SAFETY: `fde` points to a frame description entry in `.eh_frame`, mapped with its
        // object; the reads below stay inside it and its CIE (the format's own lengths).
        unsafe {
            if read::<u32>(fde) == u32::MAX {
                return Err(()); // 64-bit DWARF: not produced for x86_64/aarch64 code
            }
            let cie_field = fde.add(4);
            let cie = cie_field.sub(read::<u32>(cie_field) as usize);
            if read::<u32>(cie) == u32::MAX {
                return Err(());
            }
            let version = *cie.add(8);
            let aug = CStr::from_ptr(cie.add(9).cast());
            let mut p = cie.add(9 + aug.to_bytes().len() + 1);
            let aug = aug.to_bytes();
            if aug.is_empty() {
                return Ok(None);
            }
            if aug[0] != b'z' {
                return Err(());
            }
            p = leb(p).0; // code alignment
            p = leb(p).0; // data alignment
            p = if version == 1 { p.add(1) } else { leb(p).0 }; // return address register
            p = leb(p).0; // augmentation data length
            for &c in &aug[1..] {
                match c {
                    b'P' => return encoded(p.add(1), *p, &bases).map(Some),
                    b'L' | b'R' => p = p.add(1),
                    b'S' | b'B' => {}
                    _ => return Err(()),
                }
            }
            Ok(None)
        }
    }

    /// # Safety
    /// `p` valid for reading a `T`.
    unsafe fn read<T: Copy>(p: *const u8) -> T {
        // SAFETY: forwarded.
        unsafe { p.cast::<T>().read_unaligned() }
    }

    /// A LEB128 number: the address after it and its raw bits.
    ///
    /// # Safety
    /// `p` must point to a LEB128 number.
    unsafe fn leb(mut p: *const u8) -> (*const u8, u64) {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            // SAFETY: forwarded: the number goes on while the high bit is set.
            let b = unsafe { *p };
            // SAFETY: as above.
            p = unsafe { p.add(1) };
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                return (p, v);
            }
        }
    }

    /// A pointer in the `DW_EH_PE_*` encoding `enc`, at `p`.
    ///
    /// # Safety
    /// `p` must point to such a pointer; an indirect one must point to a readable word.
    unsafe fn encoded(p: *const u8, enc: u8, bases: &Bases) -> Result<usize, ()> {
        if enc == 0xff {
            return Ok(0); // DW_EH_PE_omit
        }
        let base = match enc & 0x70 {
            0x00 => 0,
            0x10 => p as usize,
            0x20 => bases.tbase,
            0x30 => bases.dbase,
            _ => return Err(()),
        };
        // SAFETY: forwarded: `p` holds a value of the encoding's size.
        let v = unsafe {
            match enc & 0x0f {
                0x00 | 0x04 | 0x0c => read::<u64>(p) as usize,
                0x03 => read::<u32>(p) as usize,
                0x0b => read::<i32>(p) as isize as usize,
                0x02 => usize::from(read::<u16>(p)),
                0x0a => read::<i16>(p) as isize as usize,
                _ => return Err(()),
            }
        };
        let a = base.wrapping_add(v);
        if enc & 0x80 != 0 {
            // SAFETY: an indirect pointer points to a word holding the address (a GOT entry).
            Ok(unsafe { read::<usize>(a as *const u8) })
        } else {
            Ok(a)
        }
    }
}

/// How [`c_scope_run`] ended.
#[derive(Debug)]
pub enum ScopeRun {
    /// The C function returned this.
    Returned(*mut c_void),
    /// The scope was canceled: the function was stopped at a cancellation point (its C frames
    /// unwound up to the run) or never started.
    Canceled(crate::Canceled),
    /// The thread's termination (cancellation, exit) or an enclosing scope's cancellation
    /// passes through: the caller goes on with it ([`c_unwind`]) from a frame that holds
    /// nothing to drop.
    Unwinding,
}

/// Runs `start(arg)` in the calling thread inside `scope` ([`CancelScope::run`]), in a C
/// region of its own (`act` as in [`c_region`]) whose boundary is the run: a C point there acts
/// on the scope's cancel as on a thread's request, but its forced unwind ([`c_unwind`]) stops
/// at this region and runs only the cleanup handlers pushed inside it; then the region is left
/// and the scope's unwind goes on in Rust to the run, which returns `Err(Canceled)`.
///
/// The thread's own region (or, in a foreign C thread, none) is set aside while the run's Rust
/// frames are on top of the stack (they are not C frames: nothing may abandon them), and put
/// back before this returns. The thread's termination, or a scope unwind that ends at an
/// enclosing run, passes the run as a Rust unwind and is caught here: [`ScopeRun::Unwinding`].
/// In a thread that does not act in C code ([`in_c_region`] false: a Rust program's threads),
/// `start` runs in the scope without a region: its C points do not act.
///
/// [`CancelScope::run`]: crate::CancelScope::run
///
/// # Safety
/// As [`c_region`]: `start` is a C function that does not unwind; its frames may be unwound by
/// a forced unwind or abandoned.
pub unsafe fn c_scope_run(
    scope: &crate::CancelScope,
    start: StartFn,
    arg: *mut c_void,
    act: ActFn,
) -> ScopeRun {
    // The caller is adopted first if it has no control block yet (a foreign C thread, such as
    // the main thread, that runs a scope before any other call of the library).
    let c = current_control();
    let result = if in_c_region() {
        let outer = c.region.swap(std::ptr::null_mut(), Ordering::SeqCst);
        let outer_scope = SCOPE_REGION.with(|r| r.replace(std::ptr::null_mut()));
        let r = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: forwarded from the caller.
            scope.run(|| unsafe { region_call(start, arg, act, true) })
        }));
        SCOPE_REGION.with(|r| r.set(outer_scope));
        c.region.store(outer, Ordering::SeqCst);
        match r {
            Ok(r) => r,
            Err(payload) => {
                // Our unwinds only (`start` is C): the thread's termination, or a scope's
                // unwind to an enclosing run; the word says which, and `c_unwind` goes on.
                drop(payload);
                if c.state.load() & word::UNWINDING == 0 {
                    eprintln!("thread-cancel: a panic passed a scope's run in C code; aborting");
                    std::process::abort();
                }
                return ScopeRun::Unwinding;
            }
        }
    } else {
        drop(c);
        // SAFETY: forwarded from the caller.
        scope.run(|| unsafe { start(arg) })
    };
    match result {
        Ok(v) => ScopeRun::Returned(v),
        Err(e) => ScopeRun::Canceled(e),
    }
}
