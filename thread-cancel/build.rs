//! Without feature `interpose`, nothing. With it (Linux), compiles the C shims of the
//! interposed C-variadic functions (`src/interpose/shim.c`), and names once where the
//! interposition is built (the cfgs below).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // `thread_cancel_interpose`: the interposed functions are built (feature `interpose`, Linux,
    // 64-bit, neither the loom model nor the portable layer). `thread_cancel_tls_slot`: and on
    // x86_64, the thread's link to its control block is the initial-exec slot of
    // `sys/linux/arch/x86_64.rs`.
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let interpose = std::env::var_os("CARGO_FEATURE_INTERPOSE").is_some()
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_POINTER_WIDTH") == "64"
        && std::env::var_os("CARGO_CFG_LOOM").is_none()
        && std::env::var_os("CARGO_CFG_THREAD_CANCEL_PORTABLE").is_none();
    if interpose {
        println!("cargo:rustc-cfg=thread_cancel_interpose");
        if var("CARGO_CFG_TARGET_ARCH") == "x86_64" {
            println!("cargo:rustc-cfg=thread_cancel_tls_slot");
        }
    }
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
