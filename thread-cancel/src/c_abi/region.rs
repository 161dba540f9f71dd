//! C regions: a C start routine run in a region the thread can leave from any instruction, and
//! what C code asks of the calling thread (its state, its points: [`syscall_point`]).

use super::*;

/// A C region's start routine, its argument and its result.
struct Call {
    start: StartFn,
    arg: *mut c_void,
    ret: *mut c_void,
}

/// The function a C region calls: runs the start routine. A forced unwind stops at this frame
/// (see [`stop`]): it is Rust, and the region's assembly frame is below it.
pub(super) unsafe extern "C" fn call_start(p: *mut c_void) {
    // SAFETY: `p` is the `Call` of `c_region`, alive for the region.
    let c = unsafe { &mut *p.cast::<Call>() };
    // SAFETY: the caller of `c_region` vouches for `start`.
    c.ret = unsafe { (c.start)(c.arg) };
}

/// Runs `start(arg)` in a C region of the calling thread, whose `act` is `act`. Returns what
/// `start` returned; if the region is left ([`c_leave`], or `act` after the signal), the
/// thread acts on its cancellation or exit: this unwinds (Rust frames only) and does not return.
///
/// # Safety
/// `start` must be a C function that does not unwind; `act` must end with [`c_unwind`] or
/// [`c_leave`]; the frames that `start` creates may be unwound by a forced unwind or
/// abandoned.
pub unsafe fn c_region(start: StartFn, arg: *mut c_void, act: ActFn) -> *mut c_void {
    // SAFETY: forwarded from the caller.
    unsafe { region_call(start, arg, act, false) }
}

/// [`c_region`]'s body; `scope`: the region of a scope's run ([`c_scope_run`]), where a C point
/// acts on the scope's cancel too, and which a scope's unwind leaves as a Rust [`ScopeUnwind`]
/// (caught by the run).
///
/// [`ScopeUnwind`]: crate::ScopeUnwind
///
/// # Safety
/// As [`c_region`].
pub(super) unsafe fn region_call(
    start: StartFn,
    arg: *mut c_void,
    act: ActFn,
    scope: bool,
) -> *mut c_void {
    let c = current_control();
    // SAFETY: an `ActFn` and the region's `act` differ only in the pointer type of their
    // argument (both are thin pointers passed in the same register).
    let act = unsafe {
        std::mem::transmute::<ActFn, unsafe extern "C-unwind" fn(*mut RegionCtx) -> !>(act)
    };
    let ctx = RegionCtx::new(c.word.as_ptr(), Some(act));
    let mut call = Call {
        start,
        arg,
        ret: std::ptr::null_mut(),
    };
    let me = &ctx as *const RegionCtx as *mut RegionCtx;
    let outer = c.region.swap(me, Ordering::SeqCst);
    let outer_scope =
        SCOPE_REGION.with(|r| r.replace(if scope { me } else { std::ptr::null_mut() }));
    // SAFETY: `ctx` stays on this frame for the region and is the thread's region meanwhile;
    // `call` does not unwind (C code); its frames may be abandoned (the caller's contract).
    let exit = unsafe { region_run(&ctx, call_start, (&mut call as *mut Call).cast()) };
    SCOPE_REGION.with(|r| r.set(outer_scope));
    c.region.store(outer, Ordering::SeqCst);
    match exit {
        RegionExit::Returned => call.ret,
        RegionExit::Left => {
            // Entered asynchronous with a request pending, or left by `act`/`c_leave` (which
            // began the cancellation, the exit or the scope's unwind already).
            let s = c.word.load();
            if scope && s & word::TERMINATING == 0 {
                if s & word::SCOPE_UNWIND != 0 {
                    crate::point::unwind(crate::point::runs::scope_payload(&c, false));
                }
                if !word::thread_acts(s) && word::acts(s) {
                    // At entry, asynchronous.
                    crate::point::unwind(crate::point::runs::scope_payload(&c, true));
                }
            }
            if s & word::TERMINATING == 0 {
                c.word.begin_cancel();
            }
            drop(c);
            raise()
        }
    }
}

/// Whether the calling thread has a control block (created by the crate, or adopted) and its
/// cancellation is the library's: a thread without one cannot be canceled by the library, and one
/// whose cancellation is the C library's ([`link_system_owned`]) is canceled by the C library.
pub fn has_control() -> bool {
    crate::control::current_ptr().is_some_and(|p| p != SYSTEM_OWNED.with(std::cell::Cell::get))
}

/// Whether the calling thread's current block is the one [`link_system_owned`] linked (a block
/// the crate links later, for a thread it creates, replaces it: the thread is then the library's).
fn system_owned() -> bool {
    let p = SYSTEM_OWNED.with(std::cell::Cell::get);
    !p.is_null() && crate::control::current_ptr() == Some(p)
}

thread_local! {
    /// The calling thread's control block when its cancellation is the C library's
    /// ([`link_system_owned`]): the `Arc` it holds, raw; null otherwise. Constant initializer,
    /// no destructor: read on every path, a signal handler's included.
    static SYSTEM_OWNED: std::cell::Cell<*const Control> =
        const { std::cell::Cell::new(std::ptr::null()) };
}

/// For the C library (glibc), in a thread creating another for code built without the header
/// (its `pthread_create`, preloaded or in a library): a control block for the new thread, whose
/// cancellation stays the C library's — its cancel, state, type, cleanup and unwind are the C
/// library's, and [`has_control`] says no there — while the blocking calls the library defines
/// are made through the library's trampoline: a cancel the C library holds for the thread acts
/// there only when the call had no effect (never both), by the C library's own act (see
/// [`set_system_act`]). The canceler returned wakes such a call (the C library's
/// `pthread_cancel` of the thread first, then this); a request made before the thread links the
/// block ([`link_system_owned`]) is found by its first call.
///
/// ```
/// let c = thread_cancel::c_abi::new_system_owned();
/// let linked = c.clone();
/// std::thread::spawn(move || {
///     assert!(thread_cancel::c_abi::link_system_owned(linked));
///     assert!(!thread_cancel::c_abi::has_control());
///     thread_cancel::c_abi::unlink_system_owned();
/// })
/// .join()
/// .unwrap();
/// assert!(c.is_finished());
/// ```
pub fn new_system_owned() -> Canceler {
    // For `unlink_system_owned`, which may run where `dlsym` could not (see `spawn_c`).
    crate::sys::resolve_sanitizer_hook();
    Canceler {
        control: Arc::new(Control::new(None)),
    }
}

/// First thing in the thread [`new_system_owned`]'s block is for: links it. No thread-local
/// destructor is registered (the creating thread may hold the dynamic loader's lock); the
/// caller calls [`unlink_system_owned`] when the thread ends. `false` (and nothing) if the
/// thread has a block already.
pub fn link_system_owned(block: Canceler) -> bool {
    if crate::control::current_ptr().is_some() {
        return false;
    }
    crate::current::link_unregistered(&block.control);
    SYSTEM_OWNED.with(|s| s.set(Arc::into_raw(block.control)));
    // A thread may start with every signal blocked (an attribute's mask, its creator's): the C
    // library never blocks its own signals there, and the cancel signal is one of them now.
    let set = crate::sys::cancel_signal_set();
    // SAFETY: a set of our own; the calling thread's mask.
    unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
    true
}

/// Undoes [`link_system_owned`] at the thread's end: the block is unlinked (if it is still the
/// thread's current one) and finished. Nothing if the thread's cancellation is not the C
/// library's (it never was, or [`own_system_thread`] made it the library's).
pub fn unlink_system_owned() {
    // Called at the thread's end, perhaps from a cleanup run by the C library's forced unwind,
    // which ends with a jump to the thread's start: the frames below, unwound, must not keep
    // AddressSanitizer's poisoning (a no-op without it).
    abandoning_frames();
    let p = SYSTEM_OWNED.with(|s| s.replace(std::ptr::null()));
    if p.is_null() {
        return;
    }
    if crate::control::current_ptr() == Some(p) {
        crate::current::unlink_unregistered();
    }
    // SAFETY: `p` came from `Arc::into_raw` in `link_system_owned`, taken back once (the slot
    // is null now).
    let control = unsafe { Arc::from_raw(p) };
    control.finish();
}

/// Makes the calling thread's cancellation the library's, if it was the C library's
/// ([`link_system_owned`]): from now on the block is the thread's as for any thread the library
/// adopts (released by a thread-local destructor). Returns whether it was the C library's.
pub fn own_system_thread() -> bool {
    if !system_owned() {
        return false;
    }
    let p = SYSTEM_OWNED.with(|s| s.replace(std::ptr::null()));
    // SAFETY: as in `unlink_system_owned`.
    let control = unsafe { Arc::from_raw(p) };
    match crate::current::link_adopted(control) {
        Ok(()) => true,
        Err(control) => {
            // Its thread-local destructors are running: it stays the C library's.
            SYSTEM_OWNED.with(|s| s.set(Arc::into_raw(control)));
            false
        }
    }
}

/// For a thread whose cancellation is the C library's ([`link_system_owned`]): its cancel state
/// as the C library's `pthread_setcancelstate` just set it, so that the library's calls are not
/// stopped while it is disabled. Nothing on any other thread.
pub fn mirror_system_state(disabled: bool) {
    if system_owned() {
        with_current(|c| c.word.set_disabled(disabled));
    }
}

/// How a thread whose cancellation is the C library's acts where a call of the library's had no
/// effect: the C library's `pthread_testcancel`; 0 before [`set_system_act`].
static SYSTEM_ACT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Sets the C library's act for the threads whose cancellation is the C library's (see
/// [`link_system_owned`]): it acts on a cancel the C library holds for the calling thread (an
/// unwind), or returns if the C library would not act at a point now.
pub fn set_system_act(act: fn()) {
    SYSTEM_ACT.store(act as usize, Ordering::Relaxed);
}

/// Whether the calling thread acts on a cancellation in C code: a thread created from C (in
/// its C region), or a *foreign C thread*: one the library did not create (the main thread, a
/// thread the C library created, such as a `SIGEV_THREAD` timer's) whose stack holds only C and
/// C++ frames (and this library's own). Threads spawned by the Rust API, and threads with Rust
/// frames of another copy of `std` on their stack (a Rust program's main or `std` threads), never
/// act in C code: they unwind to their own root in Rust.
pub fn in_c_region() -> bool {
    with_current(|c| in_region(c) || (c.exit_type.is_none() && foreign_stack_is_c()))
        .unwrap_or(false)
}

/// Whether the calling thread, whose control block is `c`, is in a C region.
fn in_region(c: &Control) -> bool {
    let r = c.region.load(Ordering::Relaxed);
    // SAFETY: a non-null region of the calling thread is alive (its `run` is on the stack).
    !r.is_null() && region_has_act(unsafe { &*r })
}

thread_local! {
    /// The calling thread's innermost region of a scope's run ([`c_scope_run`]), while it is
    /// the thread's current region; null otherwise (owner-only).
    pub(super) static SCOPE_REGION: std::cell::Cell<*mut RegionCtx> =
        const { std::cell::Cell::new(std::ptr::null_mut()) };
}

/// Whether the calling thread, whose control block is `c`, runs C code in the region of a
/// scope's run (its current region is the innermost such region).
fn in_scope_region(c: &Control) -> bool {
    let r = c.region.load(Ordering::Relaxed);
    !r.is_null() && SCOPE_REGION.with(std::cell::Cell::get) == r
}

/// What a C point of a thread that acts in C code does with the word `s`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CAct {
    /// Nothing (the call is made).
    No,
    /// Act on the thread's own request (it wins over a scope's).
    Thread,
    /// Act on a scope's request: only in the region of a scope's run, whose boundary the C
    /// frames are unwound to.
    Scope,
}

fn c_decide(c: &Control, s: u32) -> CAct {
    if word::thread_acts(s) {
        CAct::Thread
    } else if word::acts(s) && in_scope_region(c) {
        CAct::Scope
    } else {
        CAct::No
    }
}

thread_local! {
    /// For a thread the library did not create: whether its stack is C (`C_STACK_YES`), as
    /// found by [`stack::only_c_frames`] the first time it was asked.
    static C_STACK: std::cell::Cell<u8> = const { std::cell::Cell::new(C_STACK_UNKNOWN) };
}
const C_STACK_UNKNOWN: u8 = 0;
const C_STACK_YES: u8 = 1;
const C_STACK_NO: u8 = 2;

/// Whether the calling thread (not created by the library) has a C stack: decided once per
/// thread (its bottom frames, which say who started it, do not change); [`c_unwind`] checks
/// again, the whole stack, before it unwinds.
pub(super) fn foreign_stack_is_c() -> bool {
    match C_STACK.with(std::cell::Cell::get) {
        C_STACK_YES => true,
        C_STACK_NO => false,
        _ => {
            let yes = stack::only_c_frames();
            C_STACK.with(|v| v.set(if yes { C_STACK_YES } else { C_STACK_NO }));
            yes
        }
    }
}

/// Whether the calling thread, in a C region, must act on a request now (enabled, pending,
/// not already terminating): its own, or, in the region of a scope's run, a scope's.
pub fn c_must_act() -> bool {
    with_current(|c| c_decide(c, c.word.load()) != CAct::No).unwrap_or(false) && in_c_region()
}

/// Whether the calling thread, in a C region, must act on its own request now (enabled,
/// pending, not already terminating); a scope's request is not looked at.
pub fn c_must_act_on_thread() -> bool {
    with_current(|c| word::thread_acts(c.word.load())).unwrap_or(false) && in_c_region()
}

/// Begins acting on the pending request: from now on cancellation is disabled. In the region
/// of a scope's run with only a scope's request pending, begins the scope's unwind instead.
/// Nothing if an unwind has begun already (the thread's termination, or a scope's: it goes on).
pub fn begin_cancel() {
    with_current(|c| {
        let s = c.word.load();
        if s & word::UNWINDING != 0 {
            return;
        }
        if c_decide(c, s) == CAct::Scope {
            crate::point::runs::begin_scope_unwind_in_c(c);
        } else {
            c.word.begin_cancel();
        }
    });
}

/// Whether the calling thread has begun to act on a cancellation or an exit.
pub fn terminating() -> bool {
    with_current(|c| c.word.load() & word::TERMINATING != 0).unwrap_or(false)
}

/// Begins `exit(value)` in the calling thread (the value is type-checked against the thread's
/// result type, as [`exit`](crate::exit)); the caller then runs its cleanup handlers and calls
/// [`c_leave`]. Returns false if the thread was already terminating (the value is dropped).
pub fn begin_exit<V: Send + 'static>(value: V) -> bool {
    let c = current_control();
    if c.word.load() & word::TERMINATING != 0 {
        return false;
    }
    if let Some(expected) = c.exit_type {
        assert!(
            expected == std::any::TypeId::of::<V>(),
            "thread-cancel: exit value of the wrong type"
        );
    }
    c.set_exit_value(Box::new(value));
    c.word.begin_exit();
    true
}

/// The exit value that [`begin_exit`] stored for the calling thread, if any (for a thread the
/// library did not create, whose end the C side handles itself).
pub fn take_exit_value<V: 'static>() -> Option<V> {
    let c = current_control();
    c.take_exit_value()
        .and_then(|b| b.downcast::<V>().ok())
        .map(|b| *b)
}

/// For a thread the crate did not spawn that ends without its thread-local destructors (the
/// main thread's `pthread_exit`, or a cancellation it acted on in C code, after which it runs
/// nothing more): runs its thread-specific-data destructors now (they would otherwise run at
/// its thread-local teardown, which never comes), and marks it finished, so that requests
/// report it gone and its waiters wake.
pub fn end_adopted_thread() {
    crate::tsd::run_destructors();
    if let Some(c) = crate::current::try_current_control() {
        c.finish();
    }
}

/// Waits until the thread of `c` has finished, or until `deadline` (`None`: no limit);
/// returns whether it finished. A cancellation point for the caller (as
/// [`JoinHandle::wait`](crate::JoinHandle::wait)), which is adopted if it has no control
/// block.
pub fn wait_finished(c: &Canceler, deadline: Option<Instant>) -> bool {
    crate::thread::wait_finished(&c.control, deadline, false)
}

/// [`wait_finished`] for a caller that no one can cancel (it has no control block, see
/// [`has_control`]): not a cancellation point, and the caller is not adopted (adopting it
/// would register a thread-local destructor, which takes the dynamic loader's lock: a library
/// destructor run by `dlclose` may be the caller, and its library is gone by the time such a
/// destructor would run).
pub fn wait_finished_uncancelable(c: &Canceler, deadline: Option<Instant>) -> bool {
    let target = &c.control;
    let finished = || target.word.load() & word::FINISHED != 0;
    if finished() {
        return true;
    }
    let me = Arc::new(Control::new(None)); // a parker for this wait only
    target.add_waiter(me.clone());
    let wake = crate::point::wait::wait_until(&me, finished, deadline);
    target.remove_waiter(&me);
    wake == crate::point::wait::Wake::Ready
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
/// the cancellation, or in the region of a scope's run the scope's unwind, has begun: the
/// caller goes on with [`c_unwind`]). Only threads in a C region act; in others this is the
/// plain call.
///
/// # Safety
/// The arguments must be valid for system call `nr`, as for `libc::syscall`.
pub unsafe fn syscall_point(nr: calls::Call, a: [libc::c_long; 6]) -> Option<libc::c_long> {
    // A thread in a C region has a control block (borrowed: no `Arc` count per call).
    let c = match crate::control::current_ptr() {
        // SAFETY: the calling thread's control block, alive until its thread-local destructors.
        Some(c) if in_c_region() => unsafe { &*c },
        // SAFETY: forwarded from the caller.
        _ => return Some(unsafe { crate::sys::calls::plain(nr, a) }),
    };
    // SAFETY: `c` is the calling thread's block; the arguments are valid for `nr` by this
    // function's contract.
    let r = unsafe { crate::point::syscall::in_call(c, nr, a) };
    let s = c.word.load();
    let act = c_decide(c, s);
    match r {
        crate::sys::CpResult::Done(r)
            if !(r == -(libc::EINTR as libc::c_long) && act != CAct::No) =>
        {
            Some(r)
        }
        _ => match act {
            CAct::Thread => {
                c.word.begin_cancel();
                None
            }
            CAct::Scope => {
                crate::point::runs::begin_scope_unwind_in_c(c);
                None
            }
            // Already acting (a cleanup handler's call, R19), or a scope's request, which C
            // code outside a `tc_scope_run` does not act on: the call is made.
            // SAFETY: forwarded from the caller.
            CAct::No => Some(unsafe { crate::sys::calls::plain(nr, a) }),
        },
    }
}

/// Sets the calling thread's cancel state (`disabled`) without acting; returns the previous
/// one. The C side acts itself (`c_must_act`) when it enables.
pub fn set_disabled(disabled: bool) -> bool {
    crate::current::with_own(|c| c.word.set_disabled(disabled))
}

/// For the C library, before `main`, on the main thread: links a control block to the calling
/// thread for the rest of the process (or makes the one it has, if its cancellation was the C
/// library's, the library's) without registering a thread-local destructor
/// (registering one from a library's constructor would keep the library loaded after
/// `dlclose`: a plugin that links the static C library). Nothing if it has one already.
///
/// ```
/// std::thread::spawn(|| {
///     thread_cancel::c_abi::link_for_the_process();
///     assert!(thread_cancel::c_abi::has_control());
/// })
/// .join()
/// .unwrap();
/// ```
pub fn link_for_the_process() {
    if system_owned() {
        // The C library's block of the thread (see `link_system_owned`) becomes the library's,
        // for the process: its `Arc` is never taken back.
        SYSTEM_OWNED.with(|s| s.set(std::ptr::null()));
        return;
    }
    if crate::control::current_ptr().is_some() {
        return;
    }
    let control = Arc::new(Control::new(None));
    crate::current::link_unregistered(&control);
    // The thread's block for as long as the process lives: never unlinked, never freed.
    std::mem::forget(control);
}

/// For the C library, before `main`: threads adopted from now on (the main thread, threads
/// created without the compatibility header) do not take `std`'s handle of themselves until
/// they park through `std` (`thread_cancel::park`), so that `std` creates no thread-specific
/// key of the C library's: a C program gets every one of its `PTHREAD_KEYS_MAX` keys, as with
/// glibc alone. Their `Canceler::thread_id()` is `None` until then.
pub fn adopt_without_std_handle() {
    crate::current::adopt_without_std_handle();
}

/// `pthread_setcancelstate`'s view: sets the calling thread's cancel state as
/// [`set_disabled`] does, and returns the state it had last set itself, which acting on a
/// cancellation (or `exit`) does not change, as glibc (its cleanup handlers see the state the
/// thread had; a thread still never acts on a cancellation twice).
pub fn set_cancel_state(disabled: bool) -> bool {
    crate::current::with_own(|c| c.word.set_state(disabled).1)
}

/// Sets the calling thread's cancel type (`asynchronous`) without acting; returns the previous
/// one.
pub fn set_async(asynchronous: bool) -> bool {
    crate::current::with_own(|c| c.word.set_async(asynchronous))
}

/// Whether the calling thread's type is asynchronous.
pub fn is_async() -> bool {
    with_current(|c| c.word.load() & word::ASYNC != 0).unwrap_or(false)
}

/// The C library's own `SIGRTMIN`: on glibc the C ABI's library defines
/// `__libc_current_sigrtmin` itself (every module then sees the program's), so `libc::SIGRTMIN`
/// there is the library's answer; this is the C library's behind it.
pub fn system_sigrtmin() -> i32 {
    crate::sys::sigrtmin()
}

/// `SIGRTMIN` as every module sees it when the cancel signal is `cancel_signal`: the one after
/// it if it is among the C library's first eight real-time signals, else the C library's own.
///
/// ```
/// let min = thread_cancel::c_abi::system_sigrtmin();
/// assert_eq!(thread_cancel::c_abi::program_sigrtmin(min), min + 1);
/// assert_eq!(thread_cancel::c_abi::program_sigrtmin(min + 8), min);
/// ```
pub fn program_sigrtmin(cancel_signal: i32) -> i32 {
    crate::sys::program_sigrtmin(crate::sys::sigrtmin(), cancel_signal)
}

/// The cancel signal the first thread will install if none is chosen before: with `interpose`,
/// the C library's first real-time signal, or the one `THREAD_CANCEL_SIGNAL` names.
pub fn default_cancel_signal() -> i32 {
    crate::sys::default_signal()
}

/// The cancel signal: the one in use (the C library chooses it with `io::set_signal` before
/// `main`), or, before any is chosen, the default one that the first thread spawned or adopted
/// will install. Masks that C code sets or passes to a call never block it, signal waits never
/// take it, and the C library keeps it from the program's signal calls.
pub fn cancel_signal() -> i32 {
    crate::sys::signal().unwrap_or_else(crate::sys::default_signal)
}

/// For the C library (glibc), at load: the interposed `sigaction`, `signal`, `bsd_signal` and
/// `sysv_signal` refuse the cancel signal to the program (`EINVAL`, as glibc's refuse glibc's
/// own signals), the library's own installation of its handler excepted.
pub fn refuse_cancel_signal() {
    #[cfg(thread_cancel_interpose)]
    crate::interpose::refuse_cancel_signal();
}

/// A copy of `set` without the cancel signal (see [`cancel_signal`]): for the mask of a wait
/// and the set of a signal wait, which must never block or take it (the Rust points use the
/// same function).
pub fn without_cancel_signal(set: &libc::sigset_t) -> libc::sigset_t {
    crate::sys::without_cancel_signal(set)
}

/// The calling thread's `errno` slot (`__errno_location`; bionic's `__errno`).
pub fn errno_location() -> *mut libc::c_int {
    crate::sys::errno_location()
}

/// How the C side acts on a thread's cancellation from inside a call: `threads::act` of
/// `thread-cancel-ffi` (cleanup handlers, the forced unwind of the C and C++ frames), set once
/// at load by [`set_foreign_call_act`]; 0 before.
static FOREIGN_CALL_ACT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Sets how a blocking call made by C code the library did not compile (another library's
/// `read`, reached by interposition) acts on the calling thread's cancellation, where the
/// thread acts in C code: `act` runs the cleanup handlers and unwinds the C and C++ frames (it
/// must start from a frame holding nothing, as every C point's).
pub fn set_foreign_call_act(act: fn() -> !) {
    FOREIGN_CALL_ACT.store(act as usize, Ordering::Relaxed);
    #[cfg(thread_cancel_interpose)]
    crate::interpose::set_foreign_call_decider(foreign_call);
}

thread_local! {
    /// How deep the calling thread is in the library's own code that calls the C library's
    /// blocking functions from Rust frames ([`LibraryCode`]): its calls never act by unwinding.
    static IN_LIBRARY: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// While alive, the calling thread's interposed calls act as a Rust thread's (they fail with
/// `ECANCELED`), never by the C side's forced unwind: the library's own code that reaches the
/// C library's blocking functions through `std` (reading `/proc`) holds Rust values that an
/// unwind from inside those calls would have to pass.
pub struct LibraryCode(std::marker::PhantomData<*const ()>);

impl LibraryCode {
    /// Enters the library's own code.
    pub fn enter() -> LibraryCode {
        IN_LIBRARY.with(|d| d.set(d.get() + 1));
        LibraryCode(std::marker::PhantomData)
    }
}

impl Drop for LibraryCode {
    fn drop(&mut self) {
        IN_LIBRARY.with(|d| d.set(d.get() - 1));
    }
}

#[cfg(thread_cancel_interpose)]
use crate::interpose::ForeignCall;

/// For an interposed call of the calling thread, whose control block is `c`, stopped by a
/// request (the word `s`): what it does (see [`ForeignCall`]).
#[cfg(thread_cancel_interpose)]
pub(crate) fn foreign_call(c: &Control, s: u32) -> ForeignCall {
    if IN_LIBRARY.with(std::cell::Cell::get) != 0 {
        return ForeignCall::Plain;
    }
    if system_owned() {
        // The C library's thread: only its own cancellation acts, by the C library.
        let act = SYSTEM_ACT.load(Ordering::Relaxed);
        return if act != 0 && word::thread_acts(s) {
            // SAFETY: only `set_system_act` stores a non-zero value: a `fn()`.
            ForeignCall::SystemAct(unsafe { std::mem::transmute::<usize, fn()>(act) })
        } else {
            ForeignCall::Plain
        };
    }
    let f = FOREIGN_CALL_ACT.load(Ordering::Relaxed);
    let acts_now = word::thread_acts(s);
    if f == 0 || !(acts_now || s & word::TERMINATING != 0) {
        return ForeignCall::AsRust;
    }
    if !(in_region(c) || (c.exit_type.is_none() && foreign_stack_is_c())) {
        return ForeignCall::AsRust;
    }
    if !acts_now {
        return ForeignCall::Plain;
    }
    // SAFETY: only `set_foreign_call_act` stores a non-zero value: a `fn() -> !`.
    ForeignCall::Act(unsafe { std::mem::transmute::<usize, fn() -> !>(f) })
}

/// Registers `f` to run when the calling thread's own cancellation is requested (never for a
/// scope's cancel), or at once if it is pending: the wake-up of a wait in code that handles no
/// error for a scope's cancel. Unregistered when the guard is dropped.
pub fn on_thread_cancel<F: FnOnce() + Send + 'static>(f: F) -> crate::OnCancelGuard {
    crate::on_cancel::on_thread_cancel(f)
}
