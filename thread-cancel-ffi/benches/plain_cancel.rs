//! The cost of `pthread_cancel` as code built without the compatibility header calls it when
//! `libthread_cancel.so` is in the process (the library defines it for that code), beside
//! glibc's own, with 0 and with 10,000 other threads known to the library, in one process run
//! (`plain_cancel.c` does the sampling; this builds the release library and that program, which
//! is compiled through the header and linked with `-lthread_cancel`, and runs it).
//!
//! `cargo bench -p thread-cancel-ffi --bench plain_cancel` (`PLAIN_SAMPLES`: default 2,000
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
    let exe = lib.join("plain_cancel_bench");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/plain_cancel.c");
    let include = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include");
    let compiled = Command::new(cc)
        .args(["-O2", "-include", "thread_cancel/pthread_compat.h", "-I"])
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg("-L")
        .arg(&lib)
        .args(["-lthread_cancel", "-lpthread", "-ldl"])
        .status()
        .expect("run the C compiler");
    assert!(compiled.success(), "compiling {} failed", src.display());
    let mut run = Command::new(&exe);
    run.env("LD_LIBRARY_PATH", &lib);
    if !bench && std::env::var_os("PLAIN_SAMPLES").is_none() {
        run.env("PLAIN_SAMPLES", "20");
    }
    let status = run.status().expect("run the benchmark");
    assert!(status.success(), "the benchmark failed");
}
