//! Builds the C code of `tests/interpose.rs` and `tests/w02_signal_handlers.rs`
//! (thread-cancel's): `c/interpose_blocking_read.c` and `c/signal_handlers.c` as a static
//! library bundled with this crate, and the same code as a shared object
//! (`libinterpose_test_so.so`) whose name is its absolute path, so that the test programs load
//! it from where it was built. Out of the published crate's build script:
//! a user who enables `interpose` builds none of it.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=c/interpose_blocking_read.c");
    println!("cargo:rerun-if-changed=c/interpose_blocking_read_so.c");
    println!("cargo:rerun-if-changed=c/signal_handlers.c");
    println!("cargo:rerun-if-changed=c/w03_plugin.c");
    println!("cargo:rerun-if-changed=c/w03_preload_read.c");
    println!("cargo:rerun-if-changed=c/w05_library.c");
    // Only where the tests that link it run (interposition on glibc): no C compiler is needed
    // for another target (musl, where `cargo test` of the crate runs without it).
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux")
        || std::env::var("CARGO_CFG_TARGET_ENV").as_deref() != Ok("gnu")
    {
        return;
    }
    cc::Build::new()
        .file("c/interpose_blocking_read.c")
        .file("c/signal_handlers.c")
        .compile("interpose_test_c_read");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let so = out.join("libinterpose_test_so.so");
    let ok = cc::Build::new()
        .get_compiler()
        .to_command()
        .args(["-shared", "-fPIC", "-pthread", "-o"])
        .arg(&so)
        // Its absolute path as its name: the test programs record that path and load it from
        // there (also under an emulator, and outside `cargo test`), with no search path.
        .arg(format!("-Wl,-soname,{}", so.display()))
        .arg("c/interpose_blocking_read_so.c")
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "building {} failed", so.display());
    // Shared objects that are never linked: a plugin the tests load with `dlopen`, another
    // interposer of `read` they preload into a child process, and a library that handles its
    // own `SIGRTMIN`. Their paths are given
    // to the crate as environment variables at its build.
    for (name, src, var) in [
        ("libw03_plugin.so", "c/w03_plugin.c", "W03_PLUGIN"),
        (
            "libw03_preload_read.so",
            "c/w03_preload_read.c",
            "W03_PRELOAD_READ",
        ),
        ("libw05_library.so", "c/w05_library.c", "W05_LIBRARY"),
    ] {
        let path = out.join(name);
        let ok = cc::Build::new()
            .get_compiler()
            .to_command()
            .args(["-shared", "-fPIC", "-o"])
            .arg(&path)
            .arg(src)
            .arg("-ldl")
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "building {} failed", path.display());
        println!("cargo:rustc-env={var}={}", path.display());
    }
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=dylib=interpose_test_so");
}
