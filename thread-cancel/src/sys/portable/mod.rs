//! The portable fallback: the platform layer on `std` and POSIX alone, for every target
//! without a folder of its own (anything but Linux and Android), and on Linux when the build
//! asks for it (`RUSTFLAGS="--cfg thread_cancel_portable"`, to test this layer where the
//! complete one also runs).
//!
//! What it provides, and what it does not:
//!
//! - Waits: [`futex_wait`]/[`futex_wake`] are emulated with a table of `Mutex` + `Condvar`
//!   buckets hashed by the word's address (`futex.rs`). Every wait of the crate (sleep, park,
//!   channels, condition variables, the semaphore, join, scopes and their deadlines) is built on
//!   them, so every one is fully cancelable, exactly as on Linux.
//! - System-call points act *before and after* the call, never during it: nothing interrupts a
//!   blocked call (there is no cancel signal). A request made while a thread blocks in, say,
//!   `io::read` is acted on when the call returns: at once if it failed (it had no effect),
//!   at the next point if it completed (its result is returned, never lost). Use timeouts
//!   (`io::poll` with a bound, non-blocking descriptors) where a blocked call must end.
//! - No asynchronous regions: `async_region` panics with a message saying so, before it runs
//!   anything.
//! - No cancel signal: `io::set_signal` accepts any signal and does nothing.
//! - The C ABI crate (`thread-cancel-ffi`) and the core's `c_abi` module need the Linux layer.

pub mod calls;
pub(crate) mod fence;
pub(crate) mod futex;
pub(crate) mod region;
pub(crate) mod syscall_cp;
