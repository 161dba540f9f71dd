//! Threads made with `pthread_create` directly (`Builder::lightweight`): no `std` spawn, so no
//! per-thread alternate signal stack (on Linux an `mmap`, an `mprotect` for its guard page and,
//! at exit, an `munmap` whose TLB shootdown interrupts every CPU running the process). POSIX
//! calls only, shared by every platform folder; only the naming differs between systems.
//!
//! This layer only creates, names, joins and detaches the thread; the crate's root runs inside
//! `main` (see `thread.rs`).

use std::ffi::CStr;
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `std`'s default stack size for a spawned thread, unless `RUST_MIN_STACK` says otherwise.
const STD_DEFAULT_STACK: usize = 2 << 20;

/// The stack size a thread gets when its builder names none: `std`'s (`RUST_MIN_STACK`, read
/// once per process as `std` does, else 2 MiB).
pub(crate) fn default_stack_size() -> usize {
    // 0: not read yet (a stack size of 0 is never the answer: it becomes the minimum below).
    static CACHE: AtomicUsize = AtomicUsize::new(0);
    match CACHE.load(Ordering::Relaxed) {
        0 => {
            let size = std::env::var_os("RUST_MIN_STACK")
                .and_then(|s| s.to_str().and_then(|s| s.trim().parse().ok()))
                .unwrap_or(STD_DEFAULT_STACK)
                .max(1);
            CACHE.store(size, Ordering::Relaxed);
            size
        }
        size => size,
    }
}

/// A pthread id that can be sent to and shared with other threads: an opaque handle (an
/// integer on glibc, a pointer on musl and bionic), used only as an argument of `pthread_*`
/// calls, never dereferenced by us.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Id(pub(crate) libc::pthread_t);

// SAFETY: an `Id` is only passed to `pthread_*` functions, which take it from any thread; it
// gives access to no memory of ours.
unsafe impl Send for Id {}
// SAFETY: as for `Send`; `Id` has no interior mutability.
unsafe impl Sync for Id {}

impl Id {
    /// The calling thread's id.
    pub(crate) fn current() -> Self {
        // SAFETY: `pthread_self` has no preconditions.
        Id(unsafe { libc::pthread_self() })
    }
}

/// A joinable thread made by [`spawn`]. Dropping it detaches the thread.
#[derive(Debug)]
pub(crate) struct Thread {
    id: Id,
}

/// What a thread made by [`spawn`] runs: an object shared with its creator (which keeps a
/// reference of its own, and carries the thread's work inside it: no allocation besides it).
/// The thread calls [`run`](Main::run) once, then drops its reference as its last act.
pub(crate) trait Main: Send + Sync + 'static {
    /// The thread's work. It must not unwind: it runs under an `extern "C"` start routine,
    /// where an unwind aborts the process; the implementer catches every unwind inside it.
    fn run(&self);
}

/// Creates a thread with `stack` bytes of stack (raised to the system's minimum and rounded up
/// to whole pages, as `std` does; 0 for the system's default) that runs `main`.
///
/// # Errors
/// The error of `pthread_attr_setstacksize` (a size the system refuses) or of `pthread_create`
/// (`EAGAIN`: out of threads or memory); the thread's reference to `main` is dropped then, and
/// `main` was not run.
pub(crate) fn spawn<M: Main>(stack: usize, main: Arc<M>) -> io::Result<Thread> {
    let mut slot = MaybeUninit::uninit();
    let mut attr = Attr::init(&mut slot)?;
    if stack > 0 {
        attr.set_stack_size(stack)?;
    }
    let arg = Arc::into_raw(main);
    // SAFETY: `pthread_t` is a plain integer or pointer, for which all-zero is a valid value;
    // `pthread_create` overwrites it.
    let mut id: libc::pthread_t = unsafe { std::mem::zeroed() };
    // SAFETY: `attr` is an initialised attribute object; `start::<M>` matches the start
    // routine's C signature and is given a pointer from `Arc::into_raw` of an `Arc<M>`, which
    // it takes back exactly once; `id` is valid for writes.
    let rc =
        unsafe { libc::pthread_create(&mut id, attr.as_ptr(), start::<M>, arg.cast_mut().cast()) };
    if rc != 0 {
        // SAFETY: the thread was not created, so the reference `arg` holds is still ours.
        drop(unsafe { Arc::from_raw(arg) });
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(Thread { id: Id(id) })
}

/// The start routine: takes the reference back, runs the work, drops the reference last.
extern "C" fn start<M: Main>(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: `arg` is the `Arc::into_raw` of an `Arc<M>` made by `spawn`, handed to this
    // thread alone, which takes it back here once.
    let main = unsafe { Arc::from_raw(arg.cast_const().cast::<M>()) };
    main.run();
    // The last act: the creator counts the references to know the thread is done.
    drop(main);
    std::ptr::null_mut()
}

impl Thread {
    /// The thread's pthread id.
    pub(crate) fn id(&self) -> libc::pthread_t {
        self.id.0
    }

    /// Waits for the thread to end (`pthread_join`) and releases it.
    ///
    /// # Panics
    /// If `pthread_join` fails: it cannot for a joinable thread of ours joined once, by another
    /// thread (the crate's join checks for the thread itself first).
    pub(crate) fn join(self) {
        let id = self.id.0;
        std::mem::forget(self);
        // SAFETY: `id` names a joinable thread that was neither joined nor detached (the
        // handle owned it, and is consumed without its `Drop`).
        let rc = unsafe { libc::pthread_join(id, std::ptr::null_mut()) };
        assert!(
            rc == 0,
            "failed to join thread: {}",
            io::Error::from_raw_os_error(rc)
        );
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        // SAFETY: as in `join`: a joinable thread, released once here.
        unsafe { libc::pthread_detach(self.id.0) };
    }
}

/// Names the calling thread for the system (`/proc`, debuggers, `pthread_getname_np`): at most
/// 15 bytes, cut at a character boundary.
pub(crate) fn set_current_name(name: &CStr) {
    // Linux's limit (`TASK_COMM_LEN`, 16 with the NUL).
    const MAX: usize = 15;
    let bytes = name.to_bytes();
    let mut buf = [0u8; MAX + 1];
    let mut len = bytes.len().min(MAX);
    if let Ok(s) = std::str::from_utf8(bytes) {
        while !s.is_char_boundary(len) {
            len -= 1;
        }
    }
    buf[..len].copy_from_slice(&bytes[..len]);
    set_name(&buf);
}

#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn set_name(buf: &[u8; 16]) {
    // SAFETY: `buf` is NUL-terminated within 16 bytes; `pthread_self()` names the calling
    // thread, which is alive.
    unsafe { libc::pthread_setname_np(libc::pthread_self(), buf.as_ptr().cast()) };
}

#[cfg(target_vendor = "apple")]
fn set_name(buf: &[u8; 16]) {
    // SAFETY: `buf` is NUL-terminated; Apple's call names the calling thread.
    unsafe { libc::pthread_setname_np(buf.as_ptr().cast()) };
}

#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_vendor = "apple"
)))]
fn set_name(_buf: &[u8; 16]) {}

/// A `pthread_attr_t` initialised in place in its caller's frame (POSIX leaves the use of a
/// copy of one undefined: it never moves, and needs no allocation), destroyed when dropped.
struct Attr<'a>(&'a mut libc::pthread_attr_t);

impl<'a> Attr<'a> {
    fn init(slot: &'a mut MaybeUninit<libc::pthread_attr_t>) -> io::Result<Attr<'a>> {
        // SAFETY: `slot` is valid for writes; `pthread_attr_init` initialises it.
        match unsafe { libc::pthread_attr_init(slot.as_mut_ptr()) } {
            // SAFETY: initialised by the call that succeeded.
            0 => Ok(Attr(unsafe { slot.assume_init_mut() })),
            rc => Err(io::Error::from_raw_os_error(rc)),
        }
    }

    fn as_ptr(&self) -> *const libc::pthread_attr_t {
        &*self.0
    }

    /// Sets the stack size: at least `PTHREAD_STACK_MIN`, whole pages.
    fn set_stack_size(&mut self, size: usize) -> io::Result<()> {
        // SAFETY: `sysconf` has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|&p| p.is_power_of_two())
            .unwrap_or(4096);
        let size = size
            .max(libc::PTHREAD_STACK_MIN)
            .checked_next_multiple_of(page)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: an initialised attribute object, borrowed mutably for the call.
        match unsafe { libc::pthread_attr_setstacksize(self.0, size) } {
            0 => Ok(()),
            rc => Err(io::Error::from_raw_os_error(rc)),
        }
    }
}

impl Drop for Attr<'_> {
    fn drop(&mut self) {
        // SAFETY: initialised by `init`, destroyed once.
        unsafe { libc::pthread_attr_destroy(self.0) };
    }
}
