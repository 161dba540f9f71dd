//! [`DropGuard`]: cancel a scope when a value goes out of scope.

use super::CancelScope;

/// Cancels its scope when dropped (tokio-util's `DropGuard`, C++'s `jthread` destructor):
/// made by [`CancelScope::drop_guard`].
#[derive(Debug)]
#[must_use = "the scope is canceled when the guard is dropped: at once if not bound"]
pub struct DropGuard {
    scope: Option<CancelScope>,
}

impl CancelScope {
    /// A guard that cancels this scope when dropped: the scope's work ends with the guard's
    /// owner, however it leaves (a return, an error, a panic).
    ///
    /// ```
    /// let scope = thread_cancel::CancelScope::new();
    /// {
    ///     let _guard = scope.clone().drop_guard();
    /// } // dropped: canceled
    /// assert!(scope.is_canceled());
    /// ```
    pub fn drop_guard(self) -> DropGuard {
        DropGuard { scope: Some(self) }
    }
}

impl DropGuard {
    /// The scope back, without canceling it.
    ///
    /// ```
    /// let guard = thread_cancel::CancelScope::new().drop_guard();
    /// let scope = guard.disarm();
    /// assert!(!scope.is_canceled());
    /// ```
    pub fn disarm(mut self) -> CancelScope {
        self.scope.take().expect("armed until disarmed")
    }
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if let Some(s) = self.scope.take() {
            s.cancel();
        }
    }
}
