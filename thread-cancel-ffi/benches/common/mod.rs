//! What the C library's benches share (`#[path]`-included by each): build the release library
//! and a C program that samples, then run it.

use std::path::PathBuf;
use std::process::Command;

/// Builds `libthread_cancel` (release) and `benches/<src>` with `cc_args` (before the source),
/// linked with `-lthread_cancel`, and runs it; without `--bench` (as a test) with `samples_var`
/// set to 20 unless the caller set it.
pub fn build_and_run(src: &str, cc_args: &[&str], samples_var: &str) {
    let bench = std::env::args().any(|a| a == "--bench");
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("..").join("target"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let built = Command::new(cargo)
        .args(["build", "--release", "-p", "thread-cancel-ffi"])
        .status()
        .expect("run cargo build");
    assert!(built.success(), "building libthread_cancel.so failed");
    let lib = target.join("release");
    let stem = src.trim_end_matches(".c");
    let exe = lib.join(format!("{stem}_bench"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let path = manifest.join("benches").join(src);
    let compiled = Command::new(cc)
        .args(cc_args)
        .arg("-I")
        .arg(manifest.join("include"))
        .arg("-o")
        .arg(&exe)
        .arg(&path)
        .arg("-L")
        .arg(&lib)
        .args(["-lthread_cancel", "-lpthread", "-ldl"])
        .status()
        .expect("run the C compiler");
    assert!(compiled.success(), "compiling {} failed", path.display());
    let mut run = Command::new(&exe);
    run.env("LD_LIBRARY_PATH", &lib);
    if !bench && std::env::var_os(samples_var).is_none() {
        run.env(samples_var, "20");
    }
    let status = run.status().expect("run the benchmark");
    assert!(status.success(), "the benchmark failed");
}
