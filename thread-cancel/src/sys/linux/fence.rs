//! The asymmetric fence behind the `in_syscall` flag (a Dekker pairing with the request's
//! `fetch_or`): the thread entering a system call — the hot path — stores the flag with no
//! hardware fence, and a canceler that finds the flag clear makes every running thread of the
//! process execute a full barrier with `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` before it
//! reads the flag again. After that, either the flag's store is visible, or the thread's later
//! load of the state word sees the request. Without `membarrier` (kernels before 4.14), the
//! store is sequentially consistent instead.

use std::sync::atomic::{compiler_fence, AtomicBool, Ordering};

const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

/// Whether the process registered for private expedited membarriers (set once, before any
/// thread can read it: inside the cancel signal's installation `Once`).
static ASYMMETRIC: AtomicBool = AtomicBool::new(false);

/// Registers the process (once, from the installation `Once` in `syscall_cp::prepare`, which
/// runs before any thread has a flag to publish).
pub(crate) fn register() {
    // SAFETY: a membarrier registration has no memory arguments.
    let r = unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
            0,
            0,
        )
    };
    ASYMMETRIC.store(r == 0, Ordering::Release);
}

/// Whether the process registered for the asymmetric fence: final once `prepare` has run, so
/// each thread keeps a copy of it when it is linked to its control block (`asymmetric` of
/// [`publish`], read from the block beside the flag: no load of this static on the fast path).
pub(crate) fn asymmetric() -> bool {
    ASYMMETRIC.load(Ordering::Acquire)
}

/// Owner: sets `flag` before reading the state word in the trampoline. `asymmetric` is the
/// thread's copy of [`asymmetric()`] (false is always correct: the sequentially consistent
/// store).
#[inline(always)]
pub(crate) fn publish(flag: &AtomicBool, asymmetric: bool) {
    if asymmetric {
        flag.store(true, Ordering::Relaxed);
        // Keeps the compiler from moving the store after the trampoline's load; the CPU may,
        // and `membarrier` on the other side covers that.
        compiler_fence(Ordering::SeqCst);
    } else {
        flag.store(true, Ordering::SeqCst);
    }
}

/// Canceler, after its `fetch_or(PENDING)` and a `SeqCst` load that found `flag` clear:
/// whether the owner is (or is about to be) inside a cancellable call after all, so that it
/// must be signalled.
pub(crate) fn observe(flag: &AtomicBool) -> bool {
    if !ASYMMETRIC.load(Ordering::Acquire) {
        return false; // the owner's store is SeqCst: the caller's load was conclusive
    }
    // SAFETY: a membarrier command has no memory arguments.
    unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) };
    flag.load(Ordering::SeqCst)
}

/// The heavy side of an asymmetric fence whose light side is a compiler fence taken only by a
/// thread whose copy of [`asymmetric`] is true: makes every running thread of the process
/// execute a full barrier. Nothing where the process did not register (its threads then make
/// real fences).
pub(crate) fn membarrier() {
    if ASYMMETRIC.load(Ordering::Acquire) {
        // SAFETY: a membarrier command has no memory arguments.
        unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) };
    }
}
