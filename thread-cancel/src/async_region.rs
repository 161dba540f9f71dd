//! Asynchronous cancellation: regions of code that a request interrupts at any instruction.
//!
//! Rust cannot unwind from an arbitrary instruction, so asynchronous cancellation is confined to
//! an [`async_region`]. Inside one, the thread's type is [`Asynchronous`](CancelType) and a
//! request (enabled) makes the thread leave the region at once: another thread's request
//! interrupts it with the cancel signal, whose handler resumes the thread at the region's
//! boundary (`sys::region_leave`), abandoning the frames inside without running their
//! destructors; from there the cancellation continues as an ordinary unwind, so every `Drop`
//! *outside* the region runs. Requests the thread makes itself, or that it finds when it
//! enables cancellation or enters the region, are acted on synchronously, by the ordinary
//! unwind (nothing is abandoned then).
//!
//! Outside a region, the asynchronous type means: requests are acted on at the next
//! cancellation point (as with deferred), at once when the type or state is switched with a
//! request pending, and at the entry of the next region.

use crate::cancelability::{set_cancel_state, CancelState};
use crate::control::with_current;
use std::sync::atomic::Ordering;
#[cfg(not(loom))]
use {
    crate::cancelability::act_if_async,
    crate::control::Control,
    crate::current::current_control,
    crate::point::raise,
    crate::sys::{region_run, RegionCtx, RegionExit},
    std::any::Any,
    std::ffi::c_void,
    std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe},
};

/// Runs `f` with cancellation type asynchronous: a cancellation request (while enabled) is
/// acted on at any instruction of `f`, so even a loop without a cancellation point can be
/// canceled. The frames inside the region are then abandoned — **their destructors do
/// not run** — and the cancellation continues as an ordinary unwind from the region's boundary:
/// every `Drop` outside the region runs, cleanup handlers pushed outside it among them.
///
/// A request pending at entry is acted on at entry (`f` does not run). The previous type is
/// restored when `f` returns. Regions nest.
///
/// # Panics
/// On the portable layer (targets other than Linux and Android, or `--cfg
/// thread_cancel_portable`), which cannot interrupt code at any instruction. A panic in `f`
/// propagates as usual.
///
/// # Safety
///
/// The code of `f` may be stopped between any two instructions and never resumed. So it must
/// hold nothing whose release matters, at every instruction: no allocation or deallocation
/// (the allocator's locks), no locks, no I/O, no values whose `Drop` must run, no shared data
/// left half-updated; only pure computation on memory that outlives the region. The only
/// calls of this crate allowed inside are the async-cancel-safe ones: [`Canceler::cancel`]
/// (and [`JoinHandle::cancel`]), [`set_cancel_state`], [`disable`] (its guard) and
/// [`set_cancel_type`]; [`testcancel`] is allowed too. A disabled state holds requests; when
/// enabled again, a pending request is acted on at once.
///
/// [`Canceler::cancel`]: crate::Canceler::cancel
/// [`JoinHandle::cancel`]: crate::JoinHandle::cancel
/// [`disable`]: crate::disable
/// [`set_cancel_type`]: crate::set_cancel_type
/// [`testcancel`]: crate::testcancel
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
///
/// let progress = Arc::new(AtomicU64::new(0));
/// let p = progress.clone();
/// let h = thread_cancel::spawn(move || {
///     let _g = thread_cancel::cleanup_push(|| println!("cleanup ran (outside the region)"));
///     // SAFETY: the loop allocates nothing and holds no lock: only arithmetic and an atomic
///     // store to memory that outlives the region.
///     unsafe {
///         thread_cancel::async_region(|| {
///             let mut x = 1u64;
///             loop {
///                 x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
///                 p.store(x | 1, Ordering::Relaxed); // no cancellation point in this loop
///             }
///         })
///     }
/// });
/// while progress.load(Ordering::Relaxed) == 0 {
///     std::thread::yield_now();
/// }
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// ```
#[cfg(not(loom))]
pub unsafe fn async_region<F, R>(f: F) -> R
where
    F: FnOnce() -> R,
{
    if !crate::sys::ASYNC_REGIONS {
        unsupported();
    }
    // Adopt the thread outside any region if needed; from then on borrow its control block
    // without a `RefCell` or an `Arc` count, so the entry of a nested region is itself
    // async-cancel-safe.
    if with_current(|_| ()).is_none() {
        drop(current_control());
    }
    let c: *const Control = with_current(|c| c as *const Control).expect("adopted above");
    // SAFETY: the calling thread's control block lives as long as the thread's link to it,
    // which outlives this call (it is dropped only at the thread's end).
    let c = unsafe { &*c };
    let ctx = RegionCtx::new(c.word.as_ptr(), None);
    let mut result: Option<Result<R, Box<dyn Any + Send>>> = None;
    let mut body = Some(|| result = Some(catch_unwind(AssertUnwindSafe(f))));
    let was_async = c.word.set_async(true);
    // SeqCst: pairs with the request's `fetch_or` (see `Control::region`).
    let outer = c
        .region
        .swap(&ctx as *const RegionCtx as *mut RegionCtx, Ordering::SeqCst);
    // SAFETY: `ctx` lives on this frame until the region ends and is the thread's current
    // region meanwhile; `call_once::<B>` does not unwind (the body catches every unwind); the
    // frames it creates hold nothing that must be dropped but what the caller's contract
    // covers: `f` and its captures, whose abandonment the caller accepted, and the
    // `catch_unwind` frame (no resources).
    let exit = unsafe {
        region_run(
            &ctx,
            call_once_fn(&body),
            (&mut body as *mut Option<_>).cast(),
        )
    };
    c.region.store(outer, Ordering::SeqCst);
    c.word.set_async(was_async);
    // `f` did not start if a request was pending at entry: drop it then; otherwise it is gone.
    drop(body);
    match exit {
        RegionExit::Returned => match result {
            Some(Ok(r)) => {
                // Back in an asynchronous context (an outer region, or the type was
                // asynchronous before): a request that arrived while the body had the type
                // deferred, or after it disarmed, is acted on now.
                if was_async {
                    act_if_async(c);
                }
                r
            }
            Some(Err(payload)) => resume_unwind(payload),
            None => unreachable!("thread-cancel: a region returned without running its body"),
        },
        RegionExit::Left => act(),
    }
}

/// `async_region` on the portable layer.
#[cfg(not(loom))]
#[cold]
#[inline(never)]
fn unsupported() -> ! {
    panic!(
        "thread-cancel: async_region is not supported on this platform (the portable layer: \
         targets other than Linux and Android, or `--cfg thread_cancel_portable`): it cannot \
         interrupt code at any instruction; use cancellation points instead"
    )
}

/// The region was left because a request must be acted on: start the ordinary cancellation
/// unwind (or a scope's) from the region's boundary.
#[cfg(not(loom))]
#[cold]
fn act() -> ! {
    // The region was left because the word said act: a thread's request or a scope's
    // (`act_on` tells them apart and does not return).
    with_current(|c| crate::point::act_on(c, c.word.load()));
    raise()
}

/// [`call_once`] for the type of `body`.
#[cfg(not(loom))]
fn call_once_fn<B: FnOnce()>(_body: &Option<B>) -> unsafe extern "C" fn(*mut c_void) {
    call_once::<B>
}

/// Runs the closure in the `Option` that `arg` points to, once.
///
/// # Safety
/// `arg` must point to a live `Option<B>`.
#[cfg(not(loom))]
unsafe extern "C" fn call_once<B: FnOnce()>(arg: *mut c_void) {
    // SAFETY: guaranteed by the caller (`async_region` passes its `body`).
    let slot = unsafe { &mut *arg.cast::<Option<B>>() };
    if let Some(b) = slot.take() {
        b();
    }
}

/// Holds the calling thread's cancellation while it runs library code that takes locks, if it
/// is inside an asynchronous region (the code is then async-cancel-safe). Returns what
/// [`unshield`] needs.
pub(crate) fn shield() -> Option<bool> {
    with_current(|c| {
        (!c.region.load(Ordering::Relaxed).is_null()).then(|| c.word.set_disabled(true))
    })
    .flatten()
}

/// Ends a [`shield`]: enables cancellation again if the shield disabled it, which acts at once
/// on a request that is pending (the thread is asynchronous).
pub(crate) fn unshield(was_disabled: Option<bool>) {
    if was_disabled == Some(false) {
        set_cancel_state(CancelState::Enabled);
    }
}
