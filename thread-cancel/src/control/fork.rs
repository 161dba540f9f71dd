//! `fork`: the fork generation that tells a parent's threads from the child's, the forking
//! thread's own control block held across the fork, and [`fork_safe_lock!`] for the owners of
//! process-wide locks (each registers its own lock, where it is defined).
//!
//! Every lock any thread may hold at a `fork` is taken by the forking thread before it and
//! released after it, in the parent and in the child: a child never inherits a lock that a
//! vanished thread held. The handlers take each lock alone, and no path of the crate holds one
//! of these process-wide locks while it takes another of them or a control block's lock (nor
//! the reverse), so the order in which `pthread_atfork` runs the handlers cannot deadlock.

use super::{lock, Callbacks, Control};
use std::any::Any;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

/// Defines `fn NAME() -> MutexGuard<'static, T>`, which locks the `static` mutex `M` (poison
/// ignored: it protects plain data) and, from its first call on, holds it across every `fork`
/// (taken by the forking thread before, released in the parent and the child after).
///
/// The owner of a process-wide lock defines its locking function with it, so the fork handling
/// lives beside the lock. The lock must be taken through this function before any thread can
/// hold it at a fork.
macro_rules! fork_safe_lock {
    ($(#[$attr:meta])* $vis:vis fn $name:ident() -> $t:ty = $m:path;) => {
        $(#[$attr])*
        $vis fn $name() -> std::sync::MutexGuard<'static, $t> {
            static ONCE: std::sync::Once = std::sync::Once::new();
            thread_local! {
                static HELD: std::cell::RefCell<Option<std::sync::MutexGuard<'static, $t>>> =
                    const { std::cell::RefCell::new(None) };
            }
            extern "C" fn before() {
                let g = $crate::control::lock(&$m);
                let _ = HELD.try_with(|h| *h.borrow_mut() = Some(g));
            }
            extern "C" fn after() {
                let _ = HELD.try_with(|h| drop(h.borrow_mut().take()));
            }
            ONCE.call_once(|| {
                // SAFETY: registers plain `extern "C"` functions that stay valid for the life
                // of the process.
                unsafe { libc::pthread_atfork(Some(before), Some(after), Some(after)) };
            });
            $crate::control::lock(&$m)
        }
    };
}
pub(crate) use fork_safe_lock;

/// The process's fork generation: 0 in the original process, bumped in the child of every
/// `fork` (a `pthread_atfork` child handler). A control block records the generation it was
/// made in; one from an older generation names a thread of a parent process, which does not
/// exist here (only the forking thread lives on in the child, and the handler moves its own
/// control block to the new generation).
static FORK_GENERATION: AtomicU32 = AtomicU32::new(0);
/// Runs in the child of a `fork`, in the forking thread, while it is the only thread:
/// atomics, a `const` thread-local read, `gettid` (the forking thread's new kernel id, under
/// its own lock, held since `before_fork`), and the release of the locks `before_fork` took.
pub(super) extern "C" fn after_fork_in_child() {
    crate::sys::after_fork_in_child();
    let g = FORK_GENERATION.fetch_add(1, Relaxed).wrapping_add(1);
    super::tls::with_current(|c| c.generation.store(g, Relaxed));
    // The forking thread's kernel id is new in the child (the cancel signal goes to it).
    let _ = HELD_AT_FORK.try_with(|h| {
        if let Some(Some(t)) = h.borrow_mut().as_mut().map(|held| held.0.as_mut()) {
            t.after_fork_in_child();
        }
    });
    after_fork_in_parent();
}

/// The forking thread's own control block's locks, held across `fork`: the child's only thread
/// goes on with that block (its end takes them), and another thread of the parent (a joiner
/// registering, a canceler signalling) may hold one of them at the moment of the fork.
type HeldAtFork = (
    std::sync::MutexGuard<'static, Option<crate::sys::Target>>,
    std::sync::MutexGuard<'static, Vec<Arc<Control>>>,
    std::sync::MutexGuard<'static, Callbacks>,
    std::sync::MutexGuard<'static, Option<Box<dyn Any + Send>>>,
);

thread_local! {
    static HELD_AT_FORK: std::cell::RefCell<Option<HeldAtFork>> =
        const { std::cell::RefCell::new(None) };
}

/// Before `fork`, in the forking thread: takes its control block's locks (no other path holds
/// two of them at once, so the order cannot deadlock).
pub(super) extern "C" fn before_fork() {
    let Some(c) = super::tls::current_ptr() else {
        return;
    };
    // SAFETY: the calling thread's control block lives until the thread ends (it holds a
    // reference), and the thread cannot end before the parent or child handler releases these
    // guards, which run in this same thread right after the fork.
    let c: &'static Control = unsafe { &*c };
    let held = (
        lock(&c.pthread),
        lock(&c.waiters),
        lock(&c.callbacks),
        lock(&c.exit_value),
    );
    let _ = HELD_AT_FORK.try_with(|h| *h.borrow_mut() = Some(held));
}

/// After `fork`, in the parent and (through `after_fork_in_child`) in the child.
pub(super) extern "C" fn after_fork_in_parent() {
    let _ = HELD_AT_FORK.try_with(|h| drop(h.borrow_mut().take()));
}

/// The current fork generation (see `FORK_GENERATION`).
#[inline]
pub(crate) fn fork_generation() -> u32 {
    FORK_GENERATION.load(Relaxed)
}
