//! glibc (64-bit Linux): the cancellation calls of the code built without the header —
//! `pthread_cancel`, `pthread_setcancelstate`, `pthread_setcanceltype`, `pthread_testcancel`,
//! `pthread_exit` and the registration of glibc's cleanup macros —
//! defined for the whole process, as the library defines its blocking functions.
//!
//! Each thread's cancellation has one owner. A thread with a control block (created through the
//! header, or one that has called the library: the header's calls, the Rust API) is the
//! library's: its blocking calls, made by any code of the process, are the library's points, so
//! its cancel, its state and its type must be the library's too, whoever asks. Any other
//! thread is the C library's: every function the library defines forwards its calls to the C
//! library's own, so the C library's cancellation, state and type stay whole for it.
//!
//! So these functions go to the owner. A library built without the header that disables
//! cancellation around its `read` in a thread created through the header is not canceled there;
//! its `pthread_cancel` of that thread (by the system id it holds) reaches it in `read`. A
//! cancel of a thread that is the C library's is the C library's `pthread_cancel`, which reaches
//! it at once (`threads/cancel.rs`); the C library's own calls are in `threads/next.rs`.
//!
//! # Safety (every exported function)
//! As the C library's function of the same name.

use crate::threads::next::{next, system_exit, system_setcancelstate, system_testcancel, StateFn};
use std::ffi::c_int;
use std::sync::atomic::AtomicUsize;
use thread_cancel::c_abi;

/// `pthread_cancel` of the code built without the header: a thread the library knows by its
/// system id (created through the header, or one that has called the library) is canceled as
/// `tc_cancel` cancels it; any other is the C library's, canceled by the C library's
/// `pthread_cancel`.
#[no_mangle]
pub extern "C-unwind" fn pthread_cancel(thread: libc::pthread_t) -> c_int {
    crate::threads::cancel_system_id(thread)
}

/// `pthread_exit` of the code built without the header: the library's (`tc_exit`) in a thread
/// that is the library's and acts in C code (created through the header, or created by the C
/// library and met since: its cleanup handlers are on the library's stack), the C library's in
/// any other (the main thread, whose end the C library's keeps as it is, included).
#[no_mangle]
pub extern "C-unwind" fn pthread_exit(value: *mut std::ffi::c_void) -> ! {
    if c_abi::has_control() && !crate::threads::is_main_thread() && c_abi::in_c_region() {
        crate::threads::tc_exit(value)
    }
    system_exit(value)
}

/// `pthread_setcancelstate` of the code built without the header: the library's
/// (`tc_setcancelstate`) in a thread that is the library's, else the C library's.
///
/// # Safety
/// `old` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_setcancelstate(state: c_int, old: *mut c_int) -> c_int {
    if c_abi::has_control() {
        // SAFETY: the caller's contract.
        return unsafe { crate::cancelability::tc_setcancelstate(state, old) };
    }
    // SAFETY: the caller's contract.
    let r = unsafe { system_setcancelstate(state, old) };
    if r == 0 {
        // A thread that code built without the header created: its state, for the library's
        // calls (`threads/system_owned.rs`).
        c_abi::mirror_system_state(state == 1); // 1: PTHREAD_CANCEL_DISABLE
    }
    r
}

/// `pthread_setcanceltype` of the code built without the header: the library's
/// (`tc_setcanceltype`) in a thread that is the library's, else the C library's.
///
/// # Safety
/// `old` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_setcanceltype(kind: c_int, old: *mut c_int) -> c_int {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    if c_abi::has_control() {
        // SAFETY: the caller's contract.
        return unsafe { crate::cancelability::tc_setcanceltype(kind, old) };
    }
    // SAFETY: the C library's `pthread_setcanceltype`, of this C signature.
    let f = unsafe { std::mem::transmute::<usize, StateFn>(next(&NEXT, c"pthread_setcanceltype")) };
    // SAFETY: the caller's contract.
    unsafe { f(kind, old) }
}

/// `pthread_testcancel` of the code built without the header: the library's point
/// (`tc_testcancel`) in a thread that is the library's, else the C library's.
#[no_mangle]
pub extern "C-unwind" fn pthread_testcancel() {
    if c_abi::has_control() {
        crate::cancelability::tc_testcancel();
        return;
    }
    system_testcancel();
}

/// The cleanup handlers that glibc's `pthread_cleanup_push` registers in code built without
/// `-fexceptions` (`__pthread_register_cancel` and its family; with exceptions, and in C++, the
/// macros use a destructor, which the forced unwind runs): in a thread that is the library's,
/// they go on the library's cleanup stack with the header's handlers, in the order of their
/// frames, so that its unwind runs them where glibc's runs them. Each is a jump back into the
/// frame that registered it (to the macros' `__sigsetjmp`, as glibc's unwind jumps), whose code
/// then runs the routine and calls `__pthread_unwind_next`, which resumes the unwind.
///
/// glibc's `__pthread_unwind_buf_t` is the jump buffer, then four words that belong to the
/// cleanup implementation (`__pad`; glibc keeps its list there): the library's stack entry
/// (`cleanup::CleanupBuffer`, three words) and the cancel type a `_defer` registration saved.
/// In a thread that is the C library's, every call goes to the C library, and the buffers it
/// was given are remembered ([`GLIBC_BUFFERS`]): a thread that meets the library between a push
/// and its pop gives the pop to the C library all the same.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
mod cleanup_abi {
    use super::{next, AtomicUsize};
    use crate::cleanup::{self, CleanupBuffer};
    use std::cell::Cell;
    use std::ffi::{c_int, c_void};
    use thread_cancel::c_abi;

    /// `offsetof(__pthread_unwind_buf_t, __pad)` in glibc's `pthread.h` (the jump buffer's size).
    #[cfg(target_arch = "x86_64")]
    const PAD: usize = 72;
    #[cfg(target_arch = "aarch64")]
    const PAD: usize = 184;
    #[cfg(target_arch = "riscv64")]
    const PAD: usize = 216;

    /// How many of the buffers given to the C library a thread remembers (deeper nesting is
    /// rare: its pops are told apart by the library's own stack, [`is_ours`]).
    const REMEMBERED: usize = 16;

    thread_local! {
        /// The buffers registered with the C library, innermost last (`GLIBC_DEPTH` of them,
        /// the first `REMEMBERED` kept).
        static GLIBC_BUFFERS: [Cell<usize>; REMEMBERED] =
            const { [const { Cell::new(0) }; REMEMBERED] };
        static GLIBC_DEPTH: Cell<usize> = const { Cell::new(0) };
        /// The buffer the library's unwind last jumped to: its `__pthread_unwind_next` is ours.
        static JUMPED: Cell<usize> = const { Cell::new(0) };
    }

    extern "C" {
        /// The C library's `longjmp` (a buffer of `__sigsetjmp` with no signal mask saved).
        fn longjmp(env: *mut c_void, value: c_int) -> !;
    }

    /// The library's stack entry inside `buf` (its `__pad`).
    fn entry(buf: *mut c_void) -> *mut CleanupBuffer {
        buf.wrapping_byte_add(PAD).cast()
    }

    /// The word after the entry (`__pad[3]`): the cancel type a `_defer` registration saved.
    fn saved_type(buf: *mut c_void) -> *mut usize {
        buf.wrapping_byte_add(PAD + 3 * std::mem::size_of::<usize>())
            .cast()
    }

    /// The handler of an entry: the jump back into the registering frame (the macros' code after
    /// `__sigsetjmp` runs the routine, then calls `__pthread_unwind_next`).
    ///
    /// # Safety
    /// `buf` is a registered buffer whose frame is alive, and every frame below it has been
    /// unwound or holds nothing to run (the unwind's stop function, this library's frames).
    unsafe extern "C-unwind" fn jump(buf: *mut c_void) {
        JUMPED.set(buf as usize);
        // SAFETY: the caller's contract; the buffer holds the macros' `__sigsetjmp` state.
        unsafe { longjmp(buf, 1) }
    }

    /// Registers `buf` with the C library and remembers it.
    fn to_glibc(buf: *mut c_void, name: &std::ffi::CStr, slot: &AtomicUsize) {
        let depth = GLIBC_DEPTH.get();
        GLIBC_BUFFERS.with(|b| {
            if let Some(c) = b.get(depth) {
                c.set(buf as usize);
            }
        });
        GLIBC_DEPTH.set(depth + 1);
        forward(buf, name, slot);
    }

    /// Calls the C library's `name(buf)`.
    fn forward(buf: *mut c_void, name: &std::ffi::CStr, slot: &AtomicUsize) {
        // SAFETY: the C library's function of that name, of this C signature.
        let f = unsafe {
            std::mem::transmute::<usize, unsafe extern "C-unwind" fn(*mut c_void)>(next(slot, name))
        };
        // SAFETY: the caller's buffer, as the macros give it.
        unsafe { f(buf) }
    }

    /// Whether the pop of `buf` is the library's: not the innermost buffer given to the C
    /// library, and (beyond the ones remembered) on the library's stack. With none given, the
    /// thread's owner decides (a buffer registered before the library was in the process is
    /// the C library's).
    fn is_ours(buf: *mut c_void) -> bool {
        let depth = GLIBC_DEPTH.get();
        if depth == 0 {
            return c_abi::has_control();
        }
        let innermost = GLIBC_BUFFERS.with(|b| b.get(depth - 1).map(Cell::get));
        match innermost {
            Some(p) if p == buf as usize => {
                GLIBC_DEPTH.set(depth - 1);
                false
            }
            Some(_) => true,
            None if cleanup::is_linked(entry(buf)) => true,
            None => {
                GLIBC_DEPTH.set(depth - 1);
                false
            }
        }
    }

    /// Pushes `buf`'s entry on the library's stack.
    ///
    /// # Safety
    /// `buf` is the macros' buffer, alive until its pop or its jump.
    unsafe fn push(buf: *mut c_void) {
        // SAFETY: the entry lies in the buffer's `__pad`, the implementation's, until the pop.
        unsafe { cleanup::tc_cleanup_push_buffer(entry(buf), Some(jump), buf) };
    }

    /// `__pthread_register_cancel` (glibc's `pthread_cleanup_push` without exceptions).
    ///
    /// # Safety
    /// `buf` is the macros' buffer, alive until the matching pop.
    #[no_mangle]
    pub unsafe extern "C" fn __pthread_register_cancel(buf: *mut c_void) {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        if !c_abi::has_control() {
            return to_glibc(buf, c"__pthread_register_cancel", &NEXT);
        }
        // SAFETY: the caller's contract.
        unsafe { push(buf) }
    }

    /// `__pthread_unregister_cancel` (glibc's `pthread_cleanup_pop`; the macros then run the
    /// routine themselves if asked).
    ///
    /// # Safety
    /// `buf` is the buffer of the matching push.
    #[no_mangle]
    pub unsafe extern "C" fn __pthread_unregister_cancel(buf: *mut c_void) {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        if !is_ours(buf) {
            return forward(buf, c"__pthread_unregister_cancel", &NEXT);
        }
        // SAFETY: the entry pushed in `buf` (not run: its routine is not called here).
        unsafe { cleanup::tc_cleanup_pop_buffer(entry(buf), 0) }
    }

    /// `__pthread_register_cancel_defer` (`pthread_cleanup_push_defer_np`): also makes the type
    /// deferred, the old one saved in the buffer.
    ///
    /// # Safety
    /// As [`__pthread_register_cancel`].
    #[no_mangle]
    pub unsafe extern "C" fn __pthread_register_cancel_defer(buf: *mut c_void) {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        if !c_abi::has_control() {
            return to_glibc(buf, c"__pthread_register_cancel_defer", &NEXT);
        }
        let was = c_abi::set_async(false);
        // SAFETY: `__pad[3]`, the implementation's; then as `__pthread_register_cancel`.
        unsafe {
            saved_type(buf).write(usize::from(was));
            push(buf);
        }
    }

    /// `__pthread_unregister_cancel_restore` (`pthread_cleanup_pop_restore_np`): also restores
    /// the type; asynchronous again with a request pending, it acts at once.
    ///
    /// # Safety
    /// As [`__pthread_unregister_cancel`].
    #[no_mangle]
    pub unsafe extern "C-unwind" fn __pthread_unregister_cancel_restore(buf: *mut c_void) {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        if !is_ours(buf) {
            return forward(buf, c"__pthread_unregister_cancel_restore", &NEXT);
        }
        // SAFETY: as `__pthread_unregister_cancel`; `__pad[3]` was written by the push.
        let asynchronous = unsafe {
            cleanup::tc_cleanup_pop_buffer(entry(buf), 0);
            saved_type(buf).read() != 0
        };
        if asynchronous {
            // SAFETY: a null old type is allowed.
            unsafe { crate::cancelability::tc_setcanceltype(1, std::ptr::null_mut()) };
        }
    }

    /// `__pthread_unwind_next`: called by the macros' code once a cleanup routine reached by an
    /// unwind's jump has run. The library's unwind goes on if it made the jump; otherwise it is
    /// the C library's.
    ///
    /// # Safety
    /// `buf` is the buffer the unwind jumped to.
    #[no_mangle]
    pub unsafe extern "C-unwind" fn __pthread_unwind_next(buf: *mut c_void) -> ! {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        if JUMPED.get() == buf as usize {
            JUMPED.set(0);
            crate::threads::resume_after_jump()
        }
        forward(buf, c"__pthread_unwind_next", &NEXT);
        std::process::abort() // the C library's does not return
    }
}

/// The addresses of the definitions above: called by the header's constructor, which every
/// program through the header runs, so that a program linked with the static library takes the
/// objects that hold them (a static link takes an object of the archive only for a symbol
/// something refers to; the code built without the header that calls them is often loaded later,
/// with `dlopen`).
pub(crate) fn keep() -> [[usize; 6]; 2] {
    let at = |f: *const ()| f as usize;
    #[cfg(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    ))]
    let cleanup = {
        use cleanup_abi::*;
        [
            at(__pthread_register_cancel as *const ()),
            at(__pthread_unregister_cancel as *const ()),
            at(__pthread_register_cancel_defer as *const ()),
            at(__pthread_unregister_cancel_restore as *const ()),
            at(__pthread_unwind_next as *const ()),
            0,
        ]
    };
    #[cfg(not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )))]
    let cleanup = [0; 6];
    [
        [
            at(pthread_cancel as *const ()),
            at(pthread_setcancelstate as *const ()),
            at(pthread_setcanceltype as *const ()),
            at(pthread_testcancel as *const ()),
            at(pthread_exit as *const ()),
            at(crate::threads::cancel_system_id as *const ()),
        ],
        cleanup,
    ]
}
