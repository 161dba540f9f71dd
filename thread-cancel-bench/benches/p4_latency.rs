//! P4: cancellation latency with the target blocked in `read` / `accept` / `poll`, printed as
//! a table (no criterion): ours (`thread_cancel::io`) beside glibc's `pthread_cancel` of a C
//! thread blocked in glibc's own call and the signal-to-handler floor, with three P3 scenarios
//! for reference, sampled round-robin. The scenarios are in `thread_cancel_bench::syscall_latency`, the
//! driver (arguments, `P4_SAMPLES`, `P4_WARMUP`, `P4_ONLY`, `P3_TARGET_CPU`) in
//! `thread_cancel_bench::table`.

fn main() {
    thread_cancel_bench::table::run(thread_cancel_bench::syscall_latency::bench());
}
