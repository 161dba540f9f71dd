//! Thread ids and the thread calls: create, join (and glibc's try/timed/clock joins), detach,
//! exit, cancel, self, equal, kill, and glibc's other calls that take a `pthread_t`
//! (translated to the system's id).
//!
//! An id is `generation << 32 | (slot + 1)`: a slot's generation grows each time it is freed
//! (join, or the end of a detached thread), so an old id never names a new thread: every call
//! on it is `ESRCH` (R18). A thread that has ended but whose id lives (not joined, not detached)
//! is still a valid target: cancel and kill return 0 and do nothing, as glibc >= 2.34.
//!
//! Threads are created with the system's `pthread_create` (`ffi::spawn_c`): the new thread
//! reaches its start routine without registering a thread-local destructor (issue 17, item 8),
//! and waits for its creator's verdict first, so that a creation undone for want of memory
//! never runs the start routine (item 9).
//!
//! The main thread and threads the C library created act on a cancellation in C code too
//! (`ffi::in_c_region`, item 1); they end in [`foreign_thread_ends`]. The end of the main
//! thread (POSIX's `pthread_exit` in `main`, or a cancellation it acted on): main runs its
//! cleanup handlers and thread-specific-data destructors, then runs nothing more (its system
//! thread sleeps, see [`end_main_thread`]); the last thread created here to end calls
//! `exit(0)`. A thread that calls `exit()` is never counted out, so nothing races its status
//! (items 2 and 3). Main can be joined: the join waits until it has ended and reports its
//! value.

use crate::{cancel, oom, SendPtr};
use std::cell::Cell;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use thread_cancel::ffi::{self, CJoinHandle};
use thread_cancel::{Canceler, Outcome};

struct Entry {
    /// `None` only while `tc_create` fills the slot (under the registry lock).
    canceler: Option<Canceler>,
    /// `None` once detached, while being joined, or for a thread not created here.
    handle: Option<CJoinHandle<SendPtr>>,
    detached: bool,
    /// The thread's closure has ended (its slot may be freed once it is also detached); for
    /// the main thread, its `tc_exit` has ended it.
    ended: bool,
    /// Not created here (an id `tc_self` gave): its slot is freed when the thread ends.
    foreign: bool,
    /// The system's id: valid while the slot lives, except for a foreign thread that has
    /// `ended` (the main thread after `tc_exit`, whose slot stays). `None` while `tc_create`
    /// fills the slot.
    native: Option<Native>,
}

/// A system thread id kept in the registry: an integer on glibc, a pointer on musl and bionic.
#[derive(Clone, Copy)]
struct Native(libc::pthread_t);

// SAFETY: a `pthread_t` is an id, only passed back to the system's pthread calls (under the
// registry lock that keeps it valid, see `with_native`); it is never dereferenced here.
unsafe impl Send for Native {}

impl Entry {
    /// The system's id of a thread that has not gone (an ended foreign thread has).
    fn live_native(&self) -> Option<libc::pthread_t> {
        self.native
            .filter(|_| !(self.foreign && self.ended))
            .map(|n| n.0)
    }
}

struct Slot {
    generation: u32,
    entry: Option<Entry>,
}

#[derive(Default)]
struct Registry {
    slots: Vec<Slot>,
    free: Vec<usize>,
}

impl Registry {
    /// A new id for `entry`; `None` if the registry cannot grow (out of memory).
    fn alloc(&mut self, entry: Entry) -> Option<u64> {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.try_reserve(1).ok()?;
                self.slots.push(Slot {
                    generation: 0,
                    entry: None,
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[index];
        slot.entry = Some(entry);
        Some((u64::from(slot.generation) << 32) | (index as u64 + 1))
    }

    fn get(&mut self, id: u64) -> Option<&mut Entry> {
        let index = (id & 0xffff_ffff).checked_sub(1)? as usize;
        let slot = self.slots.get_mut(index)?;
        if u64::from(slot.generation) != id >> 32 {
            return None;
        }
        slot.entry.as_mut()
    }

    fn release(&mut self, id: u64) {
        if self.get(id).is_some() {
            let index = (id & 0xffff_ffff) as usize - 1;
            let slot = &mut self.slots[index];
            slot.entry = None;
            // A slot whose generation would wrap is retired (never reused), so no id ever names
            // two threads: one slot lost per 2^32 threads through it.
            // (Also lost if the free list cannot grow: out of memory.)
            if let Some(next) = slot.generation.checked_add(1) {
                slot.generation = next;
                if self.free.try_reserve(1).is_ok() {
                    self.free.push(index);
                }
            }
        }
    }
}

/// `PTHREAD_CANCELED`: `(void *)-1` in glibc, musl and bionic.
const CANCELED: *mut c_void = usize::MAX as *mut c_void;

extern "C" {
    fn pthread_attr_getdetachstate(attr: *const libc::pthread_attr_t, state: *mut i32) -> i32;
    fn pthread_getattr_np(thread: libc::pthread_t, attr: *mut libc::pthread_attr_t) -> i32;
    fn pthread_setname_np(thread: libc::pthread_t, name: *const c_char) -> i32;
    fn pthread_getname_np(thread: libc::pthread_t, buf: *mut c_char, len: usize) -> i32;
    fn pthread_setschedparam(thread: libc::pthread_t, policy: i32, param: *const c_void) -> i32;
    fn pthread_getschedparam(thread: libc::pthread_t, policy: *mut i32, param: *mut c_void) -> i32;
    fn pthread_setschedprio(thread: libc::pthread_t, prio: i32) -> i32;
    #[cfg(not(target_os = "android"))] // bionic has neither
    fn pthread_setaffinity_np(thread: libc::pthread_t, size: usize, set: *const c_void) -> i32;
    #[cfg(not(target_os = "android"))]
    fn pthread_getaffinity_np(thread: libc::pthread_t, size: usize, set: *mut c_void) -> i32;
    fn pthread_getcpuclockid(thread: libc::pthread_t, clock: *mut libc::clockid_t) -> i32;
    #[cfg(not(target_env = "musl"))] // musl has none
    fn pthread_sigqueue(thread: libc::pthread_t, sig: i32, value: libc::sigval) -> i32;
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    slots: Vec::new(),
    free: Vec::new(),
});

/// How many threads created by `tc_create` have not ended, and whether the main thread has
/// ended (`tc_exit` in `main`): the last of them to end then calls `exit(0)`.
struct Process {
    live: usize,
    main_ended: bool,
}

static PROCESS: Mutex<Process> = Mutex::new(Process {
    live: 0,
    main_ended: false,
});

thread_local! {
    static MY_ID: Cell<u64> = const { Cell::new(0) };
}

fn registry() -> MutexGuard<'static, Registry> {
    AT_FORK.call_once(register_at_fork);
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

fn process() -> MutexGuard<'static, Process> {
    AT_FORK.call_once(register_at_fork);
    PROCESS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The registry and process locks across `fork`: the forking thread takes both (in the order
/// every other path takes them) before the fork and releases them in the parent and in the
/// child, so a child never inherits a lock some other thread of the parent held (its first
/// registry use, at the latest its thread's end, would wait forever).
static AT_FORK: std::sync::Once = std::sync::Once::new();

type HeldAtFork = (MutexGuard<'static, Registry>, MutexGuard<'static, Process>);

thread_local! {
    static HELD_AT_FORK: std::cell::RefCell<Option<HeldAtFork>> =
        const { std::cell::RefCell::new(None) };
}

fn register_at_fork() {
    extern "C" fn prepare() {
        let held = (
            REGISTRY.lock().unwrap_or_else(PoisonError::into_inner),
            PROCESS.lock().unwrap_or_else(PoisonError::into_inner),
        );
        let _ = HELD_AT_FORK.try_with(|h| *h.borrow_mut() = Some(held));
    }
    extern "C" fn release() {
        let _ = HELD_AT_FORK.try_with(|h| drop(h.borrow_mut().take()));
    }
    // SAFETY: the handlers only take and release this module's locks, in the forking thread
    // (the child's only thread). If registration fails (ENOMEM) forks go unguarded, as before.
    unsafe { libc::pthread_atfork(Some(prepare), Some(release), Some(release)) };
}

/// Runs when a created thread's closure ends (returned or unwinding): frees a detached
/// thread's slot.
struct Ending(u64);

impl Drop for Ending {
    fn drop(&mut self) {
        let mut reg = registry();
        match reg.get(self.0) {
            Some(e) if e.detached => reg.release(self.0),
            Some(e) => e.ended = true, // `tc_detach` or `tc_join` frees it
            None => {}
        }
    }
}

/// The end of every thread `tc_create` started (`ffi::spawn_c`'s `at_end`, after its root has
/// run the thread-specific-data destructors): counts it out; the last one out after main has
/// ended calls `exit(0)`. A thread that calls `exit()` never gets here (nor does one whose
/// creation failed before its thread started: its creator counts it out), so nothing races
/// that exit's status with `exit(0)`.
fn count_out() {
    let mut p = process();
    p.live -= 1;
    if p.live == 0 && p.main_ended {
        drop(p);
        // SAFETY: ends the process, as glibc's last thread does.
        unsafe { libc::exit(0) }
    }
}

/// The id `tc_self` gave the main thread (0: none yet): the one thread not created here that can
/// be joined (POSIX allows it; glibc's join waits until main has ended).
static MAIN_ID: AtomicU64 = AtomicU64::new(0);
/// The main thread's exit value once it has ended (`PTHREAD_CANCELED` if it was canceled).
static MAIN_VALUE: Mutex<Option<SendPtr>> = Mutex::new(None);
/// A thread is joining the main thread (set under the registry lock).
static MAIN_JOINING: AtomicBool = AtomicBool::new(false);

fn is_main_thread() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::getpid() == libc::gettid() }
}

/// How a thread not created here ends once it has acted on a cancellation or `tc_exit` in C
/// code (its C and C++ frames unwound to the end of its stack, its cleanup handlers run), with
/// the exit value, or `PTHREAD_CANCELED`:
///
/// - the main thread: [`end_main_thread`];
/// - a thread the C library created (a `SIGEV_THREAD` timer's, say): the system's
///   `pthread_exit`, which unwinds what is left of its stack (frames already unwound, with
///   nothing left to run, and this library's plain frames) to the C library's thread start;
///   the thread's thread-local destructors then run its thread-specific-data destructors.
pub(crate) fn foreign_thread_ends() -> ! {
    let value = ffi::take_exit_value::<SendPtr>().map_or(CANCELED, |v| v.0);
    if is_main_thread() {
        end_main_thread(value)
    }
    // SAFETY: a thread the C library created, whose stack above is C frames (unwound) and this
    // library's frames, which hold nothing to drop here (the forced unwind passes them).
    unsafe { libc::pthread_exit(value) }
}

/// Runs `f`, a Rust cancellation point, as a C point: in a thread that acts in C code (created
/// here, or a foreign C thread: `ffi::in_c_region`) a cancellation is caught (Rust frames only)
/// and acted on the C way; elsewhere `f` runs with cancellation disabled (such threads never
/// act in C code).
pub(crate) fn rust_point<R>(f: impl FnOnce() -> R) -> R {
    if ffi::in_c_region() {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => r,
            Err(payload) => {
                drop(payload);
                cancel::act()
            }
        }
    } else {
        let was = ffi::set_disabled(true);
        let r = f();
        ffi::set_disabled(was);
        r
    }
}

/// Like [`rust_point`], but reports a cancellation (`None`) instead of acting, so that the
/// caller can first undo what must be undone.
fn rust_point_reporting<R>(f: impl FnOnce() -> R) -> Option<R> {
    if ffi::in_c_region() {
        catch_unwind(AssertUnwindSafe(f)).ok()
    } else {
        Some(rust_point(f))
    }
}

/// What a new thread may take from the system's `malloc`, where a failure aborts, before its
/// start routine has a chance to see an error (glibc's thread-local storage of libraries
/// loaded with `dlopen`, allocated on first use), with room to spare.
const CHILD_HEAP: usize = 16 * 1024;

/// The verdict a new thread waits for before it runs anything of the caller's.
const UNDECIDED: u8 = 0;
const GO: u8 = 1;
const ABANDON: u8 = 2;

/// `pthread_create`: honours the detach state and stack size of `attr` (the system's default
/// stack size otherwise, as glibc). `EAGAIN` if the thread cannot be created, memory included:
/// the thread is created with `pthread_create` itself (`ffi::spawn_c`), an allocation that
/// fails on the way (the registry, the control block) is served from the allocator's reserve
/// (`oom.rs`) and undone, and a thread already started by then returns without running `start`.
/// The new thread registers no thread-local destructor before `start` (a library destructor
/// run by `dlclose`, which holds the loader's lock, may create and join threads).
///
/// # Safety
/// `thread` must be valid for a write; `attr` null or an initialised attribute object;
/// `start(arg)` a C function (it must not unwind).
#[no_mangle]
pub unsafe extern "C" fn tc_create(
    thread: *mut u64,
    attr: *const libc::pthread_attr_t,
    start: Option<unsafe extern "C" fn(*mut c_void) -> *mut c_void>,
    arg: *mut c_void,
) -> i32 {
    let Some(start) = start else {
        return libc::EINVAL;
    };
    let (mut detached, mut stack) = (false, 0usize);
    if !attr.is_null() {
        let mut ds = 0;
        // SAFETY: `attr` is an initialised attribute object (the caller's contract).
        if unsafe { pthread_attr_getdetachstate(attr, &mut ds) } != 0 {
            return libc::EINVAL;
        }
        detached = ds == libc::PTHREAD_CREATE_DETACHED;
        // SAFETY: as above.
        if unsafe { libc::pthread_attr_getstacksize(attr, &mut stack) } != 0 {
            return libc::EINVAL;
        }
    }
    // The new thread's own set-up allocates with the system's `malloc` and aborts if it fails.
    if !oom::system_has(CHILD_HEAP) {
        return libc::EAGAIN;
    }
    let arg = SendPtr(arg);
    let memory = oom::Watch::new();
    // The registry lock is held until the slot is filled (canceler, system id, handle) and the
    // verdict given: a detached thread that ends at once frees its slot only after that.
    let mut reg = registry();
    let Some(id) = reg.alloc(Entry {
        canceler: None,
        handle: None,
        detached,
        ended: false,
        foreign: false,
        native: None,
    }) else {
        return libc::EAGAIN;
    };
    process().live += 1;
    let verdict = Arc::new(AtomicU8::new(UNDECIDED));
    let theirs = verdict.clone();
    // The new thread starts with every signal blocked (as glibc's): a handler that runs before
    // its id is set would see no id and make it a foreign thread's (`pthread_self` in a signal
    // sent right after `pthread_create`). It takes the creator's mask once its id is set.
    let mask = SigMask::block_all();
    let inherited = mask.old;
    let spawned = ffi::spawn_c(
        stack,
        move || {
            // A `const` thread-local without a destructor.
            MY_ID.set(id);
            // The creator gives its verdict holding the registry lock: once we have held it,
            // the verdict is there.
            let go = loop {
                match theirs.load(Ordering::Acquire) {
                    UNDECIDED => drop(registry()),
                    v => break v == GO,
                }
            };
            drop(theirs);
            if !go {
                MY_ID.set(0);
                return SendPtr(std::ptr::null_mut());
            }
            let _ending = Ending(id);
            SigMask::set(&inherited);
            let arg = arg;
            // SAFETY: `start` is the C start routine; the frames it creates are C frames, which
            // a cancellation may unwind or abandon.
            SendPtr(unsafe { ffi::c_region(start, arg.0, cancel::async_act) })
        },
        count_out,
    );
    drop(mask);
    match spawned {
        Ok(h) if !memory.ran_out() => {
            let e = reg.get(id).expect("the new slot");
            e.canceler = Some(h.canceler());
            e.native = Some(Native(h.as_pthread_t()));
            if !detached {
                e.handle = Some(h);
            }
            verdict.store(GO, Ordering::Release);
            drop(reg);
            // SAFETY: the caller passes a writable id.
            unsafe { *thread = id };
            0
        }
        spawned => {
            // Out of memory, or no thread: the thread (if any) ends without running `start`,
            // and counts itself out (`count_out`); without a thread, it is counted out here.
            verdict.store(ABANDON, Ordering::Release);
            reg.release(id);
            drop(reg);
            let e = match spawned {
                Ok(_) => libc::EAGAIN,
                Err(e) => {
                    process().live -= 1;
                    if e == libc::EINVAL {
                        libc::EINVAL // an attribute the system refuses
                    } else {
                        libc::EAGAIN
                    }
                }
            };
            drop(spawned);
            e
        }
    }
}

/// How a join waits.
#[derive(Clone, Copy)]
enum Wait {
    /// Until the thread ends (`pthread_join`).
    Forever,
    /// Not at all: `EBUSY` if the thread has not ended (`pthread_tryjoin_np`).
    Try,
    /// Until the thread ends or the time is reached (`ETIMEDOUT`); `Err` is the error for a
    /// bad time, reported if the call has to wait.
    Until(Result<Option<Instant>, i32>),
}

/// The instant `abstime` (on `clock`) stands for: `Ok(None)` for a null time (no limit), a
/// time already past for a negative `tv_sec` (glibc: `ETIMEDOUT`), `Err(EINVAL)` for a
/// `tv_nsec` out of range.
///
/// # Safety
/// `abstime` must be null or valid for a read.
unsafe fn deadline(
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> Result<Option<Instant>, i32> {
    if abstime.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null, readable (the caller's contract).
    let t = unsafe { *abstime };
    if t.tv_sec < 0 {
        return Ok(Some(Instant::now()));
    }
    if !(0..1_000_000_000).contains(&t.tv_nsec) {
        return Err(libc::EINVAL);
    }
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock (checked by the callers) and a writable timespec.
    unsafe { libc::clock_gettime(clock, &mut now) };
    let at = |t: libc::timespec| Duration::new(t.tv_sec.max(0) as u64, t.tv_nsec as u32);
    let left = at(t).saturating_sub(at(now));
    Ok(Instant::now().checked_add(left))
}

/// Waits until the thread of `target` has finished, or until `deadline`: `Some(finished)`, or
/// `None` if the caller, canceled while it waited, must act. A caller that no one can cancel
/// (it has no control block) waits without being adopted, which would register a thread-local
/// destructor (a library destructor run by `dlclose` may join: that library is gone by the
/// time the destructor would run).
fn wait_for(target: &Canceler, deadline: Option<Instant>) -> Option<bool> {
    if ffi::has_control() {
        rust_point_reporting(|| ffi::wait_finished(target, deadline))
    } else {
        Some(ffi::wait_finished_uncancelable(target, deadline))
    }
}

/// `pthread_join` and glibc's variants: the result, or `None` if the caller, canceled while it
/// waited, must act (the target stays joinable). `ESRCH` for an id that is not a live thread
/// of ours, `EINVAL` if it is detached or already being joined, or a thread not created here
/// other than the main thread; `EDEADLK` for the caller itself (`EBUSY` for `Try`, as glibc:
/// the caller has not ended). The main thread's join waits until main has ended (its cleanup
/// handlers and thread-specific-data destructors run) and reports what it gave `tc_exit`, or
/// `PTHREAD_CANCELED`.
///
/// # Safety
/// `retval` must be null or valid for a write.
unsafe fn join(thread: u64, retval: *mut *mut c_void, wait: Wait) -> Option<i32> {
    let trying = matches!(wait, Wait::Try);
    if thread == MY_ID.get() && thread != 0 {
        return Some(if trying { libc::EBUSY } else { libc::EDEADLK });
    }
    let main = thread != 0 && thread == MAIN_ID.load(Ordering::Relaxed);
    // The target, and its handle (`None` for the main thread, marked as being joined instead).
    let (target, h) = {
        let mut reg = registry();
        let Some(e) = reg.get(thread) else {
            return Some(libc::ESRCH);
        };
        let Some(target) = e.canceler.clone() else {
            return Some(libc::ESRCH); // not reached: filled under the registry lock
        };
        // glibc looks at "ended" before "detached".
        if trying && !target.is_finished() {
            return Some(libc::EBUSY);
        }
        if e.detached {
            return Some(libc::EINVAL);
        }
        let h = if main {
            if MAIN_JOINING.swap(true, Ordering::Relaxed) {
                return Some(libc::EINVAL); // already being joined
            }
            None
        } else {
            match e.handle.take() {
                Some(h) => Some(h),
                None => return Some(libc::EINVAL),
            }
        };
        (target, h)
    };
    let waited = match wait {
        Wait::Try => Some(Ok(())),
        Wait::Forever | Wait::Until(Ok(None)) => wait_for(&target, None).map(|_| Ok(())),
        Wait::Until(Err(e)) if !target.is_finished() => Some(Err(e)),
        Wait::Until(Err(_)) => Some(Ok(())),
        Wait::Until(Ok(Some(t))) => wait_for(&target, Some(t)).map(|finished| {
            if finished {
                Ok(())
            } else {
                Err(libc::ETIMEDOUT)
            }
        }),
    };
    drop(target);
    if !matches!(waited, Some(Ok(()))) {
        // Canceled while waiting, timed out or a bad time: the target stays joinable (and
        // nothing of this frame is left where the caller acts: the handle goes back).
        if main {
            MAIN_JOINING.store(false, Ordering::Relaxed);
        } else {
            match registry().get(thread) {
                Some(e) => e.handle = h,
                None => drop(h),
            }
        }
        return waited.map(|w| w.err().unwrap_or(0));
    }
    // The thread has finished: its id dies now, before the system thread is joined (after
    // which its system id could be reused), so `tc_kill` never reaches a joined thread.
    registry().release(thread);
    let value = match h {
        // Not a cancellation point: the thread has finished.
        Some(h) => match h.join() {
            Outcome::Returned(SendPtr(p)) | Outcome::Exited(SendPtr(p)) => p,
            Outcome::Canceled | Outcome::Panicked(_) => CANCELED,
        },
        // Stored by `end_main_thread` before main finished.
        None => MAIN_VALUE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .map_or(CANCELED, |v| v.0),
    };
    if !retval.is_null() {
        // SAFETY: the caller passes null or a writable pointer.
        unsafe { *retval = value };
    }
    Some(0)
}

/// `pthread_join`: a cancellation point for the caller; if the caller is canceled while it
/// waits, the target stays joinable. `ESRCH` for an id that is not a live thread of ours,
/// `EINVAL` if it is detached or already being joined, `EDEADLK` for the caller itself.
///
/// # Safety
/// `retval` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_join(thread: u64, retval: *mut *mut c_void) -> i32 {
    // Acts from this frame, which holds nothing to drop.
    // SAFETY: forwarded from the caller.
    match unsafe { join(thread, retval, Wait::Forever) } {
        Some(r) => r,
        None => cancel::act(),
    }
}

/// `pthread_tryjoin_np`: joins a thread that has ended, `EBUSY` if it has not (the caller
/// itself included); not a cancellation point. Otherwise as `tc_join`.
///
/// # Safety
/// `retval` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_tryjoin_np(thread: u64, retval: *mut *mut c_void) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { join(thread, retval, Wait::Try) }.unwrap_or(libc::EBUSY)
}

/// `pthread_timedjoin_np`: `tc_join` until `abstime` on `CLOCK_REALTIME` (null: no limit),
/// then `ETIMEDOUT`, the thread staying joinable; a cancellation point. A time with a negative
/// `tv_sec` has passed; a `tv_nsec` outside `[0, 1e9)` is `EINVAL` (if the call has to wait).
///
/// # Safety
/// `retval` must be null or valid for a write; `abstime` null or valid for a read.
#[no_mangle]
pub unsafe extern "C" fn tc_timedjoin_np(
    thread: u64,
    retval: *mut *mut c_void,
    abstime: *const libc::timespec,
) -> i32 {
    // SAFETY: forwarded from the caller.
    let until = Wait::Until(unsafe { deadline(libc::CLOCK_REALTIME, abstime) });
    // SAFETY: forwarded from the caller.
    match unsafe { join(thread, retval, until) } {
        Some(r) => r,
        None => cancel::act(),
    }
}

/// `pthread_clockjoin_np`: `tc_timedjoin_np` on `clock`, which must be `CLOCK_REALTIME` or
/// `CLOCK_MONOTONIC` (`EINVAL` otherwise, as glibc).
///
/// # Safety
/// As `tc_timedjoin_np`.
#[no_mangle]
pub unsafe extern "C" fn tc_clockjoin_np(
    thread: u64,
    retval: *mut *mut c_void,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
) -> i32 {
    if clock != libc::CLOCK_REALTIME && clock != libc::CLOCK_MONOTONIC {
        return libc::EINVAL;
    }
    // SAFETY: forwarded from the caller.
    let until = Wait::Until(unsafe { deadline(clock, abstime) });
    // SAFETY: forwarded from the caller.
    match unsafe { join(thread, retval, until) } {
        Some(r) => r,
        None => cancel::act(),
    }
}

/// `pthread_detach`: `ESRCH` for an id that is not a live thread of ours, `EINVAL` if it is
/// already detached.
#[no_mangle]
pub extern "C" fn tc_detach(thread: u64) -> i32 {
    let mut reg = registry();
    let Some(e) = reg.get(thread) else {
        return libc::ESRCH;
    };
    if e.detached {
        return libc::EINVAL;
    }
    e.detached = true;
    e.handle = None; // detaches the system thread
    if e.ended {
        reg.release(thread);
    }
    0
}

/// `pthread_cancel`: queues a request (R01, R08); `ESRCH` for an id whose lifetime has ended
/// (never existed, joined, or detached and ended: R18). A thread that has ended but is not yet
/// joined still has its id: 0, and nothing happens (POSIX; glibc >= 2.34).
///
/// Async-cancel-safe (POSIX): the caller's own cancellation is held while this takes locks, and
/// acted on afterwards, the C way, if the caller is asynchronous and canceled itself.
#[no_mangle]
pub extern "C" fn tc_cancel(thread: u64) -> i32 {
    let was = ffi::set_disabled(true);
    // In a block: nothing of it is left to drop where this frame acts.
    let r = {
        let target = registry().get(thread).map(|e| e.canceler.clone());
        match target {
            Some(canceler) => {
                // A thread that has finished reports `NoSuchThread`: its id still lives.
                let _ = canceler.map(|c| c.cancel());
                0
            }
            None => libc::ESRCH,
        }
    };
    ffi::set_disabled(was);
    if !was && ffi::is_async() {
        cancel::point();
    }
    r
}

/// The calling thread's signal mask, set to block every signal while this lives.
struct SigMask {
    old: libc::sigset_t,
}

impl SigMask {
    fn block_all() -> SigMask {
        // SAFETY: plain data, initialised by `sigfillset`/`pthread_sigmask` before use.
        let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: both sets are valid for the calls; `pthread_sigmask` cannot fail with a
        // valid `how`.
        unsafe {
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        }
        SigMask { old }
    }

    /// Sets the calling thread's mask to `mask`.
    fn set(mask: &libc::sigset_t) {
        // SAFETY: `mask` is a valid set; the old mask is not asked for.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, mask, std::ptr::null_mut()) };
    }
}

impl Drop for SigMask {
    fn drop(&mut self) {
        SigMask::set(&self.old);
    }
}

/// Frees the id of a thread not created here (given by `tc_self`) when the thread ends: its
/// thread-local destructor. `MY_ID` (no destructor) keeps the id, so a `tc_self` in a later
/// thread-local destructor (a key destructor, say) returns the same id, by then stale (`ESRCH`)
/// rather than a new slot that nothing would free.
struct ForeignId;

impl Drop for ForeignId {
    fn drop(&mut self) {
        registry().release(MY_ID.get());
    }
}

thread_local! {
    static FOREIGN_ID: ForeignId = const { ForeignId };
}

/// `pthread_self`: the calling thread's id. A thread not created here gets one on first use,
/// freed when the thread ends (its thread-local destructors), after which the id is stale.
#[no_mangle]
pub extern "C" fn tc_self() -> u64 {
    let id = MY_ID.get();
    if id != 0 {
        return id;
    }
    let mut reg = registry();
    let Some(id) = reg.alloc(Entry {
        canceler: Some(thread_cancel::current()),
        handle: None,
        detached: false,
        ended: false,
        foreign: true,
        // SAFETY: no preconditions; the slot is freed before the thread ends.
        native: Some(Native(unsafe { libc::pthread_self() })),
    }) else {
        eprintln!("thread-cancel: out of memory for pthread_self's id; aborting");
        std::process::abort()
    };
    MY_ID.set(id);
    if is_main_thread() {
        MAIN_ID.store(id, Ordering::Relaxed);
    }
    // Registers the destructor that frees the slot. If the thread is so far into its teardown
    // that it can no longer register one, the id is freed at once (stale from the start).
    drop(reg);
    if FOREIGN_ID.try_with(|_| ()).is_err() {
        registry().release(id);
    }
    id
}

/// `pthread_equal`.
#[no_mangle]
pub extern "C" fn tc_equal(a: u64, b: u64) -> i32 {
    i32::from(a == b)
}

/// Runs `f` with the system's id of `thread` if its id lives and the thread has not gone;
/// `ESRCH` if the id's lifetime has ended, `gone` for the main thread after its `tc_exit`.
/// `f` runs under the registry lock, which keeps the system's id valid (a slot is freed before
/// its system thread is joined, and a detached or foreign thread frees it before it ends);
/// except for the calling thread itself, which is alive, and runs `f` without the lock (a
/// signal it sends itself is handled before the call returns, and its handler may call here).
fn with_native(thread: u64, gone: i32, f: impl FnOnce(libc::pthread_t) -> i32) -> i32 {
    if thread == MY_ID.get() && thread != 0 {
        if registry().get(thread).is_none() {
            return libc::ESRCH;
        }
        // SAFETY: no preconditions.
        return f(unsafe { libc::pthread_self() });
    }
    let mut reg = registry();
    match reg.get(thread).map(|e| e.live_native()) {
        Some(Some(native)) => f(native),
        Some(None) => gone,
        None => libc::ESRCH,
    }
}

/// `pthread_kill`: `ESRCH` if the id's lifetime has ended; 0 and no signal for a thread that
/// has ended but whose id lives (glibc >= 2.34).
#[no_mangle]
pub extern "C" fn tc_kill(thread: u64, sig: i32) -> i32 {
    // SAFETY: a live system id (`with_native`).
    with_native(thread, 0, |t| unsafe { libc::pthread_kill(t, sig) })
}

/// The system's `pthread_t` of a live thread of ours, or 0 (a null pointer where `pthread_t`
/// is a pointer).
#[no_mangle]
pub extern "C" fn tc_native(thread: u64) -> libc::pthread_t {
    registry()
        .get(thread)
        .and_then(|e| e.live_native())
        // SAFETY: `pthread_t` is an integer or a pointer, for both of which all-zero is valid.
        .unwrap_or_else(|| unsafe { std::mem::zeroed() })
}

/// `pthread_getattr_np` on one of our ids (`ESRCH` for an id that is not a live thread).
///
/// # Safety
/// As glibc's: `attr` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_getattr_np(thread: u64, attr: *mut libc::pthread_attr_t) -> i32 {
    // SAFETY: a live system id; the rest is the caller's contract.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getattr_np(t, attr)
    })
}

/// `pthread_setname_np` on one of our ids.
///
/// # Safety
/// As glibc's: `name` must be a C string.
#[no_mangle]
pub unsafe extern "C" fn tc_setname_np(thread: u64, name: *const c_char) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_setname_np(t, name)
    })
}

/// `pthread_getname_np` on one of our ids.
///
/// # Safety
/// As glibc's: `buf` must be valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tc_getname_np(thread: u64, buf: *mut c_char, len: usize) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getname_np(t, buf, len)
    })
}

/// `pthread_setschedparam` on one of our ids.
///
/// # Safety
/// As glibc's: `param` must point to a `struct sched_param`.
#[no_mangle]
pub unsafe extern "C" fn tc_setschedparam(thread: u64, policy: i32, param: *const c_void) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_setschedparam(t, policy, param)
    })
}

/// `pthread_getschedparam` on one of our ids.
///
/// # Safety
/// As glibc's: `policy` and `param` must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tc_getschedparam(
    thread: u64,
    policy: *mut i32,
    param: *mut c_void,
) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getschedparam(t, policy, param)
    })
}

/// `pthread_setschedprio` on one of our ids.
#[no_mangle]
pub extern "C" fn tc_setschedprio(thread: u64, prio: i32) -> i32 {
    // SAFETY: a live system id.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_setschedprio(t, prio)
    })
}

/// `pthread_setaffinity_np` on one of our ids.
///
/// # Safety
/// As glibc's: `set` must be valid for `size` bytes.
#[cfg(not(target_os = "android"))]
#[no_mangle]
pub unsafe extern "C" fn tc_setaffinity_np(thread: u64, size: usize, set: *const c_void) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_setaffinity_np(t, size, set)
    })
}

/// `pthread_getaffinity_np` on one of our ids.
///
/// # Safety
/// As glibc's: `set` must be valid for `size` bytes.
#[cfg(not(target_os = "android"))]
#[no_mangle]
pub unsafe extern "C" fn tc_getaffinity_np(thread: u64, size: usize, set: *mut c_void) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getaffinity_np(t, size, set)
    })
}

/// `pthread_getcpuclockid` on one of our ids.
///
/// # Safety
/// As glibc's: `clock` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_getcpuclockid(thread: u64, clock: *mut libc::clockid_t) -> i32 {
    // SAFETY: as in `tc_getattr_np`.
    with_native(thread, libc::ESRCH, |t| unsafe {
        pthread_getcpuclockid(t, clock)
    })
}

/// `pthread_sigqueue` on one of our ids: `ESRCH` if the id's lifetime has ended; 0 and no
/// signal for the main thread after its `tc_exit` (as `tc_kill`).
#[cfg(not(target_env = "musl"))]
#[no_mangle]
pub extern "C" fn tc_pthread_sigqueue(thread: u64, sig: i32, value: libc::sigval) -> i32 {
    // SAFETY: a live system id.
    with_native(thread, 0, |t| unsafe { pthread_sigqueue(t, sig, value) })
}

/// `pthread_exit`: cleanup handlers (last pushed first), thread-specific-data destructors,
/// then the thread ends; `tc_join` reports `value` (R21). In a thread not created here whose
/// stack is C (the main thread of a C program, a thread the C library created) the same, its
/// C and C++ frames unwound, ended by [`foreign_thread_ends`]. In the main thread of a Rust
/// program, the cleanup handlers run, then [`end_main_thread`]. In any other thread it aborts
/// (such a thread cannot be ended without unwinding Rust frames).
#[no_mangle]
pub extern "C" fn tc_exit(value: *mut c_void) -> ! {
    if ffi::in_c_region() {
        ffi::begin_exit(SendPtr(value));
        cancel::finish_in_region();
    }
    if is_main_thread() {
        cancel::run_cleanup_handlers();
        end_main_thread(value)
    }
    eprintln!("thread-cancel: tc_exit in a thread not created by tc_create; aborting");
    std::process::abort()
}

/// Ends the main thread, its cleanup handlers run, as glibc's `pthread_exit` in `main` (also
/// for a cancellation main acted on, `value` then `PTHREAD_CANCELED`): its joiner will get
/// `value`; its thread-specific-data destructors run (R07: before anything waits, so a
/// destructor may release what another thread waits for), and it is marked finished (its
/// joiner wakes); then main runs nothing more, and the process lives on until the last thread
/// created here ends, which calls `exit(0)` (at once if none is left). Main never calls
/// `exit(0)` after waiting, which could race a thread's own `exit()`. Its id stays valid until
/// joined (a thread that has ended): cancel and kill return 0.
pub(crate) fn end_main_thread(value: *mut c_void) -> ! {
    *MAIN_VALUE.lock().unwrap_or_else(PoisonError::into_inner) = Some(SendPtr(value));
    ffi::end_adopted_thread();
    if let Some(e) = registry().get(MY_ID.get()) {
        e.ended = true;
    }
    let mut p = process();
    p.main_ended = true;
    if p.live == 0 {
        drop(p);
        // SAFETY: ends the process: no thread created here is left.
        unsafe { libc::exit(0) }
    }
    drop(p);
    // Main's system thread stays, asleep with every signal blocked (a signal sent to the
    // process goes to a thread that runs), until the process ends: glibc ends it instead
    // (`__exit_thread`), but a thread that has gone can no longer be examined by
    // LeakSanitizer, whose check at the process's exit (in every program built with
    // `-fsanitize=address`) would report what main's thread-local storage refers to (the
    // library's thread-local destructors, registered with the C library) as leaked. No lock is
    // held here.
    // SAFETY: a signal set of our own, filled before use; `pause` has no preconditions.
    unsafe {
        let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_SETMASK, all.as_ptr(), std::ptr::null_mut());
        loop {
            libc::pause();
        }
    }
}
