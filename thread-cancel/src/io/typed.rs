//! Typed forms of the `io` functions that take raw `libc` structs: descriptors as
//! [`BorrowedFd`], event masks as flag types, timeouts as [`Duration`]. Same cancellation
//! points as the raw forms ([`poll`](super::poll), [`epoll_wait`](super::epoll_wait)), which
//! stay for parity with C.

use super::cp;
use crate::sys::timespec;
use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, BorrowedFd};
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
        /// The peer closed its writing end (`POLLRDHUP`; Linux and Android only, 0 elsewhere).
        RDHUP = crate::sys::calls::POLLRDHUP;
        /// An error (`POLLERR`; reported, never asked for).
        ERR = libc::POLLERR;
        /// Hang up (`POLLHUP`; reported, never asked for).
        HUP = libc::POLLHUP;
        /// The descriptor is not open (`POLLNVAL`; reported, never asked for).
        NVAL = libc::POLLNVAL;
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
/// # Errors
/// As [`poll`](super::poll)'s: the kernel's error ([module docs](crate::io#errors)): `EINVAL` if
/// `fds` has more entries than the `RLIMIT_NOFILE` limit, `ENOMEM`, `EINTR` if a signal handler ran
/// (never restarted). A bad descriptor is not an error: its entry's [`revents`](PollFd::revents)
/// has [`PollFlags::NVAL`].
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
