//! [`Generation`]: "cancel everything in flight, keep the pool".

use super::{lock, CancelScope};
use std::sync::Mutex;

/// A renewable scope for a long-lived service: [`current`](Self::current) is the scope new
/// work runs in; [`renew`](Self::renew) cancels it and puts a fresh one in its place, so work
/// in flight stops while work started afterwards is not affected. A canceled scope stays
/// canceled (it is a token); this is how a pool starts over. Each generation is a child of
/// the parent given (if any): canceling the parent cancels every generation.
///
/// ```
/// use thread_cancel::Generation;
/// let jobs = Generation::new();
/// let old = jobs.current();
/// let previous = jobs.renew(); // cancels the work in flight...
/// assert!(old.is_canceled() && previous.is_canceled());
/// assert!(!jobs.current().is_canceled()); // ...and new work starts clean
/// assert!(jobs.current().run(|| 1).is_ok());
/// ```
#[derive(Debug)]
pub struct Generation {
    parent: Option<CancelScope>,
    current: Mutex<CancelScope>,
}

impl Default for Generation {
    fn default() -> Self {
        Self::new()
    }
}

impl Generation {
    /// Generations of their own (the first one live).
    ///
    /// ```
    /// assert!(!thread_cancel::Generation::new().current().is_canceled());
    /// ```
    pub fn new() -> Self {
        Self {
            parent: None,
            current: Mutex::new(CancelScope::new()),
        }
    }

    /// Generations that are children of `parent`.
    ///
    /// ```
    /// let server = thread_cancel::CancelScope::new();
    /// let jobs = thread_cancel::Generation::child_of(&server);
    /// server.cancel();
    /// assert!(jobs.current().is_canceled());
    /// ```
    pub fn child_of(parent: &CancelScope) -> Self {
        Self {
            parent: Some(parent.clone()),
            current: Mutex::new(parent.child()),
        }
    }

    fn fresh(&self) -> CancelScope {
        self.parent
            .as_ref()
            .map_or_else(CancelScope::new, CancelScope::child)
    }

    /// The scope new work runs in (a clone: the generation it was taken from).
    ///
    /// ```
    /// let g = thread_cancel::Generation::new();
    /// assert!(g.current().run(|| ()).is_ok());
    /// ```
    pub fn current(&self) -> CancelScope {
        lock(&self.current).clone()
    }

    /// Cancels the current generation and starts a new one; returns the canceled one (to wait
    /// for its work, or to look at it). Work that took [`current`](Self::current) before
    /// this call is canceled; work that takes it after is in the new generation.
    ///
    /// ```
    /// let g = thread_cancel::Generation::new();
    /// let before = g.current();
    /// g.renew();
    /// assert!(before.is_canceled() && !g.current().is_canceled());
    /// ```
    pub fn renew(&self) -> CancelScope {
        let fresh = self.fresh();
        let old = std::mem::replace(&mut *lock(&self.current), fresh);
        old.cancel();
        old
    }
}
