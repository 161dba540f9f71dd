//! P4c: the cancellation latency of a C thread through the C ABI — a C thread created through
//! `thread_cancel/pthread_compat.h` (so by `tc_create`), blocked in `read` (`tc_read`) on an
//! empty pipe, canceled with `pthread_cancel` (`tc_cancel`): the time from the cancel call to
//! its first cleanup handler (`pthread_cleanup_push`) starting — beside the same C code built
//! against glibc alone, in a driver process of its own, sampled alternately. Target: <= glibc.
//!
//! What it measures: acting in a C thread is a forced unwind of the C frames
//! (`thread_cancel::c_abi::c_unwind`, as glibc's own `pthread_cancel` does), whose stop function
//! runs the C handlers before each frame; so the first handler runs when the unwind reaches
//! the frame that pushed it (here the start routine, right above `read`). No Rust unwind
//! precedes it (the Rust frames are only unwound after the C handlers, from the C region's
//! boundary).
//!
//! The driver (`csrc-p4c/`) is a program of its own, because it links `libthread_cancel.a`
//! (the `thread-cancel-ffi` crate's static library), which would be a second copy of the
//! crate's state in this process (two handlers for one cancel signal). The glibc side runs in a
//! second driver, built without the library: in a process with it, the code built without the
//! header calls the library's `pthread_cancel` and cleanup registration too (they go on to
//! glibc's for a thread the library does not manage, but not for free). [`driver`] builds both
//! once per process, as `thread-cancel-ffi/tests/c_programs.rs` builds the C tests: `cargo
//! build -p thread-cancel-ffi` (this binary's profile) into a target directory of its own under
//! this binary's (`<target>/<profile>/p4c/`, so it never waits for the lock of the build that
//! runs the bench), then `cc` (or `$CC`): `p4c_target.c` through the header with `p4c_main.c`
//! and the library, and `p4c_target.c` plain with `p4c_main.c` alone. Each driver answers one
//! sample per request on a pipe ([`sample`]). A third side runs the glibc driver with the
//! library's `libthread_cancel.so` preloaded (`LD_PRELOAD`): a program already built, given the
//! library as a drop-in ([`Side::Preloaded`]).
//!
//! ```no_run
//! // no_run: the first call builds the C ABI library (a minute or so).
//! use thread_cancel_bench::c_thread_latency::{sample, Side};
//! for side in Side::ALL {
//!     let d = sample(side).unwrap();
//!     assert!(d < std::time::Duration::from_secs(10), "{}: {d:?}", side.name());
//! }
//! ```

use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// Whose C thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Built through `pthread_compat.h`, linked with `libthread_cancel.a`.
    Ours,
    /// The same source built against glibc alone, in a driver without the library.
    Glibc,
    /// The glibc driver again, with `libthread_cancel.so` preloaded.
    Preloaded,
}

impl Side {
    /// The three sides.
    pub const ALL: [Side; 3] = [Side::Ours, Side::Glibc, Side::Preloaded];

    /// A short label.
    pub fn name(self) -> &'static str {
        match self {
            Side::Ours => "ours C thread via pthread_compat.h, read (pipe)",
            Side::Glibc => "glibc C thread, read (pipe), driver without the library",
            Side::Preloaded => "glibc C thread, read (pipe), the library preloaded",
        }
    }

    fn command(self) -> &'static str {
        match self {
            Side::Ours => "ours",
            Side::Glibc | Side::Preloaded => "glibc",
        }
    }
}

/// The workspace's root (where `Cargo.toml` and `thread-cancel-ffi/include/` are).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `cmd`, an error with its output if it fails.
fn run(mut cmd: Command, what: &str) -> io::Result<()> {
    let out = cmd
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("{what}: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )))
    }
}

/// Builds the drivers (see the module docs) and returns their paths: ours, glibc's, and the
/// shared library the preloaded side gives the glibc driver.
fn build() -> io::Result<[PathBuf; 3]> {
    let exe = std::env::current_exe()?;
    // <target>/<profile>/deps/<this binary>, or <target>/<profile>/<this binary>.
    let mut profile = exe
        .parent()
        .ok_or_else(|| io::Error::other("the bench binary has no directory"))?;
    if profile
        .file_name()
        .is_some_and(|n| n == "deps" || n == "examples")
    {
        profile = profile.parent().unwrap_or(profile);
    }
    let release = profile.file_name().is_some_and(|n| n != "debug");
    let out = profile.join("p4c");
    std::fs::create_dir_all(&out)?;

    let ffi_target = out.join("ffi-build");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "thread-cancel-ffi",
        "--target-dir",
    ])
    .arg(&ffi_target)
    .current_dir(repo());
    if release {
        cmd.arg("--release");
    }
    run(cmd, "cargo build -p thread-cancel-ffi")?;
    let lib_dir = ffi_target.join(if release { "release" } else { "debug" });
    let lib = lib_dir.join("libthread_cancel.a");

    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("csrc-p4c");
    let common = Path::new(env!("CARGO_MANIFEST_DIR")).join("csrc");
    let cc = || {
        let mut c = Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()));
        c.args([
            "-std=gnu11",
            "-O2",
            "-D_GNU_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
        ])
        .arg("-I")
        .arg(&src)
        .arg("-I")
        .arg(&common);
        c
    };
    let object = |name: &str, through_header: bool| -> io::Result<PathBuf> {
        let obj = out.join(format!("{name}.o"));
        let mut c = cc();
        if through_header {
            c.args(["-include", "thread_cancel/pthread_compat.h", "-I"])
                .arg(repo().join("thread-cancel-ffi").join("include"));
        }
        c.arg(format!("-DP4C_SAMPLE={name}"))
            .arg("-c")
            .arg(src.join("p4c_target.c"))
            .arg("-o")
            .arg(&obj);
        run(c, &format!("compiling p4c_target.c as {name}"))?;
        Ok(obj)
    };
    let ours = object("p4c_sample_ours", true)?;
    let glibc = object("p4c_sample_glibc", false)?;
    let driver = out.join("p4c-driver");
    let mut c = cc();
    c.arg(src.join("p4c_main.c"))
        .arg(ours)
        .arg(lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&driver);
    run(c, "linking the P4c driver")?;
    let plain = out.join("p4c-driver-glibc");
    let mut c = cc();
    c.arg("-DP4C_GLIBC_ONLY")
        .arg(src.join("p4c_main.c"))
        .arg(glibc)
        .args(["-lpthread", "-o"])
        .arg(&plain);
    run(c, "linking the P4c glibc driver")?;
    Ok([driver, plain, lib_dir.join("libthread_cancel.so")])
}

/// The path of `side`'s driver, both built on first use (see the module docs).
///
/// # Errors
///
/// The build's failure (cargo's or the C compiler's output in the message); the same error
/// again on every later call.
pub fn driver(side: Side) -> io::Result<&'static Path> {
    built(side).map(|(driver, _)| driver)
}

/// `side`'s driver, and the library it is given with `LD_PRELOAD` (the preloaded side only).
fn built(side: Side) -> io::Result<(&'static Path, Option<&'static Path>)> {
    static DRIVERS: OnceLock<Result<[PathBuf; 3], String>> = OnceLock::new();
    match DRIVERS.get_or_init(|| build().map_err(|e| e.to_string())) {
        Ok([ours, glibc, library]) => Ok(match side {
            Side::Ours => (ours, None),
            Side::Glibc => (glibc, None),
            Side::Preloaded => (glibc, Some(library)),
        }),
        Err(e) => Err(io::Error::other(e.clone())),
    }
}

/// The running driver and its pipes.
struct Running {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Running {
    fn start(side: Side) -> io::Result<Running> {
        let (driver, preload) = built(side)?;
        let mut cmd = Command::new(driver);
        if let Some(library) = preload {
            cmd.env("LD_PRELOAD", library);
        }
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("stdout"))?;
        Ok(Running {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        })
    }

    fn ask(&mut self, side: Side) -> io::Result<Duration> {
        let cpu = crate::target::target_cpu_c();
        writeln!(self.stdin, "{} {cpu}", side.command())?;
        self.stdin.flush()?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            let status = self.child.try_wait()?;
            return Err(io::Error::other(format!(
                "the P4c driver ended ({status:?})"
            )));
        }
        let line = line.trim();
        if let Some(errno) = line.strip_prefix("error ") {
            return Err(io::Error::from_raw_os_error(
                errno.parse().unwrap_or(libc::EINVAL),
            ));
        }
        line.parse()
            .map(Duration::from_nanos)
            .map_err(|_| io::Error::other(format!("the P4c driver said {line:?}")))
    }
}

/// How long [`sample`] lets the machine settle before each sample.
const SETTLE: Duration = Duration::from_millis(10);

/// Takes one sample of `side` (starting the driver on first use): a C thread blocked in `read`
/// is canceled; the time from the cancel call to its first cleanup handler.
///
/// # Errors
///
/// Building or starting the driver failing, or the sample's error (thread creation, the
/// target not blocking within 10 s, the thread not canceled or its handler not run).
pub fn sample(side: Side) -> io::Result<Duration> {
    static RUNNING: [Mutex<Option<Running>>; 3] =
        [Mutex::new(None), Mutex::new(None), Mutex::new(None)];
    let mut running = RUNNING[side as usize]
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if running.is_none() {
        *running = Some(Running::start(side)?);
    }
    // The previous sample of the round-robin (another scenario, of this process) may still be
    // ending its threads on the other CPU; the side sampled right after it paid for that (seen:
    // ours 1.45x glibc in that place, glibc 1.40x ours with the order of the two series
    // swapped; 0.97x-1.01x with the driver alone). Both sides start from a quiet machine.
    std::thread::sleep(SETTLE);
    let r = running
        .as_mut()
        .map_or_else(|| Err(io::Error::other("no driver")), |d| d.ask(side));
    if r.is_err() {
        // A driver that failed once is not trusted again: the next sample starts a new one.
        if let Some(mut d) = running.take() {
            let _ = d.child.kill();
            let _ = d.child.wait();
        }
    }
    r
}
