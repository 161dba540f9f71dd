//! Spawning cancelable threads, their root, [`JoinHandle`] and [`Outcome`].

pub(crate) mod scoped;

use crate::control::Control;
use crate::current::{current_control, link_spawned, try_current_control};
use crate::word::{self, CANCELING, EXITING};
use crate::{tsd, Canceler, NoSuchThread};
use std::any::{Any, TypeId};
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

/// How a thread ended, as reported by [`JoinHandle::join`].
///
/// Its `Debug` shows a panic's message rather than an opaque payload:
///
/// ```
/// let o = thread_cancel::spawn(|| -> u8 { panic!("bad input") }).join();
/// assert_eq!(format!("{o:?}"), r#"Panicked("bad input")"#);
/// assert_eq!(format!("{:?}", thread_cancel::spawn(|| 2).join()), "Returned(2)");
/// ```
pub enum Outcome<T> {
    /// The start function returned this value.
    Returned(T),
    /// The thread called [`exit`](crate::exit) with this value.
    Exited(T),
    /// The thread acted on a cancellation request (C: `PTHREAD_CANCELED`).
    Canceled,
    /// The thread panicked; the panic's payload.
    Panicked(Box<dyn Any + Send + 'static>),
}

impl<T> Outcome<T> {
    /// Whether the thread was canceled.
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
    /// h.cancel().unwrap();
    /// assert!(h.join().is_canceled());
    /// ```
    pub fn is_canceled(&self) -> bool {
        matches!(self, Outcome::Canceled)
    }

    /// The value, if the thread returned or exited with one.
    ///
    /// ```
    /// assert_eq!(thread_cancel::spawn(|| 3).join().value(), Some(3));
    /// ```
    pub fn value(self) -> Option<T> {
        match self {
            Outcome::Returned(v) | Outcome::Exited(v) => Some(v),
            _ => None,
        }
    }

    /// Whether the thread panicked (like `std`'s `join().is_err()`).
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| panic!("oops"));
    /// assert!(h.join().is_panicked());
    /// assert!(!thread_cancel::spawn(|| ()).join().is_panicked());
    /// ```
    pub fn is_panicked(&self) -> bool {
        matches!(self, Outcome::Panicked(_))
    }

    /// The outcome as `std`'s [`JoinHandle::join`](std::thread::JoinHandle::join) reports it:
    /// `Ok` with the value if the thread returned or exited. Code written for `std` threads can
    /// take it as it is.
    ///
    /// # Errors
    /// The unwind's payload if the thread did not return or exit: the panic's payload if it
    /// panicked ([`Outcome::Panicked`]), a [`CancelPayload`](crate::CancelPayload) if it was
    /// canceled ([`Outcome::Canceled`]; the payload of the unwind by which it acted on the
    /// request).
    ///
    /// ```
    /// let r: std::thread::Result<i32> = thread_cancel::spawn(|| 5).join().into_result();
    /// assert_eq!(r.unwrap(), 5);
    ///
    /// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
    /// h.cancel().unwrap();
    /// let e = h.join().into_result().unwrap_err();
    /// assert!(e.is::<thread_cancel::CancelPayload>());
    /// ```
    pub fn into_result(self) -> std::thread::Result<T> {
        match self {
            Outcome::Returned(v) | Outcome::Exited(v) => Ok(v),
            Outcome::Canceled => Err(Box::new(crate::CancelPayload::new())),
            Outcome::Panicked(p) => Err(p),
        }
    }

    /// The value if the thread returned or exited (like `Result::expect`).
    ///
    /// # Panics
    /// With `msg` and "the thread was canceled" if the thread was canceled, with `msg` and the
    /// thread's panic message if it panicked.
    ///
    /// ```
    /// assert_eq!(thread_cancel::spawn(|| 3).join().expect("worker"), 3);
    /// ```
    ///
    /// ```should_panic
    /// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
    /// h.cancel().unwrap();
    /// h.join().expect("the worker should have finished"); // panics: it was canceled
    /// ```
    #[track_caller]
    pub fn expect(self, msg: &str) -> T {
        match self {
            Outcome::Returned(v) | Outcome::Exited(v) => v,
            Outcome::Canceled => panic!("{msg}: the thread was canceled"),
            Outcome::Panicked(p) => panic!("{msg}: the thread panicked: {}", panic_message(&*p)),
        }
    }

    /// The value if the thread returned or exited.
    ///
    /// # Panics
    /// If the thread was canceled (with a message saying so); if it panicked, its panic is
    /// resumed with the same payload.
    ///
    /// ```
    /// assert_eq!(thread_cancel::spawn(|| "done").join().unwrap(), "done");
    /// ```
    pub fn unwrap(self) -> T {
        match self {
            Outcome::Returned(v) | Outcome::Exited(v) => v,
            Outcome::Canceled => panic!("called `Outcome::unwrap()` on a canceled thread"),
            Outcome::Panicked(p) => std::panic::resume_unwind(p),
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Outcome<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Returned(v) => f.debug_tuple("Returned").field(v).finish(),
            Outcome::Exited(v) => f.debug_tuple("Exited").field(v).finish(),
            Outcome::Canceled => f.write_str("Canceled"),
            Outcome::Panicked(p) => f
                .debug_tuple("Panicked")
                .field(&panic_message(&**p))
                .finish(),
        }
    }
}

/// The message of a panic's payload, if it is a string (as `panic!` makes them).
fn panic_message(p: &(dyn Any + Send)) -> &str {
    if let Some(s) = p.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = p.downcast_ref::<String>() {
        s
    } else {
        "Box<dyn Any>"
    }
}

/// Runs `f` as the body of a spawned thread: link the control block, catch the termination
/// unwind, run the thread-specific-data destructors, mark finished (later requests fail).
pub(crate) fn root<T: 'static>(control: Arc<Control>, f: impl FnOnce() -> T) -> Outcome<T> {
    link_spawned(control.clone());
    let outcome = outcome(&control, catch_unwind(AssertUnwindSafe(f)));
    tsd::run_destructors();
    control.finish();
    outcome
}

/// A thread's root, once its body has returned or unwound (`result`): marks the word (the
/// root has been reached: no point acts any more) and decides how the thread ended, from the
/// word (a cancellation or an exit it acted on wins over what the body returned) and `result`.
/// For every thread the crate starts (Rust's and the C ABI's).
pub(crate) fn outcome<T: 'static>(control: &Control, result: std::thread::Result<T>) -> Outcome<T> {
    let s = control.word.enter_root();
    if s & CANCELING != 0 {
        Outcome::Canceled
    } else if s & EXITING != 0 {
        let v = control
            .take_exit_value()
            .and_then(|b| b.downcast::<T>().ok())
            .expect("exit() stores a value of the thread's type");
        Outcome::Exited(*v)
    } else {
        match result {
            Ok(v) => Outcome::Returned(v),
            Err(p) => Outcome::Panicked(p),
        }
    }
}

pub(crate) fn new_control<T: 'static>() -> Arc<Control> {
    // In the spawning thread, so that the process-wide set-up (the signal handler, the fence's
    // registration, which costs an RCU grace period once other threads exist) is usually done
    // while the process is still single-threaded, and never delays the new thread.
    crate::sys::prepare();
    Arc::new(Control::new(Some(TypeId::of::<T>())))
}

const JOIN_YIELDS: usize = 16;

/// A thread joining or waiting for itself: reported as `std` reports it.
#[cold]
#[inline(never)]
fn own_thread(what: &str) -> ! {
    panic!(
        "failed to {what} thread: {} (a thread cannot {what} itself)",
        io::Error::from_raw_os_error(libc::EDEADLK)
    )
}

/// Blocks until `target` has finished, as a cancellation point for the caller, or until
/// `deadline`; returns whether it finished. Any number of threads may wait for one target:
/// each registers itself, and the target's `finish` wakes them all.
///
/// For `join` (`then_std_join`), a caller that cannot act on a request during the wait (it has
/// no control block, so no one can cancel it, or its cancellation is disabled) is not
/// registered at all: `std`'s join that follows does the blocking.
///
/// # Panics
/// If `target` is the calling thread: it would wait for itself forever (a deadlock, which
/// `std` and `pthread_join` report as `EDEADLK`; `std`'s join panics with the same message).
pub(crate) fn wait_finished(
    target: &Arc<Control>,
    deadline: Option<Instant>,
    then_std_join: bool,
) -> bool {
    if crate::control::is_current(target) {
        own_thread(if then_std_join { "join" } else { "wait for" });
    }
    // A cancellation point at entry too, even if the target has already finished.
    crate::testcancel();
    let finished = || target.word.load() & word::FINISHED != 0;
    let me = if then_std_join {
        match try_current_control() {
            Some(me) if me.word.load() & word::DISABLED == 0 => me,
            _ => return finished(),
        }
    } else {
        current_control()
    };
    if finished() {
        return true;
    }
    // A short thread is often about to finish: yielding a few times first saves a park/unpark
    // round trip on top of `std`'s own join (P5). Each round is also a point for the joiner.
    for _ in 0..JOIN_YIELDS {
        crate::testcancel();
        if finished() {
            return true;
        }
        std::thread::yield_now();
    }
    target.add_waiter(me.clone());
    struct Unregister<'a>(&'a Control, &'a Control);
    impl Drop for Unregister<'_> {
        fn drop(&mut self) {
            self.0.remove_waiter(self.1);
        }
    }
    let unregister = Unregister(target, &me);
    let wake = crate::point::wait::wait_until(&me, finished, deadline);
    // Undone before acting, so that the unwind starts with nothing to drop here.
    drop(unregister);
    drop(me);
    match wake {
        crate::point::wait::Wake::Ready => true,
        crate::point::wait::Wake::Timeout => false,
        crate::point::wait::Wake::Cancel => crate::point::wait::act_current(),
    }
}

/// An owned permission to join a cancelable thread, and to cancel it.
///
/// Dropping it detaches the thread (it can still be canceled through a [`Canceler`]).
///
/// Its `Debug` shows the thread's name and id, whether it has finished and whether a request
/// is pending:
///
/// ```
/// let h = thread_cancel::Builder::new().name("io".into()).spawn(|| ()).unwrap();
/// h.wait();
/// let s = format!("{h:?}");
/// assert!(s.contains(r#"name: Some("io")"#) && s.contains("finished: true"), "{s}");
/// h.join();
/// ```
pub struct JoinHandle<T> {
    inner: Native<T>,
    control: Arc<Control>,
}

impl<T> std::fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let thread = match &self.inner {
            Native::Std(h) => Some(h.thread()),
            Native::Light { packet, .. } => packet.thread.get(),
        };
        let mut d =
            crate::canceler::debug_thread(&self.control, thread, f.debug_struct("JoinHandle"));
        if matches!(self.inner, Native::Light { .. }) {
            d.field("lightweight", &true);
        }
        d.finish()
    }
}

/// The thread under a [`JoinHandle`]: `std`'s, or one of [`Builder::lightweight`].
enum Native<T> {
    Std(std::thread::JoinHandle<Outcome<T>>),
    Light {
        thread: crate::sys::pthread::Thread,
        packet: Arc<Packet<T>>,
    },
}

impl<T> std::fmt::Debug for Native<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Native::Std(h) => h.fmt(f),
            Native::Light { thread, .. } => f.debug_tuple("Lightweight").field(thread).finish(),
        }
    }
}

/// What a lightweight thread hands back to its handle.
struct Packet<T> {
    /// `std`'s handle of the thread, set by the thread before it runs user code.
    thread: std::sync::OnceLock<std::thread::Thread>,
    /// How the thread ended, set as its last act (read after `pthread_join`).
    outcome: std::sync::Mutex<Option<Outcome<T>>>,
}

impl<T> JoinHandle<T> {
    /// Queues a cancellation request (see [`Canceler::cancel`]).
    ///
    /// # Errors
    /// [`NoSuchThread`] once the thread has finished (returned, exited, panicked or acted on a
    /// request): there is nothing left to cancel.
    ///
    /// ```
    /// let (go, wait) = std::sync::mpsc::channel::<()>();
    /// let h = thread_cancel::spawn(move || {
    ///     let held = thread_cancel::disable(); // requests are held pending
    ///     wait.recv().unwrap();
    ///     drop(held);
    ///     thread_cancel::testcancel(); // acted on here
    /// });
    /// assert_eq!(h.cancel(), Ok(()));
    /// assert_eq!(h.cancel(), Ok(())); // merged with the first
    /// go.send(()).unwrap();
    /// assert!(h.join().is_canceled());
    /// ```
    pub fn cancel(&self) -> Result<(), NoSuchThread> {
        crate::canceler::cancel(&self.control)
    }

    /// A handle that can cancel the thread from anywhere, and outlives this one.
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
    /// let c = h.canceler();
    /// c.cancel().unwrap();
    /// assert!(h.join().is_canceled());
    /// ```
    pub fn canceler(&self) -> Canceler {
        Canceler {
            control: self.control.clone(),
        }
    }

    /// Waits for the thread to end and reports how. It is a cancellation point for the
    /// calling thread. Other threads may [`wait`](Self::wait) for the same thread meanwhile.
    ///
    /// # Panics
    ///
    /// If called by the thread itself (a handle can reach its own thread, e.g. through a
    /// channel): it would wait for itself forever. Like `std`'s `join`, which panics with the
    /// error of `pthread_join`, this panics with "failed to join thread: Resource deadlock
    /// avoided (os error 35) ...", at once (the C ABI's `tc_join` returns `EDEADLK`).
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| 40 + 2);
    /// assert_eq!(h.join().unwrap(), 42);
    /// ```
    pub fn join(self) -> Outcome<T> {
        wait_finished(&self.control, None, true);
        match self.inner {
            Native::Std(h) => h.join().unwrap_or_else(Outcome::Panicked),
            Native::Light { thread, packet } => {
                thread.join();
                lock(&packet.outcome)
                    .take()
                    .unwrap_or_else(|| Outcome::Panicked(Box::new("the thread left no outcome")))
            }
        }
    }

    /// Waits until the thread has finished, without consuming the handle; a cancellation point
    /// for the caller. If the caller is canceled here, the thread stays joinable by whoever
    /// holds the handle next (keep it in a shared place, e.g. a `sync::Mutex<Option<_>>`).
    ///
    /// Any number of threads may wait at once (the handle is `Sync`); the thread's end wakes
    /// every one of them. A waiter that times out or is canceled leaves the others waiting.
    ///
    /// # Panics
    ///
    /// If called by the thread itself, like [`join`](Self::join): "failed to wait for thread:
    /// Resource deadlock avoided (os error 35) ...". The same holds for
    /// [`wait_timeout`](Self::wait_timeout): a thread cannot finish while it waits, so that
    /// call could only time out.
    ///
    /// ```
    /// use std::sync::Arc;
    /// let h = Arc::new(thread_cancel::spawn(|| thread_cancel::sleep(std::time::Duration::MAX)));
    /// let waiters: Vec<_> = (0..3)
    ///     .map(|_| {
    ///         let h = h.clone();
    ///         std::thread::spawn(move || h.wait())
    ///     })
    ///     .collect();
    /// h.cancel().unwrap();
    /// for w in waiters {
    ///     w.join().unwrap(); // every waiter is woken
    /// }
    /// ```
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| 1);
    /// h.wait();
    /// assert!(h.canceler().is_finished());
    /// assert_eq!(h.join().unwrap(), 1);
    /// ```
    pub fn wait(&self) {
        wait_finished(&self.control, None, false);
    }

    /// [`wait`](Self::wait) for at most `dur`; returns whether the thread has finished.
    ///
    /// # Panics
    ///
    /// If called by the thread itself, as [`wait`](Self::wait).
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| thread_cancel::sleep(std::time::Duration::from_secs(60)));
    /// assert!(!h.wait_timeout(std::time::Duration::from_millis(5)));
    /// h.cancel().unwrap();
    /// assert!(h.wait_timeout(std::time::Duration::from_secs(60)));
    /// ```
    pub fn wait_timeout(&self, dur: std::time::Duration) -> bool {
        wait_finished(
            &self.control,
            crate::point::wait::deadline_after(dur),
            false,
        )
    }

    /// The system's thread id (for the C ABI's `tc_kill` / `tc_native`).
    #[doc(hidden)]
    pub fn as_pthread_t(&self) -> libc::pthread_t {
        use std::os::unix::thread::JoinHandleExt;
        match &self.inner {
            Native::Std(h) => h.as_pthread_t() as libc::pthread_t,
            Native::Light { thread, .. } => thread.id(),
        }
    }

    /// The underlying `std` thread.
    ///
    /// For a [lightweight](Builder::lightweight) thread it is the handle `std` made in the
    /// thread when it started (its name is `None`); if the thread has not started yet, this
    /// waits until it has (spawning never waits for it).
    ///
    /// ```
    /// let h = thread_cancel::Builder::new().name("worker".into()).spawn(|| ()).unwrap();
    /// assert_eq!(h.thread().name(), Some("worker"));
    /// h.join();
    /// ```
    pub fn thread(&self) -> &std::thread::Thread {
        match &self.inner {
            Native::Std(h) => h.thread(),
            Native::Light { packet, .. } => packet.thread.wait(),
        }
    }

    /// Whether the thread finished with a cancellation request pending that it never acted on:
    /// it was blocked in, or busy with, code that is not a cancellation point (a `std` call
    /// such as `std::thread::sleep`, `std::sync::mpsc::Receiver::recv` or `std`'s
    /// `TcpStream::read`, a third-party client), or it had cancellation disabled, and then
    /// returned, exited or panicked as if no request had come. `false` while the thread runs,
    /// and for a thread that acted on the request ([`Outcome::Canceled`]).
    ///
    /// [`join`](Self::join)'s [`Outcome`] keeps its variants, so take a [`Canceler`] first to
    /// ask after the join ([`Canceler::request_ignored`]), or ask here after
    /// [`wait`](Self::wait).
    ///
    /// ```
    /// use std::time::Duration;
    /// let h = thread_cancel::spawn(|| std::thread::sleep(Duration::from_millis(50)));
    /// h.cancel().unwrap(); // `std::thread::sleep` is not a cancellation point
    /// h.wait();
    /// assert!(h.request_ignored());
    /// assert!(matches!(h.join(), thread_cancel::Outcome::Returned(())));
    /// ```
    pub fn request_ignored(&self) -> bool {
        self.control.request_ignored().unwrap_or(false)
    }

    /// Whether the thread has finished running (like `std`'s `is_finished`).
    ///
    /// ```
    /// let h = thread_cancel::spawn(|| ());
    /// while !h.is_finished() { std::thread::yield_now() }
    /// h.join();
    /// ```
    pub fn is_finished(&self) -> bool {
        match &self.inner {
            Native::Std(h) => h.is_finished(),
            // The thread drops its reference as its last act, after storing the outcome.
            Native::Light { packet, .. } => Arc::strong_count(packet) == 1,
        }
    }
}

/// Thread factory, like [`std::thread::Builder`].
///
/// ```
/// let h = thread_cancel::Builder::new()
///     .name("reader".into())
///     .stack_size(256 * 1024)
///     .spawn(|| 1)
///     .unwrap();
/// assert_eq!(h.join().unwrap(), 1);
/// ```
#[derive(Debug, Default)]
pub struct Builder {
    name: Option<String>,
    stack_size: Option<usize>,
    lightweight: bool,
}

impl Builder {
    /// A builder with `std`'s defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names the thread.
    pub fn name(self, name: String) -> Self {
        Self {
            name: Some(name),
            ..self
        }
    }

    /// Sets the stack size in bytes.
    pub fn stack_size(self, size: usize) -> Self {
        Self {
            stack_size: Some(size),
            ..self
        }
    }

    /// Makes [`spawn`](Self::spawn) create the thread with `pthread_create` itself instead of
    /// through `std::thread::Builder`: as cheap to create, cancel and join as a C thread.
    ///
    /// `std`'s spawn gives every thread an alternate signal stack, so that a stack overflow
    /// can be reported: a mapping made with a guard page at start and unmapped at exit, and
    /// the unmapping interrupts every processor that runs the process. For a thread that does
    /// little, or for thousands of threads canceled at once, that is most of what a thread
    /// costs. A lightweight thread has none of it.
    ///
    /// It is otherwise the same cancelable thread: it is linked to its control block before
    /// the closure runs, and cancellation, cleanup handlers, thread-specific data destructors,
    /// [`exit`](crate::exit), [`JoinHandle::join`] / [`wait`](JoinHandle::wait) and the
    /// [`Outcome`] behave as for any spawned thread; a panic is reported by the panic hook and
    /// joins as [`Outcome::Panicked`]. The stack size is the builder's, else `std`'s default
    /// (`RUST_MIN_STACK`, else 2 MiB); the name is given to the system
    /// (`pthread_setname_np`, at most 15 bytes: what `/proc`, `top` and debuggers show).
    ///
    /// What it does not have, compared with a `std` thread:
    ///
    /// - **`std`'s name.** `std` does not learn a name it did not give:
    ///   `std::thread::current().name()` and [`JoinHandle::thread`]`().name()` are `None`, and
    ///   a panic message says `thread '<unnamed>'`.
    /// - **The stack-overflow message.** The stack still has a guard page (glibc adds one), so
    ///   an overflow still stops the process, but by a plain `SIGSEGV`, without `std`'s
    ///   "thread '...' has overflowed its stack" message.
    /// - **Output capture in tests.** The test harness captures what `std` threads spawned by
    ///   a test print; a lightweight thread's output goes to the real standard output.
    ///
    /// Scoped threads ([`spawn_scoped`](Self::spawn_scoped)) are always `std`'s: this setting
    /// does not apply to them.
    ///
    /// ```
    /// use std::time::Duration;
    /// let h = thread_cancel::Builder::new()
    ///     .name("light".into())
    ///     .stack_size(64 * 1024)
    ///     .lightweight()
    ///     .spawn(|| {
    ///         let _g = thread_cancel::cleanup_push(|| eprintln!("cleanup ran"));
    ///         thread_cancel::sleep(Duration::from_secs(3600)); // a cancellation point
    ///     })
    ///     .unwrap();
    /// h.cancel().unwrap();
    /// assert!(h.join().is_canceled());
    /// ```
    pub fn lightweight(self) -> Self {
        Self {
            lightweight: true,
            ..self
        }
    }

    /// Spawns a cancelable thread.
    ///
    /// # Errors
    /// - [`io::ErrorKind::InvalidInput`] if the name has a NUL byte (where `std`'s spawn would
    ///   panic);
    /// - the system's error if the thread cannot be created, as `std` reports it: `EAGAIN`
    ///   ([`io::ErrorKind::WouldBlock`]) when out of threads or memory, `EINVAL` for a stack
    ///   size the system refuses (a lightweight thread).
    ///
    /// `f` is dropped unrun on error.
    ///
    /// # Panics
    /// If this is the crate's first thread and the cancel signal (none was chosen with
    /// [`io::set_signal`](crate::io::set_signal)) already has someone else's handler.
    pub fn spawn<F, T>(self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        if self.lightweight {
            return self.spawn_lightweight(f);
        }
        let builder = self.std_builder()?;
        let control = new_control::<T>();
        let c = control.clone();
        let inner = builder.spawn(move || root(c, f))?;
        Ok(JoinHandle {
            inner: Native::Std(inner),
            control,
        })
    }

    /// The `std` builder with this one's name and stack size.
    fn std_builder(self) -> io::Result<std::thread::Builder> {
        let mut b = std::thread::Builder::new();
        if let Some(name) = self.name {
            check_name(&name)?;
            b = b.name(name);
        }
        if let Some(size) = self.stack_size {
            b = b.stack_size(size);
        }
        Ok(b)
    }

    fn spawn_lightweight<F, T>(self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let name = self.name.as_deref().map(check_name).transpose()?;
        // As `std`: a size of 0 is raised to the minimum (for `sys::pthread::spawn`, 0 would
        // mean the system's default).
        let stack = self
            .stack_size
            .unwrap_or_else(crate::sys::pthread::default_stack_size)
            .max(1);
        let control = new_control::<T>();
        let packet = Arc::new(Packet {
            thread: std::sync::OnceLock::new(),
            outcome: std::sync::Mutex::new(None),
        });
        let (c, p) = (control.clone(), packet.clone());
        let thread = crate::sys::pthread::spawn(stack, move || {
            if let Some(name) = &name {
                crate::sys::pthread::set_current_name(name);
            }
            let _ = p.thread.set(std::thread::current());
            // `root` catches the closure's unwind; this one catches what could escape its own
            // work (a panicking destructor of the outcome's value, say) as `std`'s spawn does:
            // no unwind may reach the C start routine.
            let outcome =
                catch_unwind(AssertUnwindSafe(|| root(c, f))).unwrap_or_else(Outcome::Panicked);
            *lock(&p.outcome) = Some(outcome);
            // The last act: `is_finished` counts the references.
            drop(p);
        })?;
        Ok(JoinHandle {
            inner: Native::Light { thread, packet },
            control,
        })
    }

    /// Spawns a cancelable thread in `scope`.
    ///
    /// # Errors
    /// As [`Builder::spawn`]'s (`InvalidInput` for a name with a NUL byte, or the system's error if
    /// the thread cannot be created).
    ///
    /// # Panics
    /// As [`Builder::spawn`].
    ///
    /// ```
    /// let v = vec![1, 2, 3];
    /// thread_cancel::scope(|s| {
    ///     let h = thread_cancel::Builder::new().spawn_scoped(s, || v.len()).unwrap();
    ///     assert_eq!(h.join().unwrap(), 3);
    /// });
    /// ```
    pub fn spawn_scoped<'scope, 'env, F, T>(
        self,
        scope: &'scope crate::Scope<'scope, 'env>,
        f: F,
    ) -> io::Result<crate::ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'static,
    {
        crate::thread::scoped::spawn_in(self.std_builder()?, scope, f)
    }
}

/// A thread name as C wants it: `InvalidInput` if it holds a NUL byte (`std`'s spawn would
/// panic).
fn check_name(name: &str) -> io::Result<std::ffi::CString> {
    std::ffi::CString::new(name).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "thread name may not contain interior null bytes",
        )
    })
}

/// Locks a mutex that protects plain data; a poisoned lock still holds valid data.
use crate::control::lock;

/// Spawns a cancelable thread, like `std::thread::spawn`.
///
/// # Panics
/// If the system cannot create the thread (as `std::thread::spawn`; [`Builder::spawn`] returns
/// the error instead), or as [`Builder::spawn`] panics.
///
/// ```
/// let h = thread_cancel::spawn(|| loop { thread_cancel::testcancel() });
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// ```
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    Builder::new().spawn(f).expect("failed to spawn thread")
}
