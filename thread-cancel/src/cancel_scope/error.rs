//! What a canceled run returns: [`Canceled`], and [`TimedOut`] for the deadline helpers.

/// The error of a [`CancelScope::run`](crate::CancelScope::run) whose scope was canceled: `f` was stopped at a
/// cancellation point (or never started).
///
/// ```
/// let e = thread_cancel::Canceled::default();
/// assert_eq!(std::io::Error::from(e).kind(), std::io::ErrorKind::Interrupted);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Canceled {
    pub(super) timed_out: bool,
}

impl Canceled {
    /// Whether the scope was canceled by its deadline (its own or an enclosing scope's)
    /// rather than by [`CancelScope::cancel`](crate::CancelScope::cancel).
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = thread_cancel::CancelScope::with_timeout(Duration::ZERO);
    /// assert!(s.run(|| ()).unwrap_err().deadline_passed());
    /// ```
    pub fn deadline_passed(&self) -> bool {
        self.timed_out
    }
}

impl std::fmt::Display for Canceled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.timed_out {
            "operation canceled: its deadline passed"
        } else {
            "operation canceled"
        })
    }
}

impl std::error::Error for Canceled {}

impl From<Canceled> for std::io::Error {
    fn from(e: Canceled) -> Self {
        std::io::Error::new(std::io::ErrorKind::Interrupted, e)
    }
}

/// The error of [`with_timeout`](crate::with_timeout) / [`with_deadline`](crate::with_deadline): the deadline passed before `f` finished,
/// and `f` was stopped at a cancellation point (or never started).
///
/// ```
/// let e = thread_cancel::TimedOut;
/// assert_eq!(std::io::Error::from(e).kind(), std::io::ErrorKind::TimedOut);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TimedOut;

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("operation timed out")
    }
}

impl std::error::Error for TimedOut {}

impl From<TimedOut> for std::io::Error {
    fn from(e: TimedOut) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, e)
    }
}
