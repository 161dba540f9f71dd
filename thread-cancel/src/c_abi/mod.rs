//! Support for the C ABI crate (`thread-cancel-ffi`): not a public API; no stability promise.
//!
//! A thread created from C runs its start routine inside a *C region* (the mechanism of
//! [`async_region`](crate::async_region), with an `act` function). Acting on a cancellation or
//! an exit in C code ([`c_unwind`]) is a *forced unwind* of the foreign frames, as glibc's:
//! every C++ destructor between the point and the region's boundary runs, and the C cleanup
//! handlers run as their frames are passed; the unwind stops at the boundary, where
//! [`c_leave`] resets the stack to the region's entry inside the Rust root, and the
//! cancellation goes on from there as an ordinary Rust unwind through Rust frames only, to the
//! thread's root, where the thread-specific-data destructors run and the outcome is recorded.
//! Frames the unwinder cannot pass (no unwind information; an asynchronous cancellation's
//! interrupted frame) are abandoned instead, after the remaining cleanup handlers ran.

use crate::control::with_current;
use crate::control::Control;
use crate::current::current_control;
use crate::point::raise;
use crate::sys::{
    abandoning_frames, region_boundary, region_has_act, region_leave, region_run, RegionCtx,
    RegionExit,
};
use crate::{word, Canceler, Outcome};

mod cancel_scope;
mod region;
mod spawn;
mod stack;
mod unwind;

pub use cancel_scope::*;
pub use region::*;
pub use spawn::*;
pub use unwind::*;

/// The C convention of a point: the argument registers (`args!`), the `-errno` result made `-1`
/// and errno, errno itself, the plain call.
pub use crate::point::conv;
/// The system calls a point makes (by name, `calls::READ`, ...: on Linux, their numbers) and
/// the kernel facts their callers need, for [`syscall_point`].
pub use crate::sys::calls;
/// The table of points (its macro and the C types of its signatures), for the C ABI's face.
pub use crate::sys::points;
use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// The `act` function of a C region: called with the region (as an opaque pointer) on the
/// interrupted C stack when an asynchronous request interrupts it; must end with [`c_unwind`]
/// or [`c_leave`].
pub type ActFn = unsafe extern "C-unwind" fn(*mut c_void) -> !;

/// A C start routine.
pub type StartFn = unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void;
