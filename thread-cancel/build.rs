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
        }
    }
}
