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
            Some(libc::timespec {
                // Saturate: a deadline centuries away is "forever" for the kernel too.
                tv_sec: libc::time_t::try_from(left.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: left.subsec_nanos() as libc::c_long,
            })
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
