//! A probe of a thread's spawn and join, for `strace -c` and callgrind, outside criterion and
//! `compare`: one mode per process, `N` spawn + join pairs per batch, `REPS` batches, each
//! batch's microseconds per pair printed.
//!
//! ```text
//! cargo build --release -p thread-cancel-bench --example p5_probe
//! target/release/examples/p5_probe <std|ours|light|glibc|glibc_std_handle> [N] [REPS]
//! target/release/examples/p5_probe ours_adopted   # the joiner has a control block of its own
//! PIN=1 TIMER=1 target/release/examples/p5_probe ours_adopted  # this thread on its CPU, timer started
//! PIN=1 OTHERS=z target/release/examples/p5_probe rr 200 1     # compare's order, a 2 ms sleep per round
//! ```
//!
//! `rr`: the four series of `compare`'s P5 rows in its order, a batch of 4 pairs each per round;
//! `OTHERS` names what runs before each round, one letter each: `s`/`j` a thread cancel in
//! `sleep`/`join`, `r` a scope cancel in `recv`, `d` a `with_deadline` of 2 ms in `sleep` on
//! this thread (`D`: on another), `z` a plain 2 ms sleep of this thread, `i`/`g`/`f` P4's read
//! (ours, glibc's, the signal floor), `t` 1,000 `with_timeout`s. `ROTATE=k` starts each round
//! with the k-th series; `WARM=1` makes one untimed pair before each batch.
//!
//! ```text
//! strace -f -c target/release/examples/p5_probe ours_adopted 2000 1
//! ```
use std::time::Instant;

/// One spawn + join.
type Pair = fn() -> std::io::Result<()>;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "ours".into());
    let n: u32 = args.next().map_or(2000, |s| s.parse().expect("N"));
    let reps: u32 = args.next().map_or(5, |s| s.parse().expect("REPS"));
    let (base, adopted) = match mode.strip_suffix("_adopted") {
        Some(b) => (b.to_owned(), true),
        None => (mode.clone(), false),
    };
    if adopted {
        // A run gives the calling thread a control block (a joiner that can be canceled).
        thread_cancel::CancelScope::new()
            .run(|| ())
            .expect("a live scope");
    }
    if std::env::var_os("TIMER").is_some() {
        // The deadline timer's thread started, as in `compare` (whose P7/P8 rows use it).
        thread_cancel::with_timeout(std::time::Duration::from_secs(5), || ()).expect("no timeout");
    }
    let _pin = std::env::var_os("PIN")
        .is_some()
        .then(|| thread_cancel_bench::target::OneCpu::here().expect("pinned"));
    if base == "rr" {
        round_robin(n, reps);
        return;
    }
    let pair: Pair = match base.as_str() {
        "std" => thread_cancel_bench::micro::spawn_join_std,
        "ours" => thread_cancel_bench::micro::spawn_join_ours,
        "light" => thread_cancel_bench::micro::spawn_join_lightweight,
        "glibc" => thread_cancel_bench::glibc_spawn_join,
        "glibc_std_handle" => glibc_spawn_join_with_std_handle,
        m => panic!("unknown mode {m}"),
    };
    pair().expect("a first pair");
    for _ in 0..reps {
        let f0 = minor_faults();
        let t = Instant::now();
        for _ in 0..n {
            pair().expect("a pair");
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        let faults = (minor_faults() - f0) as f64 / f64::from(n);
        println!("{mode} {us:.2} us, {faults:.2} page faults per pair");
    }
}

/// `pthread_create` + `pthread_join` of a thread that only makes `std`'s handle of itself
/// (`std::thread::current()`), as a lightweight thread does for `JoinHandle::thread`: what that
/// handle costs a thread `std` did not start (an allocation, the C library's per-thread malloc
/// cache made and freed, a thread-specific key's destructor pass at exit).
fn glibc_spawn_join_with_std_handle() -> std::io::Result<()> {
    extern "C" fn start(_: *mut libc::c_void) -> *mut libc::c_void {
        // No unwind may leave an `extern "C"` function: `current()` does not panic but in an
        // allocation failure (which aborts); caught all the same.
        let _ = std::panic::catch_unwind(|| drop(std::thread::current()));
        std::ptr::null_mut()
    }
    let mut t: libc::pthread_t = 0;
    // SAFETY: `t` is written by `pthread_create`; `start` takes no data (null) and returns
    // null; the thread is joined below, before `t` goes out of scope.
    let rc = unsafe { libc::pthread_create(&mut t, std::ptr::null(), start, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    // SAFETY: `t` is a joinable thread created above and joined once.
    let rc = unsafe { libc::pthread_join(t, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// "rr": the four series in `compare`'s order, a batch of 4 pairs each per round (`WARM=1`: one
/// untimed pair before each batch), `n` rounds; each series' median batch printed.
fn round_robin(n: u32, reps: u32) {
    use thread_cancel_bench::micro;
    let mut series: [(&str, Pair); 4] = [
        ("ours", micro::spawn_join_ours),
        ("light", micro::spawn_join_lightweight),
        ("glibc", thread_cancel_bench::glibc_spawn_join),
        ("std", micro::spawn_join_std),
    ];
    // `ROTATE=k`: the round starts with the k-th series (which comes right after `OTHERS`).
    let k = std::env::var("ROTATE").map_or(0, |v| v.parse().expect("ROTATE"));
    series.rotate_left(k % 4);
    let warm = std::env::var_os("WARM").is_some();
    let others = std::env::var("OTHERS").unwrap_or_default();
    for _ in 0..reps {
        let mut t: [Vec<f64>; 4] = Default::default();
        for _ in 0..n {
            for c in others.chars() {
                // What `compare` samples between two P5 batches (letters of `OTHERS`).
                use thread_cancel_bench::wait_latency as p3;
                use thread_cancel_bench::{scope_latency as p8, syscall_latency as p4};
                let _pin = thread_cancel_bench::target::AcrossCpus::here().expect("pinned");
                match c {
                    's' => drop(p3::sample(p3::Scenario::OursSleep).expect("P3")),
                    'j' => drop(p3::sample(p3::Scenario::OursJoin).expect("P3")),
                    'r' => drop(p8::sample(p8::Scenario::ScopeCancel(p8::Wait::Recv)).expect("P8")),
                    'd' => drop(p8::sample(p8::Scenario::Deadline(p8::Wait::Sleep)).expect("P8")),
                    'D' => {
                        let d = std::thread::spawn(|| {
                            p8::sample(p8::Scenario::Deadline(p8::Wait::Sleep)).expect("P8")
                        });
                        d.join().expect("a deadline on another thread");
                    }
                    'z' => std::thread::sleep(std::time::Duration::from_millis(2)),
                    'i' => drop(p4::sample(p4::Scenario::Ours(p4::Call::Read)).expect("P4")),
                    'g' => drop(p4::sample(p4::Scenario::Glibc(p4::Call::Read)).expect("P4")),
                    'f' => drop(p4::sample(p4::Scenario::SignalFloor(p4::Call::Read)).expect("P4")),
                    't' => {
                        for _ in 0..1000 {
                            std::hint::black_box(
                                thread_cancel::with_timeout(
                                    std::time::Duration::from_secs(5),
                                    || 1,
                                )
                                .expect("no timeout"),
                            );
                        }
                    }
                    _ => panic!("OTHERS: unknown letter {c}"),
                }
            }
            for (i, (_, f)) in series.iter().enumerate() {
                if warm {
                    f().expect("a pair");
                }
                t[i].push(micro::batch(4, f).expect("a batch") / 1e3);
            }
        }
        for (i, (name, _)) in series.iter().enumerate() {
            t[i].sort_by(f64::total_cmp);
            print!("{name} {:.2}  ", t[i][t[i].len() / 2]);
        }
        println!("(us, median of {n} batches of 4)");
    }
}

/// The process's minor page faults so far.
fn minor_faults() -> i64 {
    // SAFETY: `getrusage` writes a `rusage` (plain integers: all-zero is valid) it is given.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u.ru_minflt
    }
}
