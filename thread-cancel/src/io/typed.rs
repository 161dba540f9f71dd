//! Typed forms of the `io` functions that take raw `libc` structs: descriptors as
//! [`BorrowedFd`], event masks as flag types, timeouts as [`Duration`]. Same cancellation
//! points as the raw forms ([`poll`](super::poll), [`epoll_wait`](super::epoll_wait)), which
//! stay for parity with C.

use super::cp;
use crate::sys::timespec;
use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// A set of flags over the C bits `$bits`: named constants, `|`, `&`, `contains`.
macro_rules! flags {
    ($(#[$doc:meta])* $name:ident($bits:ty) { $($(#[$fdoc:meta])* $flag:ident = $value:expr;)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name($bits);

        impl $name {
            $($(#[$fdoc])* pub const $flag: Self = Self($value as $bits);)*

            /// No flag.
            pub const fn empty() -> Self {
                Self(0)
            }
            /// The C bits.
            pub const fn bits(self) -> $bits {
                self.0
            }
            /// These C bits, unknown ones kept.
            pub const fn from_bits_retain(bits: $bits) -> Self {
                Self(bits)
            }
            /// Whether every flag of `other` is set.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }
            /// Whether any flag of `other` is set.
            pub const fn intersects(self, other: Self) -> bool {
                self.0 & other.0 != 0
            }
            /// Whether no flag is set.
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }
        }

        impl std::ops::BitOr for $name {
            type Output = Self;
            fn bitor(self, o: Self) -> Self {
                Self(self.0 | o.0)
            }
        }
        impl std::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, o: Self) {
                self.0 |= o.0;
            }
        }
        impl std::ops::BitAnd for $name {
            type Output = Self;
            fn bitand(self, o: Self) -> Self {
                Self(self.0 & o.0)
            }
        }

        impl std::fmt::Debug for $name {
            /// The names of the flags set, and the unknown bits in hexadecimal.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let mut rest = self.0;
                let mut names = Vec::new();
                $(
                    let bit = $value as $bits;
                    if bit != 0 && rest & bit == bit {
                        names.push(stringify!($flag).to_string());
                        rest &= !bit;
                    }
                )*
                if rest != 0 {
                    names.push(format!("{:#x}", rest));
                }
                if names.is_empty() {
                    names.push("empty".to_string());
                }
                write!(f, "{}({})", stringify!($name), names.join(" | "))
            }
        }
    };
}

flags! {
    /// The events of a [`PollFd`] (`POLLIN`, ...).
    ///
    /// ```
    /// use thread_cancel::io::PollFlags;
    /// let f = PollFlags::IN | PollFlags::OUT;
    /// assert!(f.contains(PollFlags::IN) && !f.contains(PollFlags::HUP));
    /// assert_eq!(format!("{f:?}"), "PollFlags(IN | OUT)");
    /// ```
    PollFlags(i16) {
        /// Data to read (`POLLIN`).
        IN = libc::POLLIN;
        /// Urgent data to read (`POLLPRI`).
        PRI = libc::POLLPRI;
        /// Writing will not block (`POLLOUT`).
        OUT = libc::POLLOUT;
        /// The peer closed its writing end (`POLLRDHUP`).
        RDHUP = libc::POLLRDHUP;
        /// An error (`POLLERR`; reported, never asked for).
        ERR = libc::POLLERR;
        /// Hang up (`POLLHUP`; reported, never asked for).
        HUP = libc::POLLHUP;
        /// The descriptor is not open (`POLLNVAL`; reported, never asked for).
        NVAL = libc::POLLNVAL;
    }
}

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

/// One entry of [`poll_fds`]: a borrowed descriptor, the events asked for and, after the
/// call, the events that occurred. Laid out as C's `struct pollfd`.
///
/// ```
/// use std::os::fd::AsFd;
/// use thread_cancel::io::{PollFd, PollFlags};
/// let (r, _w) = std::io::pipe().unwrap();
/// let p = PollFd::new(r.as_fd(), PollFlags::IN);
/// assert_eq!(p.events(), PollFlags::IN);
/// assert!(p.revents().is_empty());
/// ```
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct PollFd<'fd> {
    raw: libc::pollfd,
    _fd: PhantomData<BorrowedFd<'fd>>,
}

impl<'fd> PollFd<'fd> {
    /// Asks for `events` on `fd`.
    pub fn new(fd: BorrowedFd<'fd>, events: PollFlags) -> Self {
        Self {
            raw: libc::pollfd {
                fd: fd.as_raw_fd(),
                events: events.bits(),
                revents: 0,
            },
            _fd: PhantomData,
        }
    }

    /// The descriptor.
    ///
    /// ```
    /// use std::os::fd::{AsFd, AsRawFd};
    /// let (r, _w) = std::io::pipe().unwrap();
    /// let p = thread_cancel::io::PollFd::new(r.as_fd(), thread_cancel::io::PollFlags::IN);
    /// assert_eq!(p.fd().as_raw_fd(), r.as_raw_fd());
    /// ```
    pub fn fd(&self) -> BorrowedFd<'fd> {
        // SAFETY: `raw.fd` came from a `BorrowedFd<'fd>` (`new`), so it stays open for 'fd.
        unsafe { BorrowedFd::borrow_raw(self.raw.fd) }
    }

    /// The events asked for.
    pub fn events(&self) -> PollFlags {
        PollFlags::from_bits_retain(self.raw.events)
    }

    /// Asks for other events (the events that occurred are cleared).
    ///
    /// ```
    /// use std::os::fd::AsFd;
    /// use thread_cancel::io::{PollFd, PollFlags};
    /// let (_r, w) = std::io::pipe().unwrap();
    /// let mut p = PollFd::new(w.as_fd(), PollFlags::IN);
    /// p.set_events(PollFlags::OUT);
    /// assert_eq!(p.events(), PollFlags::OUT);
    /// ```
    pub fn set_events(&mut self, events: PollFlags) {
        self.raw.events = events.bits();
        self.raw.revents = 0;
    }

    /// The events that occurred in the last [`poll_fds`] (empty before one).
    pub fn revents(&self) -> PollFlags {
        PollFlags::from_bits_retain(self.raw.revents)
    }
}

impl std::fmt::Debug for PollFd<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PollFd")
            .field("fd", &self.raw.fd)
            .field("events", &self.events())
            .field("revents", &self.revents())
            .finish()
    }
}

/// `poll(2)` (through `ppoll`) over typed entries, as a cancellation point; `timeout: None`
/// waits forever. Returns how many entries have events; each entry's
/// [`revents`](PollFd::revents) says which.
///
/// ```
/// use std::io::Write;
/// use std::os::fd::AsFd;
/// use std::time::Duration;
/// use thread_cancel::io::{poll_fds, PollFd, PollFlags};
/// let (r, mut w) = std::io::pipe().unwrap();
/// let mut fds = [PollFd::new(r.as_fd(), PollFlags::IN)];
/// assert_eq!(poll_fds(&mut fds, Some(Duration::ZERO)).unwrap(), 0);
/// w.write_all(b"x").unwrap();
/// assert_eq!(poll_fds(&mut fds, None).unwrap(), 1);
/// assert!(fds[0].revents().contains(PollFlags::IN));
/// ```
pub fn poll_fds(fds: &mut [PollFd<'_>], timeout: Option<Duration>) -> io::Result<usize> {
    let ts = timeout.map(timespec);
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    let a = [
        fds.as_mut_ptr().cast::<libc::pollfd>() as _,
        fds.len() as _,
        tsp as _,
        0,
        0,
        0,
    ];
    // SAFETY: `PollFd` is `repr(transparent)` over `libc::pollfd`, so the slice is an array of
    // `pollfd` of its length, borrowed for the whole call, and the kernel reads and writes
    // only those entries (`nfds` is the slice's length); each descriptor is borrowed for the
    // entry's lifetime; `tsp` is null or points to a local that outlives the call.
    unsafe { cp(crate::sys::calls::PPOLL, a) }.map(|n| n as usize)
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
    pub fn add(&self, fd: BorrowedFd<'_>, event: EpollEvent) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, Some(event))
    }

    /// Changes what `fd` is watched for (`EPOLL_CTL_MOD`).
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
    /// milliseconds, at most `i32::MAX` of them). An empty `events` is `EINVAL`, as in C.
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
