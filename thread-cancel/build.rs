//! Without feature `interpose`, nothing. With it (Linux), compiles the C shims of the
//! interposed C-variadic functions (`src/interpose/shim.c`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/interpose/shim.c");
    #[cfg(feature = "interpose")]
    {
        let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
        if os == "linux" {
            cc::Build::new()
                .file("src/interpose/shim.c")
                .warnings(true)
                // Unwind tables: the C library's cancel of a foreign thread unwinds through the
                // shims' frames.
                .flag_if_supported("-fasynchronous-unwind-tables")
                .compile("thread_cancel_interpose");
            // A C library that blocks in `read`, for tests/interpose.rs only: linked into the
            // test programs (not into the library).
            println!("cargo:rerun-if-changed=tests/c/interpose_blocking_read.c");
            let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
            cc::Build::new()
                .file("tests/c/interpose_blocking_read.c")
                .cargo_metadata(false)
                .compile("interpose_test_c_read");
            println!(
                "cargo:rustc-link-arg-tests={}",
                out.join("libinterpose_test_c_read.a").display()
            );
            // The same C library as a shared object, found at run time through an rpath.
            println!("cargo:rerun-if-changed=tests/c/interpose_blocking_read_so.c");
            let so = out.join("libinterpose_test_so.so");
            let cc = cc::Build::new().get_compiler();
            let ok = cc
                .to_command()
                .args(["-shared", "-fPIC", "-pthread", "-o"])
                .arg(&so)
                .arg("tests/c/interpose_blocking_read_so.c")
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "building {} failed", so.display());
            println!("cargo:rustc-link-arg-tests={}", so.display());
            println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{}", out.display());
        }
    }
}
