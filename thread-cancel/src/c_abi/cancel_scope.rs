//! The C scope run ([`c_scope_run`]): a C function run inside a `CancelScope`'s run, in a C
//! region of its own.

use super::*;

/// How [`c_scope_run`] ended.
#[derive(Debug)]
pub enum ScopeRun {
    /// The C function returned this.
    Returned(*mut c_void),
    /// The scope was canceled before the run ended: the function was stopped at a
    /// cancellation point (its C frames unwound up to the run), never started, or returned
    /// after the cancel (its value kept in the error).
    Canceled(crate::Canceled<*mut c_void>),
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
                if c.word.load() & word::UNWINDING == 0 {
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
