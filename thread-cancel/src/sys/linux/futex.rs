//! Futex wait and wake on a private (process-local) 32-bit word.

use std::sync::atomic::AtomicU32;
use std::time::Instant;

/// Blocks while `*word == expected`, until woken, interrupted, or `deadline` passes.
///
/// Returns `false` only if the deadline passed. Spurious returns are possible: callers loop.
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, deadline: Option<Instant>) -> bool {
    let timeout = match deadline {
        None => None,
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            Some(timespec(left))
        }
    };
    let ts_ptr = timeout
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call (it is borrowed);
    // FUTEX_WAIT only reads it and compares it with `expected`; `ts_ptr` is null or points to a
    // timespec that lives on this stack frame until the call returns.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            ts_ptr,
        )
    };
    !(r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ETIMEDOUT))
}

/// Wakes at most one thread blocked in [`futex_wait`] on `word`.
pub(crate) fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE does not access the memory behind the pointer; it only uses the address
    // as the key of the kernel's wait queue. Waking nobody is harmless.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        );
    }
}

/// `d` as a `timespec`, the seconds saturated at 68 years (a "forever" every kernel accepts,
/// whatever the width of `time_t`: 32 bits on some targets, 64 on others).
pub(crate) fn timespec(d: std::time::Duration) -> libc::timespec {
    // SAFETY: `timespec` is plain integers, for which all-zero is valid.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    ts.tv_sec = d.as_secs().min(i32::MAX as u64) as _;
    ts.tv_nsec = d.subsec_nanos() as _;
    ts
}
