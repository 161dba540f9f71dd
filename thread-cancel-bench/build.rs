//! Compiles `csrc/*.c` (the glibc side of the benchmarks: `glibc_shim.c`, `glibc_p3_latency.c`,
//! `glibc_p4_latency.c`, `glibc_r10_race.c`) into a static library that is linked into this
//! crate.

fn main() {
    println!("cargo:rerun-if-changed=csrc/glibc_shim.c");
    println!("cargo:rerun-if-changed=csrc/glibc_p3_latency.c");
    println!("cargo:rerun-if-changed=csrc/glibc_p4_latency.c");
    println!("cargo:rerun-if-changed=csrc/glibc_r10_race.c");
    cc::Build::new()
        .file("csrc/glibc_shim.c")
        .file("csrc/glibc_p3_latency.c")
        .file("csrc/glibc_p4_latency.c")
        .file("csrc/glibc_r10_race.c")
        .opt_level(2)
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("glibc_shim");
    // pthread_create & co. live in libc proper since glibc 2.34; older glibc needs libpthread.
    println!("cargo:rustc-link-lib=pthread");
}
