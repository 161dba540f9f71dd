//! The target thread of a latency measurement, shared by the crate's own scenarios
//! (`wait_latency`) and glibc's (`glibc`): the CPU it runs on, how long it stays blocked before
//! it is canceled, and waiting until it is blocked in its system call.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long [`wait_blocked`] waits for a thread to block before it gives up.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a target stays blocked (after it was first seen blocked, and checked again after)
/// before it is canceled: long enough for it to be asleep for good, as a thread blocked "for a
/// long time" would be; the same for every scenario.
pub const SETTLE: Duration = Duration::from_micros(100);

/// The CPU every target thread moves to before it blocks: `P3_TARGET_CPU`, if set to a CPU
/// number, else the one an [`AcrossCpus`] guard chose while it lives. Neither (the default):
/// targets run wherever the scheduler puts them. With the measuring thread pinned elsewhere
/// (`taskset -c 0` on the process, `P3_TARGET_CPU=1`, or an [`AcrossCpus`]), every wake-up
/// crosses CPUs; with both on one CPU (`taskset -c 0`, no variable), none does.
pub fn target_cpu() -> Option<usize> {
    static CPU: OnceLock<Option<usize>> = OnceLock::new();
    CPU.get_or_init(|| {
        std::env::var("P3_TARGET_CPU")
            .ok()
            .and_then(|v| v.trim().parse().ok())
    })
    .or_else(|| {
        let c = ACROSS.load(Ordering::Relaxed);
        (c != NO_CPU).then_some(c)
    })
}

/// The target CPU an [`AcrossCpus`] guard set ([`NO_CPU`]: none).
static ACROSS: AtomicUsize = AtomicUsize::new(NO_CPU);
const NO_CPU: usize = usize::MAX;

/// The calling thread confined to the CPU it is on until dropped (its old set is restored);
/// the threads it spawns meanwhile inherit the confinement.
pub struct OneCpu {
    old: libc::cpu_set_t,
    here: usize,
}

impl OneCpu {
    /// Confines as above.
    ///
    /// # Errors
    ///
    /// If the kernel refuses to read or set the calling thread's CPU set.
    pub fn here() -> io::Result<Self> {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: a `cpu_set_t` is plain bits, for which all-zero is the empty set.
        let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: pid 0 is the calling thread; `old` is a live set of `size` bytes.
        if unsafe { libc::sched_getaffinity(0, size, &mut old) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: no arguments.
        let here = usize::try_from(unsafe { libc::sched_getcpu() })
            .map_err(|_| io::Error::last_os_error())?;
        // SAFETY: as above.
        let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `here` is a CPU number the kernel just gave, below `CPU_SETSIZE`.
        unsafe { libc::CPU_SET(here, &mut one) };
        // SAFETY: pid 0 is the calling thread; `one` is a live set of `size` bytes.
        if unsafe { libc::sched_setaffinity(0, size, &one) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { old, here })
    }
}

impl Drop for OneCpu {
    fn drop(&mut self) {
        // SAFETY: pid 0 is the calling thread; the set is the one `here` read.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.old) };
    }
}

/// While it lives, the calling (measuring) thread is confined to the CPU it is on
/// ([`OneCpu`]) and every target thread moves to another CPU of the process's set before it
/// blocks ([`target_cpu`]): every wake-up of a sample crosses CPUs, for every series alike.
/// Unpinned, a 2-CPU VM makes each latency bimodal (the futex floor 3-4 us on the waker's CPU,
/// 10-14 us across), and which mode a series lands in depends on its place in the round-robin;
/// pinned, the series of a row (ours, glibc's, the floor) are compared in the same mode. On a
/// machine with one CPU for the process it pins nothing. One guard at a time (the measuring
/// thread is one).
pub struct AcrossCpus {
    confined: Option<OneCpu>,
}

impl AcrossCpus {
    /// Pins as above.
    ///
    /// # Errors
    ///
    /// If the kernel refuses to read or set the calling thread's CPU set.
    pub fn here() -> io::Result<Self> {
        let one = OneCpu::here()?;
        let bits = 8 * std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `CPU_ISSET` reads the bit of an index below the set's size.
        let other = (0..bits).find(|&c| c != one.here && unsafe { libc::CPU_ISSET(c, &one.old) });
        let Some(other) = other else {
            return Ok(Self { confined: None }); // dropping `one` restores the set
        };
        ACROSS.store(other, Ordering::Relaxed);
        Ok(Self {
            confined: Some(one),
        })
    }
}

impl Drop for AcrossCpus {
    fn drop(&mut self) {
        // Before `confined` restores the set (fields drop after this).
        if self.confined.is_some() {
            ACROSS.store(NO_CPU, Ordering::Relaxed);
        }
    }
}

/// Pins the calling thread to [`target_cpu`], if set.
///
/// # Panics
///
/// If the CPU number is out of range or the kernel refuses it (not in the process's cpuset).
pub(crate) fn pin_to_target_cpu() {
    let Some(cpu) = target_cpu() else {
        return;
    };
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    assert!(cpu < max, "P3_TARGET_CPU={cpu}: at most {}", max - 1);
    // SAFETY: an all-zero `cpu_set_t` (a plain bit array) is the empty set; `CPU_SET` is given
    // an index below the set's size (checked above); `sched_setaffinity(0, ..)` reads the set
    // for the calling thread only.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert!(
        rc == 0,
        "P3_TARGET_CPU={cpu}: sched_setaffinity: {}",
        io::Error::last_os_error()
    );
}

/// [`target_cpu`] for the C shim: -1 for none.
pub(crate) fn target_cpu_c() -> libc::c_int {
    target_cpu()
        .and_then(|c| libc::c_int::try_from(c).ok())
        .unwrap_or(-1)
}

/// Cleared the first time `/proc/self/task/TID/syscall` cannot be read (a kernel without it):
/// from then on only the scheduler state is checked.
static SYSCALL_FILE_WORKS: AtomicBool = AtomicBool::new(true);

/// Whether thread `tid` is asleep (`S`) in one of `syscalls` (any, if `syscalls` is empty or
/// the kernel does not say).
pub(crate) fn is_blocked(tid: i32, syscalls: &[libc::c_long]) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may contain anything.
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    if state != Some("S") {
        return false;
    }
    if syscalls.is_empty() || !SYSCALL_FILE_WORKS.load(Ordering::Relaxed) {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")) {
        // "NR arg1 ... sp pc" while blocked in a system call; "running" or "-1 sp pc" otherwise.
        Ok(s) => s
            .split_whitespace()
            .next()
            .and_then(|nr| nr.parse::<libc::c_long>().ok())
            .is_some_and(|nr| syscalls.contains(&nr)),
        Err(_) => {
            SYSCALL_FILE_WORKS.store(false, Ordering::Relaxed);
            true
        }
    }
}

/// Waits until thread `tid` of this process is asleep in one of `syscalls`, stays so for
/// [`SETTLE`], and is still asleep in it.
///
/// # Errors
///
/// If it does not block within 10 s.
pub fn wait_blocked(tid: i32, syscalls: &[libc::c_long]) -> io::Result<()> {
    let start = Instant::now();
    loop {
        if is_blocked(tid, syscalls) {
            std::thread::sleep(SETTLE);
            if is_blocked(tid, syscalls) {
                return Ok(());
            }
        }
        if start.elapsed() > BLOCK_TIMEOUT {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("thread {tid} did not block in {syscalls:?}"),
            ));
        }
        std::thread::sleep(Duration::from_micros(10));
    }
}
