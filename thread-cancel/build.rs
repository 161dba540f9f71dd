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
        }
    }
}
