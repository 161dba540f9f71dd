//! Builds every C test program in `tests/c/` exactly as a user would (`-include
//! thread_cancel/pthread_compat.h`, linked with `libthread_cancel.a` and `-lpthread`), runs it,
//! and requires exit status 0. One program per requirement that applies to C (`r07_order.c`,
//! ...); `r10_*` also builds against the system's glibc alone, for the comparison it prints, and
//! the programs marked `TC_COMPARE_WITH_GLIBC` must print the same against plain glibc.
//! The C++ programs in `tests/cxx/` are built the same way with `c++` and compared with their
//! glibc build; every program is also built and run under AddressSanitizer and UBSan.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
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
/// runs the tests, in a target directory of its own (its own lock).
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
        let out = cmd.output().expect("run cargo build");
        assert!(
            out.status.success(),
            "building thread-cancel-ffi failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        target.join(if release { "release" } else { "debug" })
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
        let mut c = Command::new(std::env::var("CXX").unwrap_or_else(|_| "c++".into()));
        c.arg("-std=gnu++17");
        c
    } else {
        let mut c = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
        c.arg("-std=gnu11");
        c
    };
    cc.args(["-O2", "-g", "-Wall", "-Wextra", "-Werror"]);
    if mode == Mode::PlainGlibc {
        cc.arg("-DTC_PLAIN_GLIBC");
    } else {
        cc.args(["-include", "thread_cancel/pthread_compat.h"]);
        cc.arg("-I").arg(repo().join("include"));
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
    cc.args(["-lpthread", "-ldl", "-lm"]);
    compile(cc, src, &exe);
    exe
}

/// Compiles `src` as a shared library `so` (`-shared -fPIC`) in `mode`: through the header and
/// with `libthread_cancel.a` linked in, or against plain glibc.
fn build_shared(src: &Path, mode: Mode, so: &Path) -> PathBuf {
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
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
        cc.arg("-I").arg(repo().join("include"));
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

/// Runs `exe` with the extra environment `env`; requires exit status 0 and returns stdout.
fn run_with(exe: &Path, env: &[(&str, &str)]) -> String {
    let out = Command::new(exe)
        .envs(env.iter().copied())
        .output()
        .expect("run a C test program");
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

fn programs() -> Vec<PathBuf> {
    sources("tests/c", "c")
}

/// The C++ test programs (`tests/cxx/*.cpp`).
fn cxx_programs() -> Vec<PathBuf> {
    sources("tests/cxx", "cpp")
}

fn sources(dir: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
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
    let mut failed = Vec::new();
    for src in programs() {
        if src
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("r10_"))
        {
            continue; // its own test below
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
    assert!(failed.is_empty(), "failed: {failed:?}");
}

/// Every C and C++ test program again, built with `-fsanitize=address,undefined` (as a user who checks
/// their program with the sanitizers would): a canceled thread abandons its C frames, and the
/// sanitizer must be told (its "no return" hook), or its next check of the stack aborts. Any
/// ASan or UBSan report fails the program.
#[test]
fn c_programs_under_asan_and_ubsan() {
    let env = [
        // An error report is a failure with the report on stderr; abort_on_error would only
        // add a core dump.
        (
            "ASAN_OPTIONS",
            "halt_on_error=1:detect_stack_use_after_return=0",
        ),
        ("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
    ];
    let mut failed = Vec::new();
    for src in programs().into_iter().chain(cxx_programs()) {
        let exe = build(&src, Mode::Sanitized);
        match std::panic::catch_unwind(|| run_with(&exe, &env)) {
            Ok(_) => eprintln!("{}: ok", src.file_name().unwrap().to_string_lossy()),
            Err(_) => failed.push(src),
        }
    }
    assert!(failed.is_empty(), "failed under the sanitizers: {failed:?}");
}

/// The C++ programs (`tests/cxx/`), through the compatibility header and against the system's
/// glibc alone: each checks itself (every destructor ran, the cleanup handlers interleaved
/// with them last in first out, the mutexes of `std::lock_guard`s free again), and ours must
/// print exactly what glibc's prints.
#[test]
fn cxx_programs_run_destructors_on_cancel_as_glibc() {
    let programs = cxx_programs();
    assert!(!programs.is_empty(), "no C++ test program in tests/cxx");
    for src in programs {
        let ours = run(&build(&src, Mode::Ours));
        let glibc = run(&build(&src, Mode::PlainGlibc));
        eprintln!(
            "{}:\n{}",
            src.file_name().unwrap().to_string_lossy(),
            ours.trim()
        );
        assert_eq!(ours, glibc, "{}: ours and glibc differ", src.display());
    }
}

/// R10 in C, ours beside the system's glibc: the same program built both ways (ours must lose
/// nothing — the program checks it; glibc's losses are printed).
#[test]
fn r10_read_either_data_or_cancel_c_vs_glibc() {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/r10_read_either_data_or_cancel.c");
    let ours = run(&build(&src, Mode::Ours));
    let glibc = run(&build(&src, Mode::PlainGlibc));
    eprintln!("{}\n{}", ours.trim(), glibc.trim());
    assert!(ours.contains(" + 0 lost"), "ours lost data: {ours}");
}

/// Programs whose comment says `TC_COMPARE_WITH_GLIBC` are tests of behaviour glibc has too:
/// each is also built against plain glibc (`-DTC_PLAIN_GLIBC`, no header, no library), and
/// both builds must succeed and print the same lines, so the tests show where we match glibc.
#[test]
fn c_programs_match_plain_glibc() {
    let mut differ = Vec::new();
    for src in programs() {
        let text = std::fs::read_to_string(&src).expect("read a C test program");
        if !text.contains("TC_COMPARE_WITH_GLIBC") {
            continue;
        }
        let name = src.file_name().unwrap().to_string_lossy().into_owned();
        let ours = std::panic::catch_unwind(|| run(&build(&src, Mode::Ours)));
        let glibc = std::panic::catch_unwind(|| run(&build(&src, Mode::PlainGlibc)));
        match (ours, glibc) {
            (Ok(o), Ok(g)) if o == g => eprintln!("{name}: same as glibc:\n{}", o.trim()),
            (o, g) => {
                eprintln!("{name}: ours {o:?}\nglibc {g:?}");
                differ.push(name);
            }
        }
    }
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
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
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
    let stdout = run_shared(&exe);
    assert!(
        stdout.contains("a std thread went past the point"),
        "{stdout}"
    );
}

/// The README's C example (`examples/c/`), built the way the README says: against the shared
/// library, with the compatibility header.
#[test]
fn examples_c_build_and_run_against_the_shared_library() {
    let dir = repo().join("examples/c");
    for e in std::fs::read_dir(&dir).expect("examples/c") {
        let src = e.unwrap().path();
        if src.extension().is_none_or(|x| x != "c") {
            continue;
        }
        let exe = out_dir().join(src.file_stem().unwrap());
        let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args([
                "-Wall",
                "-Wextra",
                "-Werror",
                "-include",
                "thread_cancel/pthread_compat.h",
            ])
            .arg(format!("-I{}", repo().join("include").display()))
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
        let stdout = run_shared(&exe);
        assert!(stdout.contains("PTHREAD_CANCELED"), "{stdout}");
    }
}

/// `thread_cancel.h` declares exactly the functions the library exports (`nm -D`), so the
/// header and the library cannot drift apart.
#[test]
fn header_declares_every_exported_function() {
    let header = std::fs::read_to_string(repo().join("include/thread_cancel.h")).unwrap();
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
    let nm = Command::new("nm")
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
