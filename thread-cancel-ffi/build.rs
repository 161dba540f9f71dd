//! Builds the C part of the library (`src/stdio.c`: stdio as cancellation points), which
//! needs glibc's `FILE` layout and `va_list`; `src/stdio.rs` exports it.

fn main() {
    println!("cargo:rerun-if-changed=src/stdio.c");
    println!("cargo:rerun-if-changed=../include/thread_cancel.h");
    cc::Build::new()
        .file("src/stdio.c")
        .include("../include")
        .flag("-std=gnu11")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("thread_cancel_stdio");
}
