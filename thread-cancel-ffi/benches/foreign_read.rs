//! The cost row of the C library's reach: what a program pays on a thread that never met the
//! library for `libthread_cancel.so` defining the C library's blocking functions — a `read` of
//! one byte, beside glibc's own `read` and the raw system call, in one process run
//! (`foreign_read.c` does the sampling; this builds the release library and that program, which
//! is compiled without the compatibility header and linked with `-lthread_cancel`, and runs it).
//!
//! `cargo bench -p thread-cancel-ffi --bench foreign_read` (`FOREIGN_SAMPLES`: default 2,000
//! samples of 1,000 calls; 20 when run as a test, without `--bench`).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--release", "-p", "thread-cancel-ffi"])
        .status()
        .expect("run cargo build");
    assert!(built.success(), "building libthread_cancel.so failed");
    let lib = target.join("release");
    let exe = lib.join("foreign_read_bench");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/foreign_read.c");
    let compiled = Command::new(cc)
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-L")
        .arg(&lib)
        .args(["-lthread_cancel", "-ldl"])
        .status()
        .expect("run the C compiler");
    assert!(compiled.success(), "compiling {} failed", src.display());
    let mut run = Command::new(&exe);
    run.env("LD_LIBRARY_PATH", &lib);
    if !bench && std::env::var_os("FOREIGN_SAMPLES").is_none() {
        run.env("FOREIGN_SAMPLES", "20");
    }
    let status = run.status().expect("run the benchmark");
    assert!(status.success(), "the benchmark failed");
}
