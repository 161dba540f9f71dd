//! The cost of `pthread_create` + `pthread_join` through the compatibility header (on glibc the
//! thread runs on a stack of the library's, so that its id is never reused) beside glibc's own,
//! with 0 and with 10,000 other threads of the library alive, in one process run
//! (`create_join.c` does the sampling; this builds the release library and that program,
//! compiled through the header and linked with `-lthread_cancel`, and runs it).
//!
//! `cargo bench -p thread-cancel-ffi --bench create_join` (`CREATE_SAMPLES`: default 500
//! samples of 20 threads; 20 when run as a test, without `--bench`).

#[path = "common/mod.rs"]
mod c_bench;

fn main() {
    c_bench::build_and_run(
        "create_join.c",
        &["-O2", "-include", "thread_cancel/pthread_compat.h"],
        "CREATE_SAMPLES",
    );
}
