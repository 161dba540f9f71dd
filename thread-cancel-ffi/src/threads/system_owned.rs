//! glibc (64-bit Linux): the threads that code built without the header creates — a preloaded
//! program's own, or a library's — with the C library's `pthread_create` or `thrd_create`, which
//! the library defines for the process.
//!
//! Such a thread stays the C library's: its id, its cancel, state, type, cleanup handlers and
//! unwind are glibc's, so every point glibc has (its `sem_wait`, `pthread_join`, stdio, ...)
//! reaches it as before. What the library adds is a control block linked first thing in the
//! thread (`start.c`, `c_abi::link_system_owned`), so that the blocking calls the library defines
//! (`read`, `write`, `accept`, `recv`, ...) go through the library's trampoline for it: a cancel
//! stops such a call only before it has had an effect, and the C library then acts
//! (`pthread_testcancel`) — never both, where glibc before 2.41 can act on a `read` that has
//! consumed data. The cancel reaches the call through the registry: `pthread_cancel` of the
//! thread's id is the C library's first (its state set), then the library's wake-up
//! ([`cancel`]). The cancel state the program sets is mirrored (`plain.rs`), so that a disabled
//! thread's calls are not stopped.
//!
//! Threads the library creates for itself (the standard library's inside it, `tc_create`'s)
//! are not wrapped: `tc_create`'s by a thread-local flag, the others by their start routine's
//! address, in the library's own code (linked into the program, the library's code cannot be
//! told from the program's: the few threads its standard library starts are wrapped, and their
//! block unused or replaced by their own). A wrapped thread that calls the header's functions
//! becomes the library's (`ids::give_id`, `c_abi::own_system_thread`), as any thread not
//! created here does.

use super::ids::{registry, Registry};
use super::next::system_fn;
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::MutexGuard;
use thread_cancel::{c_abi, Canceler};

/// What `start.c`'s start routines are given (`struct thread_cancel_start`), `malloc`ed.
#[repr(C)]
struct Start {
    start: Option<StartFn>,
    c11_start: Option<C11StartFn>,
    arg: *mut c_void,
    /// The thread's block: a `Box<Canceler>`, raw, taken by [`thread_cancel_system_thread_begins`].
    block: *mut c_void,
}

type StartFn = unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void;
type C11StartFn = unsafe extern "C-unwind" fn(*mut c_void) -> c_int;
type CreateFn = unsafe extern "C-unwind" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    StartFn,
    *mut c_void,
) -> c_int;
type ThrdCreateFn =
    unsafe extern "C-unwind" fn(*mut libc::c_ulong, C11StartFn, *mut c_void) -> c_int;

extern "C-unwind" {
    /// `start.c`: the start routine of a wrapped `pthread_create`.
    fn thread_cancel_system_start(p: *mut c_void) -> *mut c_void;
    /// `start.c`: the start routine of a wrapped `thrd_create`.
    fn thread_cancel_system_c11_start(p: *mut c_void) -> c_int;
}

/// `pthread_create` of the code built without the header: the C library's, the thread's start
/// wrapped (see the module) unless the start routine is the library's own code.
///
/// # Safety
/// As the C library's `pthread_create`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: StartFn,
    arg: *mut c_void,
) -> c_int {
    let create = system_fn!(c"pthread_create" => CreateFn);
    if !wrapped(start as *const () as usize) {
        // SAFETY: the caller's contract.
        return unsafe { create(thread, attr, start, arg) };
    }
    let Some((p, canceler)) = boxed(Some(start), None, arg) else {
        return libc::EAGAIN;
    };
    // SAFETY: the caller's arguments; `thread_cancel_system_start` takes `p` (and frees it).
    let r = unsafe { create(thread, attr, thread_cancel_system_start, p) };
    // SAFETY: `thread` was written by a successful create (the caller's contract: valid).
    created(r, p, canceler, || unsafe { thread.read() });
    r
}

/// `thrd_create` of the code built without the header (the C library's calls its own
/// `pthread_create` inside, which the definition above does not see): the C library's, the
/// thread's start wrapped as `pthread_create`'s.
///
/// # Safety
/// As the C library's `thrd_create`.
#[no_mangle]
pub unsafe extern "C-unwind" fn thrd_create(
    thread: *mut libc::c_ulong,
    start: C11StartFn,
    arg: *mut c_void,
) -> c_int {
    let create = system_fn!(c"thrd_create" => ThrdCreateFn);
    if !wrapped(start as *const () as usize) {
        // SAFETY: the caller's contract.
        return unsafe { create(thread, start, arg) };
    }
    let Some((p, canceler)) = boxed(None, Some(start), arg) else {
        return 3; // thrd_nomem
    };
    // SAFETY: as in `pthread_create`.
    let r = unsafe { create(thread, thread_cancel_system_c11_start, p) };
    // SAFETY: as in `pthread_create` (a `thrd_t` is glibc's `pthread_t`).
    created(r, p, canceler, || unsafe { thread.read() });
    r
}

/// A `malloc`ed [`Start`] (the C side frees it) with a new block for the thread, and the block's
/// canceler; `None` out of memory.
fn boxed(
    start: Option<StartFn>,
    c11_start: Option<C11StartFn>,
    arg: *mut c_void,
) -> Option<(*mut c_void, Canceler)> {
    let canceler = c_abi::new_system_owned();
    // SAFETY: no preconditions.
    let p = unsafe { libc::malloc(std::mem::size_of::<Start>()) }.cast::<Start>();
    if p.is_null() {
        return None;
    }
    let block = Box::into_raw(Box::new(canceler.clone())).cast();
    // SAFETY: `p` is a fresh allocation of the right size (`malloc`'s alignment suffices).
    unsafe {
        p.write(Start {
            start,
            c11_start,
            arg,
            block,
        })
    };
    Some((p.cast(), canceler))
}

/// After the C library's create returned `r`: on success the thread's canceler is recorded
/// under its id (`id()`), unless the thread has ended already, so that a cancel from now on
/// finds it (the thread records itself too when it starts, for a cancel of its own before
/// this); on failure the start record and the block are freed.
fn created(r: c_int, p: *mut c_void, canceler: Canceler, id: impl FnOnce() -> u64) {
    if r != 0 {
        // SAFETY: `p` and its block were not given to a thread.
        unsafe {
            drop(Box::from_raw(
                p.cast::<Start>().read().block.cast::<Canceler>(),
            ));
            libc::free(p);
        }
        return;
    }
    let id = id();
    let mut reg = registry();
    // Under the lock: a thread that has ended was finished before it took the lock to forget
    // itself, so it is not recorded again after that.
    if !canceler.is_finished() {
        reg.system_owned.insert(id, canceler);
    }
}

/// The library's own executable code, `[start, end)`, once found; `end` 0: not yet; `(1, 1)`:
/// none told apart (the library is part of the program's executable).
static OWN_CODE: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

thread_local! {
    /// Whether the calling thread is inside `tc_create`'s call of `pthread_create`
    /// ([`OwnCreate`]).
    static OWN_CREATE: Cell<bool> = const { Cell::new(false) };
}

/// While alive, the calling thread's `pthread_create` is the library's own (`tc_create`'s): its
/// thread is not wrapped, wherever the library's code lies.
pub(super) struct OwnCreate(bool);

impl OwnCreate {
    pub(super) fn enter() -> OwnCreate {
        OwnCreate(OWN_CREATE.replace(true))
    }
}

impl Drop for OwnCreate {
    fn drop(&mut self) {
        OWN_CREATE.set(self.0);
    }
}

/// The bounds of the library's own code ([`own_code`]), found once.
fn own_code_once() -> (usize, usize) {
    let (lo, hi) = (
        OWN_CODE[0].load(Ordering::Relaxed),
        OWN_CODE[1].load(Ordering::Relaxed),
    );
    if hi != 0 {
        return (lo, hi);
    }
    let (lo, hi) = own_code();
    OWN_CODE[0].store(lo, Ordering::Relaxed);
    OWN_CODE[1].store(hi, Ordering::Relaxed);
    (lo, hi)
}

/// Whether a thread starting at `start` is wrapped: not one `tc_create` makes, and not one the
/// library's own code starts (see the module).
fn wrapped(start: usize) -> bool {
    if OWN_CREATE.with(Cell::get) {
        return false;
    }
    let (lo, hi) = own_code_once();
    !(lo..hi).contains(&start)
}

/// The bounds of the library's executable segments (`dl_iterate_phdr`, the object that holds
/// this function); `(1, 1)` if that object is the program itself (a static link), or if it is
/// not found.
fn own_code() -> (usize, usize) {
    struct Find {
        me: usize,
        first: bool,
        found: Option<(usize, usize)>,
        is_program: bool,
    }
    extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: the C library passes a valid `info`; `data` is our `Find`.
        let (info, find) = unsafe { (&*info, &mut *data.cast::<Find>()) };
        let first = std::mem::replace(&mut find.first, false);
        let (mut lo, mut hi) = (usize::MAX, 0);
        for i in 0..usize::from(info.dlpi_phnum) {
            // SAFETY: `dlpi_phdr` has `dlpi_phnum` entries.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 {
                let start = info.dlpi_addr as usize + ph.p_vaddr as usize;
                lo = lo.min(start);
                hi = hi.max(start + ph.p_memsz as usize);
            }
        }
        if (lo..hi).contains(&find.me) {
            find.found = Some((lo, hi));
            find.is_program = first;
            return 1;
        }
        0
    }
    let mut find = Find {
        me: own_code as *const () as usize,
        first: true,
        found: None,
        is_program: false,
    };
    // SAFETY: `each` matches the callback's signature and only reads what it is given.
    unsafe { libc::dl_iterate_phdr(Some(each), std::ptr::addr_of_mut!(find).cast()) };
    match find.found {
        Some(bounds) if !find.is_program => bounds,
        _ => (1, 1),
    }
}

/// `start.c`, first thing in a wrapped thread: links its block (`block`, the `Box<Canceler>` its
/// creator made) and records its canceler under its system id, for [`cancel`].
///
/// # Safety
/// `block` is the `block` of the thread's [`Start`], given once.
#[no_mangle]
pub unsafe extern "C" fn thread_cancel_system_thread_begins(block: *mut c_void) {
    // SAFETY: the caller's contract: made by `boxed` with `Box::into_raw`.
    let canceler = *unsafe { Box::from_raw(block.cast::<Canceler>()) };
    if !c_abi::link_system_owned(canceler.clone()) {
        return;
    }
    // SAFETY: no preconditions.
    let me = unsafe { libc::pthread_self() } as u64;
    registry().system_owned.insert(me, canceler);
}

/// `start.c`, when a wrapped thread ends (a return, the C library's `pthread_exit` or its
/// cancel's unwind): its block is finished and unlinked, then its record forgotten (in this
/// order: see [`created`]).
#[no_mangle]
pub extern "C" fn thread_cancel_system_thread_ends() {
    c_abi::unlink_system_owned();
    // SAFETY: no preconditions.
    let me = unsafe { libc::pthread_self() } as u64;
    registry().system_owned.remove(&me);
}

/// At load (the library's constructor), on the main thread: a block as a wrapped thread's, so
/// that main's blocking calls are the library's points too while its cancellation stays the C
/// library's (a preloaded program's main; a program through the header makes main the library's
/// in its own constructor, [`forget_main_thread`]).
pub(crate) fn link_main_thread() {
    if !super::ids::is_main_thread() {
        return;
    }
    let canceler = c_abi::new_system_owned();
    if c_abi::link_system_owned(canceler.clone()) {
        // SAFETY: no preconditions.
        let me = unsafe { libc::pthread_self() } as u64;
        registry().system_owned.insert(me, canceler);
    }
}

/// The main thread has become the library's (`know_main_thread`): its record here goes.
pub(crate) fn forget_main_thread() {
    // SAFETY: no preconditions.
    let me = unsafe { libc::pthread_self() } as u64;
    registry().system_owned.remove(&me);
}

/// `pthread_cancel` of `thread`, a system id that no thread of the library's has (registry lock
/// held): the C library's, then, for a wrapped thread, the library's wake-up of the call it may
/// be blocked in (the C library's state is set first, so the call that stops finds the cancel
/// the C library acts on).
pub(super) fn cancel(reg: MutexGuard<'_, Registry>, thread: u64) -> c_int {
    let Some(canceler) = reg.system_owned.get(&thread).cloned() else {
        drop(reg);
        return super::next::system_cancel(thread);
    };
    // Under the lock: the thread cannot end (its end takes the lock), so its id names it.
    let r = super::next::system_cancel(thread);
    drop(reg);
    if r == 0 {
        // It may have finished since: nothing to wake.
        let _ = canceler.cancel();
    }
    r
}
