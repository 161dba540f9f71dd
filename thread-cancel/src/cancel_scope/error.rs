//! What a canceled run returns: [`Canceled`], and [`TimedOut`] for the deadline helpers.

/// The error of a [`CancelScope::run`](crate::CancelScope::run) whose scope was canceled: `f` was stopped at a
/// cancellation point (or never started).
///
/// ```
/// let e = thread_cancel::Canceled::default();
/// assert_eq!(std::io::Error::from(e).kind(), std::io::ErrorKind::Other);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Canceled {
    pub(crate) timed_out: bool,
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

    /// Whether `e` reports a cancellation, and which: the crate's own errors converted to
    /// [`io::Error`](std::io::Error) (a [`Canceled`], a [`TimedOut`](crate::TimedOut), a
    /// canceled tokio blocking task, which converts as a `Canceled`), and a system call's
    /// `ECANCELED`. Code that handles
    /// `io::Error`s uses it to tell "the operation was canceled, stop" from a failure to retry
    /// or report.
    ///
    /// ```
    /// use thread_cancel::{CancelScope, Canceled};
    /// let scope = CancelScope::new();
    /// scope.cancel();
    /// let e: std::io::Error = scope.run(|| ()).unwrap_err().into();
    /// assert_eq!(Canceled::from_io_error(&e), Some(Canceled::default()));
    /// assert_eq!(Canceled::from_io_error(&std::io::Error::other("disk full")), None);
    /// ```
    pub fn from_io_error(e: &std::io::Error) -> Option<Canceled> {
        if e.raw_os_error() == Some(libc::ECANCELED) {
            return Some(Canceled { timed_out: false });
        }
        let inner = e.get_ref()?;
        if let Some(c) = inner.downcast_ref::<Canceled>() {
            return Some(*c);
        }
        if inner.is::<TimedOut>() {
            return Some(Canceled { timed_out: true });
        }
        None
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

/// `ErrorKind::TimedOut` if the deadline passed, `ErrorKind::Other` for a cancel; never
/// `Interrupted`, which std's `read_exact`, `read_to_end`, `write_all` and `io::copy` retry (a
/// canceled scope would spin them for ever). [`Canceled::from_io_error`] recognises it.
impl From<Canceled> for std::io::Error {
    fn from(e: Canceled) -> Self {
        let kind = if e.timed_out {
            std::io::ErrorKind::TimedOut
        } else {
            std::io::ErrorKind::Other
        };
        std::io::Error::new(kind, e)
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
