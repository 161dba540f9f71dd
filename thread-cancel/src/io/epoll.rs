//! The typed epoll interface (Linux and Android): [`Epoll`], [`EpollEvent`], [`EpollFlags`].

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Duration;

flags! {
    /// The events of an [`EpollEvent`] (`EPOLLIN`, ...) and the options of an interest
    /// (`EPOLLET`, ...).
    ///
    /// ```
    /// use thread_cancel::io::EpollFlags;
    /// let f = EpollFlags::IN | EpollFlags::ET;
    /// assert!(f.contains(EpollFlags::ET));
    /// assert_eq!(format!("{f:?}"), "EpollFlags(IN | ET)");
    /// ```
    EpollFlags(u32) {
        /// Data to read (`EPOLLIN`).
        IN = libc::EPOLLIN;
        /// Urgent data to read (`EPOLLPRI`).
        PRI = libc::EPOLLPRI;
        /// Writing will not block (`EPOLLOUT`).
        OUT = libc::EPOLLOUT;
        /// The peer closed its writing end (`EPOLLRDHUP`).
        RDHUP = libc::EPOLLRDHUP;
        /// An error (`EPOLLERR`; always reported).
        ERR = libc::EPOLLERR;
        /// Hang up (`EPOLLHUP`; always reported).
        HUP = libc::EPOLLHUP;
        /// Edge-triggered (`EPOLLET`).
        ET = libc::EPOLLET;
        /// Disarmed after one event (`EPOLLONESHOT`).
        ONESHOT = libc::EPOLLONESHOT;
        /// Wake up only one of several epoll instances waiting (`EPOLLEXCLUSIVE`).
        EXCLUSIVE = libc::EPOLLEXCLUSIVE;
    }
}

/// One event of an [`Epoll`] instance: what happened (or is asked for) and the caller's
/// 64-bit tag. Laid out as C's `struct epoll_event`.
///
/// ```
/// use thread_cancel::io::{EpollEvent, EpollFlags};
/// let e = EpollEvent::new(EpollFlags::IN, 7);
/// assert_eq!((e.flags(), e.data()), (EpollFlags::IN, 7));
/// assert_eq!(EpollEvent::default().data(), 0);
/// ```
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct EpollEvent(libc::epoll_event);

impl EpollEvent {
    /// An event with `flags` and the tag `data`.
    pub fn new(flags: EpollFlags, data: u64) -> Self {
        Self(libc::epoll_event {
            events: flags.bits(),
            u64: data,
        })
    }

    /// The events (or the interest's flags).
    pub fn flags(&self) -> EpollFlags {
        // Read by value: the C struct is packed on some targets (no reference to a field).
        let events = self.0.events;
        EpollFlags::from_bits_retain(events)
    }

    /// The caller's tag.
    pub fn data(&self) -> u64 {
        self.0.u64
    }
}

impl Default for EpollEvent {
    fn default() -> Self {
        Self::new(EpollFlags::empty(), 0)
    }
}

impl std::fmt::Debug for EpollEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpollEvent")
            .field("flags", &self.flags())
            .field("data", &self.data())
            .finish()
    }
}

/// An epoll instance (`epoll_create1(EPOLL_CLOEXEC)`), closed on drop. Registering is not a
/// cancellation point (it never blocks); [`wait`](Self::wait) is.
///
/// ```
/// use std::io::Write;
/// use std::os::fd::AsFd;
/// use thread_cancel::io::{Epoll, EpollEvent, EpollFlags};
/// let (r, mut w) = std::io::pipe().unwrap();
/// let ep = Epoll::new().unwrap();
/// ep.add(r.as_fd(), EpollEvent::new(EpollFlags::IN, 42)).unwrap();
/// w.write_all(b"x").unwrap();
/// let mut evs = [EpollEvent::default(); 4];
/// let n = ep.wait(&mut evs, None).unwrap();
/// assert_eq!((n, evs[0].data()), (1, 42));
/// assert!(evs[0].flags().contains(EpollFlags::IN));
/// ```
#[derive(Debug)]
pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    /// A new instance.
    ///
    /// # Errors
    /// The kernel's error for `epoll_create1`: `EMFILE`/`ENFILE` (out of descriptors, or the
    /// per-user limit of epoll instances), `ENOMEM`.
    pub fn new() -> io::Result<Self> {
        // SAFETY: takes a flag, returns a new descriptor or -1.
        let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a new descriptor that nothing else owns.
        Ok(Self {
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
        })
    }

    fn ctl(&self, op: i32, fd: BorrowedFd<'_>, event: Option<EpollEvent>) -> io::Result<()> {
        let mut ev = event.map(|e| e.0);
        let p = ev
            .as_mut()
            .map_or(std::ptr::null_mut(), |e| e as *mut libc::epoll_event);
        // SAFETY: both descriptors are borrowed for the call; `p` is null (`EPOLL_CTL_DEL`) or
        // points to a local event that outlives it, which the kernel only reads.
        let r = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd.as_raw_fd(), p) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Watches `fd` for `event`'s flags; its events will carry `event`'s tag
    /// (`EPOLL_CTL_ADD`). The kernel keeps watching until [`delete`](Self::delete) or until
    /// every descriptor referring to the open file is closed.
    ///
    /// # Errors
    /// The kernel's error for `epoll_ctl`: `EEXIST` if `fd` is already watched, `EPERM` if `fd`
    /// does not support epoll (a regular file or a directory), `EINVAL` if `fd` is this instance
    /// itself, `ELOOP` for a cycle of epoll instances, `ENOSPC` past the per-user limit of watches
    /// (`max_user_watches`), `ENOMEM`.
    pub fn add(&self, fd: BorrowedFd<'_>, event: EpollEvent) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, Some(event))
    }

    /// Changes what `fd` is watched for (`EPOLL_CTL_MOD`).
    ///
    /// # Errors
    /// The kernel's error for `epoll_ctl`: `ENOENT` if `fd` is not watched, `EINVAL` for flags that
    /// cannot be changed (`EXCLUSIVE`), `ENOMEM`.
    ///
    /// ```
    /// use std::os::fd::AsFd;
    /// use thread_cancel::io::{Epoll, EpollEvent, EpollFlags};
    /// let (_r, w) = std::io::pipe().unwrap();
    /// let ep = Epoll::new().unwrap();
    /// ep.add(w.as_fd(), EpollEvent::new(EpollFlags::empty(), 1)).unwrap();
    /// ep.modify(w.as_fd(), EpollEvent::new(EpollFlags::OUT, 2)).unwrap();
    /// let mut evs = [EpollEvent::default(); 1];
    /// assert_eq!(ep.wait(&mut evs, None).unwrap(), 1);
    /// assert_eq!(evs[0].data(), 2);
    /// ```
    pub fn modify(&self, fd: BorrowedFd<'_>, event: EpollEvent) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, Some(event))
    }

    /// Stops watching `fd` (`EPOLL_CTL_DEL`).
    ///
    /// # Errors
    /// The kernel's error for `epoll_ctl`: `ENOENT` if `fd` is not watched.
    ///
    /// ```
    /// use std::os::fd::AsFd;
    /// use std::time::Duration;
    /// use thread_cancel::io::{Epoll, EpollEvent, EpollFlags};
    /// let (_r, w) = std::io::pipe().unwrap();
    /// let ep = Epoll::new().unwrap();
    /// ep.add(w.as_fd(), EpollEvent::new(EpollFlags::OUT, 1)).unwrap();
    /// ep.delete(w.as_fd()).unwrap();
    /// let mut evs = [EpollEvent::default(); 1];
    /// assert_eq!(ep.wait(&mut evs, Some(Duration::ZERO)).unwrap(), 0);
    /// ```
    pub fn delete(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, None)
    }

    /// `epoll_wait(2)` as a cancellation point: fills the start of `events` and returns how
    /// many it filled; `timeout: None` waits forever (a timeout is rounded up to whole
    /// milliseconds, at most `i32::MAX` of them).
    ///
    /// # Errors
    /// As [`epoll_wait`](super::epoll_wait)'s: `EINVAL` if `events` is empty, as in C; `EINTR`
    /// if a signal handler ran (never restarted).
    ///
    /// ```
    /// use std::time::Duration;
    /// let ep = thread_cancel::io::Epoll::new().unwrap();
    /// let h = thread_cancel::spawn(move || {
    ///     let mut evs = [thread_cancel::io::EpollEvent::default(); 8];
    ///     ep.wait(&mut evs, None) // nothing is watched: only a cancel ends this
    /// });
    /// h.cancel().unwrap();
    /// assert!(h.join().is_canceled());
    /// ```
    pub fn wait(&self, events: &mut [EpollEvent], timeout: Option<Duration>) -> io::Result<usize> {
        let ms = timeout.map_or(-1, |d| {
            let ms = d.as_nanos().div_ceil(1_000_000);
            ms.min(i32::MAX as u128) as i32
        });
        // SAFETY: `EpollEvent` is `repr(transparent)` over `libc::epoll_event`: the same
        // memory, borrowed mutably for as long as `events` is.
        let raw = unsafe {
            std::slice::from_raw_parts_mut(
                events.as_mut_ptr().cast::<libc::epoll_event>(),
                events.len(),
            )
        };
        super::epoll_wait(self.fd.as_fd(), raw, ms)
    }
}

impl AsFd for Epoll {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
