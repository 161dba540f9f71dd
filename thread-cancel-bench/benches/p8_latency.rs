//! P8: a scope cancel's latency (`scope.cancel()` to `run` returning `Err`, the target blocked
//! in `sleep` / `recv` / `io::read`) beside the thread cancel's on the same wait, printed as a
//! table (no criterion), with diagnostics (the scope cancel to the first `Drop`) and the
//! deadlines' lateness. The scenarios are in `thread_cancel_bench::scope_latency`, the driver (arguments,
//! `P8_SAMPLES`, `P8_WARMUP`, `P8_ONLY`, `P3_TARGET_CPU`) in `thread_cancel_bench::table`.

fn main() {
    thread_cancel_bench::table::run(thread_cancel_bench::scope_latency::bench());
}
