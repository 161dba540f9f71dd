//! The coarse monotonic clock (shared by every platform folder): a lower bound of the time
//! `Instant::now()` would read, cheaper than it (no hardware counter read), that lags it by at
//! most a few scheduler ticks while the thread runs. Used only to rule out a deadline that is
//! still far ahead; a deadline near enough is checked on the precise clock.

/// One reading of `clock` (`clock_gettime`, or `clock_getres` with `res`), in nanoseconds.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn read(clock: libc::clockid_t, res: bool) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call writes it and nothing else.
    let r = unsafe {
        if res {
            libc::clock_getres(clock, &mut ts)
        } else {
            libc::clock_gettime(clock, &mut ts)
        }
    };
    (r == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// `CLOCK_MONOTONIC_COARSE` in nanoseconds; `None` where there is no such clock.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn coarse_monotonic_ns() -> Option<u64> {
    read(libc::CLOCK_MONOTONIC_COARSE, false)
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock of `Instant` on Linux.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn monotonic_ns() -> Option<u64> {
    read(libc::CLOCK_MONOTONIC, false)
}

/// The most the coarse clock lags the precise one while a thread runs: four ticks (its
/// resolution is one tick), at least 1 ms.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn coarse_lag_ns() -> Option<u64> {
    read(libc::CLOCK_MONOTONIC_COARSE, true).map(|r| (4 * r).max(1_000_000))
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn coarse_monotonic_ns() -> Option<u64> {
    None
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn monotonic_ns() -> Option<u64> {
    None
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn coarse_lag_ns() -> Option<u64> {
    None
}
