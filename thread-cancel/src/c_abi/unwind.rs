//! The forced unwind of C frames ([`c_unwind`]): C++ destructors and C cleanup handlers run,
//! up to the C region's boundary (or a foreign C thread's end).

use super::*;

/// The C side's cleanup handlers, for [`c_unwind`]: runs and unlinks, last pushed first, every
/// handler whose buffer lies below the address `bound` on the stack (all of them for
/// `usize::MAX`), and stops at the first one that does not.
pub type RunHandlersFn = fn(bound: usize);

/// libgcc's unwinder, level I of the Itanium C++ ABI (`unwind.h`), as far as the forced
/// unwind needs it. Rust's standard library links the same unwinder (`libgcc_s`) on Linux.
pub(super) mod unwinder {
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
    pub(in crate::c_abi) struct Context {
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

/// Resumes the calling thread's [`c_unwind`] after one of its cleanup handlers left it by a jump
/// back into the C frame that registered it (glibc's `pthread_cleanup_push` without exceptions:
/// the handler is the code after the frame's `setjmp`, which calls `__pthread_unwind_next` when
/// it is done): a new forced unwind from the caller's frame, with the same boundary and the
/// handlers left, as glibc's `__pthread_unwind_next` starts one. The frames the jump left were
/// the unwinder's and this library's, already passed.
///
/// # Safety
/// As [`c_unwind`]; the thread's cancellation or exit has begun and its unwind was left by a
/// handler's jump (nothing else is under way).
pub unsafe fn c_unwind_resume(run_handlers: RunHandlersFn, foreign_end: fn() -> !) -> ! {
    let st = UNWIND.with(UnsafeCell::get);
    // SAFETY: the calling thread's own state, no reference to it alive: the unwind that set it
    // was left by a jump.
    unsafe { (*st).active = false };
    // SAFETY: the caller's contract.
    unsafe { c_unwind(run_handlers, foreign_end) }
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
