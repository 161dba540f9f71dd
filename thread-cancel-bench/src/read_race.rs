//! R10 beside glibc: races of a cancel against a `read` that is returning data, with every byte
//! counted, for a C thread using glibc's `read` + `pthread_cancel` and for a `thread_cancel`
//! thread using `io::read` + `JoinHandle::cancel`.
//!
//! One race ([`race`]): a reader thread loops `read(fd, buf, 8)` on a fresh pipe and adds the
//! bytes each read returned to a counter (after the read returns, before the next read — the
//! next cancellation point). Once it is about to read, the measuring thread writes 1 to 3 bytes
//! one at a time with a small jitter after each, cancels the reader and joins it, then drains
//! the pipe without blocking. `written - (counted + drained)` bytes were taken out of the pipe
//! by a read whose result was never returned: that read both completed and was canceled, which
//! R10 forbids. glibc 2.36 (its long-standing bug 12683) acts on a cancellation that arrives as
//! a read returns, in the same call; `thread_cancel::io::read` returns the data and acts at the
//! next point.
//!
//! ```
//! use thread_cancel_bench::read_race::{race, Reader};
//! for i in 0..6 {
//!     let r = race(Reader::Ours, i).unwrap();
//!     assert!(r.canceled);
//!     assert_eq!(r.lost(), 0);
//!     let g = race(Reader::Glibc, i).unwrap();
//!     assert!(g.canceled);
//! }
//! ```

use std::fs::File;
use std::io::{self, Read, Write};
use std::marker::PhantomData;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which implementation the reader uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reader {
    /// A C thread (`pthread_create`) calling glibc's `read`, canceled with `pthread_cancel`.
    Glibc,
    /// A `thread_cancel::spawn` thread calling `thread_cancel::io::read`, canceled with
    /// `JoinHandle::cancel`.
    Ours,
}

impl Reader {
    /// A short label.
    pub fn name(self) -> &'static str {
        match self {
            Reader::Glibc => "glibc read + pthread_cancel",
            Reader::Ours => "thread_cancel io::read + cancel",
        }
    }
}

/// The bytes of one race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Race {
    /// Bytes written into the pipe.
    pub written: usize,
    /// Bytes the reader's reads returned (and it counted).
    pub counted: usize,
    /// Bytes left in the pipe after the reader was joined.
    pub drained: usize,
    /// Whether the join reported the reader canceled.
    pub canceled: bool,
}

impl Race {
    /// Bytes read out of the pipe by a call that never returned them: `written - (counted +
    /// drained)`.
    pub fn lost(&self) -> usize {
        self.written - (self.counted + self.drained)
    }
}

/// How long a reader may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Race number `i` (it picks the bytes written, `1 + i % 3`, and the jitter; see
/// [`jitter`]).
///
/// # Errors
///
/// Pipe or thread creation failing, a write failing, the reader failing to start or failing a
/// read, or more bytes accounted for than were written.
pub fn race(reader: Reader, i: usize) -> io::Result<Race> {
    let (rx, tx) = io::pipe()?;
    let rx = OwnedFd::from(rx);
    let mut tx = File::from(OwnedFd::from(tx));
    let written = 1 + i % 3;
    let (counted, canceled) = match reader {
        Reader::Glibc => {
            let r = GlibcReader::start(rx.as_fd())?;
            write_with_jitter(&mut tx, written, i)?;
            r.cancel_join()?
        }
        Reader::Ours => {
            let fd = rx.try_clone()?;
            let started = Arc::new(AtomicBool::new(false));
            let counted = Arc::new(AtomicUsize::new(0));
            let (s, c) = (started.clone(), counted.clone());
            let h = thread_cancel::Builder::new()
                .name("r10-reader".into())
                .spawn(move || {
                    let mut buf = [0u8; 8];
                    s.store(true, Ordering::Release);
                    loop {
                        match thread_cancel::io::read(fd.as_fd(), &mut buf) {
                            Ok(0) => return Ok(()),
                            Ok(k) => {
                                c.fetch_add(k, Ordering::Relaxed);
                            }
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => return Err(e),
                        }
                    }
                })?;
            let t = Instant::now();
            while !started.load(Ordering::Acquire) {
                if t.elapsed() > START_TIMEOUT {
                    return Err(io::Error::other("the reader never started"));
                }
                std::thread::yield_now();
            }
            write_with_jitter(&mut tx, written, i)?;
            h.cancel().map_err(io::Error::from)?;
            let canceled = match h.join() {
                thread_cancel::Outcome::Canceled => true,
                thread_cancel::Outcome::Returned(Err(e)) => return Err(e),
                _ => false,
            };
            (counted.load(Ordering::Relaxed), canceled)
        }
    };
    let drained = drain(&rx)?;
    drop(tx);
    let r = Race {
        written,
        counted,
        drained,
        canceled,
    };
    if counted + drained > written {
        return Err(io::Error::other(format!("more bytes than written: {r:?}")));
    }
    Ok(r)
}

/// Writes `n` bytes one at a time, each followed by [`jitter`]`(i)`.
fn write_with_jitter(tx: &mut File, n: usize, i: usize) -> io::Result<()> {
    for _ in 0..n {
        tx.write_all(b"x")?;
        jitter(i);
    }
    Ok(())
}

/// A pause so the cancel lands at different moments of the reader's wake-up: by `(i / 3) % 3`
/// (independent of the byte count `1 + i % 3`), none, a `yield`, or a spin of `(7 i) % 200`
/// iterations.
pub fn jitter(i: usize) {
    match (i / 3) % 3 {
        0 => {}
        1 => std::thread::yield_now(),
        _ => {
            for _ in 0..(7 * i) % 200 {
                std::hint::spin_loop();
            }
        }
    }
}

/// Reads everything left in the pipe, without blocking.
fn drain(fd: &OwnedFd) -> io::Result<usize> {
    // SAFETY: `fcntl` on a descriptor we own, with valid commands and flags.
    let rc = unsafe {
        let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK)
    };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    let mut f = File::from(fd.try_clone()?);
    let mut buf = [0u8; 64];
    let mut n = 0;
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok(n),
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// glibc, through the C shim.

mod ffi {
    use libc::{c_int, size_t};

    /// `struct glibc_r10_reader`, opaque.
    #[repr(C)]
    pub(crate) struct Reader {
        _private: [u8; 0],
    }

    extern "C" {
        pub(crate) fn glibc_r10_start(fd: c_int, out: *mut *mut Reader) -> c_int;
        pub(crate) fn glibc_r10_cancel_join(
            r: *mut Reader,
            counted: *mut size_t,
            canceled: *mut c_int,
            read_error: *mut c_int,
        ) -> c_int;
    }
}

/// A C reader thread (glibc's `pthread_create`) looping glibc's `read` on a descriptor it
/// borrows, counting the bytes. Dropping it cancels and joins the thread.
#[derive(Debug)]
pub struct GlibcReader<'fd> {
    ptr: NonNull<ffi::Reader>,
    _fd: PhantomData<BorrowedFd<'fd>>,
}

impl<'fd> GlibcReader<'fd> {
    /// Creates the reader on `fd`; returns once it is about to read.
    ///
    /// # Errors
    ///
    /// The error number of `pthread_create` (or `ENOMEM`).
    pub fn start(fd: BorrowedFd<'fd>) -> io::Result<Self> {
        let mut out: *mut ffi::Reader = std::ptr::null_mut();
        // SAFETY: `out` is a valid place for the C function to store a pointer; it only does
        // so (with a non-null pointer it allocated) when it returns 0. The thread it creates
        // runs C code only; the descriptor stays open while the returned value lives (the
        // `'fd` borrow), and `cancel_join`/`Drop` join the thread.
        let rc = unsafe { ffi::glibc_r10_start(fd.as_raw_fd(), &mut out) };
        Ok(GlibcReader {
            ptr: crate::c_started(rc, out, "glibc_r10_start")?,
            _fd: PhantomData,
        })
    }

    /// Cancels the reader with `pthread_cancel` and joins it: the bytes it counted, and whether
    /// the join reported `PTHREAD_CANCELED`.
    ///
    /// # Errors
    ///
    /// The error number of `pthread_cancel` or `pthread_join`, or of a failed `read`.
    pub fn cancel_join(self) -> io::Result<(usize, bool)> {
        let ptr = self.ptr;
        std::mem::forget(self);
        let (mut counted, mut canceled, mut read_error) = (0, 0, 0);
        // SAFETY: `ptr` came from `glibc_r10_start` and is passed here exactly once (`self` is
        // forgotten, so `Drop` will not pass it again); the out-pointers are valid places; the
        // C side cancels and joins a C-only thread (no Rust frames are unwound) and frees it.
        let rc = unsafe {
            ffi::glibc_r10_cancel_join(ptr.as_ptr(), &mut counted, &mut canceled, &mut read_error)
        };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        if read_error != 0 {
            return Err(io::Error::from_raw_os_error(read_error));
        }
        Ok((counted, canceled != 0))
    }
}

impl Drop for GlibcReader<'_> {
    fn drop(&mut self) {
        let (mut counted, mut canceled, mut read_error) = (0, 0, 0);
        // SAFETY: as in `cancel_join`: `ptr` is live and is consumed here, once.
        unsafe {
            ffi::glibc_r10_cancel_join(
                self.ptr.as_ptr(),
                &mut counted,
                &mut canceled,
                &mut read_error,
            );
        }
    }
}
