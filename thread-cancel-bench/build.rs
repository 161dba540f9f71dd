//! Compiles every `csrc/*.c` (the glibc side of the benchmarks) into one static library that is
//! linked into this crate, so a new C driver is one new file.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=csrc");
    let mut files: Vec<PathBuf> = std::fs::read_dir("csrc")
        .expect("csrc/ exists")
        .map(|e| e.expect("readable csrc/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    let mut build = cc::Build::new();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        build.file(f);
    }
    build
        .opt_level(2)
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("glibc_shim");
    // pthread_create & co. live in libc proper since glibc 2.34; older glibc needs libpthread.
    println!("cargo:rustc-link-lib=pthread");
}
