//! A probe of the cancel latency rows, one scenario per process, for `strace -f` (the order
//! of the system calls of the canceler and the target in one sample) and for timing outside
//! `compare`: `N` samples, their median and quartiles printed in microseconds.
//!
//! ```text
//! cargo build --release -p thread-cancel-bench --example latency_probe
//! target/release/examples/latency_probe <scope_sleep|scope_recv|scope_read|scope_sleep_drop|scope_recv_drop|scope_read_drop|thread_sleep|thread_condvar|thread_recv|thread_join|thread_read|thread_accept|thread_poll|futex|glibc_sleep|glibc_condvar|glibc_join|glibc_read|glibc_accept|glibc_poll|signal_read|signal_accept|signal_poll> [N]
//! ACROSS=1 target/release/examples/latency_probe scope_recv   # wake-ups across CPUs, as in `compare`
//! strace -f -e trace=futex,sched_yield,membarrier,tgkill target/release/examples/latency_probe scope_recv 1
//! ```
use thread_cancel_bench::scope_latency::{self, Scenario as P8, Wait};
use thread_cancel_bench::syscall_latency::{self, Call, Scenario as P4};
use thread_cancel_bench::target::AcrossCpus;
use thread_cancel_bench::wait_latency::{self, Scenario as P3};

fn main() {
    let mut a = std::env::args().skip(1);
    let mode = a.next().unwrap_or_else(|| "scope_recv".into());
    let n: usize = a.next().map_or(200, |s| s.parse().expect("N"));
    let sample: Box<dyn Fn() -> std::io::Result<std::time::Duration>> = match mode.as_str() {
        "scope_sleep" => Box::new(|| scope_latency::sample(P8::ScopeCancel(Wait::Sleep))),
        "scope_recv" => Box::new(|| scope_latency::sample(P8::ScopeCancel(Wait::Recv))),
        "scope_read" => Box::new(|| scope_latency::sample(P8::ScopeCancel(Wait::Read))),
        "scope_sleep_drop" => {
            Box::new(|| scope_latency::sample(P8::ScopeCancelToDrop(Wait::Sleep)))
        }
        "scope_recv_drop" => Box::new(|| scope_latency::sample(P8::ScopeCancelToDrop(Wait::Recv))),
        "scope_read_drop" => Box::new(|| scope_latency::sample(P8::ScopeCancelToDrop(Wait::Read))),
        "thread_sleep" => Box::new(|| wait_latency::sample(P3::OursSleep)),
        "thread_condvar" => Box::new(|| wait_latency::sample(P3::OursCondvar)),
        "thread_recv" => Box::new(|| wait_latency::sample(P3::OursRecv)),
        "thread_join" => Box::new(|| wait_latency::sample(P3::OursJoin)),
        "thread_read" => Box::new(|| syscall_latency::sample(P4::Ours(Call::Read))),
        "thread_accept" => Box::new(|| syscall_latency::sample(P4::Ours(Call::Accept))),
        "thread_poll" => Box::new(|| syscall_latency::sample(P4::Ours(Call::Poll))),
        "glibc_read" => Box::new(|| syscall_latency::sample(P4::Glibc(Call::Read))),
        "glibc_accept" => Box::new(|| syscall_latency::sample(P4::Glibc(Call::Accept))),
        "glibc_poll" => Box::new(|| syscall_latency::sample(P4::Glibc(Call::Poll))),
        "signal_read" => Box::new(|| syscall_latency::sample(P4::SignalFloor(Call::Read))),
        "signal_accept" => Box::new(|| syscall_latency::sample(P4::SignalFloor(Call::Accept))),
        "signal_poll" => Box::new(|| syscall_latency::sample(P4::SignalFloor(Call::Poll))),
        "futex" => Box::new(|| wait_latency::sample(P3::FutexFloor)),
        "glibc_sleep" => Box::new(|| wait_latency::sample(P3::GlibcNanosleep)),
        "glibc_condvar" => Box::new(|| wait_latency::sample(P3::GlibcCondWait)),
        "glibc_join" => Box::new(|| wait_latency::sample(P3::GlibcJoin)),
        m => panic!("unknown mode {m}"),
    };
    let across = std::env::var_os("ACROSS").is_some();
    let mut us: Vec<f64> = (0..n)
        .map(|_| {
            let _pin = across.then(|| AcrossCpus::here().expect("pinned"));
            sample().expect("a sample").as_secs_f64() * 1e6
        })
        .collect();
    us.sort_by(f64::total_cmp);
    let q = |f: f64| us[((us.len() - 1) as f64 * f) as usize];
    println!(
        "{mode}: median {:.1} us (quartiles {:.1}-{:.1}, {n} samples)",
        q(0.5),
        q(0.25),
        q(0.75)
    );
}
