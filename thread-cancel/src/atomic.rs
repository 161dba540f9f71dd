//! The atomics the state machine is built on: `loom`'s under `--cfg loom`, so that its model
//! checks run the crate's own code (the state word, the scope-run registration), and `std`'s
//! otherwise (the façade tokio uses for the same purpose).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::thread::yield_now;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::thread::yield_now;
