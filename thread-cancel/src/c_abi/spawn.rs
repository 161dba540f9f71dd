//! C threads: [`spawn_c`] creates a thread of this crate with the system's `pthread_create`.

use super::*;

/// A thread created for the C ABI by [`spawn_c`]: like [`JoinHandle`](crate::JoinHandle), but
/// the thread is the system's (`pthread_create`), not `std`'s. Waiting for it goes through its
/// [`canceler`](Self::canceler) ([`wait_finished`], [`wait_finished_uncancelable`]); dropping
/// the handle detaches the thread.
pub struct CJoinHandle<T> {
    control: Arc<Control>,
    thread: crate::sys::pthread::Thread,
    outcome: Arc<Mutex<Option<Outcome<T>>>>,
}

/// What a thread created by [`spawn_c`] starts with.
struct CStart<T> {
    control: Arc<Control>,
    body: Box<dyn FnOnce() -> T + Send>,
    outcome: Arc<Mutex<Option<Outcome<T>>>>,
    at_end: fn(),
}

/// Creates a thread of this crate with the system's `pthread_create` (stack size `stack`, the
/// system's default if 0) that runs `body`, then the thread-specific-data destructors, then
/// `at_end`. Unlike `std::thread::spawn`:
///
/// - the new thread registers no thread-local destructor before `body` (nor after it, unless
///   `body` uses thread-specific data): registering one takes the dynamic loader's lock, which
///   the creating thread may hold (a library destructor run by `dlclose` that creates and joins
///   a thread);
/// - everything the creating side allocates comes from the global allocator, which the C ABI
///   crate makes fail softly when memory runs out (`std`'s spawn allocates its thread handle
///   from `System` and aborts): the caller can undo the spawn and report `EAGAIN`.
///
/// Errors are `pthread_create`'s (`EAGAIN`, `EINVAL`).
pub fn spawn_c<T: Send + 'static>(
    stack: usize,
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
    let thread = crate::sys::pthread::spawn(stack, move || c_thread_main(start))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EAGAIN))?;
    Ok(CJoinHandle {
        control,
        thread,
        outcome,
    })
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
        self.thread.id()
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
