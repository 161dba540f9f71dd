//! The cost of `pthread_cancel` as code built without the compatibility header calls it when
//! `libthread_cancel.so` is in the process (the library defines it for that code), beside
//! glibc's own, with 0 and with 10,000 other threads known to the library, in one process run
//! (`plain_cancel.c` does the sampling; this builds the release library and that program, which
//! is compiled through the header and linked with `-lthread_cancel`, and runs it).
//!
//! `cargo bench -p thread-cancel-ffi --bench plain_cancel` (`PLAIN_SAMPLES`: default 2,000
//! samples of 1,000 calls; 20 when run as a test, without `--bench`).

#[path = "common/mod.rs"]
mod c_bench;

fn main() {
    c_bench::build_and_run(
        "plain_cancel.c",
        &["-O2", "-include", "thread_cancel/pthread_compat.h"],
        "PLAIN_SAMPLES",
    );
}
