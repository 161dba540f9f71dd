//! P3: cancellation latency, printed as a table (no criterion): ours canceled in `sleep`, a
//! condvar wait, a channel `recv` and a `join`, beside the futex wake-to-run floor and glibc's
//! `pthread_cancel` in `nanosleep` and `pthread_cond_wait`, sampled round-robin; then
//! diagnostics that split the latency into its parts. The scenarios are in
//! `thread_cancel_bench::wait_latency`, the driver (arguments, `P3_SAMPLES`, `P3_WARMUP`, `P3_ONLY`,
//! `P3_TARGET_CPU`, pinning) in `thread_cancel_bench::table`.
//!
//! For profiling one scenario: `P3_ONLY=sleep perf record -g target/release/deps/p3_latency-*
//! --bench` (the Rust target threads are named `p3-target`).

fn main() {
    thread_cancel_bench::table::run(thread_cancel_bench::wait_latency::bench());
}
