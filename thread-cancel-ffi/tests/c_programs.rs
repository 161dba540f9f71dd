//! Builds every C test program in `tests/c/` exactly as a user would (`-include
//! thread_cancel/pthread_compat.h`, linked with `libthread_cancel.a` and `-lpthread`), runs it,
//! and requires exit status 0. One program per requirement that applies to C (`r07_order.c`,
//! ...); `r10_*` also builds against the system's glibc alone, for the comparison it prints, and
//! the programs marked `TC_COMPARE_WITH_GLIBC` must print the same against plain glibc.
//! The C++ programs in `tests/cxx/` are built the same way with `c++` and compared with their
//! glibc build; every program is also built and run under AddressSanitizer and UBSan.
//!
//! Cross (`cargo test -p thread-cancel-ffi --target <triple>`, this executable running under
//! the runner `CARGO_TARGET_<TRIPLE>_RUNNER`, e.g. `qemu-aarch64-static -L /usr/aarch64-linux-gnu`):
//! the library is built with `--target <triple>`, the programs with that target's C compiler
//! (`CC_<triple>`, `TARGET_CC`, else `<arch>-linux-gnu-gcc`), and each is run through the
//! runner. What cannot run there is skipped by name with its reason ([`EMULATION_SKIPS`], the
//! sanitizers if the cross toolchain has no runtime for them or it does not start under the
//! runner, C++ without a cross C++ compiler), and every test prints how many programs it ran
//! and which it skipped and why.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The machine the programs are built for: the target this test executable was built for.
struct Target {
    triple: &'static str,
    /// Another machine than the one building: the library and the programs are built with
    /// `--target` and the cross compilers, and run through `runner`.
    cross: bool,
    /// The command that runs a program, from `CARGO_TARGET_<TRIPLE>_RUNNER` split on
    /// whitespace (cross only; empty: programs run directly).
    runner: Vec<String>,
}

fn target() -> &'static Target {
    static T: OnceLock<Target> = OnceLock::new();
    T.get_or_init(|| {
        let triple = env!("THREAD_CANCEL_FFI_TARGET");
        let cross = triple != env!("THREAD_CANCEL_FFI_HOST");
        let runner = if cross {
            std::env::var(format!("CARGO_TARGET_{}_RUNNER", env_triple(triple)))
                .map(|r| r.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        Target {
            triple,
            cross,
            runner,
        }
    })
}

/// `triple` as cargo spells it in environment variables (`AARCH64_UNKNOWN_LINUX_GNU`).
fn env_triple(triple: &str) -> String {
    triple.to_ascii_uppercase().replace(['-', '.'], "_")
}

/// The prefix of the GNU cross tools for `triple`: `aarch64-unknown-linux-gnu` ->
/// `aarch64-linux-gnu`, `riscv64gc-unknown-linux-gnu` -> `riscv64-linux-gnu`.
fn gnu_prefix(triple: &str) -> String {
    let mut parts = triple.split('-');
    let arch = parts.next().unwrap_or_default();
    let arch = match arch {
        "riscv64gc" => "riscv64",
        "riscv32gc" => "riscv32",
        a => a,
    };
    std::iter::once(arch)
        .chain(parts.filter(|p| *p != "unknown"))
        .collect::<Vec<_>>()
        .join("-")
}

/// The C compiler for the target (`cxx`: the C++ compiler). Natively `CC` (`CXX`), else `cc`
/// (`c++`). Cross, looked up as the `cc` crate does: `CC_<triple>`, `CC_<triple_with_underscores>`,
/// `TARGET_CC` (`CXX_...`, `TARGET_CXX`), else the GNU cross compiler `<prefix>-gcc` (`-g++`).
fn compiler(cxx: bool) -> String {
    let (var, native, gnu) = if cxx {
        ("CXX", "c++", "g++")
    } else {
        ("CC", "cc", "gcc")
    };
    let t = target();
    if !t.cross {
        return std::env::var(var).unwrap_or_else(|_| native.into());
    }
    [
        format!("{var}_{}", t.triple),
        format!("{var}_{}", t.triple.replace('-', "_")),
        format!("TARGET_{var}"),
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok())
    .unwrap_or_else(|| format!("{}-{gnu}", gnu_prefix(t.triple)))
}

/// A command that runs `exe` on the target: through the runner, if there is one.
fn target_command(exe: &Path) -> Command {
    match target().runner.split_first() {
        Some((runner, args)) => {
            let mut c = Command::new(runner);
            c.args(args).arg(exe);
            c
        }
        None => Command::new(exe),
    }
}

/// Programs that cannot run under user-mode emulation (a runner set for a cross target), by
/// file name, with what was observed. Natively each runs as every other program.
/// (Observed with qemu-user 7.2 for aarch64 and riscv64.)
const EMULATION_SKIPS: &[(&str, &str)] = &[
    (
        "w05_the_environment_chooses_the_cancel_signal_before_main.c",
        "it runs itself again (execv of /proc/self/exe) with THREAD_CANCEL_SIGNAL set; under \
         qemu-user the guest's execv of a binary of its own architecture needs the host's \
         binfmt registration, which this runner does not assume; run natively",
    ),
    (
        "fork_while_registry_busy_child_pthread_exit_exits_0.c",
        "under qemu-user 7.2 a child forked from a multithreaded process can block on a lock of \
         the emulator's own that a vanished parent thread held at the fork (the Rust suite skips \
         its fork-in-child test for the same reason): glibc's own build had 1 of its 100 \
         children hang in a CI run on aarch64, so a hang here would not tell our bug from \
         qemu's; run natively",
    ),
    (
        "create_out_of_memory_returns_eagain.c",
        "it caps RLIMIT_AS just above the process's VmSize; qemu-user passes setrlimit through \
         to its own process (VmSize is the emulator's), so the emulator runs out of address \
         space itself: our build and the plain glibc build alike sat until their alarm(60) \
         (SIGALRM) instead of seeing pthread_create fail",
    ),
    (
        "r24_glibc_syscall_points_wake_on_cancel.c",
        "qemu-user 7.2 has no epoll_pwait2 (ENOSYS at once, checked with a 5-line program), so \
         the epoll_pwait2 case's thread never blocks and the program, our build and the plain \
         glibc build alike, waits for it until its alarm(60) (SIGALRM); its paused fork child \
         then outlived it",
    ),
    (
        "r05_program_blocks_and_sigwaits_every_realtime_signal.c",
        "qemu-user 7.2 cannot block every real-time signal of the guest (it keeps one for \
         itself): the program's check that SIGRTMIN..SIGRTMAX are all blocked fails at once, \
         for our build and the plain glibc build alike (checked by hand on aarch64)",
    ),
];

/// Programs whose plain glibc build (the reference of [`c_programs_match_plain_glibc`]) cannot
/// run reliably under emulation, by file name, with what was observed; our build of each still
/// runs in [`c_programs_through_the_compat_header`].
const EMULATION_GLIBC_SKIPS: &[(&str, &str)] = &[
    (
        "r18_forked_child_join_and_cancel_of_the_parents_threads_as_glibc.c",
        "under qemu-user 7.2 (aarch64) glibc's own build answers 0, not ESRCH, to the forked \
         child's cancel of the parent's main thread (natively glibc 2.36 says ESRCH, which our \
         build says everywhere): the emulator's fork leaves glibc's descriptor of the parent's \
         main thread looking alive (our build still runs, through the header and under ASan)",
    ),
    (
        "r06_main_async_self_cancel_acts.c",
        "under qemu-user 7.2 (aarch64 and riscv64) glibc's own build (no header, no library) \
     printed every line and then hung until its alarm(60) (SIGALRM), on riscv64 in 1 of 3 runs \
     by hand; our build passed every time",
    ),
];

/// What one test ran and skipped, printed at its end with the reasons (written to stderr
/// directly, not captured by the test harness, so that a passing run shows it too). Natively
/// nothing is skipped and nothing is printed.
struct Tally {
    test: &'static str,
    ran: usize,
    skipped: Vec<(String, String)>,
}

impl Tally {
    fn new(test: &'static str) -> Self {
        Tally {
            test,
            ran: 0,
            skipped: Vec::new(),
        }
    }

    /// Whether `src` can be built in `mode` and run here; if not, records it as skipped.
    fn runs(&mut self, src: &Path, mode: Mode) -> bool {
        match skip_reason(src, mode) {
            None => {
                self.ran += 1;
                true
            }
            Some(why) => {
                self.skipped.push((file_name(src), why));
                false
            }
        }
    }

    fn report(&self) {
        let t = target();
        if !t.cross && self.skipped.is_empty() {
            return;
        }
        let mut text = format!(
            "{} on {}{}: {} program(s) ran, {} skipped\n",
            self.test,
            t.triple,
            if t.runner.is_empty() {
                String::new()
            } else {
                format!(" (through `{}`)", t.runner.join(" "))
            },
            self.ran,
            self.skipped.len()
        );
        for (name, why) in &self.skipped {
            text.push_str(&format!("  skipped {name}: {why}\n"));
        }
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

fn file_name(src: &Path) -> String {
    src.file_name().unwrap().to_string_lossy().into_owned()
}

/// Why `src` is not built in `mode` and run here, if it is not.
fn skip_reason(src: &Path, mode: Mode) -> Option<String> {
    let t = target();
    let name = file_name(src);
    if !t.runner.is_empty() {
        if let Some((_, why)) = EMULATION_SKIPS.iter().find(|(n, _)| *n == name) {
            return Some(format!("under emulation: {why}"));
        }
        if mode == Mode::PlainGlibc {
            if let Some((_, why)) = EMULATION_GLIBC_SKIPS.iter().find(|(n, _)| *n == name) {
                return Some(format!("the glibc comparison, under emulation: {why}"));
            }
        }
    }
    if let Some(libs) = linked_libraries(src) {
        if t.cross {
            return Some(format!(
                "links {libs}, a library of the distribution installed for this machine only"
            ));
        }
        if let Some(missing) = libs.split_whitespace().find(|l| !library_installed(l)) {
            return Some(format!(
                "links {missing}, which is not installed here (`.ci/run` installs it)"
            ));
        }
    }
    if src.extension().is_some_and(|x| x == "cpp") {
        if let Err(why) = cxx_compiler_runs() {
            return Some(why.clone());
        }
    }
    if mode == Mode::Sanitized {
        if let Err(why) = sanitizers_run() {
            return Some(why.clone());
        }
    }
    None
}

/// The libraries of the distribution a program links besides the C library, from its line
/// `TC_LINK: -lsqlite3 -lz` (a real library whose blocking calls are reached).
fn linked_libraries(src: &Path) -> Option<String> {
    let text = std::fs::read_to_string(src).ok()?;
    let line = text.lines().find_map(|l| l.split_once("TC_LINK:"))?.1;
    Some(line.trim().trim_end_matches("*/").trim().to_string())
}

/// Whether `-lNAME` links here: the compiler finds `libNAME.so`.
fn library_installed(flag: &str) -> bool {
    let name = flag.trim_start_matches("-l");
    Command::new(compiler(false))
        .arg(format!("-print-file-name=lib{name}.so"))
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim().starts_with('/'))
}

/// Whether the C++ compiler exists (natively it is required: no check).
fn cxx_compiler_runs() -> &'static Result<(), String> {
    static R: OnceLock<Result<(), String>> = OnceLock::new();
    R.get_or_init(|| {
        if !target().cross {
            return Ok(());
        }
        let cxx = compiler(true);
        match Command::new(&cxx).arg("--version").output() {
            Ok(o) if o.status.success() => Ok(()),
            _ => Err(format!(
                "no C++ compiler for {} (`{cxx}` does not run; set CXX_{} or TARGET_CXX)",
                target().triple,
                target().triple
            )),
        }
    })
}

/// Whether sanitized programs can be built and run here: cross, an empty program is built
/// with [`SANITIZE`] (the cross toolchain may lack the runtimes) and run through the runner
/// (the runtimes may not start under it). Natively they are required: no check.
fn sanitizers_run() -> &'static Result<(), String> {
    static R: OnceLock<Result<(), String>> = OnceLock::new();
    R.get_or_init(|| {
        if !target().cross {
            return Ok(());
        }
        let dir = out_dir();
        let src = dir.join("sanitizer_probe.c");
        std::fs::write(&src, "int main(void) { return 0; }\n").expect("write the probe");
        let exe = dir.join("sanitizer_probe");
        let cc = compiler(false);
        let built = Command::new(&cc)
            .args(SANITIZE)
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("run the C compiler");
        let first_line = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        if !built.status.success() {
            return Err(format!(
                "`{cc} {}` cannot build an empty program: {}",
                SANITIZE.join(" "),
                first_line(&built.stderr)
            ));
        }
        let ran = target_command(&exe)
            .envs(sanitizer_env())
            .output()
            .expect("run the sanitizer probe");
        if !ran.status.success() {
            return Err(format!(
                "an empty program built with `{}` fails under `{}` ({}): {}",
                SANITIZE.join(" "),
                target().runner.join(" "),
                ran.status,
                first_line(&ran.stderr)
            ));
        }
        Ok(())
    })
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The headers: `thread_cancel.h` and `thread_cancel/pthread_compat.h`.
fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// The profile directory of this test executable (target/<profile>).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// The directory holding `libthread_cancel.a` and `.so`. `cargo test` does not build a
/// library that has no `rlib` (and an `rlib` named `thread_cancel` would collide with the Rust
/// crate's), so the library is built here once, with this test's profile, by the cargo that
/// runs the tests, in a target directory of its own (its own lock), for the target of this
/// test (under `target/<triple>/<profile>` when cross: one per target).
fn lib_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let profile = profile_dir();
        let release = profile.file_name().is_some_and(|n| n == "release");
        let target = profile.join("ffi-build");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "thread-cancel-ffi", "--target-dir"])
            .arg(&target)
            .current_dir(repo());
        if release {
            cmd.arg("--release");
        }
        let mut built = target.clone();
        if self::target().cross {
            // The linker and the C compiler of the build script come from the environment
            // (`CARGO_TARGET_<TRIPLE>_LINKER`, the `cc` crate's lookup), as for this test.
            cmd.args(["--target", self::target().triple]);
            built.push(self::target().triple);
        }
        let out = cmd.output().expect("run cargo build");
        assert!(
            out.status.success(),
            "building thread-cancel-ffi failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        built.join(if release { "release" } else { "debug" })
    })
    .clone()
}

fn out_dir() -> PathBuf {
    let d = profile_dir().join("c-tests");
    std::fs::create_dir_all(&d).expect("create c-tests dir");
    d
}

/// How a test program is built.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// With the compatibility header, linked with `libthread_cancel.a`.
    Ours,
    /// Against the system's glibc alone (`-DTC_PLAIN_GLIBC`), for comparisons.
    PlainGlibc,
    /// As `Ours`, with AddressSanitizer and UndefinedBehaviorSanitizer.
    Sanitized,
}

impl Mode {
    fn suffix(self) -> &'static str {
        match self {
            Mode::Ours => "",
            Mode::PlainGlibc => "-glibc",
            Mode::Sanitized => "-asan",
        }
    }
}

/// The sanitizer flags of [`Mode::Sanitized`]: every UBSan report is an error.
const SANITIZE: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
];

/// The environment of sanitized programs: an error report is a failure with the report on
/// stderr (abort_on_error would only add a core dump). Under emulation without LeakSanitizer:
/// it stops the world with ptrace, which qemu-user does not emulate (an empty program ends
/// with "LeakSanitizer has encountered a fatal error"); the address and UB checks remain.
fn sanitizer_env() -> [(&'static str, &'static str); 2] {
    let asan = if target().runner.is_empty() {
        "halt_on_error=1:detect_stack_use_after_return=0"
    } else {
        "halt_on_error=1:detect_stack_use_after_return=0:detect_leaks=0"
    };
    [
        ("ASAN_OPTIONS", asan),
        ("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
    ]
}

/// A name of its own for one build of `path` (a build writes there, then renames it to
/// `path`): two tests may build the same program at once while one of them already runs or
/// links it, and writing over an executable being started fails ("text file busy"), or gives
/// the other a half-written object or library.
fn private_name(path: &Path) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".tmp{}-{n}", std::process::id()));
    PathBuf::from(name)
}

/// Runs the compiler `cc` on `src`, writing `out` under a private name renamed to `out` once
/// complete.
fn compile(mut cc: Command, src: &Path, out: &Path) {
    let tmp = private_name(out);
    cc.arg("-o").arg(&tmp);
    let r = cc.output().expect("run the C compiler");
    assert!(
        r.status.success(),
        "{} does not compile:\n{}",
        src.display(),
        String::from_utf8_lossy(&r.stderr)
    );
    std::fs::rename(&tmp, out).expect("rename the build output");
}

/// Compiles `src` in `mode` and returns the executable.
fn build(src: &Path, mode: Mode) -> PathBuf {
    let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
    let exe = out_dir().join(format!("{stem}{}", mode.suffix()));
    // The C half of a C++ program is compiled only (to `<exe>.o`).
    let half = src.extension().is_some_and(|x| x == "c") && src.with_extension("cpp").exists();
    let cxx = src.extension().is_some_and(|x| x == "cpp");
    let mut cc = if cxx {
        let mut c = Command::new(compiler(true));
        c.arg("-std=gnu++17");
        c
    } else {
        let mut c = Command::new(compiler(false));
        c.arg("-std=gnu11");
        c
    };
    cc.args(["-O2", "-g", "-Wall", "-Wextra", "-Werror"]);
    // A program named for `_FORTIFY_SOURCE` is built with it (as Debian's packages are): its
    // calls go to the checking functions (`__recv_chk`, ...). On the command line, so that the
    // compatibility header, included first, sees it too.
    if stem.contains("fortify_source") && mode != Mode::Sanitized {
        cc.arg("-D_FORTIFY_SOURCE=2");
    }
    if mode == Mode::PlainGlibc {
        cc.arg("-DTC_PLAIN_GLIBC");
    } else {
        cc.args(["-include", "thread_cancel/pthread_compat.h"]);
        cc.arg("-I").arg(include_dir());
    }
    if mode == Mode::Sanitized {
        cc.args(SANITIZE);
    }
    if half {
        let obj = exe.with_extension("o");
        cc.arg("-c").arg(src);
        compile(cc, src, &obj);
        return obj;
    }
    // A shared-library half (`tests/c/lib/<same name>`), built the same way, whose path the
    // program gets as `TC_TEST_LIB` (to `dlopen` it).
    let lib = src
        .parent()
        .unwrap()
        .join("lib")
        .join(src.file_name().unwrap());
    if lib.exists() {
        let so = build_shared(&lib, mode, &exe.with_extension("so"));
        cc.arg(format!("-DTC_TEST_LIB=\"{}\"", so.display()));
    }
    // A preloaded half (`tests/c/preload/<same name>`): a plain shared library (no header,
    // nothing of ours), which `run_with` preloads (`LD_PRELOAD`) before every other library,
    // so that it stands between the library and the C library. Through the header only (a
    // plain-glibc build interposes in the program itself).
    let preload = src
        .parent()
        .unwrap()
        .join("preload")
        .join(src.file_name().unwrap());
    let preload_so = preloaded(&exe);
    if preload.exists() && mode != Mode::PlainGlibc {
        let mut pc = Command::new(compiler(false));
        pc.args(["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror"]);
        pc.args(["-shared", "-fPIC"]).arg(&preload).arg("-ldl");
        compile(pc, &preload, &preload_so);
    } else {
        let _ = std::fs::remove_file(&preload_so);
    }
    cc.arg(src);
    if cxx {
        // A C half (`<stem>.c` beside the `.cpp`), compiled as C, for frames of both languages.
        let half = src.with_extension("c");
        if half.exists() {
            cc.arg(build(&half, mode));
        }
    }
    if mode != Mode::PlainGlibc {
        cc.arg(lib_dir().join("libthread_cancel.a"));
    }
    if let Some(libs) = linked_libraries(src) {
        cc.args(libs.split_whitespace());
    }
    cc.args(["-lpthread", "-ldl", "-lm"]);
    compile(cc, src, &exe);
    exe
}

/// Compiles `src` as a shared library `so` (`-shared -fPIC`) in `mode`: through the header and
/// with `libthread_cancel.a` linked in, or against plain glibc.
///
/// A library whose source says `TC_PLAIN_LIBRARY` is built without the header and without
/// the library in every mode: a library of the distribution, built for plain glibc.
fn build_shared(src: &Path, mode: Mode, so: &Path) -> PathBuf {
    let plain = std::fs::read_to_string(src).is_ok_and(|t| t.contains("TC_PLAIN_LIBRARY"));
    let mode = if plain { Mode::PlainGlibc } else { mode };
    let mut cc = Command::new(compiler(false));
    cc.args([
        "-std=gnu11",
        "-O2",
        "-g",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-shared",
        "-fPIC",
    ]);
    if mode == Mode::PlainGlibc {
        cc.arg("-DTC_PLAIN_GLIBC");
    } else {
        cc.args(["-include", "thread_cancel/pthread_compat.h"]);
        cc.arg("-I").arg(include_dir());
    }
    if mode == Mode::Sanitized {
        cc.args(SANITIZE);
    }
    cc.arg(src);
    if mode != Mode::PlainGlibc {
        cc.arg(lib_dir().join("libthread_cancel.a"));
    }
    cc.args(["-lpthread", "-ldl", "-lm"]);
    compile(cc, src, so);
    so.to_path_buf()
}

fn run(exe: &Path) -> String {
    run_with(exe, &[])
}

/// Runs `exe`, linked with `libthread_cancel.so`, with the library built here first on the
/// search path: `cargo test` puts its own `target/<profile>/deps` first on `LD_LIBRARY_PATH`,
/// which wins over the program's rpath and may hold an older build of the library.
fn run_shared(exe: &Path) -> String {
    let lib = lib_dir();
    let path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", lib.display()),
        _ => lib.display().to_string(),
    };
    run_with(exe, &[("LD_LIBRARY_PATH", &path)])
}

/// Runs `exe` (through the runner, if any) with the extra environment `env`; requires exit
/// status 0 and returns stdout.
fn run_with(exe: &Path, env: &[(&str, &str)]) -> String {
    let mut cmd = target_command(exe);
    if target().cross {
        // The never-both stress programs: 2,000 races under emulation (100,000 natively).
        cmd.env("R10_RACES", "2000");
    }
    if !target().runner.is_empty() {
        // The process's own figures (mappings, resident memory) are the emulator's there.
        cmd.env("TC_EMULATED", "1");
    }
    cmd.envs(env.iter().copied());
    let preload = preloaded(exe);
    if preload.exists() {
        // After the one the caller gives, if any.
        let mut list = std::ffi::OsString::new();
        if let Some((_, first)) = env.iter().find(|(k, _)| *k == "LD_PRELOAD") {
            list.push(first);
            list.push(":");
        }
        list.push(&preload);
        cmd.env("LD_PRELOAD", list);
        // AddressSanitizer insists on coming first; the preloaded library intercepts nothing
        // of its.
        if let Some((_, asan)) = env.iter().find(|(k, _)| *k == "ASAN_OPTIONS") {
            cmd.env("ASAN_OPTIONS", format!("{asan}:verify_asan_link_order=0"));
        }
    }
    let out = if target().runner.is_empty() {
        cmd.output().expect("run a C test program")
    } else {
        output_of_group(cmd)
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}{}",
        exe.display(),
        out.status,
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The library a program `exe` runs with preloaded, if it exists (see `build`).
fn preloaded(exe: &Path) -> PathBuf {
    let mut name = exe.file_name().unwrap().to_os_string();
    name.push(".preload.so");
    exe.with_file_name(name)
}

/// `cmd`'s output, run in a process group of its own that is killed once `cmd` has ended: a
/// program that dies (e.g. by its alarm) under emulation can leave a forked child holding its
/// stdout, and waiting for that to close would hang the test instead of failing it.
fn output_of_group(mut cmd: Command) -> std::process::Output {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run a C test program");
    let reader = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let stdout = reader(Box::new(child.stdout.take().unwrap()));
    let stderr = reader(Box::new(child.stderr.take().unwrap()));
    let status = child.wait().expect("wait for a C test program");
    let pgid = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: kill has no memory effects. The group is the one made for this program above; if
    // no member remains, it fails with ESRCH (a reused pid is not a group unless its process
    // makes it one).
    let left = unsafe { libc::kill(-pgid, libc::SIGKILL) } == 0;
    if left {
        eprintln!("{}: processes it left behind were killed", exe_name(&cmd));
    }
    std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn exe_name(cmd: &Command) -> String {
    cmd.get_args()
        .last()
        .unwrap_or(cmd.get_program())
        .to_string_lossy()
        .into_owned()
}

/// The C test programs (`tests/c/*.c`).
fn programs() -> Vec<PathBuf> {
    sources("tests/c", "c")
}

/// The C++ test programs (`tests/cxx/*.cpp`).
fn cxx_programs() -> Vec<PathBuf> {
    sources("tests/cxx", "cpp")
}

/// The programs of `dir` with extension `ext`; with `THREAD_CANCEL_C_PROGRAMS` set, only those
/// whose file name starts with one of its comma-separated prefixes (`r07_`,
/// `c07_canceled_scope`): how `.ci/mutants` runs the one program named after a requirement, and
/// a contributor some programs.
fn sources(dir: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let only = std::env::var("THREAD_CANCEL_C_PROGRAMS").ok();
    let prefixes: Vec<&str> = only
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .filter(|p| {
            let name = file_name(p);
            only.is_none() || prefixes.iter().any(|pre| name.starts_with(pre))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn c_programs_through_the_compat_header() {
    assert!(
        lib_dir().join("libthread_cancel.a").exists(),
        "libthread_cancel.a not built in {}",
        lib_dir().display()
    );
    let mut tally = Tally::new("c_programs_through_the_compat_header");
    let mut failed = Vec::new();
    for src in programs() {
        if src
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("r10_"))
        {
            continue; // its own test below
        }
        if !tally.runs(&src, Mode::Ours) {
            continue;
        }
        let exe = build(&src, Mode::Ours);
        let r = std::panic::catch_unwind(|| run(&exe));
        match r {
            Ok(out) => eprintln!(
                "{}: {}",
                src.file_name().unwrap().to_string_lossy(),
                out.trim()
            ),
            Err(_) => failed.push(src),
        }
    }
    tally.report();
    assert!(failed.is_empty(), "failed: {failed:?}");
}

/// Every C and C++ test program again, built with `-fsanitize=address,undefined` (as a user who checks
/// their program with the sanitizers would): a canceled thread abandons its C frames, and the
/// sanitizer must be told (its "no return" hook), or its next check of the stack aborts. Any
/// ASan or UBSan report fails the program.
#[test]
fn c_programs_under_asan_and_ubsan() {
    let mut tally = Tally::new("c_programs_under_asan_and_ubsan");
    let mut failed = Vec::new();
    for src in programs().into_iter().chain(cxx_programs()) {
        if !tally.runs(&src, Mode::Sanitized) {
            continue;
        }
        let exe = build(&src, Mode::Sanitized);
        match std::panic::catch_unwind(|| run_with(&exe, &sanitizer_env())) {
            Ok(_) => eprintln!("{}: ok", src.file_name().unwrap().to_string_lossy()),
            Err(_) => failed.push(src),
        }
    }
    tally.report();
    assert!(failed.is_empty(), "failed under the sanitizers: {failed:?}");
}

/// The C++ programs (`tests/cxx/`), through the compatibility header and against the system's
/// glibc alone: each checks itself (every destructor ran, the cleanup handlers interleaved
/// with them last in first out, the mutexes of `std::lock_guard`s free again), and ours must
/// print exactly what glibc's prints.
#[test]
fn cxx_programs_run_destructors_on_cancel_as_glibc() {
    let programs = cxx_programs();
    assert!(
        !programs.is_empty() || std::env::var_os("THREAD_CANCEL_C_PROGRAMS").is_some(),
        "no C++ test program in tests/cxx"
    );
    let mut tally = Tally::new("cxx_programs_run_destructors_on_cancel_as_glibc");
    for src in programs {
        if !tally.runs(&src, Mode::Ours) {
            continue;
        }
        let ours = run(&build(&src, Mode::Ours));
        let plain = build(&src, Mode::PlainGlibc);
        let glibc = run(&plain);
        // The plain build again, given the library as a drop-in (`LD_PRELOAD`).
        let library = lib_dir().join("libthread_cancel.so");
        let preloaded = run_with(
            &plain,
            &[("LD_PRELOAD", library.to_str().expect("a UTF-8 path"))],
        );
        eprintln!(
            "{}:\n{}",
            src.file_name().unwrap().to_string_lossy(),
            ours.trim()
        );
        assert_eq!(ours, glibc, "{}: ours and glibc differ", src.display());
        assert_eq!(
            preloaded,
            glibc,
            "{}: glibc and glibc with libthread_cancel preloaded differ",
            src.display()
        );
    }
    tally.report();
}

/// R10 in C, ours beside the system's glibc: the same program built both ways (ours must lose
/// nothing — the program checks it; glibc's losses are printed).
#[test]
fn r10_read_either_data_or_cancel_c_vs_glibc() {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/r10_read_either_data_or_cancel.c");
    let mut tally = Tally::new("r10_read_either_data_or_cancel_c_vs_glibc");
    if !tally.runs(&src, Mode::Ours) {
        tally.report();
        return;
    }
    let ours = run(&build(&src, Mode::Ours));
    let glibc = run(&build(&src, Mode::PlainGlibc));
    eprintln!("{}\n{}", ours.trim(), glibc.trim());
    tally.report();
    assert!(ours.contains(" + 0 lost"), "ours lost data: {ours}");
}

/// The drop-in's never-both: the same race program built against plain glibc (no header),
/// run as it is — glibc's count, printed, never asserted (a C library with the fix must not
/// fail this) — and with `libthread_cancel.so` preloaded, where its threads' `read` is the
/// library's: 100,000 races (2,000 under emulation; fewer beside a heavy CPU load, where each
/// run stops after 90 s and says how many it ran), 0 bytes lost.
#[test]
fn w06_preloaded_plain_program_read_either_data_or_cancel() {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/r10_read_either_data_or_cancel.c");
    let mut tally = Tally::new("w06_preloaded_plain_program_read_either_data_or_cancel");
    if !tally.runs(&src, Mode::PlainGlibc) {
        tally.report();
        return;
    }
    let plain = build(&src, Mode::PlainGlibc);
    let races = if target().cross { "2000" } else { "100000" };
    // About 10 s each on an idle 2-core machine. Beside a CPU load of twice the cores each
    // thread's start and end waits for a time slice (100,000 races would take half an hour):
    // each run stops after 90 s and says how many races it ran.
    let budget = ("R10_SECONDS", "90");
    let glibc = run_with(&plain, &[("R10_RACES", races), budget]);
    let library = lib_dir().join("libthread_cancel.so");
    let library = library.to_str().expect("a UTF-8 path");
    let preloaded = run_with(
        &plain,
        &[("LD_PRELOAD", library), ("R10_RACES", races), budget],
    );
    eprintln!(
        "as built: {}\npreloaded: {}",
        glibc.trim(),
        preloaded.trim()
    );
    tally.report();
    let ran: u64 = preloaded
        .split(": ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        ran >= 1000 && preloaded.contains(" + 0 lost"),
        "the preloaded program lost data, or ran too few races: {preloaded}"
    );
    if ran.to_string() != races {
        eprintln!("(stopped after 90 s: {ran} of {races} races)");
    }
}

/// Programs whose comment says `TC_COMPARE_WITH_GLIBC` are tests of behaviour glibc has too:
/// each is also built against plain glibc (`-DTC_PLAIN_GLIBC`, no header, no library), and
/// both builds must succeed and print the same lines, so the tests show where we match glibc.
/// The plain-glibc build runs a third way, with `libthread_cancel.so` preloaded (a program
/// already built, given the library as a drop-in), and must print the same lines too, unless
/// its comment says `TC_PRELOADED_DIFFERS` (with the reason): then it must still differ (the
/// difference is known, and the marker goes when it is fixed).
#[test]
fn c_programs_match_plain_glibc() {
    let mut tally = Tally::new("c_programs_match_plain_glibc");
    let mut differ = Vec::new();
    for src in programs() {
        let text = std::fs::read_to_string(&src).expect("read a C test program");
        if !text.contains("TC_COMPARE_WITH_GLIBC") {
            continue;
        }
        if !tally.runs(&src, Mode::PlainGlibc) {
            continue;
        }
        let name = src.file_name().unwrap().to_string_lossy().into_owned();
        let ours = std::panic::catch_unwind(|| run(&build(&src, Mode::Ours)));
        let plain = build(&src, Mode::PlainGlibc);
        let glibc = std::panic::catch_unwind(|| run(&plain));
        let library = lib_dir().join("libthread_cancel.so");
        let library = library.to_str().expect("a UTF-8 path");
        let preloaded = std::panic::catch_unwind(|| run_with(&plain, &[("LD_PRELOAD", library)]));
        let known = text.contains("TC_PRELOADED_DIFFERS");
        match (ours, glibc, preloaded) {
            (Ok(o), Ok(g), Ok(p)) if o == g && p == g && !known => {
                eprintln!("{name}: same as glibc, and preloaded:\n{}", o.trim())
            }
            (Ok(o), Ok(g), p) if o == g && known && p.as_ref().map_or(true, |p| *p != g) => {
                eprintln!(
                    "{name}: same as glibc; preloaded differs, as its comment says: {p:?}\n{}",
                    o.trim()
                )
            }
            (o, g, p) => {
                eprintln!(
                    "{name}: ours {o:?}\nglibc {g:?}\nglibc, libthread_cancel preloaded {p:?}"
                );
                differ.push(name);
            }
        }
    }
    tally.report();
    assert!(differ.is_empty(), "differ from glibc: {differ:?}");
}

/// Threads of a Rust program (its `main`, its `std` threads) keep acting only in Rust: a C
/// cancellation point they reach through the C ABI does not act (the program is built with
/// `rustc` against the shared library and checks itself).
#[test]
fn rust_threads_never_act_in_c_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs/rust_threads_never_act_in_c_code.rs");
    let exe = out_dir().join("rust_threads_never_act_in_c_code");
    let mut rustc = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()));
    if target().cross {
        // The linker cargo links this test with, else the target's C compiler.
        let linker = std::env::var(format!(
            "CARGO_TARGET_{}_LINKER",
            env_triple(target().triple)
        ))
        .unwrap_or_else(|_| compiler(false));
        rustc
            .args(["--target", target().triple, "-C"])
            .arg(format!("linker={linker}"));
    }
    let out = rustc
        .arg("--edition=2021")
        .arg(&src)
        .arg("-L")
        .arg(lib_dir())
        .args(["-l", "dylib=thread_cancel", "-C"])
        .arg(format!("link-args=-Wl,-rpath,{}", lib_dir().display()))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run rustc");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut tally = Tally::new("rust_threads_never_act_in_c_code");
    tally.runs(&src, Mode::Ours);
    let stdout = run_shared(&exe);
    tally.report();
    assert!(
        stdout.contains("a std thread went past the point"),
        "{stdout}"
    );
}

/// The README's C example (`examples/c/` of this crate), built the way the README says: against
/// the shared library, with the compatibility header.
#[test]
fn examples_c_build_and_run_against_the_shared_library() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/c");
    let mut tally = Tally::new("examples_c_build_and_run_against_the_shared_library");
    for e in std::fs::read_dir(&dir).expect("examples/c") {
        let src = e.unwrap().path();
        if src.extension().is_none_or(|x| x != "c") {
            continue;
        }
        let exe = out_dir().join(src.file_stem().unwrap());
        let out = Command::new(compiler(false))
            .args([
                "-Wall",
                "-Wextra",
                "-Werror",
                "-include",
                "thread_cancel/pthread_compat.h",
            ])
            .arg(format!("-I{}", include_dir().display()))
            .arg(&src)
            .arg(format!("-L{}", lib_dir().display()))
            .args(["-lthread_cancel", "-lpthread"])
            .arg(format!("-Wl,-rpath,{}", lib_dir().display()))
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("run the C compiler");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        tally.runs(&src, Mode::Ours);
        let stdout = run_shared(&exe);
        assert!(stdout.contains("PTHREAD_CANCELED"), "{stdout}");
    }
    tally.report();
}

/// `thread_cancel.h` declares exactly the functions the library exports (`nm -D`), so the
/// header and the library cannot drift apart.
#[test]
fn header_declares_every_exported_function() {
    let header = std::fs::read_to_string(include_dir().join("thread_cancel.h")).unwrap();
    let mut declared: Vec<String> = header
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim_start().starts_with('*'))
        .flat_map(|l| {
            // Every `tc_name(` on the line: a declared function (macros start with `#`).
            l.match_indices("tc_")
                .filter_map(|(i, _)| {
                    let rest = &l[i..];
                    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
                    rest[end..]
                        .starts_with('(')
                        .then(|| rest[..end].to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    declared.sort();
    declared.dedup();
    // The target's nm when cross (the host's may not read its object format).
    let nm = if target().cross {
        format!("{}-nm", gnu_prefix(target().triple))
    } else {
        "nm".to_string()
    };
    let nm = Command::new(nm)
        .args(["-D", "--defined-only"])
        .arg(lib_dir().join("libthread_cancel.so"))
        .output()
        .expect("run nm");
    assert!(nm.status.success());
    let mut exported: Vec<String> = String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|s| s.starts_with("tc_"))
        .map(str::to_string)
        .collect();
    exported.sort();
    assert_eq!(declared, exported);
}

/// A program in POSIX.1-2008 C alone (no GNU extension), for
/// [`compat_header_opt_out_follows_strict_posix_modes`]: a thread blocked in `read` is canceled
/// and its cleanup handler runs.
const STRICT_POSIX_PROGRAM: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static int fds[2];
static volatile int ran;
static void handler(void *a) { (void)a; ran = 1; }
static void *reader(void *a) {
    char b;
    pthread_cleanup_push(handler, NULL);
    (void)read(fds[0], &b, 1);
    pthread_cleanup_pop(0);
    return a;
}
int main(void) {
    pthread_t t;
    void *ret = NULL;
    struct timespec ms = {0, 20000000};
    if (pipe(fds) != 0 || pthread_create(&t, NULL, reader, NULL) != 0) return 1;
    nanosleep(&ms, NULL);
    if (pthread_cancel(t) != 0 || pthread_join(t, &ret) != 0) return 1;
    printf("canceled %d, handler %d\n", ret == PTHREAD_CANCELED, ran);
    return 0;
}
"#;

/// With `-DTC_COMPAT_NO_GNU_SOURCE` the compatibility header follows the command line's feature
/// macros: a program compiled in a strict POSIX mode (the flags of the Open POSIX test suite,
/// `-std=c99 -D_POSIX_C_SOURCE=200809L -D_XOPEN_SOURCE=700`, and C11 with either) compiles with
/// `-Werror` and behaves as with glibc; a strict mode that names no POSIX.1-2008 level gets the
/// header's own error, which says what to add. (Before, every strict mode failed to compile:
/// `off64_t`, `siginfo_t`, `idtype_t` unknown.)
#[test]
fn compat_header_opt_out_follows_strict_posix_modes() {
    let src = out_dir().join("strict_posix_program.c");
    std::fs::write(&src, STRICT_POSIX_PROGRAM).unwrap();
    let cc = |flags: &[&str], exe: &Path| {
        let mut c = Command::new(compiler(false));
        c.args(flags)
            .args(["-Wall", "-Wextra", "-Werror", "-DTC_COMPAT_NO_GNU_SOURCE"])
            .args(["-include", "thread_cancel/pthread_compat.h", "-I"])
            .arg(include_dir())
            .arg(&src)
            .arg(lib_dir().join("libthread_cancel.a"))
            .args(["-lpthread", "-ldl", "-lm", "-o"])
            .arg(exe);
        c.output().expect("run the C compiler")
    };
    let modes: [&[&str]; 3] = [
        &[
            "-std=c99",
            "-D_POSIX_C_SOURCE=200809L",
            "-D_XOPEN_SOURCE=700",
        ],
        &["-std=c11", "-D_POSIX_C_SOURCE=200809L"],
        &["-std=c11", "-D_XOPEN_SOURCE=700"],
    ];
    for (i, flags) in modes.iter().enumerate() {
        let exe = out_dir().join(format!("strict_posix_program_{i}"));
        let r = cc(flags, &exe);
        assert!(
            r.status.success(),
            "{flags:?}: does not compile:\n{}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert_eq!(run(&exe), "canceled 1, handler 1\n", "{flags:?}");
    }
    let r = cc(&["-std=c11"], &out_dir().join("strict_posix_program_iso"));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        !r.status.success() && err.contains("needs POSIX.1-2008: add -D_POSIX_C_SOURCE=200809L"),
        "-std=c11 alone: {err}"
    );
}

/// The compatibility header compiles against musl's headers (with `-Werror`), through
/// `musl-gcc` where it is installed (natively only; skipped with a message otherwise). Before,
/// it stopped on glibc's `__GLIBC_PREREQ` in an `#if` and on musl's unsigned `sendmmsg` flags.
/// (Compiled only: linking a C program with the crate's musl build needs the Rust toolchain's
/// own unwinder, not the system compiler's.)
#[test]
fn compat_header_compiles_with_musl_headers() {
    if target().cross {
        return;
    }
    if Command::new("musl-gcc").arg("--version").output().is_err() {
        eprintln!("skipped: musl-gcc is not installed");
        return;
    }
    let src = out_dir().join("musl_header_program.c");
    std::fs::write(&src, STRICT_POSIX_PROGRAM).unwrap();
    let r = Command::new("musl-gcc")
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-c"])
        .args(["-include", "thread_cancel/pthread_compat.h", "-I"])
        .arg(include_dir())
        .arg(&src)
        .arg("-o")
        .arg(out_dir().join("musl_header_program.o"))
        .output()
        .expect("run musl-gcc");
    assert!(
        r.status.success(),
        "the header does not compile with musl's:\n{}",
        String::from_utf8_lossy(&r.stderr)
    );
}
