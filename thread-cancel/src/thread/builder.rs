//! [`Builder`] and [`spawn`]: start a thread of the crate's, std's or a lightweight one.

use super::*;

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
            work: Work(std::sync::Mutex::new(Some(Start {
                name,
                control: control.clone(),
                f,
            }))),
        });
        let thread = crate::sys::pthread::spawn(stack, packet.clone())?;
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

/// A lightweight thread's work, carried to it in its [`Packet`] (no allocation of its own): its
/// name, its control block and the closure, taken once by the thread as it starts.
struct Work<F>(std::sync::Mutex<Option<Start<F>>>);

/// What [`Work`] holds until the thread starts.
struct Start<F> {
    name: Option<std::ffi::CString>,
    control: Arc<Control>,
    f: F,
}

impl<T, F> crate::sys::pthread::Main for Packet<T, Work<F>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    fn run(&self) {
        let Some(Start { name, control, f }) = lock(&self.work.0).take() else {
            return;
        };
        if let Some(name) = &name {
            crate::sys::pthread::set_current_name(name);
        }
        let _ = self.thread.set(std::thread::current());
        // `root` catches the closure's unwind; this one catches what could escape its own
        // work (a panicking destructor of the outcome's value, say) as `std`'s spawn does:
        // no unwind may reach the C start routine.
        let outcome =
            catch_unwind(AssertUnwindSafe(|| root(control, f))).unwrap_or_else(Outcome::Panicked);
        *lock(&self.outcome) = Some(outcome);
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
