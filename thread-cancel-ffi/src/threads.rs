//! Thread ids and the thread calls: create, join, detach, exit, cancel, self, equal, kill.
//!
//! An id is `generation << 32 | (slot + 1)`: a slot's generation grows each time it is freed
//! (join, or the end of a detached thread), so an old id never names a new thread: every call
//! on it is `ESRCH` (R18).

use crate::cancel;
use crate::SendPtr;
use std::cell::Cell;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use thread_cancel::ffi::CJoinHandle;
use thread_cancel::{ffi, Canceler, Outcome};

struct Entry {
    /// `None` only while `tc_create` fills the slot (under the registry lock).
    canceler: Option<Canceler>,
    /// `None` once detached, while being joined, or for a thread not created here.
    handle: Option<CJoinHandle<SendPtr>>,
    detached: bool,
    /// The thread's closure has ended (its slot may be freed once it is also detached).
    ended: bool,
    /// The system's id (0 for a thread not created here: those are signalled through their
    /// control block).
    native: libc::pthread_t,
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
    fn alloc(&mut self, entry: Entry) -> u64 {
        let index = self.free.pop().unwrap_or_else(|| {
            self.slots.push(Slot {
                generation: 0,
                entry: None,
            });
            self.slots.len() - 1
        });
        let slot = &mut self.slots[index];
        slot.entry = Some(entry);
        (u64::from(slot.generation) << 32) | (index as u64 + 1)
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
            if let Some(next) = slot.generation.checked_add(1) {
                slot.generation = next;
                self.free.push(index);
            }
        }
    }
}

/// `PTHREAD_CANCELED`: `(void *)-1` in glibc, musl and bionic.
const CANCELED: *mut c_void = usize::MAX as *mut c_void;

extern "C" {
    fn pthread_attr_getdetachstate(attr: *const libc::pthread_attr_t, state: *mut i32) -> i32;
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    slots: Vec::new(),
    free: Vec::new(),
});

/// Threads created by `tc_create` that have not ended (the main thread's `tc_exit` waits).
static LIVE: Mutex<usize> = Mutex::new(0);
static LIVE_CHANGED: Condvar = Condvar::new();

thread_local! {
    static MY_ID: Cell<u64> = const { Cell::new(0) };
}

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

fn live() -> MutexGuard<'static, usize> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs when a created thread's closure ends (returned or unwinding): frees a detached
/// thread's slot and counts the thread out.
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

/// Counts a created thread out at its very end: after its root has run the thread-specific-data
/// destructors (the main thread's `tc_exit` waits for that).
fn count_out() {
    *live() -= 1;
    LIVE_CHANGED.notify_all();
}

/// The id `tc_self` gave the main thread (0: none yet): the one thread not created here that can
/// be joined (POSIX allows it; glibc's join waits until main has ended).
static MAIN_ID: AtomicU64 = AtomicU64::new(0);
/// The main thread's exit value once it has ended (`PTHREAD_CANCELED` if it was canceled).
static MAIN_VALUE: Mutex<Option<SendPtr>> = Mutex::new(None);
/// A thread is joining the main thread.
static MAIN_JOINING: AtomicBool = AtomicBool::new(false);

fn is_main_thread() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::getpid() == libc::gettid() }
}

/// How a thread not created here ends once it has acted on a cancellation or `tc_exit` in C
/// code (its C and C++ frames unwound to the end of its stack, its cleanup handlers run), with
/// the exit value, or `PTHREAD_CANCELED`:
///
/// - the main thread: its thread-specific-data destructors run, its joiner gets the value, and
///   then as `pthread_exit` in `main`: the process lives on until the last thread ends;
/// - a thread the C library created (a `SIGEV_THREAD` timer's, say): the system's
///   `pthread_exit`, which unwinds what is left of its stack (frames already unwound, with
///   nothing left to run, and this library's plain frames) to the C library's thread start;
///   the thread's thread-local destructors then run its thread-specific-data destructors.
pub(crate) fn foreign_thread_ends() -> ! {
    let value = ffi::take_exit_value::<SendPtr>().map_or(CANCELED, |v| v.0);
    if is_main_thread() {
        ffi::run_tsd_destructors();
        *MAIN_VALUE.lock().unwrap_or_else(PoisonError::into_inner) = Some(SendPtr(value));
        ffi::finish_current();
        main_thread_ends()
    }
    // SAFETY: a thread the C library created, whose stack above is C frames (unwound) and this
    // library's frames, which hold nothing to drop here (the forced unwind passes them).
    unsafe { libc::pthread_exit(value) }
}

/// The end of `pthread_exit` in `main` once its handlers ran: the process exits with status 0
/// once every thread created here has ended.
fn main_thread_ends() -> ! {
    let mut n = live();
    while *n > 0 {
        n = LIVE_CHANGED.wait(n).unwrap_or_else(PoisonError::into_inner);
    }
    drop(n);
    // SAFETY: ends the process, as the last thread's end would.
    unsafe { libc::exit(0) }
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

/// `pthread_create`: honours the detach state and stack size of `attr`.
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
    let arg = SendPtr(arg);
    // The registry lock is held until the slot is filled (canceler, system id, handle): a
    // detached thread that ends at once frees its slot only after that.
    let mut reg = registry();
    let id = reg.alloc(Entry {
        canceler: None,
        handle: None,
        detached,
        ended: false,
        native: 0,
    });
    *live() += 1;
    // The system's thread, not `std`'s: it reaches the start routine without registering a
    // thread-local destructor (which would wait for the dynamic loader's lock, held by the
    // creator if it runs a library destructor from `dlclose`).
    let spawned = ffi::spawn_c(
        stack,
        move || {
            let _ending = Ending(id);
            MY_ID.set(id);
            let arg = arg;
            // SAFETY: `start` is the C start routine; the frames it creates are C frames, which a
            // cancellation may abandon.
            SendPtr(unsafe { ffi::c_region(start, arg.0, cancel::async_act) })
        },
        count_out,
    );
    match spawned {
        Ok(h) => {
            let e = reg.get(id).expect("the new slot");
            e.canceler = Some(h.canceler());
            e.native = h.as_pthread_t();
            if !detached {
                e.handle = Some(h);
            }
            drop(reg);
            // SAFETY: the caller passes a writable id.
            unsafe { *thread = id };
            0
        }
        Err(_) => {
            reg.release(id);
            *live() -= 1;
            libc::EAGAIN
        }
    }
}

/// `pthread_join`: a cancellation point for the caller; if the caller is canceled while it
/// waits, the target stays joinable. `ESRCH` for an id that is not a live thread of ours,
/// `EINVAL` if it is detached or already being joined, `EDEADLK` for the caller itself.
///
/// # Safety
/// `retval` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn tc_join(thread: u64, retval: *mut *mut c_void) -> i32 {
    // Acts from this frame, which holds nothing to drop (the forced unwind of a cancellation
    // passes it without a landing pad; `join` holds a handle).
    // SAFETY: forwarded from the caller.
    match unsafe { join(thread, retval) } {
        Some(r) => r,
        None => cancel::act(),
    }
}

/// `tc_join`, or `None` if the caller must act on its cancellation (the target stays
/// joinable).
///
/// # Safety
/// As `tc_join`.
unsafe fn join(thread: u64, retval: *mut *mut c_void) -> Option<i32> {
    if thread == MY_ID.get() && thread != 0 {
        return Some(libc::EDEADLK);
    }
    if thread != 0 && thread == MAIN_ID.load(Ordering::Relaxed) {
        // SAFETY: forwarded from the caller.
        return unsafe { join_main(thread, retval) };
    }
    let h = {
        let mut reg = registry();
        let Some(e) = reg.get(thread) else {
            return Some(libc::ESRCH);
        };
        if e.detached {
            return Some(libc::EINVAL);
        }
        match e.handle.take() {
            Some(h) => h,
            None => return Some(libc::EINVAL),
        }
    };
    let waited = if !ffi::has_control() {
        // No one can cancel a caller without a control block (no one holds a canceler for
        // it): not a point. Adopting it here would register a thread-local destructor, in the
        // caller's library (a library destructor run by `dlclose` may join: that library is
        // then gone when the destructor would run).
        h.wait_uncancelable();
        true
    } else if ffi::in_c_region() {
        catch_unwind(AssertUnwindSafe(|| h.wait())).is_ok()
    } else {
        rust_point(|| h.wait());
        true
    };
    if !waited {
        // Canceled while waiting: the target stays joinable, then act (from the caller).
        match registry().get(thread) {
            Some(e) => e.handle = Some(h),
            None => drop(h),
        }
        return None;
    }
    // The thread has finished: its id dies now, before the system thread is joined (after
    // which its system id could be reused), so `tc_kill` never reaches a joined thread.
    registry().release(thread);
    let outcome = h.join(); // not a cancellation point (the thread has finished or no one can cancel the caller)
    let value = match outcome {
        Outcome::Returned(SendPtr(p)) | Outcome::Exited(SendPtr(p)) => p,
        Outcome::Canceled | Outcome::Panicked(_) => CANCELED,
    };
    if !retval.is_null() {
        // SAFETY: the caller passes null or a writable pointer.
        unsafe { *retval = value };
    }
    Some(0)
}

/// `tc_join` of the main thread: waits (a cancellation point) until main has ended, after its
/// cleanup handlers and thread-specific-data destructors; its value is `PTHREAD_CANCELED` if it
/// was canceled, else what it gave `tc_exit`. `None` if the caller must act on its cancellation
/// (main stays joinable).
///
/// # Safety
/// As `tc_join`.
unsafe fn join_main(thread: u64, retval: *mut *mut c_void) -> Option<i32> {
    let canceler = {
        let mut reg = registry();
        let Some(e) = reg.get(thread) else {
            return Some(libc::ESRCH);
        };
        match &e.canceler {
            Some(c) if !e.detached => c.clone(),
            _ => return Some(libc::EINVAL),
        }
    };
    if MAIN_JOINING.swap(true, Ordering::SeqCst) {
        return Some(libc::EINVAL); // already being joined
    }
    let waited = if ffi::in_c_region() {
        catch_unwind(AssertUnwindSafe(|| ffi::wait_finished(&canceler))).is_ok()
    } else {
        rust_point(|| ffi::wait_finished(&canceler));
        true
    };
    drop(canceler);
    if !waited {
        MAIN_JOINING.store(false, Ordering::SeqCst);
        return None;
    }
    registry().release(thread);
    let value = MAIN_VALUE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .map_or(CANCELED, |v| v.0);
    if !retval.is_null() {
        // SAFETY: the caller passes null or a writable pointer.
        unsafe { *retval = value };
    }
    Some(0)
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

/// `pthread_cancel`: queues a request (R01, R08); `ESRCH` for an id that is not a live thread
/// of ours (R18).
///
/// Async-cancel-safe (POSIX): the caller's own cancellation is held while this takes locks, and
/// acted on afterwards, the C way, if the caller is asynchronous and canceled itself.
#[no_mangle]
pub extern "C" fn tc_cancel(thread: u64) -> i32 {
    let was = ffi::set_disabled(true);
    // In a block: nothing of it is left to drop where this frame acts (the forced unwind of a
    // cancellation passes the frame without a landing pad).
    let r = {
        let canceler = registry().get(thread).and_then(|e| e.canceler.clone());
        match canceler.map(|c| c.cancel()) {
            Some(Ok(())) => 0,
            Some(Err(_)) | None => libc::ESRCH,
        }
    };
    ffi::set_disabled(was);
    if !was && ffi::is_async() {
        cancel::point();
    }
    r
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
    let id = reg.alloc(Entry {
        canceler: Some(thread_cancel::current()),
        handle: None,
        detached: false,
        ended: false,
        native: 0,
    });
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

/// `pthread_kill` on one of our ids: `ESRCH` if it is not a live thread of ours.
#[no_mangle]
pub extern "C" fn tc_kill(thread: u64, sig: i32) -> i32 {
    let mut reg = registry();
    let canceler = match reg.get(thread) {
        // SAFETY: a thread created here is not joined while its slot lives (`tc_join` releases
        // the slot before the system join; a detached thread's slot goes when its closure
        // ends, before the thread does), and we hold the registry lock.
        Some(e) if e.native != 0 => return unsafe { libc::pthread_kill(e.native, sig) },
        Some(e) => e.canceler.clone(),
        None => None,
    };
    drop(reg);
    // Not created here: through its control block, whose system id is cleared (under a lock)
    // before the thread ends.
    canceler.map_or(libc::ESRCH, |c| c.signal(sig).unwrap_or(libc::ESRCH))
}

/// The system's `pthread_t` of a live thread of ours, or 0.
#[no_mangle]
pub extern "C" fn tc_native(thread: u64) -> libc::pthread_t {
    registry().get(thread).map_or(0, |e| e.native)
}

/// `pthread_exit`: cleanup handlers (last pushed first), thread-specific-data destructors,
/// then the thread ends; `tc_join` reports `value` (R21). In a thread not created here whose
/// stack is C (the main thread of a C program, a thread the C library created) the same, ended
/// by [`foreign_thread_ends`]: main's end leaves the process running until its last thread
/// ends (POSIX's rule for `pthread_exit` in `main`). In the main thread of a Rust program, the
/// cleanup handlers run, then the process exits with status 0 once every thread created here
/// has ended. In any other thread it aborts (such a thread cannot be ended without unwinding
/// Rust frames).
#[no_mangle]
pub extern "C" fn tc_exit(value: *mut c_void) -> ! {
    if ffi::in_c_region() {
        ffi::begin_exit(SendPtr(value));
        cancel::finish_in_region();
    }
    // SAFETY: no preconditions.
    let is_main = unsafe { libc::getpid() == libc::gettid() };
    if is_main {
        cancel::run_cleanup_handlers();
        main_thread_ends()
    }
    eprintln!("thread-cancel: tc_exit in a thread not created by tc_create; aborting");
    std::process::abort()
}
