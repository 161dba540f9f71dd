//! Feature `interpose` (Linux, 64-bit): the library defines the C library's blocking functions,
//! so that every such call in the process — from `std`, from other crates, from C libraries
//! linked into the program — is a cancellation point of ours that acts by **returning an
//! error** with no effect, never by unwinding (its callers are `extern "C"` frames: unwinding
//! through them is undefined behaviour, RFC 2945; an error return is ordinary C).
//!
//! The full list, what `std` does with each result and what is not reached are in
//! `thread-cancel/docs/interpose.md`. The rules, decided here:
//!
//! - **Fast path (E06, P11).** A thread without a control block (it never met the crate) reads
//!   one const thread-local and calls the C library's own definition (`next.rs`, found at
//!   load), so the C library's cancellation still works for it. A thread with one makes the
//!   call through the crate's trampoline ([`in_call`]), which tests the state word once: the
//!   same "completed or no effect" machinery as the crate's own points.
//! - **Acting (E02).** Where a crate point would unwind, the call fails with `-1` and errno
//!   `ECANCELED` (a thread cancel, or a scope cancel) or `ETIMEDOUT` (the innermost canceled
//!   run's scope has a deadline that passed). The request stays in place: a thread cancel is
//!   acted on at the thread's next own point (E04); a scope's cancel stays level-triggered, so
//!   every later interposed call of that run fails at once (E03). A failure caused by a scope
//!   marks the thread's canceled runs as acted on (`point::runs::mark_acted`, C08).
//! - **Child processes.** Acting on a cancel kills the child processes the canceled runs
//!   started (all the thread's runs for a thread cancel), and lets the run collect what they
//!   left: `children.rs`.
//! - **Sleeps.** `nanosleep` and relative `clock_nanosleep` fail with `EINTR` and write a
//!   remaining time of zero: `std::thread::sleep` loops on `EINTR` with the remaining time (and
//!   asserts that the error is `EINTR`), so it returns early, without a panic and without a
//!   spin. An absolute `clock_nanosleep` (`TIMER_ABSTIME`) is not a point: `EINTR` would make
//!   its callers' retry loops spin, and another error would trip std's assertion.
//! - **Disabled.** With cancellation disabled (`disable()`, `set_cancel_state`), nothing acts:
//!   the plain call is made.
//! - **While the thread unwinds.** During a scope's unwind (a `Drop` run by it) interposed
//!   calls still fail (they act by an error, which needs no unwind: REQUIREMENTS, "Shield").
//!   During the thread's own termination (it acts on its cancel or on `exit`) they make the plain
//!   call: the thread acts once (cancellation stays disabled once it acts), and its cleanup I/O
//!   works as under POSIX. A termination or scope unwind swallowed by `catch_unwind` (the thread
//!   is no longer unwinding) fails them.
//! - **Standard output and error.** `write`/`writev` to descriptors 1 and 2 are not points:
//!   `print!`/`println!`/`eprintln!` panic when their write fails, so a canceled run's logging
//!   would panic. A blocked write there is not interrupted (the crate's `io::stdout()` is the
//!   cancelable writer).
//!
//! Nothing on the crate's paths may panic, so nothing of ours unwinds out of the functions:
//! they do raw system calls, thread-local reads of `const` cells, atomic loads and integer
//! arithmetic. The only calls into code that could panic in principle are `Instant::now` (its
//! `clock_gettime` cannot fail for `CLOCK_MONOTONIC`) and the scope's `marked`/`deadline`
//! (atomic loads and a field read). The functions are `extern "C-unwind"` (the C library's
//! forced unwind of a foreign thread passes through them, `next.rs`), so a guard
//! (`AbortOnUnwind`) aborts the process should one panic anyway: never an unwind into C.
//!
//! Async-signal-safety (E07): no allocation, no lock, no lazily initialised thread-local;
//! errno is the C library's (`__errno_location`).

mod calls;
mod children;
mod next;
mod signals;

pub(crate) use children::forget_from as forget_children;
#[cfg(feature = "c-abi")]
pub(crate) use signals::refuse_cancel_signal;

use crate::control::Control;
use crate::point::conv::{c_result, plain_c, plain_raw, set_errno};
use crate::point::syscall::{in_call, in_call_keep};
use crate::sys::CpResult;
use crate::word;
use libc::{c_int, c_long};

/// What the slow path decided for a call the trampoline did not simply complete.
enum Verdict {
    /// The call ran: its raw result.
    Done(c_long),
    /// Fail with this errno, no effect.
    Fail(c_int),
    /// Make the call again without cancellation (nothing acts here).
    Plain,
    /// Make the call again as a point: a deadline tick stopped it and no deadline had passed.
    Again,
    /// A thread that acts in C code acts on its own cancellation here, as at a C point: the
    /// caller calls this (the C side's act: the forced unwind of the C and C++ frames) once
    /// nothing of its own is live (feature `c-abi`, the C ABI's library).
    #[cfg(feature = "c-abi")]
    ActInC(fn() -> !),
    /// A thread whose cancellation is the C library's: the call had no effect; the caller calls
    /// this (the C library's own act, which unwinds if the C library would act at a point
    /// now), then, if it returns, makes the call plainly (feature `c-abi`).
    #[cfg(feature = "c-abi")]
    SystemAct(fn()),
}

/// What an interposed call that a request stopped does on a thread of the C ABI (feature
/// `c-abi`; decided there, by the function it registers with [`set_foreign_call_decider`], so
/// that this lower layer does not import the C ABI's support).
#[cfg(feature = "c-abi")]
pub(crate) enum ForeignCall {
    /// As on any thread of the crate (the interposed call fails, or is made plainly).
    AsRust,
    /// The plain call: the library's own code, or a thread that acts in C code and has begun to
    /// act (its cleanup handlers' calls work, as under glibc).
    Plain,
    /// Act on the thread's own cancellation here: the C side's act (its cleanup handlers, the
    /// forced unwind of its C and C++ frames).
    Act(fn() -> !),
    /// A thread whose cancellation is the C library's (`c_abi::link_system_owned`), stopped by
    /// a request it acts on: the call had no effect; the C library acts (this function, its
    /// `pthread_testcancel`), or, if it does not, the call is made plainly.
    SystemAct(fn()),
}

/// The C ABI's decision for a stopped call of the thread whose control block and word are
/// given ([`ForeignCall`]).
#[cfg(feature = "c-abi")]
pub(crate) type ForeignCallDecider = fn(&Control, u32) -> ForeignCall;

/// The registered [`ForeignCallDecider`] (0: none: every thread as Rust's).
#[cfg(feature = "c-abi")]
static FOREIGN_CALL_DECIDER: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Registers how the C ABI decides a stopped call on its threads (once, at load).
#[cfg(feature = "c-abi")]
pub(crate) fn set_foreign_call_decider(f: ForeignCallDecider) {
    FOREIGN_CALL_DECIDER.store(f as usize, std::sync::atomic::Ordering::Relaxed);
}

#[cfg(feature = "c-abi")]
fn foreign_call_decider() -> Option<ForeignCallDecider> {
    let f = FOREIGN_CALL_DECIDER.load(std::sync::atomic::Ordering::Relaxed);
    // SAFETY: only `set_foreign_call_decider` stores a non-zero value: a `ForeignCallDecider`.
    (f != 0).then(|| unsafe { std::mem::transmute::<usize, ForeignCallDecider>(f) })
}

/// The errno slot [`after_call`] returns for [`Verdict::ActInC`], which no call fails with.
#[cfg(feature = "c-abi")]
const ACT_IN_C: c_int = c_int::MIN;

/// How a call acts: `Stdio` calls (writes to descriptors 1 and 2) never fail because of a
/// cancel.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Point,
    Stdio,
    /// A write: `Stdio` if its descriptor (the first argument) is 1 or 2, else `Point`. Told
    /// apart by [`point`] on its slow path only, from the arguments the trampoline gives back,
    /// so that the fast path keeps nothing of it across the call.
    Write,
}

impl Kind {
    /// `Write` told apart by its descriptor `fd`; the others as they are.
    #[inline(always)]
    fn of(self, fd: c_long) -> Kind {
        match self {
            Kind::Write if fd == 1 || fd == 2 => Kind::Stdio,
            Kind::Write => Kind::Point,
            k => k,
        }
    }
}

/// Makes system call `nr` as an interposed point: its C-style result (`-1` and errno on
/// failure; on a cancel, errno `ECANCELED` or `ETIMEDOUT`).
///
/// # Safety
/// The arguments must be valid for system call `nr`.
///
/// Only the fast path is inlined into the interposed function: the thread-local read, the
/// trampoline (which keeps the argument registers: `sys::syscall_cp`) and the result test.
/// The rest is out of line ([`point_slow`], [`point_slow3`]), reached by a jump with its
/// arguments in registers, so that the fast path makes no call of its own and stores no
/// argument array to memory around the system call.
#[inline(always)]
unsafe fn point(nr: c_long, a: [c_long; 6], kind: Kind) -> c_long {
    // SAFETY: forwarded from the caller.
    unsafe { point_on(crate::control::current_ptr(), nr, a, kind) }
}

/// [`point`] with the calling thread's control block read already (`cur`, from
/// `control::current_ptr()`), so that a function that looked at it first reads it once.
///
/// # Safety
/// As [`point`]; `cur` is `control::current_ptr()` of the calling thread, read in this call.
#[inline(always)]
unsafe fn point_on(cur: Option<*const Control>, nr: c_long, a: [c_long; 6], kind: Kind) -> c_long {
    // (A test the compiler folds away: the arguments are constants at nearly every call.)
    let three = a[3] == 0 && a[4] == 0 && a[5] == 0;
    let Some(c) = cur else {
        // A thread without a control block whose C library definition was not found: the
        // slow path makes the plain call. A path of its own, so that the fast path below
        // shares no block with it (the compiler would otherwise keep the arguments in
        // callee-saved registers for both).
        let how = Slow {
            nr,
            kind: kind.of(a[0]),
            r: CpResult::Canceled,
        };
        // SAFETY: forwarded from the caller.
        return unsafe { point_slow_any(three, None, how, a) };
    };
    // SAFETY: `current_ptr` is the calling thread's control block, alive for this call.
    let c = unsafe { &*c };
    // A failed call takes the slow path too: its errno store is a call (to
    // `__errno_location`), which would make the fast path keep its values across it. The
    // arguments for the slow path are the ones the trampoline preserved.
    // SAFETY: forwarded from the caller; `c` is this thread's block. Nothing here can panic (a
    // load, the trampoline, a comparison): the guard against an unwind into C is in the slow
    // path.
    let (r, a) = unsafe { in_call_keep(c, nr, a) };
    // One sign test: a negative result is a failure, `CANCELED`, or (rarely: `fcntl`'s
    // `F_GETOWN` of a process group) a value below the kernel's error range, which the slow
    // path returns as it is (`c_result`).
    if let CpResult::Done(r) = r {
        if r >= 0 {
            return r;
        }
    }
    let kind = kind.of(a[0]);
    // SAFETY: forwarded from the caller.
    unsafe { point_slow_any(three, Some(c), Slow { nr, kind, r }, a) }
}

/// Jumps to [`point_slow3`] (`three`: the last three arguments are zero) or [`point_slow`].
///
/// # Safety
/// As [`point_slow`].
#[inline(always)]
unsafe fn point_slow_any(three: bool, c: Option<&Control>, how: Slow, a: [c_long; 6]) -> c_long {
    let [a1, a2, a3, a4, a5, a6] = a;
    if three {
        // SAFETY: forwarded from the caller.
        unsafe { point_slow3(c, how.pack(), a1, a2, a3) }
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { point_slow(c, how, [a1, a2, a3, a4, a5, a6]) }
    }
}

/// What [`point`]'s slow path needs besides the arguments: the call, its kind and the
/// trampoline's result.
struct Slow {
    nr: c_long,
    kind: Kind,
    r: CpResult,
}

impl Slow {
    /// Two words (passed in registers, so that [`point_slow3`] takes no argument on the stack
    /// and the fast path can jump to it): the result, and the call number with the kind
    /// (bit 32) and whether the trampoline said act (bit 33) above it.
    #[inline(always)]
    fn pack(self) -> [c_long; 2] {
        let (r, canceled) = match self.r {
            CpResult::Done(r) => (r, false),
            CpResult::Canceled => (0, true),
        };
        let kind = c_long::from(self.kind == Kind::Stdio);
        [r, self.nr | kind << 32 | c_long::from(canceled) << 33]
    }

    #[inline(always)]
    fn unpack([r, w]: [c_long; 2]) -> Slow {
        Slow {
            nr: w & 0xffff_ffff,
            kind: if w & (1 << 32) != 0 {
                Kind::Stdio
            } else {
                Kind::Point
            },
            r: if w & (1 << 33) != 0 {
                CpResult::Canceled
            } else {
                CpResult::Done(r)
            },
        }
    }
}

/// [`point_slow`] for a call whose last three arguments are zero: every argument in a
/// register, so that [`point`]'s fast path jumps here (a tail call: nothing on the stack).
///
/// # Safety
/// As [`point_slow`].
#[cold]
#[inline(never)]
unsafe fn point_slow3(
    c: Option<&Control>,
    how: [c_long; 2],
    a1: c_long,
    a2: c_long,
    a3: c_long,
) -> c_long {
    // SAFETY: forwarded from the caller.
    unsafe { point_slow(c, Slow::unpack(how), [a1, a2, a3, 0, 0, 0]) }
}

/// [`point`] when its fast path did not return: a thread without a control block (`c` is
/// `None`: the plain call), or one whose trampoline returned `how.r`, which said act or is a
/// failure (with `EINTR`: [`after_call`] decides, and makes the call again if told to; any
/// other: errno).
///
/// # Safety
/// As [`point`]; `c` is the calling thread's control block.
#[cold]
#[inline(never)]
unsafe fn point_slow(c: Option<&Control>, how: Slow, a: [c_long; 6]) -> c_long {
    let Some(c) = c else {
        // A thread that never met the crate: the plain call, its result C-style already.
        // SAFETY: forwarded from the caller.
        return unsafe { plain_c(how.nr, a) };
    };
    // SAFETY: forwarded from the caller.
    match unsafe { after_call(c, how.nr, a, how.kind, how.r) } {
        Ok(r) => c_result(r),
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}

/// [`point`] without errno: the raw result, or the errno the cancel fails the call with.
///
/// # Safety
/// As [`point`].
#[inline(always)]
unsafe fn raw_point(nr: c_long, a: [c_long; 6], kind: Kind) -> Result<c_long, c_int> {
    let Some(c) = crate::control::current_ptr() else {
        // A thread that never met the crate: one thread-local read, the plain call.
        // SAFETY: forwarded from the caller.
        return Ok(unsafe { plain_raw(nr, a) });
    };
    // SAFETY: `current_ptr` is the calling thread's control block, alive for this call.
    let c = unsafe { &*c };
    // SAFETY: forwarded from the caller; `c` is this thread's block.
    let r = unsafe { in_call(c, nr, a) };
    // SAFETY: forwarded from the caller.
    unsafe { after_call(c, nr, a, kind, r) }
}

/// The rest of [`raw_point`] once the trampoline returned `r`: the result of a completed call,
/// or the slow path's verdict ([`decide`]), making the call again when told to.
///
/// # Safety
/// As [`point`]; `c` is the calling thread's control block.
#[inline(always)]
unsafe fn after_call(
    c: &Control,
    nr: c_long,
    a: [c_long; 6],
    kind: Kind,
    mut r: CpResult,
) -> Result<c_long, c_int> {
    // The interposed functions are `extern "C-unwind"` (the C library's cancel of a foreign
    // thread unwinds through them, `next.rs`): a panic here must not unwind into C.
    let abort = AbortOnUnwind;
    #[cfg(feature = "c-abi")]
    let mut act_in_c = None;
    #[cfg(feature = "c-abi")]
    let mut system_act = None;
    let v = loop {
        break match r {
            CpResult::Done(r) if r != -(libc::EINTR as c_long) => Ok(r),
            _ => match decide(c, r, kind) {
                Verdict::Done(r) => Ok(r),
                // SAFETY: forwarded from the caller.
                Verdict::Fail(e) => match unsafe { children::collect(nr, a) } {
                    // What the run's killed children left (their pipes, their status).
                    Some(r) => Ok(r),
                    None => {
                        record_failure(c, e);
                        Err(e)
                    }
                },
                Verdict::Plain => {
                    // SAFETY: forwarded from the caller.
                    Ok(unsafe { plain_raw(nr, a) })
                }
                Verdict::Again => {
                    // SAFETY: forwarded from the caller; `c` is this thread's block.
                    r = unsafe { in_call(c, nr, a) };
                    continue;
                }
                #[cfg(feature = "c-abi")]
                Verdict::ActInC(act) => {
                    act_in_c = Some(act);
                    Err(ACT_IN_C)
                }
                #[cfg(feature = "c-abi")]
                Verdict::SystemAct(act) => {
                    system_act = Some(act);
                    Err(ACT_IN_C)
                }
            },
        };
    };
    std::mem::forget(abort);
    #[cfg(feature = "c-abi")]
    if let Some(act) = act_in_c {
        // The call had no effect. Nothing of this function (nor of its callers in this module,
        // up to the interposed symbol) is live with a destructor: the C side's forced unwind
        // passes these frames as C frames, and runs the C and C++ cleanup of its caller's.
        act();
    }
    #[cfg(feature = "c-abi")]
    if let Some(act) = system_act {
        // As above: the call had no effect and nothing here is live. The C library acts on the
        // cancel it holds (its unwind passes these frames); if it does not (its state says
        // disabled, or it is acting already and this is a cleanup handler's call), the call is
        // made as it would be without the library.
        act();
        // SAFETY: forwarded from the caller.
        return Ok(unsafe { plain_raw(nr, a) });
    }
    v
}

thread_local! {
    /// The errno (`ECANCELED`, `ETIMEDOUT`) the thread's last interposed call failed with
    /// because of a cancel since its current outermost run began (0: none), and for
    /// `ETIMEDOUT` the deadline that passed: what `Canceled::from_io_error` recognises as the
    /// crate's in an error the thread holds (a raw errno says nothing of its origin; this
    /// thread's own record does). Constant initializers, no destructor: safe on every path.
    static FAILED: std::cell::Cell<(c_int, Option<std::time::Instant>)> =
        const { std::cell::Cell::new((0, None)) };
}

/// An interposed call of the thread fails with `e` because of a cancel: counted for the
/// diagnostic (a thread that keeps failing spins), and recorded for `Canceled::from_io_error`
/// (with the deadline that passed, for `ETIMEDOUT`).
#[cold]
fn record_failure(c: &Control, e: c_int) {
    c.runs
        .failed_calls
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut at = None;
    if e == libc::ETIMEDOUT {
        crate::point::runs::any_frame(|_, sc| {
            if sc.timed_out() {
                at = sc.deadline();
            }
            sc.marked()
        });
    }
    let _ = FAILED.try_with(|f| f.set((e, at)));
}

/// The errno the calling thread's last interposed call failed with because of a cancel, in its
/// current or just-ended outermost run, and the deadline that passed for `ETIMEDOUT`.
pub(crate) fn last_failure() -> Option<(c_int, Option<std::time::Instant>)> {
    FAILED.try_with(|f| f.get()).ok().filter(|(e, _)| *e != 0)
}

/// A new outermost run begins: an earlier run's failure is not its own.
#[inline(always)]
pub(crate) fn forget_failure() {
    let _ = FAILED.try_with(|f| {
        if f.get().0 != 0 {
            f.set((0, None));
        }
    });
}

/// Aborts the process if dropped: live across the crate's own code in an interposed function,
/// which must never unwind into its C caller (nothing there panics; this makes sure).
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        std::process::abort();
    }
}

/// The rare outcomes: the trampoline said act (the call was not made, or was aborted with no
/// effect), or the call failed with `EINTR` (perhaps because of our signal).
#[cold]
#[inline(never)]
fn decide(c: &Control, r: CpResult, kind: Kind) -> Verdict {
    if signals::in_handler(c) {
        // A signal handler's call: the interrupted thread's runs, deadlines and cancels are
        // not its business; it behaves as the plain call (a call the signal interrupted
        // there: its result as it is).
        return match r {
            // Our signal interrupted it (the word says act): made again, plainly.
            CpResult::Done(r)
                if !(r == -(libc::EINTR as c_long) && word::trampoline_acts(c.word.load())) =>
            {
                Verdict::Done(r)
            }
            _ => Verdict::Plain,
        };
    }
    if matches!(r, CpResult::Canceled) && !word::trampoline_acts(c.word.load()) {
        // A deadline tick (no timer thread marks deadlines): time the runs' scopes out here.
        crate::point::runs::expire_deadlines();
        if !word::trampoline_acts(c.word.load()) {
            return Verdict::Again;
        }
    }
    let s = c.word.load();
    let canceled = match r {
        CpResult::Canceled => true,
        // Our signal interrupted a call that cannot be restarted: nothing happened.
        CpResult::Done(r) => r == -(libc::EINTR as c_long) && word::trampoline_acts(s),
    };
    if !canceled {
        if let CpResult::Done(r) = r {
            return Verdict::Done(r);
        }
    }
    // A thread of the C ABI that acts in C code acts on its own cancellation here, in another
    // library's call, as glibc acts in its own (a write to descriptor 1 or 2 included: a point
    // for C); its cleanup handlers' calls are the plain calls.
    #[cfg(feature = "c-abi")]
    if let Some(decide_c) = foreign_call_decider() {
        match decide_c(c, s) {
            ForeignCall::AsRust => {}
            ForeignCall::Plain => return Verdict::Plain,
            ForeignCall::Act(act) => {
                // As for any thread cancel: the children its runs started are killed.
                children::kill(Some(0));
                return Verdict::ActInC(act);
            }
            ForeignCall::SystemAct(act) => return Verdict::SystemAct(act),
        }
    }
    if s & word::TERMINATING != 0 {
        // The thread acts on its own cancel or exit: its cleanup I/O works (R19); a
        // termination swallowed by `catch_unwind` fails foreign code until it resumes.
        return if std::thread::panicking() {
            Verdict::Plain
        } else {
            Verdict::Fail(libc::ECANCELED)
        };
    }
    if s & word::DISABLED != 0 || kind == Kind::Stdio {
        return Verdict::Plain;
    }
    if s & word::PENDING != 0 {
        // A thread cancel: stays pending for the thread's next own point (an interposed call
        // only fails). It ends every run of the thread: their children are killed.
        children::kill(Some(0));
        return Verdict::Fail(libc::ECANCELED);
    }
    // A scope's cancel (pending, or its unwind under way or swallowed): level-triggered. The
    // children the canceled runs started are killed (`children.rs`).
    crate::point::runs::mark_acted();
    children::kill(crate::point::runs::outermost_canceled());
    Verdict::Fail(scope_errno())
}

/// For a call that is not one system call (`fork`, `posix_spawn`): the errno it fails with,
/// with no effect, where a scope's cancel would act now (a canceled run starts nothing);
/// `None`: make the call. A thread cancel does not refuse them: they are not cancellation
/// points (the thread acts at its next one, as under POSIX).
fn refusal() -> Option<c_int> {
    let c = crate::control::current_ptr()?;
    // SAFETY: `current_ptr` is the calling thread's control block, alive for this call.
    let c = unsafe { &*c };
    let s = c.word.load();
    if !word::trampoline_acts(s) || s & word::PENDING != 0 || signals::in_handler(c) {
        return None;
    }
    let abort = AbortOnUnwind;
    let v = match decide(c, CpResult::Canceled, Kind::Point) {
        Verdict::Fail(e) => Some(e),
        _ => None,
    };
    std::mem::forget(abort);
    v
}

/// `ETIMEDOUT` if the innermost canceled run's scope was canceled by a deadline, else
/// `ECANCELED`.
fn scope_errno() -> c_int {
    let mut e = libc::ECANCELED;
    crate::point::runs::any_frame(|_, sc| {
        if !sc.marked() {
            return false;
        }
        if sc.timed_out() {
            e = libc::ETIMEDOUT;
        }
        true
    });
    e
}

/// Whether the sleep the trampoline returned `r` for was canceled, and what to make of it:
/// `Ok(raw)` when it ran, `Err(errno)` when it fails.
///
/// # Safety
/// `req`/`rem` valid for `clock_nanosleep`.
unsafe fn sleep_point(
    clock: libc::clockid_t,
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    let a = [clock as c_long, 0, req as c_long, rem as c_long, 0, 0];
    // SAFETY: forwarded from the caller.
    match unsafe { raw_point(crate::sys::calls::CLOCK_NANOSLEEP, a, Kind::Point) } {
        Ok(r) if r < 0 => -r as c_int,
        Ok(_) => 0,
        Err(_) => {
            // Canceled: `EINTR` with nothing left to sleep, so `std::thread::sleep` (which
            // loops on `EINTR` with the time left) returns.
            if !rem.is_null() {
                // SAFETY: the caller passed `rem` for the kernel to write the time left.
                unsafe {
                    rem.write(libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    })
                };
            }
            libc::EINTR
        }
    }
}
