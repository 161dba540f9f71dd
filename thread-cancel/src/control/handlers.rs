//! The signal handlers a thread is running (feature `interpose`), so that an interposed call
//! made from one behaves as the plain call: a handler runs on whichever thread the signal
//! lands on, and that thread's runs, deadlines and cancels are not the handler's business (its
//! self-pipe `write` must never fail for them).
//!
//! The interposed `sigaction` installs the program's handlers behind a trampoline
//! (`interpose/signals.rs`) that records each handler's frame here on entry and removes it on
//! return. A handler may also leave by `siglongjmp`, never returning through the trampoline: a
//! frame is therefore believed only while the stack it was recorded on is still deeper than
//! it (the stack grows down on every target of the feature), and one found above is dropped
//! ([`Frames::inside`]). A handler that runs on an alternate signal stack is recorded with that
//! stack's range: the thread is inside it while its stack pointer is in the range.
//!
//! Only the owner thread (and the handlers that interrupt it) touch this: relaxed atomics,
//! ordered against an interrupting handler by compiler fences. No allocation, no lock.

use std::sync::atomic::{compiler_fence, AtomicU32, AtomicUsize, Ordering};

/// Nested handlers recorded with their frames; deeper ones are counted and taken to be inside.
const MAX: usize = 8;

#[derive(Debug, Default)]
pub(crate) struct Frames {
    /// How many handlers the thread is in (as recorded: [`inside`](Self::inside) drops those
    /// left by a jump).
    depth: AtomicU32,
    /// The stack address of each handler's trampoline frame, outermost first.
    sp: [AtomicUsize; MAX],
    /// The alternate stack each ran on (`[low, high)`), or `0, 0`.
    alt_low: [AtomicUsize; MAX],
    alt_high: [AtomicUsize; MAX],
}

impl Frames {
    /// A handler's trampoline, on entry: records its frame (at stack address `sp`, on the
    /// alternate stack `alt` if any). Returns what [`leave`](Self::leave) restores.
    pub(crate) fn enter(&self, sp: usize, alt: Option<(usize, usize)>) -> u32 {
        // Handlers left by a jump are gone by now: their slots are reused.
        self.prune(sp);
        let d = self.depth.load(Ordering::Relaxed);
        let (lo, hi) = alt.unwrap_or((0, 0));
        let i = d as usize;
        if i < MAX {
            self.sp[i].store(sp, Ordering::Relaxed);
            self.alt_low[i].store(lo, Ordering::Relaxed);
            self.alt_high[i].store(hi, Ordering::Relaxed);
        }
        compiler_fence(Ordering::SeqCst);
        self.depth.store(d + 1, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        if i < MAX {
            // Again: a handler that interrupted this one between the stores above and the
            // count used the same slot (it saw the old count) and has returned.
            self.sp[i].store(sp, Ordering::Relaxed);
            self.alt_low[i].store(lo, Ordering::Relaxed);
            self.alt_high[i].store(hi, Ordering::Relaxed);
        }
        d
    }

    /// The trampoline, once the handler returned: `d` is what `enter` returned.
    pub(crate) fn leave(&self, d: u32) {
        compiler_fence(Ordering::SeqCst);
        self.depth.store(d, Ordering::Relaxed);
    }

    /// Whether the thread, now at stack address `sp`, is inside a signal handler. Off every
    /// fast path: asked only where an interposed call would act.
    pub(crate) fn inside(&self, sp: usize) -> bool {
        self.depth.load(Ordering::Relaxed) != 0 && {
            self.prune(sp);
            self.depth.load(Ordering::Relaxed) != 0
        }
    }

    /// Drops the innermost recorded frames that the thread at `sp` is no longer inside (their
    /// handlers left by a jump).
    fn prune(&self, sp: usize) {
        loop {
            let d = self.depth.load(Ordering::Relaxed) as usize;
            if d == 0 || d > MAX {
                return;
            }
            let i = d - 1;
            let top = self.sp[i].load(Ordering::Relaxed);
            let (lo, hi) = (
                self.alt_low[i].load(Ordering::Relaxed),
                self.alt_high[i].load(Ordering::Relaxed),
            );
            let inside = if lo != hi {
                lo <= sp && sp < hi && sp < top
            } else {
                sp < top
            };
            if inside {
                return;
            }
            self.depth.store(i as u32, Ordering::Relaxed);
            compiler_fence(Ordering::SeqCst);
        }
    }
}

/// The stack address of the caller's frame (a local's address).
#[inline(always)]
pub(crate) fn stack_address() -> usize {
    let here = 0u8;
    std::hint::black_box(&here) as *const u8 as usize
}
