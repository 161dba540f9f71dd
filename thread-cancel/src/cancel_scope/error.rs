//! What a canceled run returns: [`Canceled`] (its [`Cause`]), and [`TimedOut`] for the deadline
//! helpers. A run never hides a cancel: its error keeps the closure's value when the closure
//! returned, and says whether anything acted on the cancel.

use std::sync::Arc;
use std::time::Instant;

/// Why a scope was canceled: the first cancel's cause wins, and a scope canceled through its
/// parent carries the parent's.
///
/// ```
/// use thread_cancel::{CancelScope, Cause};
/// let s = CancelScope::new();
/// s.cancel();
/// assert!(matches!(s.run(|| ()).unwrap_err().cause(), Cause::Cancel));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Cause {
    /// [`CancelScope::cancel`](crate::CancelScope::cancel), or an abort of a blocking task.
    Cancel,
    /// The scope's deadline (its own, or an enclosing scope's) passed: the deadline.
    Deadline(Instant),
    /// [`CancelScope::cancel_with`](crate::CancelScope::cancel_with): the error given.
    Error(Arc<dyn std::error::Error + Send + Sync + 'static>),
    /// Not the scope: the thread running the run was canceled as a thread (its
    /// [`JoinHandle::cancel`](crate::JoinHandle::cancel), or a cancel of the thread from within),
    /// and acted on it. Only [`Outcome::flatten`](crate::Outcome::flatten) reports it, for a
    /// thread started by [`CancelScope::spawn`](crate::CancelScope::spawn); a scope's own
    /// cause is never this.
    ///
    /// ```
    /// use std::time::Duration;
    /// use thread_cancel::{CancelScope, Cause};
    /// let scope = CancelScope::new();
    /// let h = scope.spawn(|| thread_cancel::sleep(Duration::from_secs(60))).unwrap();
    /// h.cancel().unwrap(); // the thread, not the scope
    /// let e = h.join().flatten().unwrap_err();
    /// assert!(matches!(e.cause(), Cause::Thread));
    /// assert!(!scope.is_canceled());
    /// ```
    Thread,
}

impl PartialEq for Cause {
    /// Errors compare by identity (the same `cancel_with` call), the rest by value.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Cause::Cancel, Cause::Cancel) | (Cause::Thread, Cause::Thread) => true,
            (Cause::Deadline(a), Cause::Deadline(b)) => a == b,
            (Cause::Error(a), Cause::Error(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for Cause {}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Cancel => f.write_str("canceled"),
            Cause::Deadline(_) => f.write_str("its deadline passed"),
            Cause::Error(e) => write!(f, "canceled: {e}"),
            Cause::Thread => f.write_str("its thread was canceled"),
        }
    }
}

/// The error of a [`CancelScope::run`](crate::CancelScope::run) whose scope was canceled (or
/// whose deadline passed) before the run ended.
///
/// A run never hides a cancel, and never reports completed work as undone:
/// - [`into_value`](Self::into_value) is `Some` when the closure returned (its effects
///   happened) and `None` when it was stopped at a cancellation point or never started;
/// - [`acted`](Self::acted) tells whether the cancel stopped anything in the run; `false` is a
///   missed cancel: the closure ran to its end without meeting a cancellation point.
///
/// `R` defaults to `()`: the value-less error, as [`Canceled::from_io_error`] returns it and as
/// it converts into [`io::Error`](std::io::Error) (the value is dropped).
///
/// ```
/// use thread_cancel::CancelScope;
/// let s = CancelScope::new();
/// let e = s
///     .run(|| {
///         s.cancel(); // nothing below is a cancellation point
///         42
///     })
///     .unwrap_err();
/// assert!(!e.acted()); // the cancel was missed ...
/// assert_eq!(e.into_value(), Some(42)); // ... and the value is kept
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canceled<R = ()> {
    pub(crate) cause: Cause,
    pub(crate) acted: bool,
    pub(crate) value: Option<R>,
}

impl Default for Canceled {
    /// A cancel ([`Cause::Cancel`]) that stopped the closure.
    fn default() -> Self {
        Canceled {
            cause: Cause::Cancel,
            acted: true,
            value: None,
        }
    }
}

impl<R> Canceled<R> {
    pub(crate) fn new(cause: Cause, acted: bool, value: Option<R>) -> Self {
        Canceled {
            cause,
            acted: acted || value.is_none(),
            value,
        }
    }

    /// Whether the scope was canceled by its deadline (its own or an enclosing scope's)
    /// rather than by a cancel.
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = thread_cancel::CancelScope::with_timeout(Duration::ZERO);
    /// assert!(s.run(|| ()).unwrap_err().deadline_passed());
    /// ```
    pub fn deadline_passed(&self) -> bool {
        matches!(self.cause, Cause::Deadline(_))
    }

    /// Why the scope was canceled.
    ///
    /// ```
    /// use thread_cancel::{CancelScope, Cause};
    /// let s = CancelScope::new();
    /// s.cancel_with(std::io::Error::other("client left"));
    /// let e = s.run(|| ()).unwrap_err();
    /// assert!(matches!(e.cause(), Cause::Error(err) if err.to_string() == "client left"));
    /// ```
    pub fn cause(&self) -> &Cause {
        &self.cause
    }

    /// Whether anything acted on the cancel in this run: the closure never started, a
    /// cancellation point acted (even if the closure caught that unwind and returned), an
    /// [`on_cancel`](crate::on_cancel) callback registered in the run ran, or a
    /// [`CancelScope::on_cancel`](crate::CancelScope::on_cancel) callback of the scope (or of
    /// a parent) fired while the run was in progress (either is what makes a call that is not
    /// a cancellation point return), or the closure saw the cancel
    /// ([`cancel_requested`](crate::cancel_requested) or the scope's
    /// [`is_canceled`](crate::CancelScope::is_canceled) returned true in it: cooperative
    /// code stops there). `false`: the closure ran to its end without meeting the cancel — a
    /// missed cancel, its value kept.
    ///
    /// ```
    /// use thread_cancel::CancelScope;
    /// let s = CancelScope::new();
    /// s.cancel();
    /// assert!(s.run(|| ()).unwrap_err().acted()); // never started
    /// ```
    pub fn acted(&self) -> bool {
        self.acted
    }

    /// Whether the closure returned (its value is kept: [`value`](Self::value)).
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::new();
    /// s.cancel();
    /// assert!(!s.run(|| ()).unwrap_err().completed());
    /// ```
    pub fn completed(&self) -> bool {
        self.value.is_some()
    }

    /// The closure's value, if it returned.
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::new();
    /// let e = s.run(|| { s.cancel(); "done" }).unwrap_err();
    /// assert_eq!(e.value(), Some(&"done"));
    /// ```
    pub fn value(&self) -> Option<&R> {
        self.value.as_ref()
    }

    /// The closure's value, if it returned.
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::new();
    /// let e = s.run(|| { s.cancel(); vec![1] }).unwrap_err();
    /// assert_eq!(e.into_value(), Some(vec![1]));
    /// ```
    pub fn into_value(self) -> Option<R> {
        self.value
    }

    /// The same error without the value (dropped).
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::new();
    /// let e = s.run(|| { s.cancel(); 1 }).unwrap_err().without_value();
    /// assert!(!e.completed() && !e.acted());
    /// ```
    pub fn without_value(self) -> Canceled {
        Canceled {
            cause: self.cause,
            acted: self.acted,
            value: None,
        }
    }

    /// `Ok` with the closure's value if it returned (it completed: keep what it did, and let
    /// the next run report the cancel), `Err` with the value-less error if it was stopped or
    /// never started. The way to pass a run's result on with `?` without losing completed
    /// work:
    ///
    /// ```
    /// use std::io::Read;
    /// use thread_cancel::{CancelScope, Canceled};
    ///
    /// fn scoped_read(scope: &CancelScope, r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    ///     scope.run(|| r.read(buf)).or_else(Canceled::into_completed)?
    /// }
    /// let s = CancelScope::new();
    /// assert_eq!(scoped_read(&s, &mut &b"abc"[..], &mut [0; 8]).unwrap(), 3);
    /// s.cancel();
    /// assert!(scoped_read(&s, &mut &b"abc"[..], &mut [0; 8]).is_err()); // never started
    /// ```
    ///
    /// # Errors
    /// The error without a value, when the closure did not return.
    pub fn into_completed(self) -> Result<R, Canceled> {
        match self.value {
            Some(v) => Ok(v),
            None => Err(Canceled {
                cause: self.cause,
                acted: self.acted,
                value: None,
            }),
        }
    }

    /// The same error with the value mapped.
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::new();
    /// let e = s.run(|| { s.cancel(); 2 }).unwrap_err().map(|v| v * 10);
    /// assert_eq!(e.into_value(), Some(20));
    /// ```
    pub fn map<T>(self, f: impl FnOnce(R) -> T) -> Canceled<T> {
        Canceled {
            cause: self.cause,
            acted: self.acted,
            value: self.value.map(f),
        }
    }
}

impl Canceled {
    /// Whether `e` reports a cancellation of this crate's, and which: the crate's own errors
    /// converted to [`io::Error`](std::io::Error) (a [`Canceled`], a
    /// [`TimedOut`](crate::TimedOut), a canceled tokio blocking task, which converts as a
    /// `Canceled`); and, with the feature `interpose`, a system call's `ECANCELED` or
    /// `ETIMEDOUT` (as std builds it from the errno of an interposed call) when the calling
    /// thread's last interposed call in its current or just-ended run failed with it because of
    /// a cancel. A raw errno says nothing of where it came from: any other `ECANCELED` (an
    /// aborted asynchronous I/O) or `ETIMEDOUT` (a TCP connection that timed out) is not ours,
    /// and neither is one passed to another thread.
    ///
    /// Code that handles `io::Error`s uses it to tell "the operation was canceled, stop" from a
    /// failure to retry or report.
    ///
    /// ```
    /// use thread_cancel::{CancelScope, Canceled};
    /// let scope = CancelScope::new();
    /// scope.cancel();
    /// let e: std::io::Error = scope.run(|| ()).unwrap_err().into();
    /// assert_eq!(Canceled::from_io_error(&e), Some(Canceled::default()));
    /// assert_eq!(Canceled::from_io_error(&std::io::Error::other("disk full")), None);
    /// let other = std::io::Error::from_raw_os_error(libc::ECANCELED); // not ours
    /// assert_eq!(Canceled::from_io_error(&other), None);
    /// ```
    pub fn from_io_error(e: &std::io::Error) -> Option<Canceled> {
        if let Some(code) = e.raw_os_error() {
            return Self::from_interposed_errno(code);
        }
        let inner = e.get_ref()?;
        if let Some(c) = inner.downcast_ref::<Canceled>() {
            return Some(c.clone());
        }
        if let Some(t) = inner.downcast_ref::<TimedOut>() {
            return Some(t.0.clone());
        }
        None
    }

    /// `code` is the errno an interposed call of this thread failed with because of a cancel,
    /// in its current or just-ended run.
    #[cfg(thread_cancel_interpose)]
    fn from_interposed_errno(code: i32) -> Option<Canceled> {
        let (e, at) = crate::interpose::last_failure()?;
        if e != code {
            return None;
        }
        let cause = match (code, at) {
            (libc::ETIMEDOUT, Some(at)) => Cause::Deadline(at),
            _ => Cause::Cancel,
        };
        Some(Canceled::new(cause, true, None))
    }

    /// Without the feature `interpose`, no call of the crate's fails with a raw errno for a
    /// cancel (its points unwind).
    #[cfg(not(thread_cancel_interpose))]
    fn from_interposed_errno(_code: i32) -> Option<Canceled> {
        None
    }
}

impl<R> std::fmt::Display for Canceled<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match &self.cause {
            Cause::Cancel => "operation canceled".to_string(),
            Cause::Deadline(_) => "operation canceled: its deadline passed".to_string(),
            Cause::Error(e) => format!("operation canceled: {e}"),
            Cause::Thread => "operation canceled: its thread was canceled".to_string(),
        };
        f.write_str(&what)?;
        if !self.acted {
            f.write_str(" (after it completed: nothing acted on the cancel)")?;
        }
        Ok(())
    }
}

impl<R: std::fmt::Debug> std::error::Error for Canceled<R> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.cause {
            Cause::Error(e) => Some(&**e),
            _ => None,
        }
    }
}

/// `ErrorKind::TimedOut` if the deadline passed, `ErrorKind::Other` for a cancel; never
/// `Interrupted`, which std's `read_exact`, `read_to_end`, `write_all` and `io::copy` retry (a
/// canceled scope would spin them for ever). [`Canceled::from_io_error`] recognises it.
///
/// So `?` passes a run's error on as an `io::Error` — an error, also when the closure returned
/// after the cancel (a missed cancel, or work the cancel cut short): the `io::Error` says so
/// ("after it completed: nothing acted on the cancel"), and the closure's value is dropped.
/// To keep it, ask for it by name first: [`into_value`](Canceled::into_value), or
/// [`into_completed`](Canceled::into_completed) (`Ok` with the value whenever the closure
/// returned).
///
/// ```
/// use thread_cancel::CancelScope;
/// fn read_in(scope: &CancelScope, r: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
///     scope.run(|| r.read(buf))?
/// }
/// let s = CancelScope::new();
/// assert_eq!(read_in(&s, &mut &b"abc"[..], &mut [0; 8]).unwrap(), 3);
/// s.cancel();
/// let e = read_in(&s, &mut &b"abc"[..], &mut [0; 8]).unwrap_err();
/// assert!(thread_cancel::Canceled::from_io_error(&e).is_some()); // never started
/// ```
impl<R> From<Canceled<R>> for std::io::Error {
    fn from(e: Canceled<R>) -> Self {
        let kind = if e.deadline_passed() {
            std::io::ErrorKind::TimedOut
        } else {
            std::io::ErrorKind::Other
        };
        std::io::Error::new(kind, e.without_value())
    }
}

/// The error of [`with_timeout`](crate::with_timeout) / [`with_deadline`](crate::with_deadline):
/// the deadline passed before the run ended. As [`Canceled`] (which it dereferences to), it
/// keeps the closure's value if the closure returned, and says whether anything acted.
///
/// ```
/// use std::time::Duration;
/// let e = thread_cancel::with_timeout(Duration::ZERO, || 1).unwrap_err();
/// assert!(e.acted() && e.value().is_none()); // never started
/// let e = std::io::Error::from(e.without_value());
/// assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedOut<R = ()>(pub(crate) Canceled<R>);

impl<R> TimedOut<R> {
    /// The closure's value, if it returned (after its deadline: nothing stopped it).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// let e = thread_cancel::with_timeout(Duration::from_millis(50), || {
    ///     let t = Instant::now();
    ///     while t.elapsed() < Duration::from_millis(100) {} // no cancellation point
    ///     "late"
    /// })
    /// .unwrap_err();
    /// assert_eq!(e.into_value(), Some("late"));
    /// ```
    pub fn into_value(self) -> Option<R> {
        self.0.value
    }

    /// The same error as a [`Canceled`] (its cause is the deadline).
    ///
    /// ```
    /// let e = thread_cancel::with_timeout(std::time::Duration::ZERO, || ()).unwrap_err();
    /// assert!(e.into_canceled().deadline_passed());
    /// ```
    pub fn into_canceled(self) -> Canceled<R> {
        self.0
    }

    /// `Ok` with the value if the closure returned, else `Err` with the value-less error (see
    /// [`Canceled::into_completed`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let r = thread_cancel::with_timeout(Duration::ZERO, || 5).or_else(thread_cancel::TimedOut::into_completed);
    /// assert!(r.is_err()); // never started
    /// ```
    ///
    /// # Errors
    /// The error without a value, when the closure did not return.
    pub fn into_completed(self) -> Result<R, TimedOut> {
        self.0.into_completed().map_err(TimedOut)
    }

    /// The same error without the value (dropped).
    ///
    /// ```
    /// let e = thread_cancel::with_timeout(std::time::Duration::ZERO, || 5).unwrap_err();
    /// assert!(!e.without_value().completed());
    /// ```
    pub fn without_value(self) -> TimedOut {
        TimedOut(self.0.without_value())
    }
}

impl<R> std::ops::Deref for TimedOut<R> {
    type Target = Canceled<R>;
    fn deref(&self) -> &Canceled<R> {
        &self.0
    }
}

impl<R> std::fmt::Display for TimedOut<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("operation timed out: its deadline passed")?;
        if !self.0.acted {
            f.write_str(" (after it completed: nothing acted on the deadline)")?;
        }
        Ok(())
    }
}

impl<R: std::fmt::Debug> std::error::Error for TimedOut<R> {}

/// `ErrorKind::TimedOut`, as a [`Canceled`] converts: so `with_timeout(..)?` is the tail of a
/// function that returns `io::Result`, and a late return stays an error (the value is dropped;
/// ask for it by name first to keep it).
///
/// ```
/// use std::time::Duration;
/// fn fetch(budget: Duration) -> std::io::Result<String> {
///     thread_cancel::with_timeout(budget, || {
///         let (r, _w) = std::io::pipe()?;
///         let mut s = String::new();
///         std::io::Read::read_to_string(&mut thread_cancel::io::Cancelable::new(r), &mut s)?;
///         Ok(s)
///     })?
/// }
/// let e = fetch(Duration::from_millis(20)).unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
/// assert!(thread_cancel::Canceled::from_io_error(&e).is_some_and(|c| c.deadline_passed()));
/// ```
impl<R> From<TimedOut<R>> for std::io::Error {
    fn from(e: TimedOut<R>) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, e.without_value())
    }
}
