//! `compare`: every timing target of REQUIREMENTS.md (P1–P8, P4c) in one process run — ours, glibc's (C
//! built by `cc`) and the floors, sampled interleaved ([`crate::rounds`]) — printed as one table, and
//! written as markdown (with the machine's description) and as an SVG chart of the
//! distributions ([`crate::chart`]).
//!
//! `cargo bench -p thread-cancel-bench --bench compare` is the full run; it writes
//! `docs/compare.md` and `docs/compare.svg` at the repository's root. With `--test` (as
//! `cargo bench -- --test` passes) or without `--bench` (`cargo test --benches`) it is a quick
//! run — a few samples, [`QUICK_P6_THREADS`] threads for P6 — that writes into the target
//! directory instead. `--list` lists the bench and exits.
//!
//! Environment: `COMPARE_SAMPLES` (samples per scenario, after `COMPARE_WARMUP` dropped ones),
//! `COMPARE_P6_SAMPLES`, `COMPARE_P6_THREADS`, `COMPARE_P6_STACK` (bytes), `COMPARE_OUT` (the
//! output directory), `P3_TARGET_CPU` (see [`crate::wait_latency::target_cpu`]). The latency
//! rows pin every sample's wake-up across CPUs ([`crate::target::AcrossCpus`]; the rows of
//! the asynchronous compute loop excepted), or, those marked "one CPU", onto one.
//!
//! What is measured, per scenario (a sample is one batch for the per-call figures):
//!
//! | | ours | glibc | floor |
//! |---|---|---|---|
//! | P1 | `testcancel()`, nothing pending, [`P1_BATCH`] calls | `pthread_testcancel()`, C loop | — |
//! | P2 | `io::read`/`io::write` of 1 byte (`/dev/zero`, `/dev/null`), [`P2_BATCH`] calls | glibc `read`/`write` | `syscall(SYS_read/SYS_write)` |
//! | P3 | cancel → first cleanup in `sleep`, `Condvar::wait`, `recv`, `join` | `pthread_cancel` in `nanosleep`, `pthread_cond_wait`, `pthread_join` | futex wake-to-run + one bare unwind |
//! | P4 | cancel → first cleanup in `io::read`, `io::accept`, `io::poll` | `pthread_cancel` in `read`, `accept`, `poll` | signal → handler, a C thread in the same call + one bare unwind |
//! | P4c | cancel → first C cleanup handler, C thread through `pthread_compat.h` in `read` ([`crate::c_thread_latency`]) | the same C code on glibc, in a driver process without the library | signal → handler, a C thread in `read` |
//! | P4c (informative) | the same, the glibc driver given `libthread_cancel.so` with `LD_PRELOAD` | the same C code on glibc, without the library | signal → handler |
//! | P5 | `spawn` + `join` (and with `Builder::lightweight()`), [`P5_BATCH`], every thread on the sampler's CPU | `pthread_create` + `pthread_join` | `std::thread::spawn` + `join` |
//! | P6 | cancel + join of [`crate::mass_cancel::THREADS`] blocked lightweight threads (and, informative, `std`-spawned ones) | the same with `pthread_cancel` | `pthread_create` threads: futex wake + one bare unwind + join (and, in the notes, `std` threads: futex wake + join) |
//! | P7 | `CancelScope::run(\|\| black_box(1))` on a reused scope; `with_timeout(5 s, ..)`, [`P7_BATCH`] calls | — | `catch_unwind` alone; for `with_timeout`, `Instant::now()` + a `run` |
//! | P8 | `scope.cancel()` → `Err` from `run` in `sleep`, `recv`, `io::read` ([`crate::scope_latency`]) | `pthread_cancel` in `nanosleep`, `pthread_cond_wait`, `read` | the thread cancel on the same wait (P3/P4's ours) |
//! | P8 | the same, with every thread of a sample on one CPU (`latency_on_one_cpu`) | — | the thread cancel on the same wait, on one CPU |
//! | P8 | how late `with_deadline` returns `Err` after its deadline, in `sleep` and `io::read` | — | the scope cancel on the same wait (the P8 row above) |
//!
//! The bare unwind of P3/P4's floor is one `std::panic::resume_unwind` caught one frame up, to
//! a `Drop` ([`crate::wait_latency::Scenario::StdResumeUnwind`]), sampled as a series of its own; its
//! median is added to the floor's. So "ours/floor" is the ratio the P3/P4 targets hold them to, and
//! "ours/glibc" the gap to glibc.
//!
//! The main thread is adopted (`thread_cancel::current()`) before anything is measured: ours
//! runs on a thread with a control block, as in any program that uses the crate.

use crate::async_cancel;
use crate::chart::{self, Line, Panel, Who};
use crate::machine::Machine;
use crate::mass_cancel;
use crate::micro;
use crate::perf_targets::{verdict, Target};
use crate::rounds::{interleave, Plan, Series};
use crate::scope_latency;
use crate::stats::{env_usize, num, ratio, us, Mode, Stats};
use crate::syscall_latency::{self, Call, Scenario as P4};
use crate::target::{AcrossCpus, OneCpu};
use crate::wait_latency::{self, Scenario as P3};
use std::cell::RefCell;
use std::fmt::Write as _;
use std::fs::File;
use std::hint::black_box;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// `testcancel()` calls per P1 sample.
pub const P1_BATCH: u32 = 20_000;
/// `read`/`write` calls per P2 sample.
pub const P2_BATCH: u32 = 1_000;
/// `spawn` + `join` pairs per P5 sample.
pub const P5_BATCH: u32 = 4;
/// `run`s (or `with_timeout`s) per P7 sample.
pub const P7_BATCH: u32 = 10_000;
/// Queries per P9 sample.
pub const P9_BATCH: u32 = 100_000;
/// Samples per scenario in a full run (P6 aside).
pub const FULL_SAMPLES: usize = 2_000;
/// Warm-up samples per scenario in a full run (P6 aside).
pub const FULL_WARMUP: usize = 20;
/// P6 samples per side in a full run (after one warm-up run).
pub const FULL_P6_SAMPLES: usize = 20;
/// Samples per scenario in a quick run.
pub const QUICK_SAMPLES: usize = 3;
/// P6 threads in a quick run.
pub const QUICK_P6_THREADS: usize = 200;

/// The unit of a series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
}

impl Unit {
    /// Its symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Us => "us",
            Unit::Ms => "ms",
        }
    }

    /// `d` in this unit.
    pub fn of(self, d: Duration) -> f64 {
        match self {
            Unit::Ns => micro::ns(d),
            Unit::Us => us(d),
            Unit::Ms => us(d) / 1e3,
        }
    }
}

/// How a run is sized and where it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// A quick run (`--test`).
    pub quick: bool,
    /// Samples kept per scenario (P6 aside).
    pub samples: usize,
    /// Samples dropped first per scenario (P6 aside).
    pub warmup: usize,
    /// P6 samples kept per side.
    pub p6_samples: usize,
    /// P6 samples dropped first per side.
    pub p6_warmup: usize,
    /// P6 threads.
    pub p6_threads: usize,
    /// P6 stack size per thread, in bytes.
    pub p6_stack: usize,
    /// Where `compare.md` and `compare.svg` go.
    pub out_dir: PathBuf,
}

impl Config {
    /// The configuration for `mode` and the environment (see the module docs): a full run
    /// writes into `full_dir`, a quick one into `quick_dir`, unless `COMPARE_OUT` is set.
    pub fn from_env(mode: Mode, full_dir: &Path, quick_dir: &Path) -> Config {
        let quick = mode != Mode::Full;
        let pick = |full: usize, quick_v: usize| if quick { quick_v } else { full };
        Config {
            quick,
            samples: env_usize("COMPARE_SAMPLES")
                .unwrap_or(pick(FULL_SAMPLES, QUICK_SAMPLES))
                .max(1),
            warmup: env_usize("COMPARE_WARMUP").unwrap_or(pick(FULL_WARMUP, 1)),
            p6_samples: env_usize("COMPARE_P6_SAMPLES")
                .unwrap_or(pick(FULL_P6_SAMPLES, 1))
                .max(1),
            p6_warmup: pick(1, 0),
            p6_threads: env_usize("COMPARE_P6_THREADS")
                .unwrap_or(pick(mass_cancel::THREADS, QUICK_P6_THREADS))
                .max(1),
            p6_stack: env_usize("COMPARE_P6_STACK").unwrap_or(mass_cancel::STACK),
            out_dir: std::env::var_os("COMPARE_OUT").map_or_else(
                || if quick { quick_dir } else { full_dir }.to_path_buf(),
                PathBuf::from,
            ),
        }
    }
}

/// Takes one sample of a series, in its unit.
type Sampler = Box<dyn FnMut() -> io::Result<f64>>;

/// One series: what is sampled, how often.
struct Measure {
    label: String,
    plan: Plan,
    sample: Sampler,
}

/// One row of the table: a scenario of ours and the series it is compared with.
struct Row {
    scenario: &'static str,
    /// The chart's panel title.
    short: &'static str,
    target: Target,
    unit: Unit,
    ours: usize,
    glibc: Option<usize>,
    floor: Option<usize>,
    /// A series whose median is added to the floor's (P3/P4: the bare unwind).
    floor_plus: Option<usize>,
}

/// The series and rows of a run.
#[derive(Default)]
struct Plans {
    measures: Vec<Measure>,
    rows: Vec<Row>,
}

impl Plans {
    fn add(&mut self, label: &str, plan: Plan, sample: Sampler) -> usize {
        self.measures.push(Measure {
            label: label.to_string(),
            plan,
            sample,
        });
        self.measures.len() - 1
    }
}

/// A P3/P4/P8 latency series, in µs, each sample with its wake-up across CPUs: the sampling
/// thread confined to the CPU it is on and the target on another ([`AcrossCpus`]), for every
/// series of a row alike (unpinned, which of this VM's two modes a series lands in depends on
/// its place in the round-robin, and a row would compare series in different modes).
fn latency(f: impl Fn() -> io::Result<Duration> + 'static) -> Sampler {
    Box::new(move || {
        let _pin = AcrossCpus::here()?;
        f().map(us)
    })
}

/// A latency series, in µs, where the scheduler places the threads: R06's targets spin (they
/// would share the sampler's CPU if it were confined) and its rows are informative.
fn unpinned(f: impl Fn() -> io::Result<Duration> + 'static) -> Sampler {
    Box::new(move || f().map(us))
}

/// As [`latency`], with the sampling thread confined to the CPU it is on while `f` runs, and so
/// every thread `f` spawns (they inherit the mask): the wake-up never crosses CPUs. On a 2-CPU
/// VM whether it does decides between two modes of every latency (the futex floor is 3-4 us on
/// the waker's CPU, 10-14 us across), and which mode a series gets depends on its place in the
/// round-robin; confined, two series on the same wait are compared in the same mode.
fn latency_on_one_cpu(f: impl Fn() -> io::Result<Duration> + 'static) -> Sampler {
    Box::new(move || {
        let _pin = OneCpu::here()?;
        f().map(us)
    })
}

/// A batch of one-call-at-a-time operations, the mean of one call in `unit`.
fn per_call(unit: Unit, n: u32, mut f: impl FnMut() -> io::Result<()> + 'static) -> Sampler {
    let per_ns = unit.of(Duration::from_nanos(1));
    Box::new(move || micro::batch(n, &mut f).map(|ns| ns * per_ns))
}

/// As [`per_call`], with the sampling thread confined to the CPU it is on while the batch runs,
/// and so every thread the batch spawns (they inherit the mask): P5's threads start and end on
/// the joiner's CPU for every series alike. Unpinned, a 2-CPU VM makes spawn + join bimodal
/// (8-13 us when the new thread runs on the joiner's CPU, 25-45 us when it runs on the other
/// and its end wakes the joiner across), and the series of a row land in different modes.
///
/// One untimed pair comes before the batch: the first spawn + join after a series whose
/// threads slept (a latency sample) costs about 15 us more, and in the round-robin's fixed
/// cyclic order the same P5 series always came right after one (`p5_probe`'s `rr` mode with
/// `OTHERS=z` and `ROTATE`: whichever series comes first after a 2 ms sleep pays it).
fn per_call_on_one_cpu(
    unit: Unit,
    n: u32,
    mut f: impl FnMut() -> io::Result<()> + 'static,
) -> Sampler {
    let per_ns = unit.of(Duration::from_nanos(1));
    Box::new(move || {
        let _pin = OneCpu::here()?;
        f()?;
        micro::batch(n, &mut f).map(|ns| ns * per_ns)
    })
}

/// A P2 series: `f` on `file`, [`P2_BATCH`] calls per sample, in ns.
fn p2_series<R>(
    p: &mut Plans,
    label: &str,
    plan: Plan,
    file: File,
    f: impl Fn(BorrowedFd<'_>) -> R + 'static,
) -> usize {
    p.add(
        label,
        plan,
        per_call(Unit::Ns, P2_BATCH, move || {
            black_box(f(file.as_fd()));
            Ok(())
        }),
    )
}

/// P6 runs, kept for the notes below the table.
type P6Log = Rc<RefCell<Vec<(mass_cancel::Side, mass_cancel::Sample)>>>;

/// Every series and row of a run, one scenario family after another in the table's order (the
/// later families compare with series of the earlier: P4 and P4c with P3's unwind and P4's
/// signal floor, P8 with P3's and P4's).
fn plans(cfg: &Config, p6_log: &P6Log) -> io::Result<Plans> {
    let mut p = Plans::default();
    let each = Plan {
        warmup: cfg.warmup,
        samples: cfg.samples,
    };
    p1_plans(&mut p, each);
    p2_plans(&mut p, each)?;
    let p3 = p3_plans(&mut p, each);
    let p4 = p4_plans(&mut p, each, p3.unwind);
    p4c_plans(&mut p, each, p4.signal);
    r06_plans(&mut p, each);
    p5_plans(&mut p, each);
    p6_plans(&mut p, cfg, p6_log);
    p7_plans(&mut p, each);
    p8_plans(&mut p, each, &p3, &p4);
    p9_plans(&mut p, each);
    Ok(p)
}

/// The P3 series the later families compare with.
struct P3Series {
    /// The bare unwind, added to the P3 and P4 floors.
    unwind: usize,
    /// glibc's `nanosleep` canceled (a P8 row's glibc column).
    nanosleep: usize,
    /// glibc's `pthread_cond_wait` canceled (a P8 row's glibc column).
    cond_wait: usize,
    /// Ours, per scenario (P8's floors).
    ours: Vec<(P3, usize)>,
}

/// The P4 series the later families compare with.
struct P4Series {
    /// Signal to handler, the C thread in `read` (P4c's floor, and P4's in `read`).
    signal: usize,
    /// Per call: ours, glibc's (P8's read row).
    calls: Vec<(Call, usize, usize)>,
}

/// P1: a cancellation point with nothing pending, beside `pthread_testcancel()`.
fn p1_plans(p: &mut Plans, each: Plan) {
    let ours = p.add(
        "thread_cancel::testcancel()",
        each,
        per_call(Unit::Ns, P1_BATCH, || {
            micro::testcancel_ours();
            Ok(())
        }),
    );
    let glibc = p.add(
        "glibc pthread_testcancel()",
        each,
        Box::new(|| Ok(micro::testcancel_glibc_batch(P1_BATCH))),
    );
    p.rows.push(Row {
        scenario: "P1 testcancel, nothing pending",
        short: "P1 testcancel()",
        target: Target::P1,
        unit: Unit::Ns,
        ours,
        glibc: Some(glibc),
        floor: None,
        floor_plus: None,
    });
}

/// P2: `io::read`/`io::write` of 1 byte, beside glibc's and the raw system call, each on
/// its own descriptor.
fn p2_plans(p: &mut Plans, each: Plan) -> io::Result<()> {
    let zero = || File::open("/dev/zero");
    let null = || File::options().write(true).open("/dev/null");
    let read = [
        p2_series(p, "thread_cancel::io::read", each, zero()?, |fd| {
            micro::read_ours(fd, &mut [0u8; 1])
        }),
        p2_series(p, "glibc read", each, zero()?, |fd| {
            micro::read_glibc(fd, &mut [0u8; 1])
        }),
        p2_series(p, "raw syscall(SYS_read)", each, zero()?, |fd| {
            micro::read_raw(fd, &mut [0u8; 1])
        }),
    ];
    let write = [
        p2_series(p, "thread_cancel::io::write", each, null()?, |fd| {
            micro::write_ours(fd, &[0u8; 1])
        }),
        p2_series(p, "glibc write", each, null()?, |fd| {
            micro::write_glibc(fd, &[0u8; 1])
        }),
        p2_series(p, "raw syscall(SYS_write)", each, null()?, |fd| {
            micro::write_raw(fd, &[0u8; 1])
        }),
    ];
    for ([ours, glibc, floor], scenario, short) in [
        (read, "P2 read 1 B of /dev/zero", "P2 read"),
        (write, "P2 write 1 B to /dev/null", "P2 write"),
    ] {
        p.rows.push(Row {
            scenario,
            short,
            target: Target::P2,
            unit: Unit::Ns,
            ours,
            glibc: Some(glibc),
            floor: Some(floor),
            floor_plus: None,
        });
    }
    Ok(())
}

/// P3: ours canceled in a wait, beside glibc's canceled in the same wait (`nanosleep` for
/// `sleep`, `pthread_join` for `join`, `pthread_cond_wait` for the condvar and the channel),
/// and the futex floor plus the bare unwind (series shared by several rows).
fn p3_plans(p: &mut Plans, each: Plan) -> P3Series {
    let mut ours_by_scenario = Vec::new();
    let p3_of = |s: P3| latency(move || wait_latency::sample(s));
    let futex = p.add("futex wake-to-run", each, p3_of(P3::FutexFloor));
    let unwind = p.add(
        "bare resume_unwind caught one frame up",
        each,
        p3_of(P3::StdResumeUnwind),
    );
    let nanosleep = p.add(
        "glibc nanosleep + pthread_cancel",
        each,
        p3_of(P3::GlibcNanosleep),
    );
    let cond_wait = p.add(
        "glibc pthread_cond_wait + pthread_cancel",
        each,
        p3_of(P3::GlibcCondWait),
    );
    let join = p.add(
        "glibc pthread_join + pthread_cancel",
        each,
        p3_of(P3::GlibcJoin),
    );
    for (s, scenario, short, glibc) in [
        (
            P3::OursSleep,
            "P3 cancel -> cleanup, in sleep",
            "P3 sleep",
            nanosleep,
        ),
        (
            P3::OursCondvar,
            "P3 cancel -> cleanup, in condvar wait",
            "P3 condvar",
            cond_wait,
        ),
        (
            P3::OursRecv,
            "P3 cancel -> cleanup, in channel recv",
            "P3 channel recv",
            cond_wait,
        ),
        (
            P3::OursJoin,
            "P3 cancel -> cleanup, in join",
            "P3 join",
            join,
        ),
    ] {
        let ours = p.add(s.name(), each, p3_of(s));
        ours_by_scenario.push((s, ours));
        p.rows.push(Row {
            scenario,
            short,
            target: Target::P3,
            unit: Unit::Us,
            ours,
            glibc: Some(glibc),
            floor: Some(futex),
            floor_plus: Some(unwind),
        });
    }
    P3Series {
        unwind,
        nanosleep,
        cond_wait,
        ours: ours_by_scenario,
    }
}

/// P4: ours canceled in a system call, beside glibc's in the same call and the
/// signal-to-handler floor in the same call plus the bare unwind (`unwind`, from
/// [`p3_plans`]): the kernel's way out of a call for a signal costs more in `accept` (which
/// frees the socket and file it made before waiting) than in `read`, for every canceler alike.
fn p4_plans(p: &mut Plans, each: Plan, unwind: usize) -> P4Series {
    let mut calls = Vec::new();
    let mut signal = None;
    for (call, scenario, short) in [
        (Call::Read, "P4 cancel -> cleanup, in read", "P4 read"),
        (Call::Accept, "P4 cancel -> cleanup, in accept", "P4 accept"),
        (Call::Poll, "P4 cancel -> cleanup, in poll", "P4 poll"),
    ] {
        let floor = p.add(
            &format!("signal -> handler (C thread in {})", call.name()),
            each,
            latency(move || syscall_latency::sample(P4::SignalFloor(call))),
        );
        if call == Call::Read {
            signal = Some(floor);
        }
        let ours = p.add(
            P4::Ours(call).name(),
            each,
            latency(move || syscall_latency::sample(P4::Ours(call))),
        );
        let glibc = p.add(
            &format!("{} + pthread_cancel", P4::Glibc(call).name()),
            each,
            latency(move || syscall_latency::sample(P4::Glibc(call))),
        );
        calls.push((call, ours, glibc));
        p.rows.push(Row {
            scenario,
            short,
            target: Target::P4,
            unit: Unit::Us,
            ours,
            glibc: Some(glibc),
            floor: Some(floor),
            floor_plus: Some(unwind),
        });
    }
    let signal = signal.expect("the floor in read");
    P4Series { signal, calls }
}

/// P4c: a C thread through the C ABI, beside the same C code on glibc (one driver process),
/// with P4's signal floor in `read`.
fn p4c_plans(p: &mut Plans, each: Plan, signal: usize) {
    let ours = p.add(
        crate::c_thread_latency::Side::Ours.name(),
        each,
        latency(|| crate::c_thread_latency::sample(crate::c_thread_latency::Side::Ours)),
    );
    let glibc = p.add(
        crate::c_thread_latency::Side::Glibc.name(),
        each,
        latency(|| crate::c_thread_latency::sample(crate::c_thread_latency::Side::Glibc)),
    );
    let preloaded = p.add(
        crate::c_thread_latency::Side::Preloaded.name(),
        each,
        latency(|| crate::c_thread_latency::sample(crate::c_thread_latency::Side::Preloaded)),
    );
    p.rows.push(Row {
        scenario: "P4c cancel -> C cleanup, C thread in read",
        short: "P4c C thread in read",
        target: Target::P4c,
        unit: Unit::Us,
        ours,
        glibc: Some(glibc),
        floor: Some(signal),
        floor_plus: None,
    });
    p.rows.push(Row {
        scenario: "P4c the same glibc program, libthread_cancel.so preloaded",
        short: "P4c preloaded",
        target: Target::P4cPreloaded,
        unit: Unit::Us,
        ours: preloaded,
        glibc: Some(glibc),
        floor: Some(signal),
        floor_plus: None,
    });
}

/// R06 (informative): a compute loop in an asynchronous region, beside
/// `PTHREAD_CANCEL_ASYNCHRONOUS`.
fn r06_plans(p: &mut Plans, each: Plan) {
    let ours = p.add(
        "async_region compute loop",
        each,
        unpinned(|| Ok(async_cancel::ours())),
    );
    let glibc = p.add(
        "C loop, PTHREAD_CANCEL_ASYNCHRONOUS + pthread_cancel",
        each,
        unpinned(|| Ok(async_cancel::glibc())),
    );
    p.rows.push(Row {
        scenario: "Async cancel -> cleanup, compute loop",
        short: "async compute loop",
        target: Target::R06,
        unit: Unit::Us,
        ours,
        glibc: Some(glibc),
        floor: None,
        floor_plus: None,
    });
}

/// P5: ours spawned through `std` (held to `std`) and lightweight (held to glibc).
fn p5_plans(p: &mut Plans, each: Plan) {
    let ours = p.add(
        "thread_cancel::spawn + join",
        each,
        per_call_on_one_cpu(Unit::Us, P5_BATCH, micro::spawn_join_ours),
    );
    let light = p.add(
        "thread_cancel Builder::lightweight() spawn + join",
        each,
        per_call_on_one_cpu(Unit::Us, P5_BATCH, micro::spawn_join_lightweight),
    );
    let glibc = p.add(
        "glibc pthread_create + pthread_join",
        each,
        per_call_on_one_cpu(Unit::Us, P5_BATCH, crate::glibc_spawn_join),
    );
    let floor = p.add(
        "std::thread::spawn + join",
        each,
        per_call_on_one_cpu(Unit::Us, P5_BATCH, micro::spawn_join_std),
    );
    for (ours, target, scenario, short) in [
        (ours, Target::P5, "P5 spawn + join", "P5 spawn + join"),
        (
            light,
            Target::P5Lightweight,
            "P5 spawn + join, lightweight",
            "P5 lightweight",
        ),
    ] {
        p.rows.push(Row {
            scenario,
            short,
            target,
            unit: Unit::Us,
            ours,
            glibc: Some(glibc),
            floor: Some(floor),
            floor_plus: None,
        });
    }
}

/// P6: lightweight threads (the target) and `std`-spawned ones (informative); every run is
/// logged in `p6_log` for the notes below the table.
fn p6_plans(p: &mut Plans, cfg: &Config, p6_log: &P6Log) {
    let p6_plan = Plan {
        warmup: cfg.p6_warmup,
        samples: cfg.p6_samples,
    };
    let mut p6_ids = [0; 5];
    for (id, side) in p6_ids.iter_mut().zip(mass_cancel::Side::ALL) {
        let (n, stack, log) = (cfg.p6_threads, cfg.p6_stack, p6_log.clone());
        let label = match side {
            mass_cancel::Side::Lightweight => "thread_cancel lightweight threads: cancel + join",
            mass_cancel::Side::Ours => "thread_cancel std-spawned threads: cancel + join",
            mass_cancel::Side::Glibc => "glibc pthread_cancel + pthread_join",
            mass_cancel::Side::Floor => "std threads: futex wake + join",
            mass_cancel::Side::FloorUnwind => {
                "pthread threads: futex wake + one bare unwind + join"
            }
        };
        *id = p.add(
            label,
            p6_plan,
            Box::new(move || {
                let s = mass_cancel::run(side, n, stack)?;
                log.borrow_mut().push((side, s));
                Ok(Unit::Ms.of(s.total))
            }),
        );
    }
    // The floor of a canceled Rust thread: woken, one bare unwind, its end (the futex-only
    // floor is listed in the notes below the table).
    let [light, std_spawned, glibc, _futex_floor, floor] = p6_ids;
    for (ours, target, scenario, short) in [
        (
            light,
            Target::P6,
            "P6 blocked threads, cancel + join all (lightweight)",
            "P6 lightweight",
        ),
        (
            std_spawned,
            Target::P6Std,
            "P6 the same, std-spawned threads",
            "P6 std-spawned",
        ),
    ] {
        p.rows.push(Row {
            scenario,
            short,
            target,
            unit: Unit::Ms,
            ours,
            glibc: Some(glibc),
            floor: Some(floor),
            floor_plus: None,
        });
    }
}

/// P7: a run on a reused scope and `with_timeout`, beside `catch_unwind` alone.
fn p7_plans(p: &mut Plans, each: Plan) {
    let scope = thread_cancel::CancelScope::new();
    let run = p.add(
        "CancelScope::run on a reused scope",
        each,
        per_call(Unit::Ns, P7_BATCH, move || {
            micro::scope_run(&scope);
            Ok(())
        }),
    );
    let timeout = p.add(
        "with_timeout(5 s, ..): a new scope and its deadline",
        each,
        per_call(Unit::Ns, P7_BATCH, || {
            micro::with_timeout_5s();
            Ok(())
        }),
    );
    let catch = p.add(
        "std::panic::catch_unwind alone",
        each,
        per_call(Unit::Ns, P7_BATCH, || {
            micro::catch_unwind_alone();
            Ok(())
        }),
    );
    let scope = thread_cancel::CancelScope::new();
    let clock_run = p.add(
        "Instant::now() + CancelScope::run on a reused scope",
        each,
        per_call(Unit::Ns, P7_BATCH, move || {
            micro::clock_and_scope_run(&scope);
            Ok(())
        }),
    );
    for (ours, scenario, short, target, floor) in [
        (
            run,
            "P7 CancelScope::run, nothing canceled",
            "P7 run",
            Target::P7,
            catch,
        ),
        (
            timeout,
            "P7 with_timeout(5 s), nothing canceled",
            "P7 with_timeout",
            Target::P7Timeout,
            clock_run,
        ),
    ] {
        p.rows.push(Row {
            scenario,
            short,
            target,
            unit: Unit::Ns,
            ours,
            glibc: None,
            floor: Some(floor),
            floor_plus: None,
        });
    }
}

/// P9: `cancel_requested()` outside any run, inside a run, inside a deadline run
/// (`with_timeout`), and `CancelScope::is_canceled()` of a scope without a deadline, nothing
/// canceled, beside a relaxed `AtomicBool` load (the floor: a flag a loop would poll).
fn p9_plans(p: &mut Plans, each: Plan) {
    let query = || {
        black_box(thread_cancel::cancel_requested());
        Ok(())
    };
    let outside = p.add(
        "cancel_requested(), no run",
        each,
        per_call(Unit::Ns, P9_BATCH, query),
    );
    let scope = thread_cancel::CancelScope::new();
    let in_run = p.add(
        "cancel_requested() in a run",
        each,
        Box::new(move || {
            scope
                .run(|| micro::batch(P9_BATCH, query))
                .map_err(|_| io::Error::other("the scope was canceled"))?
        }),
    );
    let in_deadline = p.add(
        "cancel_requested() in a with_timeout(60 s) run",
        each,
        Box::new(move || {
            thread_cancel::with_timeout(Duration::from_secs(60), || micro::batch(P9_BATCH, query))
                .map_err(|_| io::Error::other("the deadline passed"))?
        }),
    );
    let live = thread_cancel::CancelScope::new();
    let is_canceled = p.add(
        "CancelScope::is_canceled(), no deadline",
        each,
        per_call(Unit::Ns, P9_BATCH, move || {
            black_box(black_box(&live).is_canceled());
            Ok(())
        }),
    );
    let flag = std::sync::atomic::AtomicBool::new(false);
    let floor = p.add(
        "AtomicBool::load(Relaxed)",
        each,
        per_call(Unit::Ns, P9_BATCH, move || {
            black_box(black_box(&flag).load(std::sync::atomic::Ordering::Relaxed));
            Ok(())
        }),
    );
    for (ours, scenario, short) in [
        (outside, "P9 cancel_requested(), no run", "P9 no run"),
        (in_run, "P9 cancel_requested() in a run", "P9 in a run"),
        (
            in_deadline,
            "P9 cancel_requested() in a deadline run",
            "P9 deadline run",
        ),
        (
            is_canceled,
            "P9 CancelScope::is_canceled(), no deadline",
            "P9 is_canceled",
        ),
    ] {
        p.rows.push(Row {
            scenario,
            short,
            target: Target::P9,
            unit: Unit::Ns,
            ours,
            glibc: None,
            floor: Some(floor),
            floor_plus: None,
        });
    }
}

/// P8: a scope cancel beside the thread cancel on the same wait (P3/P4's series of ours),
/// with glibc's thread cancel on that wait for the gap; the same on one CPU; then the
/// deadlines' lateness beside the scope cancel's latency on the same wait.
fn p8_plans(p: &mut Plans, each: Plan, p3: &P3Series, p4: &P4Series) {
    let p3_at = |s: P3| p3.ours.iter().find(|(x, _)| *x == s).map(|(_, i)| *i);
    let (read_ours, read_glibc) = p4
        .calls
        .iter()
        .find(|(c, _, _)| *c == Call::Read)
        .map(|(_, o, g)| (*o, *g))
        .expect("the P4 read series");
    let p8_of = |s: scope_latency::Scenario| latency(move || scope_latency::sample(s));
    let mut scope_cancel = Vec::new();
    for (w, scenario, short, thread_cancel, glibc) in [
        (
            scope_latency::Wait::Sleep,
            "P8 scope cancel -> Err, in sleep",
            "P8 sleep",
            p3_at(P3::OursSleep),
            p3.nanosleep,
        ),
        (
            scope_latency::Wait::Recv,
            "P8 scope cancel -> Err, in channel recv",
            "P8 channel recv",
            p3_at(P3::OursRecv),
            p3.cond_wait,
        ),
        (
            scope_latency::Wait::Read,
            "P8 scope cancel -> Err, in read",
            "P8 read",
            Some(read_ours),
            read_glibc,
        ),
    ] {
        let s = scope_latency::Scenario::ScopeCancel(w);
        let ours = p.add(s.name(), each, p8_of(s));
        scope_cancel.push((w, ours));
        p.rows.push(Row {
            scenario,
            short,
            target: Target::P8,
            unit: Unit::Us,
            ours,
            glibc: Some(glibc),
            floor: thread_cancel,
            floor_plus: None,
        });
    }
    // The same comparison with every thread of a sample on one CPU (see `latency_on_one_cpu`):
    // the scope cancel and the thread cancel on the same wait, in the same wake-up mode.
    for (w, thread_cancel, scenario, short) in [
        (
            scope_latency::Wait::Sleep,
            Scenario3or4::P3(P3::OursSleep),
            "P8 scope cancel -> Err, in sleep, one CPU",
            "P8 sleep 1cpu",
        ),
        (
            scope_latency::Wait::Recv,
            Scenario3or4::P3(P3::OursRecv),
            "P8 scope cancel -> Err, in channel recv, one CPU",
            "P8 recv 1cpu",
        ),
        (
            scope_latency::Wait::Read,
            Scenario3or4::P4(P4::Ours(Call::Read)),
            "P8 scope cancel -> Err, in read, one CPU",
            "P8 read 1cpu",
        ),
    ] {
        let floor = p.add(
            &format!("{}, one CPU", thread_cancel.name()),
            each,
            latency_on_one_cpu(move || thread_cancel.sample()),
        );
        let s = scope_latency::Scenario::ScopeCancel(w);
        let ours = p.add(
            &format!("{}, one CPU", s.name()),
            each,
            latency_on_one_cpu(move || scope_latency::sample(s)),
        );
        p.rows.push(Row {
            scenario,
            short,
            target: Target::P8,
            unit: Unit::Us,
            ours,
            glibc: None,
            floor: Some(floor),
            floor_plus: None,
        });
    }
    for (w, scenario, short) in [
        (
            scope_latency::Wait::Sleep,
            "P8 deadline -> Err, late by, in sleep",
            "P8 deadline, sleep",
        ),
        (
            scope_latency::Wait::Read,
            "P8 deadline -> Err, late by, in read",
            "P8 deadline, read",
        ),
    ] {
        let s = scope_latency::Scenario::Deadline(w);
        let ours = p.add(s.name(), each, p8_of(s));
        p.rows.push(Row {
            scenario,
            short,
            target: Target::P8Deadline,
            unit: Unit::Us,
            ours,
            glibc: None,
            floor: scope_cancel.iter().find(|(x, _)| *x == w).map(|(_, i)| *i),
            floor_plus: None,
        });
    }
}

/// A thread cancel's latency scenario of P3 or P4 (the floor of a P8 row).
#[derive(Clone, Copy)]
enum Scenario3or4 {
    P3(P3),
    P4(P4),
}

impl Scenario3or4 {
    fn name(self) -> &'static str {
        match self {
            Self::P3(s) => s.name(),
            Self::P4(s) => s.name(),
        }
    }

    fn sample(self) -> io::Result<Duration> {
        match self {
            Self::P3(s) => wait_latency::sample(s),
            Self::P4(s) => syscall_latency::sample(s),
        }
    }
}

/// The figures of one row.
struct Figures {
    ours: Stats,
    glibc: Option<Stats>,
    /// The floor's median, plus the median of the row's `floor_plus` series.
    floor_median: Option<f64>,
    met: Option<bool>,
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), num)
}

/// The cells of a row, in the table's order.
fn cells(row: &Row, f: &Figures) -> [String; 11] {
    let med = |s: Option<Stats>| s.map(|s| s.median);
    [
        row.scenario.to_string(),
        row.unit.symbol().to_string(),
        num(f.ours.median),
        num(f.ours.p99),
        opt(med(f.glibc)),
        opt(f.glibc.map(|s| s.p99)),
        opt(f.floor_median),
        ratio(f.ours.median, med(f.glibc)),
        ratio(f.ours.median, f.floor_median),
        row.target.text().to_string(),
        verdict(f.met).to_string(),
    ]
}

const HEADER: [&str; 11] = [
    "scenario",
    "unit",
    "ours median",
    "ours p99",
    "glibc median",
    "glibc p99",
    "floor median",
    "ours/glibc",
    "ours/floor",
    "target (REQUIREMENTS.md)",
    "verdict",
];

/// The table as fixed-width text.
fn text_table(rows: &[Row], figs: &[Figures]) -> String {
    let all: Vec<[String; 11]> = std::iter::once(HEADER.map(str::to_string))
        .chain(rows.iter().zip(figs).map(|(r, f)| cells(r, f)))
        .collect();
    let widths: Vec<usize> = (0..11)
        .map(|c| all.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &all {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (s, w))| match c {
                0 | 9 | 10 => format!("{s:<w$}"),
                _ => format!("{s:>w$}"),
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out
}

/// The table as markdown.
fn markdown_table(rows: &[Row], figs: &[Figures]) -> String {
    let mut out = format!("| {} |\n", HEADER.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        (0..11)
            .map(|c| if matches!(c, 0 | 9 | 10) {
                "---|"
            } else {
                "---:|"
            })
            .collect::<String>()
    );
    for (r, f) in rows.iter().zip(figs) {
        let mut c = cells(r, f);
        c[10] = format!("**{}**", c[10]);
        let _ = writeln!(out, "| {} |", c.join(" | "));
    }
    out
}

/// What ours, glibc and the floor are, per row.
fn legend(rows: &[Row], measures: &[Measure]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let name =
                |who, i: Option<usize>| i.map_or("-", |i| unprefixed(who, &measures[i].label));
            let plus = r
                .floor_plus
                .map_or(String::new(), |i| format!(" + {}", measures[i].label));
            format!(
                "{}: ours = {}; glibc = {}; floor = {}{plus}",
                r.short,
                name(Who::Ours, Some(r.ours)),
                name(Who::Glibc, r.glibc),
                name(Who::Floor, r.floor)
            )
        })
        .collect()
}

/// `who`'s name, as the legends say it.
fn who_name(who: Who) -> &'static str {
    match who {
        Who::Ours => "ours",
        Who::Glibc => "glibc",
        Who::Floor => "floor",
    }
}

/// `label` without a leading "ours " or "glibc " that repeats `who`.
fn unprefixed(who: Who, label: &str) -> &str {
    label
        .strip_prefix(who_name(who))
        .map_or(label, str::trim_start)
}

/// The P6 figures beyond the table: per side, per thread, the cancel loop alone, the mappings.
fn p6_notes(cfg: &Config, log: &[(mass_cancel::Side, mass_cancel::Sample)]) -> Vec<String> {
    mass_cancel::Side::ALL
        .into_iter()
        .filter_map(|side| {
            // The warm-up runs are the first of each side.
            let runs: Vec<mass_cancel::Sample> = log
                .iter()
                .filter(|(s, _)| *s == side)
                .map(|(_, s)| *s)
                .skip(cfg.p6_warmup)
                .collect();
            mass_cancel::summary(side, &runs, cfg.p6_threads)
        })
        .collect()
}

/// The chart's panels: per row, ours, glibc's and the floor's samples.
fn panels(rows: &[Row], measures: &[Measure], series: &[Series]) -> Vec<Panel> {
    rows.iter()
        .map(|r| {
            let line = |who, i: usize| Line {
                who,
                label: format!(
                    "{}: {}",
                    who_name(who),
                    short_label(unprefixed(who, &measures[i].label))
                ),
                values: series[i].kept.clone(),
            };
            let mut lines = vec![line(Who::Ours, r.ours)];
            lines.extend(r.glibc.map(|i| line(Who::Glibc, i)));
            lines.extend(r.floor.map(|i| line(Who::Floor, i)));
            Panel {
                title: format!("{} ({})", r.short, r.target.text()),
                unit: r.unit.symbol().to_string(),
                lines,
            }
        })
        .collect()
}

/// A legend entry short enough for a panel: the label up to its first " + " or " (".
fn short_label(label: &str) -> &str {
    let end = [" + ", " ("]
        .iter()
        .filter_map(|p| label.find(p))
        .min()
        .unwrap_or(label.len());
    &label[..end]
}

/// Today's date (UTC), from the system clock.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Civil from days (H. Hinnant's algorithm), for 1970-01-01 onwards.
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Runs the comparison (see the module docs): `full_dir` and `quick_dir` are where a full and
/// a quick run write their files, unless `COMPARE_OUT` says otherwise.
///
/// # Panics
///
/// If a sample fails, or the files cannot be written (the message says which).
pub fn main(full_dir: &Path, quick_dir: &Path) {
    let Some(mode) = Mode::for_bench("compare") else {
        return;
    };
    let cfg = Config::from_env(mode, full_dir, quick_dir);
    let me = thread_cancel::current();
    assert!(!me.is_finished());
    // glibc's wrappers skip their cancellation bookkeeping while the process has one thread.
    std::thread::spawn(|| ()).join().expect("an empty thread");

    let log: P6Log = Rc::default();
    let Plans { mut measures, rows } = plans(&cfg, &log).expect("opening /dev/zero, /dev/null");
    let plans: Vec<Plan> = measures.iter().map(|m| m.plan).collect();
    let start = Instant::now();
    let mut next_report = 0;
    let series = interleave(
        &plans,
        |i| (measures[i].sample)(),
        |r, rounds| {
            if r * 10 >= next_report * rounds {
                eprintln!(
                    "compare: round {r} of {rounds}, {:.0} s",
                    start.elapsed().as_secs_f64()
                );
                next_report += 1;
            }
        },
    )
    .unwrap_or_else(|(i, e)| panic!("compare: {}: {e}", measures[i].label));
    let wall = start.elapsed();
    let stats = |i: usize| series[i].stats();
    let figs: Vec<Figures> = rows
        .iter()
        .map(|r| {
            let ours = stats(r.ours).expect("samples of ours");
            let glibc = r.glibc.and_then(stats);
            let plus = r.floor_plus.and_then(stats).map_or(0.0, |s| s.median);
            let floor_median = r.floor.and_then(stats).map(|s| s.median + plus);
            Figures {
                ours,
                glibc,
                floor_median,
                met: r
                    .target
                    .met(ours.median, glibc.map(|s| s.median), floor_median),
            }
        })
        .collect();

    let machine = Machine::read();
    let met = figs.iter().filter(|f| f.met == Some(true)).count();
    let run_line = format!(
        "{} samples per scenario after {} dropped, interleaved round-robin in one process; P6: \
         {} threads of {} KiB stack, {} runs per side after {} dropped; {:.0} s in all{}",
        cfg.samples,
        cfg.warmup,
        cfg.p6_threads,
        cfg.p6_stack >> 10,
        cfg.p6_samples,
        cfg.p6_warmup,
        wall.as_secs_f64(),
        if cfg.quick {
            " (quick run: the figures mean nothing)"
        } else {
            ""
        }
    );
    let machine_line = format!(
        "{}, {} CPUs online ({} allowed), glibc {}, {}, {}",
        machine.cpu_model,
        machine.cpus_online,
        machine.cpus_allowed,
        machine.glibc,
        machine.kernel,
        machine.rustc
    );
    let legend = legend(&rows, &measures);
    let unwind_median = rows
        .iter()
        .find_map(|r| r.floor_plus)
        .and_then(stats)
        .map(|s| s.median);
    let notes = p6_notes(&cfg, &log.borrow());
    let with_target = rows.iter().filter(|r| r.target.is_target()).count();
    let verdict_line =
        format!("{met} of {with_target} rows with a target of REQUIREMENTS.md meet it");

    println!();
    println!("thread-cancel beside glibc, medians and p99 ({machine_line})");
    println!("{run_line}");
    print!("{}", text_table(&rows, &figs));
    println!("{verdict_line}");
    if let Some(u) = unwind_median {
        println!(
            "P3/P4 floor = the wait's floor + one bare resume_unwind caught one frame up \
             (median {} us)",
            num(u)
        );
    }
    println!("P6 ({} threads):", cfg.p6_threads);
    for n in &notes {
        println!("  {n}");
    }

    std::fs::create_dir_all(&cfg.out_dir)
        .unwrap_or_else(|e| panic!("compare: creating {}: {e}", cfg.out_dir.display()));
    let md_path = cfg.out_dir.join("compare.md");
    let svg_path = cfg.out_dir.join("compare.svg");
    let mut md = String::new();
    let _ = writeln!(md, "# thread-cancel beside glibc\n");
    let _ = writeln!(
        md,
        "Written by `cargo bench -p thread-cancel-bench --bench compare` on {} (every figure \
         measured in that one run).\n",
        today()
    );
    let _ = writeln!(md, "- Machine: {machine_line}.");
    let _ = writeln!(md, "- Run: {run_line}.");
    let _ = writeln!(
        md,
        "- Medians and p99 of the samples; the ratios and the verdicts are of medians. A P1/P2 \
         sample is the mean of a batch ({P1_BATCH} / {P2_BATCH} calls), a P5 sample of \
         {P5_BATCH} spawn + join; a P3/P4/P4c sample is one cancellation of a fresh thread \
         seen asleep in its system call, from the cancel call to the first cleanup handler \
         starting (a P4c sample after 10 ms of quiet: the side sampled right after another \
         scenario paid for that scenario's threads ending, up to 1.4x). Every P3/P4/P4c/P8 \
         sample not marked \"one CPU\" has its wake-up across CPUs: the sampling thread \
         stays on the CPU it is on and the target moves to another, for ours, glibc's and \
         the floor alike. A P5 batch runs with every thread on the sampling thread's CPU (for \
         every series alike: unpinned, spawn + join is bimodal on this VM), after one \
         untimed pair (the first pair after a series whose threads slept costs ~15 us \
         more, and the round-robin's cyclic order always put the same P5 series there). For P3 and P4 the floor is the wait's floor plus one bare unwind \
         (`resume_unwind` caught one frame up; its median in this run: {} us), so \
         \"ours/floor\" is the ratio the target holds them to and \"ours/glibc\" the gap to \
         glibc. A P7 sample is the mean of {P7_BATCH} calls; its floor is `catch_unwind` \
         alone for `run`, and a clock read (`Instant::now()`) plus a `run` for `with_timeout` \
         (what computing a deadline and running costs at the least). A P8 scope-cancel sample is one `scope.cancel()` of a fresh thread seen asleep \
         in its call, to `run` returning `Err` there; its \"floor\" is the thread \
         cancellation's latency on the same wait (the P3/P4 series of ours), which the target \
         holds it to; the rows marked \"one CPU\" run both series with every thread of a \
         sample on the CPU the sampling thread is on (no wake-up crosses CPUs: on a 2-CPU VM \
         that decides between two modes of each latency, and which one a series gets depends \
         on its place in the round-robin). A P8 deadline sample is how late `with_deadline(now + 2 ms, ..)` \
         returns `Err` after its deadline; its \"floor\" is the scope cancel's latency on the \
         same wait, and the target is 1 ms above it.\n",
        unwind_median.map_or_else(|| "-".to_string(), num)
    );
    let _ = writeln!(md, "{}", markdown_table(&rows, &figs));
    let _ = writeln!(md, "{verdict_line}.\n");
    let _ = writeln!(md, "What each row compares:\n");
    for l in &legend {
        let _ = writeln!(md, "- {l}");
    }
    let _ = writeln!(md, "\nP6 in detail ({} threads):\n", cfg.p6_threads);
    for n in &notes {
        let _ = writeln!(md, "- {n}");
    }
    let _ = writeln!(
        md,
        "\n![Distributions (CDF) of every scenario: ours, glibc, floor](compare.svg)"
    );
    std::fs::write(&md_path, md)
        .unwrap_or_else(|e| panic!("compare: writing {}: {e}", md_path.display()));
    chart::write_svg(
        &svg_path,
        &format!(
            "thread-cancel beside glibc: distributions ({})",
            machine.cpu_model
        ),
        &panels(&rows, &measures, &series),
        3,
    )
    .unwrap_or_else(|e| panic!("compare: writing {}: {e}", svg_path.display()));
    println!("wrote {} and {}", md_path.display(), svg_path.display());
}
