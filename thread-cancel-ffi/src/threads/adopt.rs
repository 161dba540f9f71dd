//! `pthread_create` for the code of the process built without the header (glibc, 64-bit Linux,
//! where the library defines the C library's blocking functions for the whole process): a thread
//! that a library, libstdc++'s `std::thread` or the program's own plain code creates is known
//! from its first instruction, with the system id its creator got: a cancel of that id reaches
//! it at once, as glibc's does, and it acts at its blocking calls in C code as a thread created
//! through the header does (its C and C++ frames unwound, `PTHREAD_CANCELED` for the C library's
//! `pthread_join`, which its creator calls).
//!
//! The thread is created by the C library's `pthread_create` (the next definition after this
//! object's), with every attribute as given, and starts in [`adopt_start`]: it takes an id of
//! ours for its system id (`foreign::adopt`, the same as a thread met at its first mapped call),
//! then runs the start routine. Its creator's id is the system's: what the library stores and
//! later joins with the C library is untouched. The library's own threads (`tc_create`'s, the
//! Rust API's) go to the system as they are (`c_abi::creating_own_thread`).

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use thread_cancel::c_abi;

type Start = unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void;
type Create = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    Start,
    *mut c_void,
) -> i32;

/// The C library's `pthread_create` (0: not looked up yet).
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The next definition of `pthread_create` after this object's, looked up on first use (another
/// library's constructor may create a thread before this object's constructors ran).
fn next() -> Option<Create> {
    let mut p = NEXT.load(Ordering::Acquire);
    if p == 0 {
        // SAFETY: `RTLD_NEXT` is a valid handle; the name is nul-terminated.
        p = unsafe { libc::dlsym(libc::RTLD_NEXT, c"pthread_create".as_ptr()) } as usize;
        if p == 0 || p == pthread_create as *const () as usize {
            return None;
        }
        NEXT.store(p, Ordering::Release);
    }
    // SAFETY: `p` is the C library's `pthread_create`, whose C signature `Create` is (the start
    // routine's `C-unwind` differs only in what may unwind through it).
    Some(unsafe { std::mem::transmute::<usize, Create>(p) })
}

/// What [`adopt_start`] runs.
struct Routine {
    start: Body,
    arg: *mut c_void,
    /// The C library's key whose destructor ends the adoption ([`end_adopted`]).
    key: libc::pthread_key_t,
}

/// The C library's thread-specific-data key whose destructor ends an adopted thread
/// ([`end_adopted`]), created by the first [`create_adopted`]: a key destructor runs at every
/// end of a thread (its start routine returned, the C library's `pthread_exit`, a cancellation)
/// and, unlike a thread-local destructor, does not take the dynamic loader's lock. `None` if the
/// C library has no key left: threads are then created as they are, and met at their first
/// mapped call.
fn end_key() -> Option<libc::pthread_key_t> {
    static KEY: std::sync::OnceLock<Option<libc::pthread_key_t>> = std::sync::OnceLock::new();
    *KEY.get_or_init(|| {
        let mut key: libc::pthread_key_t = 0;
        // SAFETY: `key` is writable; `end_adopted` is a key destructor of the C signature.
        (unsafe { libc::pthread_key_create(&mut key, Some(end_adopted)) } == 0).then_some(key)
    })
}

/// What an adopted thread's key holds: its control block and its id.
struct Adopted {
    thread: c_abi::AdoptedThread,
    id: u64,
}

/// The destructor of [`end_key`]: the adopted thread's end (its id freed, its control block
/// finished).
///
/// # Safety
/// `p` is the `Adopted` that [`adopt_start`] stored under the key, for this thread alone.
unsafe extern "C" fn end_adopted(p: *mut c_void) {
    // SAFETY: the caller's contract; the C library calls each destructor once per value.
    let a = unsafe { Box::from_raw(p.cast::<Adopted>()) };
    super::foreign::adopted_thread_ends(a.id, false);
    a.thread.end();
}

/// A start routine: a POSIX thread's, or a C11 thread's (`thrd_start_t`, an `int` result).
#[derive(Clone, Copy)]
enum Body {
    Posix(Start),
    C11(unsafe extern "C-unwind" fn(*mut c_void) -> c_int),
}

/// Creates a thread with the C library's `pthread_create` that starts in [`adopt_start`], which
/// runs `body(arg)`: 0, or `pthread_create`'s error (`EAGAIN` if no C library is below, or the
/// start's record cannot be allocated).
///
/// # Safety
/// As the C library's `pthread_create`, `body` and `arg` as its start routine and argument.
unsafe fn create_adopted(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    body: Body,
    arg: *mut c_void,
) -> c_int {
    let Some(create) = next() else {
        return libc::EAGAIN; // no C library below: nothing can create a thread
    };
    let Some(key) = end_key() else {
        return match body {
            // SAFETY: the caller's arguments, as given: a thread met at its first mapped call.
            Body::Posix(start) => unsafe { create(thread, attr, start, arg) },
            // No key left for the C library's C11 start: its own `thrd_create` is not reachable
            // from here (the name is this object's), and a C11 routine cannot be started as a
            // POSIX one.
            Body::C11(_) => libc::EAGAIN,
        };
    };
    c_abi::before_adopted_thread();
    // SAFETY: a plain allocation of the C library's, checked below.
    let routine = unsafe { libc::malloc(std::mem::size_of::<Routine>()) }.cast::<Routine>();
    if routine.is_null() {
        return libc::EAGAIN;
    }
    // SAFETY: `routine` is a fresh allocation of the size and alignment (malloc's) of a `Routine`.
    unsafe {
        routine.write(Routine {
            start: body,
            arg,
            key,
        })
    };
    // SAFETY: the caller's arguments, with `adopt_start`, which takes `routine` back once.
    let rc = unsafe { create(thread, attr, adopt_start, routine.cast()) };
    if rc != 0 {
        // SAFETY: no thread was created: `routine` is still ours, unread.
        unsafe { libc::free(routine.cast()) };
    }
    rc
}

/// `pthread_create`, as the C library's, for every caller of the process that does not go
/// through the header: the new thread is known from its start ([`adopt_start`]). `EAGAIN` if the
/// start's record cannot be allocated. The library's own threads go to the C library's as they
/// are.
///
/// # Safety
/// As the C library's `pthread_create`.
#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: Option<Start>,
    arg: *mut c_void,
) -> c_int {
    let Some(start) = start else {
        return libc::EINVAL;
    };
    if c_abi::creating_own_thread() {
        return match next() {
            // SAFETY: the caller's arguments, as given.
            Some(create) => unsafe { create(thread, attr, start, arg) },
            None => libc::EAGAIN,
        };
    }
    // SAFETY: the caller's arguments (its contract).
    unsafe { create_adopted(thread, attr, Body::Posix(start), arg) }
}

/// C11's `thrd_create`, as the C library's (its results: `thrd_success`, `thrd_nomem` for
/// `ENOMEM`, `thrd_error` otherwise), for the code built without the header: the C library's
/// own calls its internal `pthread_create`, which nothing can interpose. The thread's `int`
/// result is its value as the C library's `thrd_join` reads it (`PTHREAD_CANCELED`: -1).
///
/// # Safety
/// As the C library's `thrd_create`.
#[no_mangle]
pub unsafe extern "C" fn thrd_create(
    thread: *mut libc::pthread_t,
    start: Option<unsafe extern "C-unwind" fn(*mut c_void) -> c_int>,
    arg: *mut c_void,
) -> c_int {
    const THRD_SUCCESS: c_int = 0;
    const THRD_ERROR: c_int = 2;
    const THRD_NOMEM: c_int = 3;
    let Some(start) = start else {
        return THRD_ERROR;
    };
    // SAFETY: the caller's arguments (its contract), with the C library's default attributes.
    match unsafe { create_adopted(thread, std::ptr::null(), Body::C11(start), arg) } {
        0 => THRD_SUCCESS,
        libc::ENOMEM => THRD_NOMEM,
        _ => THRD_ERROR,
    }
}

/// The start of a thread [`pthread_create`] created: a control block (no thread-local
/// destructor) and an id of ours, both ended by [`end_adopted`] at the thread's end, then the
/// start routine, whose result is the thread's. A cancellation unwinds the start routine's frames
/// and passes this one (nothing in it has a destructor), then ends the thread with
/// `PTHREAD_CANCELED` (`main_end::foreign_thread_ends`).
///
/// # Safety
/// `p` is the `Routine` allocated by [`create_adopted`] for this thread alone.
unsafe extern "C-unwind" fn adopt_start(p: *mut c_void) -> *mut c_void {
    // Nothing in this frame has a destructor (no landing pad covers the start routine's call):
    // a forced unwind that resumed here would free the start routine's frames, where the C
    // library's cleanup buffers lie, before its own unwind (`pthread_exit`) jumps into them.
    // SAFETY: the caller's contract.
    let (start, arg) = unsafe { adopt(p) };
    match start {
        // SAFETY: the creator's start routine and argument, as it gave them.
        Body::Posix(f) => unsafe { f(arg) },
        // As the C library's start of a C11 thread: the `int` widened as `uintptr_t` is.
        // SAFETY: as above.
        Body::C11(f) => (unsafe { f(arg) }) as isize as *mut c_void,
    }
}

/// [`adopt_start`]'s set-up, in a frame of its own that has returned before the start routine
/// runs: takes the `Routine` back, links a control block and gives the thread its id, which
/// the key's destructor ends ([`end_adopted`]).
///
/// # Safety
/// As [`adopt_start`].
#[inline(never)]
unsafe fn adopt(p: *mut c_void) -> (Body, *mut c_void) {
    // SAFETY: `p` is this thread's `Routine` (the caller's contract), read once and freed.
    let Routine { start, arg, key } = unsafe { p.cast::<Routine>().read() };
    // SAFETY: as above; nothing reads it again.
    unsafe { libc::free(p) };
    if c_abi::has_control() {
        return (start, arg); // never on a new thread; `link` would panic, here in C's frames
    }
    let thread = c_abi::AdoptedThread::link();
    let id = super::foreign::adopt(thread.canceler());
    let adopted = Box::into_raw(Box::new(Adopted { thread, id }));
    // SAFETY: `key` is the live key of `end_key`; the value is taken back by its destructor
    // (`end_adopted`) at the thread's end.
    if unsafe { libc::pthread_setspecific(key, adopted.cast()) } != 0 {
        // No room for the value (out of memory): the thread ends its adoption now and is met
        // at its first mapped call, as a thread created without this library.
        // SAFETY: `adopted` was not stored: ours to take back, once.
        let a = unsafe { Box::from_raw(adopted) };
        super::foreign::adopted_thread_ends(a.id, true);
        a.thread.end();
    }
    (start, arg)
}

/// The address of [`adopt_start`]: a reference from code every program runs (the header's
/// constructor) that makes a static link take this file's object, and with it
/// [`pthread_create`], even where the link found another definition first (the sanitizers'
/// interceptors, linked before the program's objects).
#[inline(never)]
pub(super) fn linked() -> usize {
    adopt_start as *const () as usize
}
