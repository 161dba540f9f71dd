//! No asynchronous regions in this layer: leaving a region from any instruction needs the
//! assembly and the signal of a complete platform layer. `async_region` checks
//! [`ASYNC_REGIONS`] and panics before it gets here.

use std::ffi::c_void;

/// Whether this layer has asynchronous regions: no.
pub(crate) const ASYNC_REGIONS: bool = false;

/// A region's context (never armed here).
#[derive(Debug)]
pub(crate) struct RegionCtx {
    _word: *const u32,
}

impl RegionCtx {
    /// A context for the thread whose state word is `word`.
    pub(crate) fn new(
        word: *const u32,
        _act: Option<unsafe extern "C-unwind" fn(*mut RegionCtx) -> !>,
    ) -> Self {
        Self { _word: word }
    }
}

/// How [`run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    /// `f` returned.
    Returned,
    /// The region was left (never, here).
    #[allow(dead_code)] // the interface's; this layer never leaves a region
    Left,
}

/// Unsupported: panics (`async_region` panics first, with the reason).
///
/// # Safety
/// None needed; `unsafe` for the interface's sake.
pub(crate) unsafe fn run(
    _ctx: &RegionCtx,
    _f: unsafe extern "C" fn(*mut c_void),
    _arg: *mut c_void,
) -> Exit {
    unreachable!("thread-cancel: asynchronous regions are not supported by the portable layer")
}
