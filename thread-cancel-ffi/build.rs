//! Builds the C part of the library, `src/stdio.c` (stdio as cancellation points, in C for
//! glibc's `FILE` layout and for `va_list`), against this crate's `include/thread_cancel.h`;
//! `src/stdio.rs` exports it. Also tells the C test harness (`tests/c_programs.rs`) the target
//! and host it was built for.

fn main() {
    println!("cargo:rerun-if-changed=src/stdio.c");
    println!("cargo:rerun-if-changed=include/thread_cancel.h");
    // The C test harness (tests/c_programs.rs) builds the library and the programs for the
    // target its own executable was built for, and must know whether that is this machine.
    for var in ["TARGET", "HOST"] {
        let value = std::env::var(var).unwrap_or_default();
        println!("cargo:rustc-env=THREAD_CANCEL_FFI_{var}={value}");
    }
    // `cargo clippy` for another target (aarch64 from x86_64) only checks the Rust code:
    // nothing is linked, and the machine may have no C compiler for that target.
    let clippy = std::env::var("RUSTC_WORKSPACE_WRAPPER").is_ok_and(|w| w.contains("clippy"));
    let cross = std::env::var("TARGET").ok() != std::env::var("HOST").ok();
    if clippy && cross {
        return;
    }
    cc::Build::new()
        .file("src/stdio.c")
        .include("include")
        .flag("-std=gnu11")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("thread_cancel_stdio");
    // glibc (64-bit): the start of the threads that code built without the header creates
    // (src/threads/system_owned.rs), without the library's header, with `-fexceptions` (its
    // cleanup runs during the C library's forced unwind).
    println!("cargo:rerun-if-changed=src/threads/start.c");
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let width = std::env::var("CARGO_CFG_TARGET_POINTER_WIDTH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" && target_env == "gnu" && width == "64" {
        cc::Build::new()
            .file("src/threads/start.c")
            .flag("-std=gnu11")
            .flag("-fexceptions")
            .warnings(true)
            .extra_warnings(true)
            .warnings_into_errors(true)
            .compile("thread_cancel_start");
    }
}
