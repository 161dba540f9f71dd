//! The cost row of the C library's reach: what a program pays on a thread that never met the
//! library for `libthread_cancel.so` defining the C library's blocking functions — a `read` of
//! one byte, beside glibc's own `read` and the raw system call, in one process run
//! (`foreign_read.c` does the sampling; this builds the release library and that program, which
//! is compiled without the compatibility header and linked with `-lthread_cancel`, and runs it).
//!
//! `cargo bench -p thread-cancel-ffi --bench foreign_read` (`FOREIGN_SAMPLES`: default 2,000
//! samples of 1,000 calls; 20 when run as a test, without `--bench`).

#[path = "common/mod.rs"]
mod c_bench;

fn main() {
    c_bench::build_and_run("foreign_read.c", &["-O2"], "FOREIGN_SAMPLES");
}
