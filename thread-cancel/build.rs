//! Names once where the interposition is built (the cfgs below), and there compiles the C shims
//! of the interposed C-variadic functions (`src/interpose/shim.c`). Nothing else: the tests'
//! C code is built by the dev-only crate `thread-cancel-fixtures`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/interpose/shim.c");
    // `thread_cancel_interpose`: the interposed functions are built (feature `interpose`, Linux
    // with glibc, 64-bit, neither the loom model nor the portable layer; on musl, `lib.rs`
    // refuses the feature). The one condition: the code
    // (`lib.rs`, `control/tls.rs`), its tests (`tests/interpose.rs`, `tests/w01_table.rs`) and
    // the shims below all follow it. `thread_cancel_tls_slot`: and on x86_64, the thread's
    // link to its control block is the initial-exec slot of `sys/linux/arch/x86_64.rs`
    // (not with feature `c-abi`: see below).
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let interpose = std::env::var_os("CARGO_FEATURE_INTERPOSE").is_some()
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && var("CARGO_CFG_TARGET_POINTER_WIDTH") == "64"
        && std::env::var_os("CARGO_CFG_LOOM").is_none()
        && std::env::var_os("CARGO_CFG_THREAD_CANCEL_PORTABLE").is_none();
    if interpose {
        println!("cargo:rustc-cfg=thread_cancel_interpose");
        // Not for the C ABI's library: it may be loaded with `dlopen` (a plugin that links
        // `libthread_cancel.a`, a program that opens `libthread_cancel.so`), where the
        // initial-exec model's static TLS is not to be had.
        if var("CARGO_CFG_TARGET_ARCH") == "x86_64"
            && std::env::var_os("CARGO_FEATURE_C_ABI").is_none()
        {
            println!("cargo:rustc-cfg=thread_cancel_tls_slot");
        }
        compile_shims();
    }
}

/// The C shims (feature `interpose`, which brings the `cc` build-dependency).
#[cfg(feature = "interpose")]
fn compile_shims() {
    cc::Build::new()
        .file("src/interpose/shim.c")
        .warnings(true)
        // Unwind tables: the C library's cancel of a foreign thread unwinds through the shims'
        // frames.
        .flag_if_supported("-fasynchronous-unwind-tables")
        .compile("thread_cancel_interpose");
}

#[cfg(not(feature = "interpose"))]
fn compile_shims() {
    unreachable!("the interposition is built only with feature `interpose`")
}
