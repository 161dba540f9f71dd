//! Guides: how to move to thread-cancel, and what is safe to do with it.
//!
//! - [Coming from `pthread_cancel`](coming_from_pthread_cancel): every POSIX call mapped to
//!   its counterpart here, what differs and why, and the C ABI.
//! - [Coming from flag polling](coming_from_flag_polling): stop flags, timeouts in a loop,
//!   closing descriptors and `shutdown()`, before and after, and what each one loses.
//! - [Cancellation safety](cancellation_safety): which calls are cancellation points, what the
//!   unwind does to locks and `catch_unwind`, critical sections, panics, `panic = "abort"` and
//!   the contract of asynchronous regions.
//!
//! The same texts are in `thread-cancel/docs/guides/` in the repository. Their examples are
//! doctests: `cargo test -p thread-cancel --doc guide`.

#[doc = include_str!("../docs/guides/coming_from_pthread_cancel.md")]
pub mod coming_from_pthread_cancel {}

#[doc = include_str!("../docs/guides/coming_from_flag_polling.md")]
pub mod coming_from_flag_polling {}

#[doc = include_str!("../docs/guides/cancellation_safety.md")]
pub mod cancellation_safety {}
