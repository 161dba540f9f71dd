//! C code that thread-cancel's tests of feature `interpose` link: a C library that blocks in
//! `read` and the C library's other blocking functions, built as a static library and as a
//! shared object (`build.rs`). Not published; a dev-dependency only.
#![cfg(target_os = "linux")]

#[cfg(target_env = "gnu")]
use libc::{c_char, c_int, c_long, size_t};

// Built by `build.rs` for glibc targets only.
#[cfg(target_env = "gnu")]
extern "C" {
    /// `c/interpose_blocking_read.c`, from the static library: reads one byte from `fd` with
    /// `read`; the count, or `-errno`.
    pub fn interpose_test_c_read_one(fd: c_int) -> c_long;
    /// The same, from the same C code built into a shared object (`libinterpose_test_so.so`).
    pub fn interpose_test_so_read_one(fd: c_int) -> c_long;
    /// C threads of the static library, each blocked in an interposed function, canceled with
    /// the C library's `pthread_cancel`: a line per case in `out`; the number not canceled.
    pub fn interpose_test_c_glibc_cancels(
        fifo: *const c_char,
        out: *mut c_char,
        len: size_t,
    ) -> c_int;
    /// The same from the shared object.
    pub fn interpose_test_so_glibc_cancels(
        fifo: *const c_char,
        out: *mut c_char,
        len: size_t,
    ) -> c_int;
    /// Starts `argv[0]` (a path; `argv` ends with a null) with `vfork` and `execv`: the
    /// child's id, or `-errno`.
    pub fn interpose_test_c_vfork_exec(argv: *const *const c_char) -> c_long;
    /// The same with the C library's `clone` (a new process, `SIGCHLD` at its end).
    pub fn interpose_test_c_clone_exec(argv: *const *const c_char) -> c_long;
    /// `c/signal_handlers.c`: installs, with the C library's `signal()`, a handler for `sig`
    /// that writes one byte to `fd`; returns the previous handler.
    pub fn signal_test_install_with_signal(sig: c_int, fd: c_int) -> libc::sighandler_t;
    /// The handler `sigaction` reports for `sig` (null on failure).
    pub fn signal_test_installed_handler(sig: c_int) -> *mut libc::c_void;
    /// The last handler call's write: its result, and its errno in `err` (0 on success).
    pub fn signal_test_last_write(err: *mut c_int) -> c_int;
    /// Installs a handler for `sig` that writes one byte to `fd` and leaves by `siglongjmp`,
    /// raises `sig`, and returns 1 once the handler jumped back (-1 otherwise).
    pub fn signal_test_jump_out_of_a_handler(sig: c_int, fd: c_int) -> c_int;
}

/// The path of a plugin built here and never linked (`c/w03_plugin.c`: `w03_plugin_read_one`,
/// which reads one byte with the C library's `read`), for a test to load with `dlopen`.
#[cfg(target_env = "gnu")]
pub const PLUGIN: &str = env!("W03_PLUGIN");

/// The path of another interposer of `read` built here and never linked
/// (`c/w03_preload_read.c`: it counts its calls, `w03_preload_read_calls`, and forwards), for a
/// test to preload into a child process (`LD_PRELOAD`).
#[cfg(target_env = "gnu")]
pub const PRELOAD_READ: &str = env!("W03_PRELOAD_READ");

/// The path of a C library built for plain glibc that installs a handler on its own `SIGRTMIN`
/// (`c/w05_library.c`: `lib_sigrtmin`, `lib_install`, `lib_got`), for a test to load with
/// `dlopen`.
#[cfg(target_env = "gnu")]
pub const W05_LIBRARY: &str = env!("W05_LIBRARY");

/// The global function symbols an ELF file defines, by `nm` (binutils): with `dynamic`, those
/// of its dynamic table (what a shared object exports). The version suffix of a dynamic
/// symbol (`read@@GLIBC_2.2.5`) is not part of its name.
///
/// # Panics
/// If `nm` cannot be run or fails on `path`.
pub fn defined_functions(
    path: &std::path::Path,
    dynamic: bool,
) -> std::collections::BTreeSet<String> {
    let mut cmd = std::process::Command::new("nm");
    cmd.args(["--defined-only", "--extern-only"]);
    if dynamic {
        cmd.arg("-D");
    }
    let out = cmd.arg(path).output().expect("nm (binutils) runs");
    assert!(out.status.success(), "nm {}: {out:?}", path.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_addr, kind, name) = (f.next()?, f.next()?, f.next()?);
            // Text symbols, weak ones and indirect functions.
            matches!(kind, "T" | "W" | "i").then(|| name.split('@').next().unwrap().to_owned())
        })
        .collect()
}

/// The C library the calling process is linked with (from `/proc/self/maps`).
///
/// # Panics
/// If no C library is mapped.
pub fn libc_path() -> std::path::PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libc.so") || p.contains("/libc-"))
        .expect("the C library is mapped")
        .into()
}
