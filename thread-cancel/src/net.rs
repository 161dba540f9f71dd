//! Cancellable `accept` and `connect` (name resolution included) for `std`'s TCP and Unix
//! sockets.
//!
//! Reading and writing a stream is [`io::Cancelable`](crate::io::Cancelable) (or
//! [`io::recv`](crate::io::recv) / [`io::send`](crate::io::send)).

use crate::io::accept;
use crate::point::raw;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};

/// Accepts a connection on `listener`; a cancellation point. A canceled `accept` took no
/// connection: it stays queued for the next one.
///
/// # Errors
/// As [`io::accept`](crate::io::accept)'s: the kernel's error ([`io` module
/// docs](crate::io#errors)), e.g. `EAGAIN` if the listener is non-blocking and no connection is
/// pending, `EMFILE`/`ENFILE` (out of descriptors), `ECONNABORTED`, `EINTR` if a signal handler
/// interrupted the wait. Also `getpeername`'s error, `ENOTCONN`, if the peer reset the accepted
/// connection before its address was read (the connection is then closed).
///
/// ```
/// let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// let addr = l.local_addr().unwrap();
/// let h = thread_cancel::spawn(move || thread_cancel::net::accept_tcp(&l).map(|_| ()));
/// let _c = std::net::TcpStream::connect(addr).unwrap();
/// h.join().unwrap().unwrap();
/// ```
pub fn accept_tcp(listener: &TcpListener) -> io::Result<(TcpStream, SocketAddr)> {
    let s = TcpStream::from(accept(listener.as_fd())?);
    let peer = s.peer_addr()?;
    Ok((s, peer))
}

/// Accepts a connection on a Unix listener; a cancellation point.
///
/// # Errors
/// As [`io::accept`](crate::io::accept)'s: the kernel's error ([`io` module
/// docs](crate::io#errors)), e.g. `EAGAIN` if the listener is non-blocking and no connection is
/// pending, `EMFILE`/`ENFILE` (out of descriptors), `EINTR` if a signal handler interrupted the
/// wait.
///
/// ```
/// let p = std::env::temp_dir().join(format!("tc-net-doc-{}", std::process::id()));
/// let l = std::os::unix::net::UnixListener::bind(&p).unwrap();
/// let _c = std::os::unix::net::UnixStream::connect(&p).unwrap();
/// let _s = thread_cancel::net::accept_unix(&l).unwrap();
/// std::fs::remove_file(&p).unwrap();
/// ```
pub fn accept_unix(listener: &UnixListener) -> io::Result<UnixStream> {
    Ok(UnixStream::from(accept(listener.as_fd())?))
}

/// Opens a TCP connection to `addr`; a cancellation point. If it is canceled, the socket is
/// closed during the unwind: no descriptor leaks and no connection is handed out.
///
/// # Errors
/// The kernel's error for `socket` (`EMFILE`/`ENFILE`, `EAFNOSUPPORT` for IPv6 on a system without
/// it) or `connect` ([`io` module docs](crate::io#errors)): `ECONNREFUSED`, `ETIMEDOUT`,
/// `ENETUNREACH`, `EHOSTUNREACH`, `EADDRNOTAVAIL`, `EINTR` if a signal handler interrupted the
/// wait. The socket is closed on every error.
///
/// ```
/// let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// let s = thread_cancel::net::connect_tcp(l.local_addr().unwrap()).unwrap();
/// assert_eq!(s.peer_addr().unwrap(), l.local_addr().unwrap());
/// ```
pub fn connect_tcp(addr: SocketAddr) -> io::Result<TcpStream> {
    let family = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    let raw = crate::sys::calls::socket_cloexec(family, libc::SOCK_STREAM);
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a new descriptor that nothing else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    let (storage, len) = sockaddr(addr);
    // SAFETY: every pointer comes from a reference or a local that outlives the call, of the type the call expects (a `sockaddr_storage` of the given length).
    unsafe {
        raw::connect(
            sock.as_raw_fd(),
            &storage as *const libc::sockaddr_storage as *const libc::sockaddr,
            len,
        )
    }?;
    Ok(TcpStream::from(sock))
}

/// Connects to `addr` as [`TcpStream::connect`] does (each address it resolves to, in turn,
/// until one accepts), with both steps cancellation points: the name resolution and each
/// connect. A canceled call leaves no descriptor open and no connection behind.
///
/// The C library's name resolution (`getaddrinfo`) cannot be interrupted, so it runs on a
/// thread of its own, which this call waits for at a cancellation point: when canceled, it
/// returns at once and the resolution finishes alone (its result is dropped). An address
/// given as a `SocketAddr`, or as a `String`/`&'static str` that parses as one, needs no
/// resolution and starts no thread.
///
/// # Errors
/// The resolution's error (`std::io::ErrorKind::InvalidInput` if it found no address, or the
/// resolver's), or the last address's connect error (see [`connect_tcp`]).
///
/// ```
/// let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// let port = l.local_addr().unwrap().port();
/// let s = thread_cancel::net::connect(format!("localhost:{port}")).unwrap();
/// assert_eq!(s.peer_addr().unwrap().port(), port);
/// ```
pub fn connect<A: ToSocketAddrs + Send + 'static>(addr: A) -> io::Result<TcpStream> {
    let mut last = None;
    for a in resolve(addr)? {
        match connect_tcp(a) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "could not resolve to any addresses",
        )
    }))
}

/// The addresses of `addr`: at once if it is one already, else resolved on a thread of its
/// own and waited for at a cancellation point.
fn resolve<A: ToSocketAddrs + Send + 'static>(addr: A) -> io::Result<Vec<SocketAddr>> {
    let any: &dyn std::any::Any = &addr;
    let literal = any
        .downcast_ref::<SocketAddr>()
        .copied()
        .or_else(|| any.downcast_ref::<String>().and_then(|s| s.parse().ok()))
        .or_else(|| any.downcast_ref::<&str>().and_then(|s| s.parse().ok()));
    if let Some(a) = literal {
        return Ok(vec![a]);
    }
    let (tx, rx) = crate::sync::channel();
    std::thread::Builder::new()
        .name("thread-cancel-resolve".into())
        .spawn(move || {
            let _ = tx.send(addr.to_socket_addrs().map(Iterator::collect));
        })?;
    match rx.recv() {
        Ok(r) => r,
        Err(_) => Err(io::Error::other(
            "the name resolution's thread ended without a result",
        )),
    }
}

fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: `sockaddr_storage` is plain data; all-zero is valid.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: plain data; all-zero is valid (and sets the BSD systems' `sin_len` to
            // 0, which they ignore in favour of the length argument).
            let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr = libc::in_addr {
                s_addr: u32::from_ne_bytes(a.ip().octets()),
            };
            // SAFETY: `sockaddr_storage` is larger than and suitably aligned for `sockaddr_in`.
            unsafe { std::ptr::write((&raw mut storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            // SAFETY: as for `sockaddr_in`.
            let mut sin6: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_flowinfo = a.flowinfo();
            sin6.sin6_addr = libc::in6_addr {
                s6_addr: a.ip().octets(),
            };
            sin6.sin6_scope_id = a.scope_id();
            // SAFETY: `sockaddr_storage` is larger than and suitably aligned for `sockaddr_in6`.
            unsafe { std::ptr::write((&raw mut storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}
