//! P6: many blocked threads canceled and joined — by default 10,000, with 64 KiB stacks — a
//! quarter each blocked in a sleep, a channel-like wait, a `read` on a pipe and a condition
//! wait; the time from the first cancel call to the last join returning. Ours (lightweight
//! threads, and threads spawned through `std`), glibc's, and a floor, each with the same count
//! and stack size:
//!
//! | side | sleep | channel-like | `read` (one shared pipe) | condition wait (one shared) |
//! |---|---|---|---|---|
//! | ours (`thread_cancel::Builder`, with and without `lightweight()`) | `sleep(1 h)` | `sync::channel` `recv` | `io::read` | `sync::Condvar::wait` |
//! | glibc (`pthread_create`, `csrc/glibc_p6_mass.c`) | `nanosleep(1 h)` | `sem_wait` | `read` | `pthread_cond_wait` |
//!
//! The floor: as many `std` threads blocked in `FUTEX_WAIT`, each on its own word, woken one by
//! one (a store and a `FUTEX_WAKE`) and joined: what waking and joining that many threads costs
//! without any cancellation. And the floor of a canceled Rust thread: as many threads made by
//! `pthread_create` (as lightweight threads are, same stack size), blocked in `FUTEX_WAIT`,
//! woken, each then making one bare unwind (`resume_unwind` caught one frame up, to a `Drop`:
//! what acting on a cancel costs at the least in Rust, where glibc's forced unwind of C frames
//! is not allowed) and ending, joined with `pthread_join`.
//!
//! Before the clock starts every thread is seen asleep in its system call in `/proc` (and every
//! condition waiter is known to be queued: each publishes its tid holding the mutex, which it
//! only releases by waiting, and the measuring thread then takes the mutex once). The time of
//! the cancel loop alone is reported too. Only one side's threads exist at a time.
//!
//! ```
//! use thread_cancel_bench::mass_cancel::{run, Side};
//! for side in Side::ALL {
//!     let s = run(side, 8, 64 << 10).unwrap();
//!     assert!(s.cancel <= s.total);
//! }
//! ```

use crate::stats::{num, us, Stats};
use crate::target::{is_blocked, SETTLE};
use crate::wait_latency::{futex_wait, futex_wake};
use crate::{c_started, ns_or_errno};
use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The thread count of P6 (REQUIREMENTS.md).
pub const THREADS: usize = 10_000;

/// The stack size of every thread, on every side.
pub const STACK: usize = 64 << 10;

/// How long the threads may take to block before the run gives up.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(60);

/// Whose threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// `thread_cancel` threads made by `Builder::lightweight()` (`pthread_create`, no `std`
    /// spawn), canceled with `JoinHandle::cancel`, joined with `join`. P6's subject.
    Lightweight,
    /// The same with threads spawned through `std` (each with `std`'s alternate signal stack).
    Ours,
    /// C threads, canceled with `pthread_cancel`, joined with `pthread_join`.
    Glibc,
    /// `std` threads in `FUTEX_WAIT`, woken and joined (no cancellation).
    Floor,
    /// `pthread_create` threads in `FUTEX_WAIT`, woken, each making one bare unwind, joined:
    /// the floor of P6's lightweight threads.
    FloorUnwind,
}

impl Side {
    /// The five sides.
    pub const ALL: [Side; 5] = [
        Side::Lightweight,
        Side::Ours,
        Side::Glibc,
        Side::Floor,
        Side::FloorUnwind,
    ];

    /// A short label.
    pub fn name(self) -> &'static str {
        match self {
            Side::Lightweight => "ours lightweight",
            Side::Ours => "ours std-spawned",
            Side::Glibc => "glibc",
            Side::Floor => "floor: futex wake + join",
            Side::FloorUnwind => "floor: wake + unwind + join",
        }
    }

    /// The memory mappings (VMAs) one thread takes, at most: its stack and guard page, and for
    /// threads spawned through `std` also its alternate signal stack and that one's guard page.
    fn maps_per_thread(self) -> usize {
        match self {
            Side::Glibc | Side::Lightweight | Side::FloorUnwind => 2,
            Side::Ours | Side::Floor => 4,
        }
    }
}

/// One run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The first cancel (wake) call to the last join returning.
    pub total: Duration,
    /// The cancel (wake) loop alone.
    pub cancel: Duration,
    /// The process's memory mappings while every thread was blocked.
    pub maps: usize,
}

/// Creates `threads` threads of `side` with `stack` bytes of stack, waits until all are
/// blocked, cancels (wakes) all, joins all.
///
/// # Errors
///
/// Too few memory mappings left for the threads (`vm.max_map_count`), thread or pipe creation
/// failing, the threads not blocking within a minute, or a thread not ending canceled.
pub fn run(side: Side, threads: usize, stack: usize) -> io::Result<Sample> {
    check_map_headroom(side, threads)?;
    match side {
        Side::Lightweight => ours(threads, stack, true),
        Side::Ours => ours(threads, stack, false),
        Side::Glibc => glibc(threads, stack),
        Side::Floor => floor(threads, stack),
        Side::FloorUnwind => floor_unwind(threads, stack),
    }
}

/// One line on `runs` of `side` with `threads` threads: the median total, per thread, the
/// cancel (wake) loop alone, the most memory mappings seen; `None` without runs.
pub fn summary(side: Side, runs: &[Sample], threads: usize) -> Option<String> {
    let ms = |f: fn(&Sample) -> Duration| -> Option<Stats> {
        let v: Vec<f64> = runs.iter().map(|s| us(f(s)) / 1e3).collect();
        (!v.is_empty()).then(|| Stats::of(v[0], &v))
    };
    let (total, cancel) = (ms(|s| s.total)?, ms(|s| s.cancel)?);
    let per_thread = |m: f64| num(m * 1e3 / threads.max(1) as f64);
    Some(format!(
        "{:<24} {} run(s): median {} ms in all = {} us per thread (p99 {} ms); the cancel \
         (wake) loop alone {} ms = {} us per thread; {} memory mappings at most (of {})",
        side.name(),
        runs.len(),
        num(total.median),
        per_thread(total.median),
        num(total.p99),
        num(cancel.median),
        per_thread(cancel.median),
        runs.iter().map(|s| s.maps).max().unwrap_or(0),
        max_map_count().map_or_else(|_| "?".to_string(), |m| m.to_string())
    ))
}

/// The system calls thread `i` blocks in (the wait is `i % 4`).
fn syscalls(side: Side, i: usize) -> &'static [libc::c_long] {
    match (side, i % 4) {
        (Side::Floor | Side::FloorUnwind, _) => &[libc::SYS_futex],
        (_, 1) => &[libc::SYS_read],
        #[cfg(target_arch = "x86_64")]
        (Side::Glibc, 0) => &[libc::SYS_clock_nanosleep, libc::SYS_nanosleep],
        #[cfg(not(target_arch = "x86_64"))]
        (Side::Glibc, 0) => &[libc::SYS_clock_nanosleep],
        _ => &[libc::SYS_futex],
    }
}

/// The number of memory mappings of this process.
pub fn map_count() -> io::Result<usize> {
    Ok(std::fs::read("/proc/self/maps")?
        .iter()
        .filter(|&&b| b == b'\n')
        .count())
}

/// `vm.max_map_count`.
pub fn max_map_count() -> io::Result<usize> {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")?
        .trim()
        .parse()
        .map_err(io::Error::other)
}

fn check_map_headroom(side: Side, threads: usize) -> io::Result<()> {
    let (now, max) = (map_count()?, max_map_count()?);
    let need = threads * side.maps_per_thread();
    if now + need + need / 10 > max {
        return Err(io::Error::other(format!(
            "{threads} {} threads need about {need} memory mappings; {now} are in use and \
             vm.max_map_count is {max}",
            side.name()
        )));
    }
    Ok(())
}

/// Waits until every thread `i` (kernel tid `tid(i)`, 0 until published) is asleep in its
/// system call, then for [`SETTLE`], and checks again.
fn wait_all_blocked(side: Side, n: usize, tid: impl Fn(usize) -> i32) -> io::Result<()> {
    let start = Instant::now();
    for pass in 0..2 {
        let mut pending: Vec<usize> = (0..n).collect();
        while !pending.is_empty() {
            pending.retain(|&i| {
                let t = tid(i);
                t == 0 || !is_blocked(t, syscalls(side, i))
            });
            if start.elapsed() > BLOCK_TIMEOUT {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "{} of {n} {} threads did not block",
                        pending.len(),
                        side.name()
                    ),
                ));
            }
            if !pending.is_empty() {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        if pass == 0 {
            std::thread::sleep(SETTLE);
        }
    }
    Ok(())
}

/// Kernel thread ids published by the threads (0 until published).
fn tids(n: usize) -> Arc<[AtomicI32]> {
    (0..n).map(|_| AtomicI32::new(0)).collect()
}

fn publish(tids: &[AtomicI32], i: usize) {
    // SAFETY: `gettid` has no preconditions and cannot fail.
    tids[i].store(unsafe { libc::gettid() }, Ordering::Release);
}

// ---------------------------------------------------------------------------------------------
// Ours.

fn ours(n: usize, stack: usize, lightweight: bool) -> io::Result<Sample> {
    use thread_cancel::sync::{channel, Condvar, Mutex};
    let (pipe_r, _pipe_w) = io::pipe()?;
    let pipe_r = Arc::new(pipe_r);
    let cond = Arc::new((Mutex::new(()), Condvar::new()));
    let tid = tids(n);
    let mut senders = Vec::with_capacity(n / 4 + 1);
    let mut handles = Vec::with_capacity(n);
    for i in 0..n {
        let tid = tid.clone();
        let mut b = thread_cancel::Builder::new().stack_size(stack);
        if lightweight {
            b = b.lightweight();
        }
        let h = match i % 4 {
            0 => b.spawn(move || {
                publish(&tid, i);
                loop {
                    thread_cancel::sleep(Duration::from_secs(3600));
                }
            }),
            1 => {
                let r = pipe_r.clone();
                b.spawn(move || {
                    publish(&tid, i);
                    loop {
                        let _ = thread_cancel::io::read(r.as_fd(), &mut [0u8; 1]);
                    }
                })
            }
            2 => {
                let c = cond.clone();
                b.spawn(move || {
                    let (m, cv) = &*c;
                    let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
                    publish(&tid, i);
                    loop {
                        g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
                    }
                })
            }
            _ => {
                let (tx, rx) = channel::<()>();
                senders.push(tx); // kept: the receiver must block, not see a closed channel
                b.spawn(move || {
                    publish(&tid, i);
                    loop {
                        let _ = rx.recv();
                    }
                })
            }
        };
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                cancel_join_ours(handles);
                return Err(e);
            }
        }
    }
    let side = if lightweight {
        Side::Lightweight
    } else {
        Side::Ours
    };
    let blocked = wait_all_blocked(side, n, |i| tid[i].load(Ordering::Acquire));
    // Every condition waiter published its tid holding the mutex: once we hold it, all wait.
    drop(cond.0.lock().unwrap_or_else(|e| e.into_inner()));
    let maps = map_count();
    let (sample, canceled) = cancel_join_ours(handles);
    blocked?;
    if canceled != n {
        return Err(io::Error::other(format!(
            "{canceled} of {n} threads were canceled"
        )));
    }
    drop(senders);
    Ok(Sample {
        maps: maps?,
        ..sample
    })
}

/// Cancels every thread, then joins every thread; the times and the number canceled.
fn cancel_join_ours(handles: Vec<thread_cancel::JoinHandle<()>>) -> (Sample, usize) {
    let t0 = Instant::now();
    for h in &handles {
        let _ = h.cancel();
    }
    let cancel = t0.elapsed();
    let canceled = handles
        .into_iter()
        .map(|h| usize::from(h.join().is_canceled()))
        .sum();
    let total = t0.elapsed();
    (
        Sample {
            total,
            cancel,
            maps: 0,
        },
        canceled,
    )
}

// ---------------------------------------------------------------------------------------------
// The floor.

fn floor(n: usize, stack: usize) -> io::Result<Sample> {
    let words: Arc<[AtomicU32]> = (0..n).map(|_| AtomicU32::new(0)).collect();
    let tid = tids(n);
    let mut handles = Vec::with_capacity(n);
    let mut spawn_error = None;
    for i in 0..n {
        let (w, tid) = (words.clone(), tid.clone());
        let h = std::thread::Builder::new()
            .stack_size(stack)
            .spawn(move || {
                publish(&tid, i);
                while w[i].load(Ordering::Acquire) == 0 {
                    futex_wait(&w[i], 0);
                }
            });
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                spawn_error = Some(e);
                break;
            }
        }
    }
    let blocked = match spawn_error {
        Some(e) => Err(e),
        None => wait_all_blocked(Side::Floor, n, |i| tid[i].load(Ordering::Acquire)),
    };
    let maps = map_count();
    let t0 = Instant::now();
    wake_all(&words[..handles.len()]);
    let cancel = t0.elapsed();
    let joined = handles.into_iter().filter_map(|h| h.join().ok()).count();
    let total = t0.elapsed();
    blocked?;
    if joined != n {
        return Err(io::Error::other(format!("{joined} of {n} threads ended")));
    }
    Ok(Sample {
        total,
        cancel,
        maps: maps?,
    })
}

/// The floors' "cancel": each word set and woken, in order.
fn wake_all(words: &[AtomicU32]) {
    for w in words {
        w.store(1, Ordering::Release);
        futex_wake(w);
    }
}

/// What a thread of [`floor_unwind`] is given: its futex word and where it publishes its tid.
struct UnwindArg {
    word: Arc<[AtomicU32]>,
    tid: Arc<[AtomicI32]>,
    i: usize,
}

/// A [`floor_unwind`] thread: publishes its tid, waits for its word, then one bare unwind caught
/// one frame up, to a `Drop` (as P3's floor). Returns non-null if the unwind was caught.
extern "C" fn unwind_thread(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: `arg` is the `Box<UnwindArg>` `floor_unwind` leaked for this thread alone.
    let a = unsafe { Box::from_raw(arg.cast::<UnwindArg>()) };
    publish(&a.tid, a.i);
    while a.word[a.i].load(Ordering::Acquire) == 0 {
        futex_wait(&a.word[a.i], 0);
    }
    struct Dropped;
    impl Drop for Dropped {
        fn drop(&mut self) {
            std::hint::black_box(());
        }
    }
    let caught = std::panic::catch_unwind(|| {
        let _d = Dropped;
        std::panic::resume_unwind(Box::new(()));
    })
    .is_err();
    if caught {
        NonNull::<libc::c_void>::dangling().as_ptr()
    } else {
        std::ptr::null_mut()
    }
}

fn floor_unwind(n: usize, stack: usize) -> io::Result<Sample> {
    let words: Arc<[AtomicU32]> = (0..n).map(|_| AtomicU32::new(0)).collect();
    let tid = tids(n);
    let mut threads: Vec<libc::pthread_t> = Vec::with_capacity(n);
    let mut spawn_error = None;
    // SAFETY: a zeroed attribute object is initialized by `pthread_attr_init` before use and
    // destroyed after the last `pthread_create`.
    let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
    // SAFETY: `attr` is valid storage; the stack size is at least `PTHREAD_STACK_MIN` (64 KiB).
    unsafe {
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setstacksize(&mut attr, stack.max(libc::PTHREAD_STACK_MIN));
    }
    for i in 0..n {
        let arg = Box::into_raw(Box::new(UnwindArg {
            word: words.clone(),
            tid: tid.clone(),
            i,
        }));
        // SAFETY: `t` is written by a successful `pthread_create`; `unwind_thread` takes
        // ownership of `arg` (freed here if the thread was not created).
        let mut t: libc::pthread_t = 0;
        let r = unsafe { libc::pthread_create(&mut t, &attr, unwind_thread, arg.cast()) };
        if r != 0 {
            // SAFETY: not handed to any thread.
            drop(unsafe { Box::from_raw(arg) });
            spawn_error = Some(io::Error::from_raw_os_error(r));
            break;
        }
        threads.push(t);
    }
    // SAFETY: initialized above, no longer used.
    unsafe { libc::pthread_attr_destroy(&mut attr) };
    let blocked = match spawn_error {
        Some(e) => Err(e),
        None => wait_all_blocked(Side::FloorUnwind, n, |i| tid[i].load(Ordering::Acquire)),
    };
    let maps = map_count();
    let t0 = Instant::now();
    wake_all(&words[..threads.len()]);
    let cancel = t0.elapsed();
    let mut caught = 0;
    for t in threads {
        let mut ret = std::ptr::null_mut();
        // SAFETY: `t` is a joinable thread created above, joined once.
        if unsafe { libc::pthread_join(t, &mut ret) } == 0 && !ret.is_null() {
            caught += 1;
        }
    }
    let total = t0.elapsed();
    blocked?;
    if caught != n {
        return Err(io::Error::other(format!("{caught} of {n} threads unwound")));
    }
    Ok(Sample {
        total,
        cancel,
        maps: maps?,
    })
}

// ---------------------------------------------------------------------------------------------
// glibc, through the C shim.

mod ffi {
    use libc::{c_int, size_t};

    /// `struct glibc_p6`, opaque.
    #[repr(C)]
    pub(crate) struct Mass {
        _private: [u8; 0],
    }

    extern "C" {
        pub(crate) fn glibc_p6_start(
            n: size_t,
            stack: size_t,
            fd: c_int,
            out: *mut *mut Mass,
        ) -> c_int;
        pub(crate) fn glibc_p6_tid(m: *const Mass, i: size_t) -> c_int;
        pub(crate) fn glibc_p6_fire(m: *mut Mass, cancel_ns: *mut u64) -> i64;
    }
}

/// C threads blocked as [`run`] describes, reading a pipe they borrow. Dropping the set
/// unmeasured still cancels and joins them.
#[derive(Debug)]
struct GlibcMass<'fd> {
    ptr: NonNull<ffi::Mass>,
    _fd: PhantomData<BorrowedFd<'fd>>,
}

impl<'fd> GlibcMass<'fd> {
    fn start(n: usize, stack: usize, fd: BorrowedFd<'fd>) -> io::Result<Self> {
        let mut out: *mut ffi::Mass = std::ptr::null_mut();
        // SAFETY: `out` is a valid place for the C function to store a pointer; it only does
        // so (with a non-null pointer it allocated) when it returns 0, and on failure it has
        // joined every thread it created. The threads run C code only; the descriptor they
        // read stays open while the returned value lives (the `'fd` borrow), and `fire`/`Drop`
        // join them.
        let rc = unsafe { ffi::glibc_p6_start(n, stack, fd.as_raw_fd(), &mut out) };
        Ok(GlibcMass {
            ptr: c_started(rc, out, "glibc_p6_start")?,
            _fd: PhantomData,
        })
    }

    fn tid(&self, i: usize) -> i32 {
        // SAFETY: `ptr` came from `glibc_p6_start` and has not been passed to `glibc_p6_fire`
        // (which consumes `self`), so it is live; the C side checks `i` and reads an atomic.
        unsafe { ffi::glibc_p6_tid(self.ptr.as_ptr(), i) }
    }

    fn fire(self) -> io::Result<(Duration, Duration)> {
        let ptr = self.ptr;
        std::mem::forget(self);
        let mut cancel_ns = 0u64;
        // SAFETY: `ptr` came from `glibc_p6_start` and is passed to `glibc_p6_fire` exactly
        // once (`self` is forgotten, so `Drop` will not); `cancel_ns` is a valid place. The C
        // side cancels and joins C-only threads (no Rust frames are unwound) and frees the set.
        let total = ns_or_errno(unsafe { ffi::glibc_p6_fire(ptr.as_ptr(), &mut cancel_ns) })?;
        Ok((total, Duration::from_nanos(cancel_ns)))
    }
}

impl Drop for GlibcMass<'_> {
    fn drop(&mut self) {
        let mut cancel_ns = 0u64;
        // SAFETY: as in `fire`: `ptr` is live and is consumed here, once.
        unsafe {
            ffi::glibc_p6_fire(self.ptr.as_ptr(), &mut cancel_ns);
        }
    }
}

fn glibc(n: usize, stack: usize) -> io::Result<Sample> {
    let (pipe_r, _pipe_w) = io::pipe()?;
    let mass = GlibcMass::start(n, stack, pipe_r.as_fd())?;
    wait_all_blocked(Side::Glibc, n, |i| mass.tid(i))?; // on error, Drop cancels and joins
    let maps = map_count()?;
    let (total, cancel) = mass.fire()?;
    Ok(Sample {
        total,
        cancel,
        maps,
    })
}
