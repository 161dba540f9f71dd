//! Guides: how to move to thread-cancel, and what is safe to do with it.
//!
//! - [Coming from `pthread_cancel`](coming_from_pthread_cancel): every POSIX call mapped to
//!   its counterpart here, what differs and why, and the C ABI.
//! - [Coming from flag polling](coming_from_flag_polling): stop flags, timeouts in a loop,
//!   closing descriptors and `shutdown()`, before and after, and what each one loses.
//! - [Cancellation safety](cancellation_safety): which calls are cancellation points, what the
//!   unwind does to locks and `catch_unwind`, critical sections, panics, `panic = "abort"` and
//!   the contract of asynchronous regions.
//! - [Deadlines and scopes](deadlines_and_scopes): cancel an operation, not the thread
//!   ([`CancelScope`](crate::CancelScope), [`with_timeout`](crate::with_timeout)): the contract
//!   of `run`, what is and is not interrupted, deadlines, cooperative code, groups of workers,
//!   pools, and a comparison with C#, C++ and Trio.
//! - [Feature `interpose`](interpose): reaching code the crate does not own (std, crates.io
//!   clients, C libraries) by defining the C library's blocking functions — for an application
//!   to turn on for its whole process, never a library for its users: the rules, every
//!   function covered and what std does with each, signal handlers, child processes, and what
//!   is not reached.
//!
//! The same texts are in `thread-cancel/docs/` in the repository. Their examples are
//! doctests: `cargo test -p thread-cancel --doc guide`.

#[doc = include_str!("../docs/guides/coming_from_pthread_cancel.md")]
pub mod coming_from_pthread_cancel {}

#[doc = include_str!("../docs/guides/coming_from_flag_polling.md")]
pub mod coming_from_flag_polling {}

#[doc = include_str!("../docs/guides/cancellation_safety.md")]
pub mod cancellation_safety {}

#[doc = include_str!("../docs/guides/deadlines_and_scopes.md")]
pub mod deadlines_and_scopes {}

#[doc = include_str!("../docs/interpose.md")]
pub mod interpose {}
