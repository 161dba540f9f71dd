//! Builds every C test program in `tests/c/` exactly as a user would (`-include
//! thread_cancel/pthread_compat.h`, linked with `libthread_cancel.a` and `-lpthread`), runs it,
//! and requires exit status 0. One program per requirement that applies to C (`r07_order.c`,
//! ...); `r10_*` also builds against the system's glibc alone, for the comparison it prints, and
//! the programs marked `TC_COMPARE_WITH_GLIBC` must print the same against plain glibc.

use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Compiles `src` with the compatibility header (or, with `plain_glibc`, without it and
/// without our library) and returns the executable.
fn build(src: &Path, plain_glibc: bool) -> PathBuf {
    let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
    let exe = out_dir().join(if plain_glibc {
        format!("{stem}-glibc")
    } else {
        stem
    });
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    cc.args(["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror"]);
    if plain_glibc {
        cc.arg("-DTC_PLAIN_GLIBC");
    } else {
        cc.args(["-include", "thread_cancel/pthread_compat.h"]);
        cc.arg("-I").arg(repo().join("include"));
    }
    // Built under a name of its own, then renamed: two tests may build (and one run) the same
    // program at once, and writing over a running executable fails ("text file busy").
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = exe.with_extension(format!("tmp{}-{n}", std::process::id()));
    cc.arg(src).arg("-o").arg(&tmp);
    if !plain_glibc {
        cc.arg(lib_dir().join("libthread_cancel.a"));
    }
    cc.args(["-lpthread", "-ldl", "-lm"]);
    let out = cc.output().expect("run the C compiler");
    assert!(
        out.status.success(),
        "{} does not compile:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::rename(&tmp, &exe).expect("rename the executable");
    exe
}

fn run(exe: &Path) -> String {
    let out = Command::new(exe).output().expect("run a C test program");
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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/c")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
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
        let exe = build(&src, false);
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

/// R10 in C, ours beside the system's glibc: the same program built both ways (ours must lose
/// nothing — the program checks it; glibc's losses are printed).
#[test]
fn r10_read_either_data_or_cancel_c_vs_glibc() {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/r10_read_either_data_or_cancel.c");
    let ours = run(&build(&src, false));
    let glibc = run(&build(&src, true));
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
        let ours = std::panic::catch_unwind(|| run(&build(&src, false)));
        let glibc = std::panic::catch_unwind(|| run(&build(&src, true)));
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
        let stdout = run(&exe);
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
