//! What the benchmarks ran on, read from the system at run time: the CPU model
//! (`/proc/cpuinfo`), the CPUs online and those this process may use, the glibc version
//! (`gnu_get_libc_version`), the kernel (`uname`), and the compiler this crate was built with.
//!
//! ```
//! let m = thread_cancel_bench::machine::Machine::read();
//! assert!(m.cpus_allowed >= 1);
//! assert!(m.glibc.starts_with('2'));
//! ```

use std::ffi::CStr;

/// A description of the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// The first `model name` of `/proc/cpuinfo` (`"unknown"` if there is none).
    pub cpu_model: String,
    /// The `processor` entries of `/proc/cpuinfo`.
    pub cpus_online: usize,
    /// The CPUs this process may run on (`available_parallelism`).
    pub cpus_allowed: usize,
    /// glibc's version, e.g. `2.36`.
    pub glibc: String,
    /// `uname`: system, release, version, machine.
    pub kernel: String,
    /// `rustc --version` of the compiler that built this crate.
    pub rustc: String,
}

impl Machine {
    /// Reads the description.
    pub fn read() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |line: &str, name: &str| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_string())
        };
        Machine {
            cpu_model: cpuinfo
                .lines()
                .find_map(|l| field(l, "model name"))
                .unwrap_or_else(|| "unknown".to_string()),
            cpus_online: cpuinfo
                .lines()
                .filter(|l| field(l, "processor").is_some())
                .count(),
            cpus_allowed: std::thread::available_parallelism().map_or(1, |n| n.get()),
            glibc: glibc_version(),
            kernel: kernel(),
            rustc: env!("THREAD_CANCEL_BENCH_RUSTC").to_string(),
        }
    }
}

/// `gnu_get_libc_version()`.
fn glibc_version() -> String {
    // SAFETY: `gnu_get_libc_version` takes no arguments and returns a pointer to a static,
    // NUL-terminated string that lives as long as the process.
    unsafe { CStr::from_ptr(libc::gnu_get_libc_version()) }
        .to_string_lossy()
        .into_owned()
}

/// `uname -srvm`.
fn kernel() -> String {
    // SAFETY: an all-zero `utsname` (arrays of `c_char`) is a valid value to be overwritten.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable `utsname`.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".to_string();
    }
    let s = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {} {}",
        s(&u.sysname),
        s(&u.release),
        s(&u.version),
        s(&u.machine)
    )
}
