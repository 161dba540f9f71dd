//! C threads: [`spawn_c`] creates a thread of this crate with the system's `pthread_create`.

use super::*;

/// A thread created for the C ABI by [`spawn_c`]: like [`JoinHandle`](crate::JoinHandle), but
/// the thread is the system's (`pthread_create`), not `std`'s. Waiting for it goes through its
/// [`canceler`](Self::canceler) ([`wait_finished`], [`wait_finished_uncancelable`]); dropping
/// the handle detaches the thread.
pub struct CJoinHandle<T> {
    control: Arc<Control>,
    thread: SysThread,
    outcome: Arc<Mutex<Option<Outcome<T>>>>,
}

/// What a thread created by [`spawn_c`] starts with.
struct CStart<T> {
    control: Arc<Control>,
    body: Box<dyn FnOnce() -> T + Send>,
    outcome: Arc<Mutex<Option<Outcome<T>>>>,
    at_end: fn(),
}

/// Creates a thread of this crate with the system's `pthread_create` that runs `body`, then the
/// thread-specific-data destructors, then `at_end`. `attr` is the C caller's attribute object
/// (null: the system's defaults), given to `pthread_create` as it is but joinable: the system
/// applies every attribute it honours (stack size with its rounding, a stack of the caller's,
/// guard size, scheduling inheritance, policy and parameters) and refuses what it refuses
/// (`EPERM`, `EINVAL`), as for any other thread. Unlike `std::thread::spawn`:
///
/// - the new thread registers no thread-local destructor before `body` (nor after it, unless
///   `body` uses thread-specific data): registering one takes the dynamic loader's lock, which
///   the creating thread may hold (a library destructor run by `dlclose` that creates and joins
///   a thread);
/// - everything the creating side allocates comes from the global allocator, which the C ABI
///   crate makes fail softly when memory runs out (`std`'s spawn allocates its thread handle
///   from `System` and aborts): the caller can undo the spawn and report `EAGAIN`.
///
/// Errors are `pthread_create`'s (`EAGAIN`, `EINVAL`, `EPERM`).
///
/// # Safety
/// `attr` is null or an initialised attribute object, unchanged during the call.
pub unsafe fn spawn_c<T: Send + 'static>(
    attr: *const libc::pthread_attr_t,
    body: impl FnOnce() -> T + Send + 'static,
    at_end: fn(),
) -> Result<CJoinHandle<T>, c_int> {
    // Process-wide set-up in the creating thread (the signal handler, the fence's
    // registration, the sanitizer hook's lookup, which takes the loader's lock).
    let control = crate::thread::new_control::<T>();
    crate::sys::resolve_sanitizer_hook();
    let outcome = Arc::new(Mutex::new(None));
    let start = CStart {
        control: control.clone(),
        body: Box::new(body),
        outcome: outcome.clone(),
        at_end,
    };
    let main: Box<dyn FnOnce() + Send> = Box::new(move || c_thread_main(start));
    let arg = Box::into_raw(Box::new(main));
    // A bitwise copy of the caller's object with the detach state made joinable (the handle
    // detaches or joins the system thread itself). glibc's object may point to an extension
    // (its CPU set) that stays the caller's: the copy is only read by `pthread_create` during
    // the call, and never destroyed.
    let copy = (!attr.is_null()).then(|| {
        // SAFETY: `attr` is an initialised attribute object (the caller's contract), plain
        // data to copy.
        let mut copy = Box::new(unsafe { std::ptr::read(attr) });
        // SAFETY: `copy` is an initialised attribute object; the state is a valid one.
        unsafe { libc::pthread_attr_setdetachstate(&mut *copy, libc::PTHREAD_CREATE_JOINABLE) };
        copy
    });
    let attr_ptr = copy
        .as_deref()
        .map_or(std::ptr::null(), |a| a as *const libc::pthread_attr_t);
    // SAFETY: `pthread_t` is a plain integer or pointer, for which all-zero is a valid value;
    // `pthread_create` overwrites it.
    let mut id: libc::pthread_t = unsafe { std::mem::zeroed() };
    // SAFETY: `attr_ptr` is null or an initialised attribute object alive for the call;
    // `c_start` matches the start routine's C signature and is given a pointer from
    // `Box::into_raw`, which it takes back exactly once; `id` is valid for writes.
    let rc = unsafe { libc::pthread_create(&mut id, attr_ptr, c_start, arg.cast()) };
    drop(copy);
    if rc != 0 {
        // SAFETY: the thread was not created, so `arg` is still ours, and unused.
        drop(unsafe { Box::from_raw(arg) });
        return Err(rc);
    }
    Ok(CJoinHandle {
        control,
        thread: SysThread(id),
        outcome,
    })
}

/// The start routine of [`spawn_c`]'s threads: takes the closure back and runs it (it never
/// unwinds: [`c_thread_main`] catches every unwind).
extern "C" fn c_start(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: `arg` is the `Box::into_raw` made by `spawn_c`, handed to this thread alone,
    // which takes it back here once.
    let main = unsafe { Box::from_raw(arg.cast::<Box<dyn FnOnce() + Send>>()) };
    main();
    std::ptr::null_mut()
}

/// A joinable system thread made by [`spawn_c`]; dropping it detaches the thread.
struct SysThread(libc::pthread_t);

// SAFETY: a `pthread_t` is only passed to `pthread_*` functions, which take it from any thread.
unsafe impl Send for SysThread {}
// SAFETY: as for `Send`; nothing is mutable through a shared reference.
unsafe impl Sync for SysThread {}

impl SysThread {
    /// Waits for the thread to end (`pthread_join`) and releases it.
    fn join(self) {
        let id = self.0;
        std::mem::forget(self);
        // SAFETY: `id` names a joinable thread that was neither joined nor detached (the
        // handle owned it, and is consumed without its `Drop`).
        let rc = unsafe { libc::pthread_join(id, std::ptr::null_mut()) };
        assert!(rc == 0, "failed to join thread: error {rc}");
    }
}

impl Drop for SysThread {
    fn drop(&mut self) {
        // SAFETY: a joinable thread, released once here.
        unsafe { libc::pthread_detach(self.0) };
    }
}

/// The body of a thread created by [`spawn_c`]: the thread's root (as `thread::root`, without
/// a thread-local destructor). Nothing unwinds out of it: the body runs in `catch_unwind`.
fn c_thread_main<T: Send + 'static>(start: CStart<T>) {
    let CStart {
        control,
        body,
        outcome,
        at_end,
    } = start;
    crate::current::link_unregistered(&control);
    // `begin_exit` checks the exit value's type, as `exit` does.
    let o = crate::thread::outcome(&control, catch_unwind(AssertUnwindSafe(body)));
    *outcome.lock().unwrap_or_else(PoisonError::into_inner) = Some(o);
    drop(outcome);
    crate::tsd::run_destructors();
    crate::current::unlink_unregistered();
    control.finish();
    drop(control);
    at_end();
}

impl<T> CJoinHandle<T> {
    /// A handle that can cancel the thread.
    pub fn canceler(&self) -> Canceler {
        Canceler {
            control: self.control.clone(),
        }
    }

    /// The system's thread id.
    pub fn as_pthread_t(&self) -> libc::pthread_t {
        self.thread.0
    }

    /// Lets go of the handle without detaching the system thread, which stays joinable: the
    /// caller joins it itself (`pthread_join`, `pthread_tryjoin_np`), for example to reuse a
    /// stack of its own once the C library is done with the thread.
    pub fn into_unjoined(self) -> libc::pthread_t {
        let CJoinHandle { thread, .. } = self;
        let id = thread.0;
        std::mem::forget(thread);
        id
    }

    /// Joins the system thread (call once [`wait_finished`] has seen it finish: this is not a
    /// cancellation point) and reports how it ended.
    pub fn join(self) -> Outcome<T> {
        self.thread.join();
        let o = self
            .outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        o.unwrap_or(Outcome::Canceled) // the root always stores one before it ends
    }
}
