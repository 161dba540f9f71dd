//! Support for the C ABI crate (`thread-cancel-ffi`): not a public API; no stability promise.
//!
//! A thread created from C runs its start routine inside a *C region* (the mechanism of
//! [`async_region`](crate::async_region), with an `act` function): acting on a cancellation in
//! C code never unwinds. The C side runs its cleanup handlers on the still-intact C stack, then
//! calls [`c_leave`], which resets the stack to the region's boundary (the C frames and the
//! library's frames below it hold nothing that must be dropped), and the cancellation goes on
//! from there as an ordinary Rust unwind through Rust frames only, to the thread's root, where
//! the thread-specific-data destructors run and the outcome is recorded.

use crate::current::{current_control, with_current};
use crate::point::raise;
use crate::state;
use crate::sys::{region_has_act, region_leave, region_run, RegionCtx, RegionExit};
use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

/// The `act` function of a C region: called with the region (as an opaque pointer) on the
/// interrupted C stack when an asynchronous request interrupts it; must end with [`c_leave`].
pub type ActFn = unsafe extern "C" fn(*mut c_void) -> !;

/// A C start routine.
pub type StartFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;

/// Runs `start(arg)` in a C region of the calling thread, whose `act` is `act`. Returns what
/// `start` returned; if the region is left ([`c_leave`], or `act` after the signal), the
/// thread acts on its cancellation or exit: this unwinds (Rust frames only) and does not return.
///
/// # Safety
/// `start` must be a C function that does not unwind; `act` must end with [`c_leave`]; the
/// frames that `start` creates may be abandoned.
pub unsafe fn c_region(start: StartFn, arg: *mut c_void, act: ActFn) -> *mut c_void {
    struct Call {
        start: StartFn,
        arg: *mut c_void,
        ret: *mut c_void,
    }
    unsafe extern "C" fn call_start(p: *mut c_void) {
        // SAFETY: `p` is the `Call` below, alive for the region.
        let c = unsafe { &mut *p.cast::<Call>() };
        // SAFETY: the caller of `c_region` vouches for `start`.
        c.ret = unsafe { (c.start)(c.arg) };
    }
    let c = current_control();
    // SAFETY: an `ActFn` and the region's `act` differ only in the pointer type of their
    // argument (both are thin pointers passed in the same register).
    let act =
        unsafe { std::mem::transmute::<ActFn, unsafe extern "C" fn(*mut RegionCtx) -> !>(act) };
    let ctx = RegionCtx::new(c.state.as_ptr(), Some(act));
    let mut call = Call {
        start,
        arg,
        ret: std::ptr::null_mut(),
    };
    let outer = c
        .region
        .swap(&ctx as *const RegionCtx as *mut RegionCtx, Ordering::SeqCst);
    // SAFETY: `ctx` stays on this frame for the region and is the thread's region meanwhile;
    // `call` does not unwind (C code); its frames may be abandoned (the caller's contract).
    let exit = unsafe { region_run(&ctx, call_start, (&mut call as *mut Call).cast()) };
    c.region.store(outer, Ordering::SeqCst);
    match exit {
        RegionExit::Returned => call.ret,
        RegionExit::Left => {
            // Entered asynchronous with a request pending, or left by `act`/`c_leave` (which
            // began the cancellation or exit already).
            if c.state.load() & state::TERMINATING == 0 {
                c.state.begin_cancel();
            }
            drop(c);
            raise()
        }
    }
}

/// Whether the calling thread is in a C region (created from C): only such threads act on a
/// cancellation in C code.
pub fn in_c_region() -> bool {
    with_current(|c| {
        let r = c.region.load(Ordering::Relaxed);
        // SAFETY: a non-null region of the calling thread is alive (its `run` is on the stack).
        !r.is_null() && region_has_act(unsafe { &*r })
    })
    .unwrap_or(false)
}

/// Whether the calling thread, in a C region, must act on a request now (enabled, pending,
/// not already terminating).
pub fn c_must_act() -> bool {
    with_current(|c| c.state.load() & state::CP_MASK == state::PENDING).unwrap_or(false)
        && in_c_region()
}

/// Begins acting on the pending request: from now on cancellation is disabled (R19).
pub fn begin_cancel() {
    with_current(|c| {
        if c.state.load() & state::TERMINATING == 0 {
            c.state.begin_cancel();
        }
    });
}

/// Whether the calling thread has begun to act on a cancellation or an exit.
pub fn terminating() -> bool {
    with_current(|c| c.state.load() & state::TERMINATING != 0).unwrap_or(false)
}

/// Begins `exit(value)` in the calling thread (the value is type-checked against the thread's
/// result type, as [`exit`](crate::exit)); the caller then runs its cleanup handlers and calls
/// [`c_leave`]. Returns false if the thread was already terminating (the value is dropped).
pub fn begin_exit<V: Send + 'static>(value: V) -> bool {
    let c = current_control();
    if c.state.load() & state::TERMINATING != 0 {
        return false;
    }
    if let Some(expected) = c.exit_type {
        assert!(
            expected == std::any::TypeId::of::<V>(),
            "thread-cancel: exit value of the wrong type"
        );
    }
    c.set_exit_value(Box::new(value));
    c.state.begin_exit();
    true
}

/// Leaves the calling thread's C region: its frames are abandoned and the thread goes on
/// terminating from the region's boundary. Aborts if the thread is not in a C region.
///
/// # Safety
/// No frame between the caller and the region's boundary may need its destructor to run.
pub unsafe fn c_leave() -> ! {
    let r = with_current(|c| c.region.load(Ordering::Relaxed)).unwrap_or(std::ptr::null_mut());
    // SAFETY: checked non-null: the thread's current region, whose `run` is on the stack.
    if r.is_null() || !region_has_act(unsafe { &*r }) {
        eprintln!("thread-cancel: a C thread left a region it is not in; aborting");
        std::process::abort();
    }
    // SAFETY: the region is armed (its `run` is on this stack); the caller vouches for the
    // frames in between.
    unsafe { region_leave(r) }
}

/// A system call as a C cancellation point: `Some(raw result)` (`-errno` on failure) if the
/// call ran, `None` if the thread must act on a cancellation instead (the call had no effect;
/// the cancellation has begun). Only threads in a C region act; in others this is the plain
/// call.
///
/// # Safety
/// The arguments must be valid for system call `nr`, as for `libc::syscall`.
pub unsafe fn syscall_point(nr: libc::c_long, a: [libc::c_long; 6]) -> Option<libc::c_long> {
    // A thread in a C region has a control block (borrowed: no `Arc` count per call).
    let c = match crate::current::current_ptr() {
        // SAFETY: the calling thread's control block, alive until its thread-local destructors.
        Some(c) if in_c_region() => unsafe { &*c },
        // SAFETY: forwarded from the caller.
        _ => return Some(unsafe { crate::io::plain(nr, a) }),
    };
    // As in `io::cp_on`: a call nested in a signal handler leaves the flag as it found it.
    let outer = c.in_syscall.load(Ordering::Relaxed);
    crate::sys::publish_in_syscall(&c.in_syscall);
    // SAFETY: the word is this thread's (`c` outlives the call); the arguments are valid for
    // `nr` by this function's contract.
    let r = unsafe { crate::sys::syscall_cp(c.state.as_ptr(), nr, a) };
    c.in_syscall.store(outer, Ordering::Release);
    let s = c.state.load();
    let must = s & state::CP_MASK == state::PENDING;
    match r {
        crate::sys::CpResult::Done(r) if !(r == -(libc::EINTR as libc::c_long) && must) => Some(r),
        // Already acting (a cleanup handler's call, R19): the call is made.
        // SAFETY: forwarded from the caller.
        _ if s & state::TERMINATING != 0 => Some(unsafe { crate::io::plain(nr, a) }),
        _ => {
            c.state.begin_cancel();
            None
        }
    }
}

/// Sets the calling thread's cancel state (`disabled`) without acting; returns the previous
/// one. The C side acts itself (`c_must_act`) when it enables.
pub fn set_disabled(disabled: bool) -> bool {
    crate::current::with_own(|c| c.state.set_disabled(disabled))
}

/// Sets the calling thread's cancel type (`asynchronous`) without acting; returns the previous
/// one.
pub fn set_async(asynchronous: bool) -> bool {
    crate::current::with_own(|c| c.state.set_async(asynchronous))
}

/// For a thread the crate did not spawn that ends without its thread-local destructors (the
/// main thread's `pthread_exit`, which ends only its system thread): runs its
/// thread-specific-data destructors now (R07 step 2; they would otherwise run at its
/// thread-local teardown, which never comes), and marks it finished, so that requests report
/// it gone and a joiner wakes.
pub fn end_adopted_thread() {
    crate::tsd::run_destructors();
    if let Some(c) = crate::current::try_current_control() {
        c.finish();
    }
}

/// Whether the calling thread's type is asynchronous.
pub fn is_async() -> bool {
    with_current(|c| c.state.load() & state::ASYNC != 0).unwrap_or(false)
}

/// A thread created for C code by [`spawn_c`]: created with the system's `pthread_create`
/// directly (not `std::thread`), so that everything the creating side allocates comes from the
/// global allocator, which the C ABI crate makes fail softly when memory runs out (`std`'s
/// spawn allocates its thread handle from `System` and aborts). Dropping it detaches the
/// thread.
#[derive(Debug)]
pub struct CThread<T> {
    control: Arc<crate::control::Control>,
    /// The root's outcome, stored by the thread before it ends.
    outcome: Arc<Mutex<Option<crate::Outcome<T>>>>,
    native: libc::pthread_t,
    joined: bool,
}

/// What the new thread starts with (boxed, handed over through `pthread_create`'s argument).
struct Start<T> {
    control: Arc<crate::control::Control>,
    outcome: Arc<Mutex<Option<crate::Outcome<T>>>>,
    body: Box<dyn FnOnce() -> T + Send>,
}

/// Spawns a cancelable thread running `body` with `stack` bytes of stack (0: the system's
/// default), as [`crate::spawn`] does, but with `pthread_create` itself. Errors are
/// `pthread_create`'s (`EAGAIN`, `EINVAL` for a stack size it refuses).
pub fn spawn_c<T: Send + 'static>(
    stack: usize,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<CThread<T>, i32> {
    /// The new thread's start routine; `p` is the `Start` box `spawn_c` leaked for it (its
    /// only caller is `pthread_create`, with that argument).
    extern "C" fn start<T: 'static>(p: *mut c_void) -> *mut c_void {
        // SAFETY: the box `spawn_c` leaked for this thread, taken back once.
        let s = unsafe { Box::from_raw(p.cast::<Start<T>>()) };
        let Start {
            control,
            outcome,
            body,
        } = *s;
        let o = crate::thread::root(control, body);
        *outcome.lock().unwrap_or_else(PoisonError::into_inner) = Some(o);
        std::ptr::null_mut()
    }
    let control = crate::thread::new_control::<T>();
    let outcome = Arc::new(Mutex::new(None));
    let s = Box::into_raw(Box::new(Start {
        control: control.clone(),
        outcome: outcome.clone(),
        body: Box::new(body),
    }));
    // SAFETY: plain calls on an attribute object of our own; `start::<T>` takes the box.
    let r = unsafe {
        let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
        let mut r = libc::pthread_attr_init(attr.as_mut_ptr());
        if r == 0 && stack > 0 {
            r = libc::pthread_attr_setstacksize(attr.as_mut_ptr(), stack);
        }
        let mut native: libc::pthread_t = 0;
        if r == 0 {
            r = libc::pthread_create(&mut native, attr.as_ptr(), start::<T>, s.cast());
        }
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        if r == 0 {
            Ok(native)
        } else {
            drop(Box::from_raw(s)); // never started: the box is still ours
            Err(r)
        }
    };
    r.map(|native| CThread {
        control,
        outcome,
        native,
        joined: false,
    })
}

impl<T> CThread<T> {
    /// A canceler of the thread.
    pub fn canceler(&self) -> crate::Canceler {
        crate::Canceler {
            control: self.control.clone(),
        }
    }

    /// The system's id (valid until the thread is joined or, detached, ends).
    pub fn as_pthread_t(&self) -> libc::pthread_t {
        self.native
    }

    /// As [`crate::JoinHandle::wait`]: a cancellation point for the caller.
    pub fn wait(&self) {
        crate::thread::wait_finished(&self.control, None, false);
    }

    /// As [`crate::JoinHandle::wait_timeout`].
    pub fn wait_timeout(&self, dur: std::time::Duration) -> bool {
        crate::thread::wait_finished(&self.control, crate::wait::deadline_after(dur), false)
    }

    /// Joins the system thread (after [`wait`](Self::wait): not a cancellation point) and
    /// reports how it ended.
    pub fn join(mut self) -> crate::Outcome<T> {
        self.joined = true;
        // SAFETY: a thread of ours, not detached, joined once.
        unsafe { libc::pthread_join(self.native, std::ptr::null_mut()) };
        let o = self
            .outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        o.unwrap_or(crate::Outcome::Canceled)
    }
}

impl<T> Drop for CThread<T> {
    fn drop(&mut self) {
        if !self.joined {
            // SAFETY: a thread of ours, neither joined nor detached yet.
            unsafe { libc::pthread_detach(self.native) };
        }
    }
}
