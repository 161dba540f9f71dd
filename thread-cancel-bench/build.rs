//! Compiles `csrc/glibc_shim.c` (the glibc side of the benchmarks) into a static library that is
//! linked into this crate.

fn main() {
    println!("cargo:rerun-if-changed=csrc/glibc_shim.c");
    cc::Build::new()
        .file("csrc/glibc_shim.c")
        .opt_level(2)
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("glibc_shim");
    // pthread_create & co. live in libc proper since glibc 2.34; older glibc needs libpthread.
    println!("cargo:rustc-link-lib=pthread");
}
