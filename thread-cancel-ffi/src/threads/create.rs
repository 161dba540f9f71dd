//! `tc_create`, and the end of a thread it created.
//!
//! Threads are created with the system's `pthread_create` (`c_abi::spawn_c`): the new thread
//! reaches its start routine without registering a thread-local destructor (a library destructor
//! run by `dlclose`, which holds the loader's lock, may create and join threads), and waits for
//! its creator's verdict first, so that a creation undone for want of memory never runs the
//! start routine.

use super::exit;
use super::ids::{process, public, registry, Entry, MY_ID};
use super::main_end::only_the_library_threads_left;
use crate::{oom, SendPtr};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use thread_cancel::c_abi;

extern "C" {
    fn pthread_attr_getdetachstate(attr: *const libc::pthread_attr_t, state: *mut i32) -> i32;
    /// glibc >= 2.32: 0 and the attribute's mask, or `PTHREAD_ATTR_NO_SIGMASK_NP` (-1) if it
    /// has none.
    fn pthread_attr_getsigmask_np(
        attr: *const libc::pthread_attr_t,
        mask: *mut libc::sigset_t,
    ) -> i32;
}

/// The mask a new thread starts its start routine with: the one `attr` carries
/// (`pthread_attr_setsigmask_np`), as glibc >= 2.32, else its creator's (`inherited`); never
/// with the cancel signal blocked.
///
/// # Safety
/// `attr` must be null or an initialised attribute object.
unsafe fn start_mask(
    attr: *const libc::pthread_attr_t,
    inherited: libc::sigset_t,
) -> libc::sigset_t {
    if attr.is_null() {
        return inherited;
    }
    // SAFETY: plain data, written by the call before it is read.
    let mut m: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `attr` is an initialised attribute object (the caller's contract); `m` is
    // writable.
    if unsafe { pthread_attr_getsigmask_np(attr, &mut m) } == 0 {
        c_abi::without_cancel_signal(&m)
    } else {
        inherited
    }
}

/// Runs when a created thread's closure ends (returned or unwinding): frees a detached
/// thread's slot.
struct Ending(u64);

impl Drop for Ending {
    fn drop(&mut self) {
        let mut reg = registry();
        match reg.get(self.0) {
            Some(e) if e.detached => reg.release_detached(self.0),
            Some(e) => e.ended = true, // `tc_detach` or `tc_join` frees it
            None => {}
        }
    }
}

/// The end of every thread `tc_create` started (`c_abi::spawn_c`'s `at_end`, after its root has
/// run the thread-specific-data destructors): counts it out; the last one out after main has
/// ended calls `exit(0)` if no thread created otherwise is left either. A thread that calls
/// `exit()` never gets here (nor does one whose creation failed before its thread started: its
/// creator counts it out), so nothing races that exit's status with `exit(0)`.
fn count_out() {
    let mut p = process();
    p.live -= 1;
    // SAFETY: no preconditions.
    if p.live == 0 && p.main_ended && only_the_library_threads_left(Some(unsafe { libc::gettid() }))
    {
        drop(p);
        // SAFETY: ends the process, as glibc's last thread does.
        unsafe { libc::exit(0) }
    }
    // Otherwise main's sleeping thread calls it once the others have gone (`end_main_thread`).
}

/// What a new thread may take from the system's `malloc`, where a failure aborts, before its
/// start routine has a chance to see an error (glibc's thread-local storage of libraries
/// loaded with `dlopen`, allocated on first use), with room to spare.
const CHILD_HEAP: usize = 16 * 1024;

/// The verdict a new thread waits for before it runs anything of the caller's.
const UNDECIDED: u8 = 0;
const GO: u8 = 1;
const ABANDON: u8 = 2;

/// `pthread_create`: honours the whole of `attr` as the system's does (`c_abi::spawn_c` gives it
/// to `pthread_create`: stack size, stack, guard size, scheduling), its detach state, and its
/// signal mask (`pthread_attr_setsigmask_np`, glibc >= 2.32: the thread starts with it, else
/// with its creator's; the cancel signal is never blocked). `EAGAIN` if the thread cannot be
/// created, memory included:
/// the thread is created with `pthread_create` itself (`c_abi::spawn_c`), an allocation that
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
    start: Option<unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void>,
    arg: *mut c_void,
) -> i32 {
    let Some(start) = start else {
        return libc::EINVAL;
    };
    let mut detached = false;
    if !attr.is_null() {
        let mut ds = 0;
        // SAFETY: `attr` is an initialised attribute object (the caller's contract).
        if unsafe { pthread_attr_getdetachstate(attr, &mut ds) } != 0 {
            return libc::EINVAL;
        }
        detached = ds == libc::PTHREAD_CREATE_DETACHED;
    }
    // The new thread's own set-up allocates with the system's `malloc` and aborts if it fails.
    if !oom::system_has(CHILD_HEAP) {
        return libc::EAGAIN;
    }
    let arg = SendPtr(arg);
    // glibc: the sizes of the stack of the library's the thread gets (`None`: the caller's
    // stack, or no stack of the library's elsewhere), and the alignment its top moves by,
    // looked up before the registry lock is taken.
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    // SAFETY: `attr` is null or an initialised attribute object (the caller's contract).
    let wanted = unsafe { super::stacks::wanted(attr) }.inspect(|_| {
        super::stacks::step();
    });
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
        left_in_parent: false,
        stack: None,
    }) else {
        return libc::EAGAIN;
    };
    // The caller's attribute, or a copy of it that gives the thread a stack of the library's.
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    let on_stack = match wanted.map(|(size, guard)| reg.stacks.take(size, guard)) {
        Some(Err(e)) => {
            reg.release(id);
            return e;
        }
        // SAFETY: `attr` is null or an initialised attribute object (the caller's contract).
        Some(Ok(taken)) => Some(unsafe { StackAttr::new(attr, taken) }),
        None => None,
    };
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    let attr = on_stack.as_ref().map_or(attr, StackAttr::as_ptr);
    process().live += 1;
    let verdict = Arc::new(AtomicU8::new(UNDECIDED));
    let theirs = verdict.clone();
    // The new thread starts with every signal blocked (as glibc's): a handler that runs before
    // its id is set would see no id and make it a foreign thread's (`pthread_self` in a signal
    // sent right after `pthread_create`). It takes its mask once its id is set: the one the
    // attribute carries, else its creator's.
    let mask = SigMask::block_all();
    // SAFETY: `attr` is null or an initialised attribute object (the caller's contract).
    let inherited = unsafe { start_mask(attr, mask.old) };
    let body = move || {
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
        SendPtr(unsafe { c_abi::c_region(start, arg.0, exit::async_act) })
    };
    // The library's own thread: not one of code built without the header (`system_owned.rs`).
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    let own = super::system_owned::OwnCreate::enter();
    // SAFETY: `attr` is null or an initialised attribute object (the caller's contract).
    let spawned = unsafe { c_abi::spawn_c(attr, body, count_out) };
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    drop(own);
    drop(mask);
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    let stack = on_stack.map(|s| s.base);
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    let stack: Option<usize> = None;
    match spawned {
        Ok(h) if !memory.ran_out() => {
            let native = h.as_pthread_t();
            reg.set_native(id, native);
            #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
            if let Some(base) = stack {
                reg.stacks.started(base, super::ids::system_id(native));
            }
            let e = reg.get(id).expect("the new slot");
            e.canceler = Some(h.canceler());
            e.stack = stack;
            if detached {
                // Detaches the system thread before it runs the caller's code; one on a
                // stack of the library's is joined here once it has ended (`stacks.rs`).
                if stack.is_some() {
                    h.into_unjoined();
                } else {
                    drop(h);
                }
            } else {
                e.handle = Some(h);
            }
            verdict.store(GO, Ordering::Release);
            drop(reg);
            // SAFETY: the caller passes a writable id.
            unsafe { *thread = public(id, native) };
            0
        }
        spawned => {
            // Out of memory, or no thread: the thread (if any) ends without running `start`,
            // and counts itself out (`count_out`); without a thread, it is counted out here.
            verdict.store(ABANDON, Ordering::Release);
            reg.release(id);
            #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
            if let Some(base) = stack {
                match &spawned {
                    // Joined here once it has ended, then its stack is reused.
                    Ok(h) => reg.stacks.ended_detached(h.as_pthread_t(), base),
                    Err(_) => reg.stacks.unused(base),
                }
            }
            drop(reg);
            let e = match spawned {
                Ok(_) => libc::EAGAIN,
                Err(e) => {
                    process().live -= 1;
                    if e == libc::EINVAL || e == libc::EPERM {
                        e // an attribute the system refuses
                    } else {
                        libc::EAGAIN
                    }
                }
            };
            match spawned {
                Ok(h) if stack.is_some() => {
                    h.into_unjoined();
                }
                spawned => drop(spawned),
            }
            e
        }
    }
}

/// glibc: an attribute object that gives a new thread a stack of the library's: the caller's
/// (copied bitwise: its extension, a CPU set, stays the caller's and is only read) or the
/// defaults, with the stack set.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
struct StackAttr {
    attr: Box<libc::pthread_attr_t>,
    /// Initialised here (destroyed with it), not a copy of the caller's.
    own: bool,
    base: usize,
}

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
impl StackAttr {
    /// # Safety
    /// `attr` is null or an initialised attribute object.
    unsafe fn new(attr: *const libc::pthread_attr_t, taken: super::stacks::Taken) -> StackAttr {
        let own = attr.is_null();
        let mut a = Box::new(if own {
            // SAFETY: plain data, initialised by `pthread_attr_init` below.
            unsafe { std::mem::zeroed() }
        } else {
            // SAFETY: an initialised attribute object, plain data to copy.
            unsafe { std::ptr::read(attr) }
        });
        // SAFETY: `a` is writable; once initialised, setting its stack writes only its own
        // fields (a stack of at least `PTHREAD_STACK_MIN` bytes, `stacks.rs`).
        unsafe {
            if own {
                libc::pthread_attr_init(&mut *a);
            }
            libc::pthread_attr_setstack(&mut *a, taken.addr, taken.size);
        }
        StackAttr {
            attr: a,
            own,
            base: taken.base,
        }
    }

    fn as_ptr(&self) -> *const libc::pthread_attr_t {
        &*self.attr
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
impl Drop for StackAttr {
    fn drop(&mut self) {
        if self.own {
            // SAFETY: initialised here, destroyed once.
            unsafe { libc::pthread_attr_destroy(&mut *self.attr) };
        }
    }
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
