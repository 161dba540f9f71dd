//! [`Outcome`]: how a thread ended, as its join reports it.

use std::any::Any;

/// How a thread ended, as reported by [`JoinHandle::join`](crate::JoinHandle::join).
///
/// Its `Debug` shows a panic's message rather than an opaque payload:
///
/// ```
/// let o = thread_cancel::spawn(|| -> u8 { panic!("bad input") }).join();
/// assert_eq!(format!("{o:?}"), r#"Panicked("bad input")"#);
/// assert_eq!(format!("{:?}", thread_cancel::spawn(|| 2).join()), "Returned(2)");
/// ```
pub enum Outcome<T> {
    /// The start function returned this value.
    Returned(T),
    /// The thread called [`exit`](crate::exit) with this value.
    Exited(T),
    /// The thread acted on a cancellation request (C: `PTHREAD_CANCELED`).
    Canceled,
    /// The thread panicked; the panic's payload.
    Panicked(Box<dyn Any + Send + 'static>),
}

impl<T> Outcome<T> {
    /// The outcome with its value mapped (`Returned` and `Exited`); a cancel or a panic as
    /// it is. For a thread spawned in a scope, whose value is its run's result:
    ///
    /// ```
    /// let s = thread_cancel::CancelScope::new();
    /// let h = s.spawn(|| 21).unwrap();
    /// let o = h.join().map(|run| run.map(|v| v * 2).unwrap_or(0));
    /// assert_eq!(o.unwrap(), 42);
    /// ```
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Outcome<U> {
        match self {
            Outcome::Returned(v) => Outcome::Returned(f(v)),
            Outcome::Exited(v) => Outcome::Exited(f(v)),
            Outcome::Canceled => Outcome::Canceled,
            Outcome::Panicked(p) => Outcome::Panicked(p),
        }
    }

    /// Whether the thread was canceled.
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
    /// h.cancel().unwrap();
    /// assert!(h.join().is_canceled());
    /// ```
    pub fn is_canceled(&self) -> bool {
        matches!(self, Outcome::Canceled)
    }

    /// The value, if the thread returned or exited with one.
    ///
    /// ```
    /// assert_eq!(thread_cancel::spawn(|| 3).join().value(), Some(3));
    /// ```
    pub fn value(self) -> Option<T> {
        match self {
            Outcome::Returned(v) | Outcome::Exited(v) => Some(v),
            _ => None,
        }
    }

    /// Whether the thread panicked (like `std`'s `join().is_err()`).
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| panic!("oops"));
    /// assert!(h.join().is_panicked());
    /// assert!(!thread_cancel::spawn(|| ()).join().is_panicked());
    /// ```
    pub fn is_panicked(&self) -> bool {
        matches!(self, Outcome::Panicked(_))
    }

    /// The outcome as `std`'s [`JoinHandle::join`](std::thread::JoinHandle::join) reports it:
    /// `Ok` with the value if the thread returned or exited. Code written for `std` threads can
    /// take it as it is.
    ///
    /// # Errors
    /// The unwind's payload if the thread did not return or exit: the panic's payload if it
    /// panicked ([`Outcome::Panicked`]), a [`CancelPayload`](crate::CancelPayload) if it was
    /// canceled ([`Outcome::Canceled`]; the payload of the unwind by which it acted on the
    /// request).
    ///
    /// ```
    /// let r: std::thread::Result<i32> = thread_cancel::spawn(|| 5).join().into_result();
    /// assert_eq!(r.unwrap(), 5);
    ///
    /// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
    /// h.cancel().unwrap();
    /// let e = h.join().into_result().unwrap_err();
    /// assert!(e.is::<thread_cancel::CancelPayload>());
    /// ```
    pub fn into_result(self) -> std::thread::Result<T> {
        match self {
            Outcome::Returned(v) | Outcome::Exited(v) => Ok(v),
            Outcome::Canceled => Err(Box::new(crate::CancelPayload::new())),
            Outcome::Panicked(p) => Err(p),
        }
    }

    /// The value if the thread returned or exited (like `Result::expect`).
    ///
    /// # Panics
    /// With `msg` and "the thread was canceled" if the thread was canceled, with `msg` and the
    /// thread's panic message if it panicked.
    ///
    /// ```
    /// assert_eq!(thread_cancel::spawn(|| 3).join().expect("worker"), 3);
    /// ```
    ///
    /// ```should_panic
    /// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
    /// h.cancel().unwrap();
    /// h.join().expect("the worker should have finished"); // panics: it was canceled
    /// ```
    #[track_caller]
    pub fn expect(self, msg: &str) -> T {
        match self {
            Outcome::Returned(v) | Outcome::Exited(v) => v,
            Outcome::Canceled => panic!("{msg}: the thread was canceled"),
            Outcome::Panicked(p) => panic!("{msg}: the thread panicked: {}", panic_message(&*p)),
        }
    }

    /// The value if the thread returned or exited.
    ///
    /// # Panics
    /// If the thread was canceled (with a message saying so); if it panicked, its panic is
    /// resumed with the same payload.
    ///
    /// ```
    /// assert_eq!(thread_cancel::spawn(|| "done").join().unwrap(), "done");
    /// ```
    pub fn unwrap(self) -> T {
        match self {
            Outcome::Returned(v) | Outcome::Exited(v) => v,
            Outcome::Canceled => panic!("called `Outcome::unwrap()` on a canceled thread"),
            Outcome::Panicked(p) => std::panic::resume_unwind(p),
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Outcome<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Returned(v) => f.debug_tuple("Returned").field(v).finish(),
            Outcome::Exited(v) => f.debug_tuple("Exited").field(v).finish(),
            Outcome::Canceled => f.write_str("Canceled"),
            Outcome::Panicked(p) => f
                .debug_tuple("Panicked")
                .field(&panic_message(&**p))
                .finish(),
        }
    }
}

/// The message of a panic's payload, if it is a string (as `panic!` makes them).
fn panic_message(p: &(dyn Any + Send)) -> &str {
    if let Some(s) = p.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = p.downcast_ref::<String>() {
        s
    } else {
        "Box<dyn Any>"
    }
}
