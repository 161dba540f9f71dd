//! The calling thread's cancelability: state (enabled/disabled) and type (deferred/asynchronous).

use crate::current::with_own;
use crate::point::slow_point;
use crate::word;

/// Whether requests are acted on (a new thread starts `Enabled`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CancelState {
    /// Requests are acted on, when the [`CancelType`] says.
    Enabled,
    /// Requests are held pending until the state is `Enabled` again.
    Disabled,
}

/// When requests are acted on while enabled (a new thread starts `Deferred`).
///
/// In Rust code, `Asynchronous` acts on a request at the next cancellation point, and at once
/// when the type or state is switched with a request pending. Acting at any instruction needs
/// an `async_region`, whose frames hold no resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CancelType {
    /// Only at cancellation points (entering one, or blocked in one).
    Deferred,
    /// As soon as possible: at any instruction inside an `async_region`, elsewhere at once on
    /// switching and at the next cancellation point.
    Asynchronous,
}

/// A cancel state or type given as a number that is none of its values (C: `EINVAL`).
///
/// ```
/// use thread_cancel::{CancelState, InvalidValue};
/// assert_eq!(CancelState::try_from(7), Err(InvalidValue));
/// assert_eq!(std::io::Error::from(InvalidValue).raw_os_error(), Some(libc::EINVAL));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InvalidValue;

impl std::fmt::Display for InvalidValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid cancel state or type value")
    }
}

impl std::error::Error for InvalidValue {}

impl From<InvalidValue> for std::io::Error {
    fn from(_: InvalidValue) -> Self {
        std::io::Error::from_raw_os_error(libc::EINVAL)
    }
}

/// glibc's values: `PTHREAD_CANCEL_ENABLE = 0`, `PTHREAD_CANCEL_DISABLE = 1`.
///
/// ```
/// use thread_cancel::CancelState;
/// assert_eq!(CancelState::try_from(1), Ok(CancelState::Disabled));
/// assert_eq!(i32::from(CancelState::Enabled), 0);
/// ```
impl TryFrom<i32> for CancelState {
    type Error = InvalidValue;
    /// The value of C's number `v`.
    ///
    /// # Errors
    /// [`InvalidValue`] if `v` is neither 0 nor 1.
    fn try_from(v: i32) -> Result<Self, InvalidValue> {
        match v {
            0 => Ok(Self::Enabled),
            1 => Ok(Self::Disabled),
            _ => Err(InvalidValue),
        }
    }
}

impl From<CancelState> for i32 {
    fn from(s: CancelState) -> i32 {
        match s {
            CancelState::Enabled => 0,
            CancelState::Disabled => 1,
        }
    }
}

/// glibc's values: `PTHREAD_CANCEL_DEFERRED = 0`, `PTHREAD_CANCEL_ASYNCHRONOUS = 1`.
///
/// ```
/// use thread_cancel::CancelType;
/// assert_eq!(CancelType::try_from(1), Ok(CancelType::Asynchronous));
/// assert_eq!(i32::from(CancelType::Deferred), 0);
/// ```
impl TryFrom<i32> for CancelType {
    type Error = InvalidValue;
    /// The value of C's number `v`.
    ///
    /// # Errors
    /// [`InvalidValue`] if `v` is neither 0 nor 1.
    fn try_from(v: i32) -> Result<Self, InvalidValue> {
        match v {
            0 => Ok(Self::Deferred),
            1 => Ok(Self::Asynchronous),
            _ => Err(InvalidValue),
        }
    }
}

impl From<CancelType> for i32 {
    fn from(t: CancelType) -> i32 {
        match t {
            CancelType::Deferred => 0,
            CancelType::Asynchronous => 1,
        }
    }
}

/// Sets the calling thread's cancel state and returns the previous one.
///
/// Enabling with a request pending acts on it at the next cancellation point if the type is
/// deferred (as POSIX says), at once if asynchronous. After the thread has begun to act on a
/// cancellation, it stays disabled.
///
/// ```
/// use thread_cancel::{set_cancel_state, CancelState};
/// assert_eq!(set_cancel_state(CancelState::Disabled), CancelState::Enabled);
/// assert_eq!(set_cancel_state(CancelState::Enabled), CancelState::Disabled);
/// ```
pub fn set_cancel_state(new: CancelState) -> CancelState {
    // `with_own`: async-cancel-safe (allowed inside an `async_region`).
    let was_disabled = with_own(|c| {
        let (was, _) = c.word.set_state(new == CancelState::Disabled);
        if new == CancelState::Enabled {
            act_if_async(c);
        }
        was
    });
    if was_disabled {
        CancelState::Disabled
    } else {
        CancelState::Enabled
    }
}

/// Sets the calling thread's cancel type and returns the previous one. Switching to
/// asynchronous with a request pending (and enabled) acts on it at once.
///
/// ```
/// use thread_cancel::{set_cancel_type, CancelType};
/// assert_eq!(set_cancel_type(CancelType::Asynchronous), CancelType::Deferred);
/// assert_eq!(set_cancel_type(CancelType::Deferred), CancelType::Asynchronous);
/// ```
pub fn set_cancel_type(new: CancelType) -> CancelType {
    let was_async = with_own(|c| {
        let was = c.word.set_async(new == CancelType::Asynchronous);
        if new == CancelType::Asynchronous {
            act_if_async(c);
        }
        was
    });
    if was_async {
        CancelType::Asynchronous
    } else {
        CancelType::Deferred
    }
}

/// Acts at once if the type is asynchronous and a request must be acted on.
pub(crate) fn act_if_async(c: &crate::control::Control) {
    let s = c.word.load();
    if s & word::ASYNC != 0 && s & word::SLOW != 0 {
        slow_point(c, s);
    }
}

/// Disables cancellation until the guard is dropped, which restores the previous state.
///
/// ```
/// let h = thread_cancel::spawn(|| {
///     {
///         let _g = thread_cancel::disable();
///         thread_cancel::current().cancel().unwrap();
///         thread_cancel::testcancel(); // held pending
///     }
///     thread_cancel::testcancel(); // acted on here
///     unreachable!()
/// });
/// assert!(h.join().is_canceled());
/// ```
#[must_use = "cancellation is enabled again when the guard is dropped"]
pub fn disable() -> DisableGuard {
    DisableGuard {
        prev: set_cancel_state(CancelState::Disabled),
        _not_send: std::marker::PhantomData,
    }
}

/// Restores the previous cancel state when dropped; see [`disable`].
#[derive(Debug)]
pub struct DisableGuard {
    prev: CancelState,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for DisableGuard {
    fn drop(&mut self) {
        set_cancel_state(self.prev);
    }
}

/// Enables cancellation and acts at once on a pending request (IRIX's behaviour on enabling);
/// returns the previous state if there was nothing to act on.
///
/// ```
/// let h = thread_cancel::spawn(|| {
///     let _g = thread_cancel::disable();
///     thread_cancel::current().cancel().unwrap();
///     thread_cancel::enable_and_test();
///     unreachable!()
/// });
/// assert!(h.join().is_canceled());
/// ```
pub fn enable_and_test() -> CancelState {
    let prev = set_cancel_state(CancelState::Enabled);
    crate::testcancel();
    prev
}
