//! Compiles every `csrc/*.c` (the glibc side of the benchmarks) into one static library that is
//! linked into this crate, so a new C driver is one new file (`csrc/*.h` are headers they share);
//! and records the compiler's version for the machine description of the reports.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=csrc");
    let mut files: Vec<PathBuf> = std::fs::read_dir("csrc")
        .expect("csrc/ exists")
        .map(|e| e.expect("readable csrc/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "c" || x == "h"))
        .collect();
    files.sort();
    let mut build = cc::Build::new();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        if f.extension().is_some_and(|x| x == "c") {
            build.file(f);
        }
    }
    build
        .opt_level(2)
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("glibc_shim");
    // pthread_create & co. live in libc proper since glibc 2.34; older glibc needs libpthread.
    println!("cargo:rustc-link-lib=pthread");

    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown".to_string(), |v| v.trim().to_string());
    println!("cargo:rustc-env=THREAD_CANCEL_BENCH_RUSTC={version}");
}
