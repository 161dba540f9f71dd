//! A program already built against plain glibc, started with `LD_PRELOAD=libthread_cancel.so`:
//! its cancellation calls bind to the library, and it behaves as without it (the library
//! forwards them to the C library's own for threads it does not manage). The Open POSIX suite's
//! cancellation tests do the same at scale: `.ci/openposix-preload`.
#![cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The test's profile directory (`target/<profile>`).
fn profile() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// `libthread_cancel.so`, built by this test's cargo in a target directory of its own.
fn library() -> PathBuf {
    let target = profile().join("w06-preload");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "-p", "thread-cancel-ffi", "--target-dir"])
        .arg(&target)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("run cargo build");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("debug/libthread_cancel.so")
}

fn run(exe: &PathBuf, preload: Option<&PathBuf>, bindings: &PathBuf) -> Output {
    let mut cmd = Command::new(exe);
    if let Some(lib) = preload {
        cmd.env("LD_PRELOAD", lib)
            .env("LD_DEBUG", "bindings")
            .env("LD_DEBUG_OUTPUT", bindings);
    }
    let out = cmd.output().expect("run the program");
    assert!(out.status.success(), "{out:?}");
    out
}

#[test]
fn w06_a_program_built_against_plain_glibc_runs_preloaded_as_without_the_library() {
    let lib = library();
    let exe = profile().join("w06_plain_program");
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/programs/w06_plain_program.c"
    );
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(cc)
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(src)
        .arg("-lpthread")
        .status()
        .expect("run the C compiler");
    assert!(built.success());
    let dir = profile().join("w06-bindings");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("log");
    let plain = run(&exe, None, &log);
    let preloaded = run(&exe, Some(&lib), &log);
    let text = String::from_utf8_lossy(&plain.stdout);
    assert!(
        text.contains("join: 0, canceled") && text.contains("cleanup handler ran: 1"),
        "{text}"
    );
    assert_eq!(plain.stdout, preloaded.stdout, "preloaded: {preloaded:?}");
    let mut bound = String::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        bound += &std::fs::read_to_string(e.unwrap().path()).unwrap_or_default();
    }
    for symbol in [
        "pthread_cancel",
        "pthread_setcancelstate",
        "__pthread_register_cancel",
    ] {
        assert!(
            bound.lines().any(|l| l.contains("w06_plain_program")
                && l.contains("libthread_cancel.so")
                && l.contains(&format!("`{symbol}'"))),
            "{symbol} of the program is not bound to the library"
        );
    }
}

/// Compiles `tests/programs/<name>.c` with the C compiler, `args` before the source and `libs`
/// after it, into `out`.
fn compile(name: &str, args: &[&str], libs: &[&str], out: &PathBuf) {
    let src = format!("{}/tests/programs/{name}.c", env!("CARGO_MANIFEST_DIR"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(cc)
        .args(["-O2", "-Wall", "-Wextra", "-Werror"])
        .args(args)
        .arg("-o")
        .arg(out)
        .arg(&src)
        .args(libs)
        .arg("-lpthread")
        .status()
        .expect("run the C compiler");
    assert!(built.success(), "{src} did not compile");
}

/// A library of the program whose constructor runs before the preloaded library's own creates
/// a thread through it and blocks it in its `read`: everything the library defines works before
/// it is set up, and the program's cancel of that thread acts as without the library.
#[test]
fn w06_a_thread_created_before_the_librarys_constructor_is_canceled_as_without_it() {
    let lib = library();
    let dir = profile().join("w06-early");
    std::fs::create_dir_all(&dir).unwrap();
    let early = dir.join("libw06early.so");
    compile(
        "w06_constructor_before_the_librarys",
        &["-shared", "-fPIC", "-DW06_LIBRARY"],
        &[],
        &early,
    );
    let exe = dir.join("w06early");
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    let libdir = format!("-L{}", dir.display());
    compile(
        "w06_constructor_before_the_librarys",
        &[],
        &[&libdir, &rpath, "-lw06early"],
        &exe,
    );
    let log = dir.join("bindings");
    let _ = std::fs::remove_file(&log);
    let plain = run(&exe, None, &log);
    let preloaded = run(&exe, Some(&lib), &log);
    let text = String::from_utf8_lossy(&plain.stdout);
    assert!(
        text.contains("its join: 0, canceled; its cleanup handler ran: 1"),
        "{text}"
    );
    assert_eq!(plain.stdout, preloaded.stdout, "preloaded: {preloaded:?}");
    let mut bound = String::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().starts_with("bindings") {
            bound += &std::fs::read_to_string(e.path()).unwrap_or_default();
        }
    }
    for symbol in ["pthread_create", "read"] {
        assert!(
            bound.lines().any(|l| l.contains("libw06early.so")
                && l.contains("libthread_cancel.so")
                && l.contains(&format!("`{symbol}'"))),
            "{symbol} of the early library is not bound to the library"
        );
    }
}
