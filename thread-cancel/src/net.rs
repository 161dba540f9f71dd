//! Cancellable `accept` and `connect` (name resolution included) for `std`'s TCP and Unix
//! sockets. Name resolution runs on a small shared pool of threads (at most 4): see
//! [`connect`].
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
/// The C library's name resolution (`getaddrinfo`, so `/etc/hosts` and every other source the
/// system's name service configuration lists answer as they do for `std`) cannot be
/// interrupted, so it runs on one of the process's resolution threads, which this call waits
/// for at a cancellation point. When canceled, it returns at once: a resolution no thread has
/// started yet is dropped, one already running finishes alone and its result is dropped.
///
/// At most 4 resolution threads run at once in the process, each resolving one name at a
/// time; a thread ends when no resolution is waiting for it. So connects canceled during a
/// DNS outage leave at most 4 resolutions running, each holding what the C library holds until
/// its own timeout (a socket to the name server), however many connects were canceled. While
/// all 4 are busy, a connect by name waits for one to be free, first come first served (names
/// of `/etc/hosts` too: which source will answer is only known once the C library resolves
/// them): the wait is a cancellation point, so a cancel or a deadline ends it at once. A forked
/// child starts with no resolution running.
///
/// An address given as a `SocketAddr`, or as a `String`/`&'static str` that parses as one,
/// needs no resolution and never waits.
///
/// # Errors
/// The resolution's error (`std::io::ErrorKind::InvalidInput` if it found no address, or the
/// resolver's), or the last address's connect error (see [`connect_tcp`]). The system's error
/// (`EAGAIN`) if no resolution thread runs and none could be started. An error of kind
/// `Other` if the resolution panicked (a panicking [`ToSocketAddrs`] implementation).
///
/// ```
/// let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// let port = l.local_addr().unwrap().port();
/// let s = thread_cancel::net::connect(format!("localhost:{port}")).unwrap();
/// assert_eq!(s.peer_addr().unwrap().port(), port);
/// ```
///
/// A deadline ends the wait for a slow resolution (here one that takes 300 ms):
///
/// ```
/// use std::time::Duration;
/// struct Slow;
/// impl std::net::ToSocketAddrs for Slow {
///     type Iter = std::vec::IntoIter<std::net::SocketAddr>;
///     fn to_socket_addrs(&self) -> std::io::Result<Self::Iter> {
///         std::thread::sleep(Duration::from_millis(300));
///         Ok(Vec::new().into_iter())
///     }
/// }
/// let r = thread_cancel::with_timeout(Duration::from_millis(20), || {
///     thread_cancel::net::connect(Slow)
/// });
/// assert!(r.unwrap_err().deadline_passed());
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

/// The addresses of `addr`: at once if it is one already, else resolved by the pool of
/// resolution threads ([`resolver`]) and waited for at a cancellation point.
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
    crate::testcancel();
    let (tx, rx) = crate::sync::channel();
    // Dropped on every way out, the unwind of a canceled wait included: takes the job back if
    // no thread started it yet.
    let _queued = resolver::submit(Box::new(move || {
        // If the connect was canceled, nobody waits any more: the result is dropped.
        let _ = tx.send(addr.to_socket_addrs().map(Iterator::collect));
    }))?;
    match rx.recv() {
        Ok(r) => r,
        Err(_) => Err(io::Error::other(
            "the name resolution ended without a result (it panicked)",
        )),
    }
}

/// The process's resolution threads: at most `RESOLUTIONS` (4) of them,
/// each running one resolution (a job) after another while jobs are queued, and ending when
/// none is.
///
/// A connect whose wait is canceled abandons its job: a job no thread started yet leaves the
/// queue (it never runs); a started one finishes (the C library's resolver cannot be
/// interrupted) and its result is dropped. So a burst of canceled connects during a DNS outage
/// leaves at most `RESOLUTIONS` resolutions running, with what the C library holds for each
/// (its socket to the name server), not one thread and socket per connect; a connect made
/// while all of them are stuck waits for one to end (a cancellation point).
///
/// The state is process-wide, under a lock held across `fork` by its handlers: in a forked
/// child, where the parent's threads do not exist, the first use finds the state of an older
/// fork generation and forgets it (its threads, and the jobs the parent's callers queued), so
/// a child never waits for a job nobody runs. A thread that ends is joined by the next one
/// started in its place, so the count of threads never exceeds the bound, not even while one
/// ends as another starts. At process exit the running ones are left to the exit (they hold
/// nothing but their resolution).
mod resolver {
    use std::collections::VecDeque;
    use std::io;
    use std::thread::JoinHandle;

    /// The most resolution threads the process runs at once (and so the most resolutions
    /// running at once).
    pub(super) const RESOLUTIONS: usize = 4;

    type Job = Box<dyn FnOnce() + Send>;

    struct Worker {
        id: u64,
        /// Stored by the thread that started it, once `spawn` returned.
        handle: Option<JoinHandle<()>>,
        /// It found no job and ends (or ended): joined by the next start.
        ended: bool,
    }

    struct Pool {
        /// The fork generation this state belongs to.
        generation: u32,
        /// Every thread started and not yet joined: at most `RESOLUTIONS`.
        workers: Vec<Worker>,
        /// Jobs no thread started yet, first come first served.
        jobs: VecDeque<(u64, Job)>,
        next_id: u64,
    }

    static POOL: std::sync::Mutex<Pool> = std::sync::Mutex::new(Pool {
        generation: 0,
        workers: Vec::new(),
        jobs: VecDeque::new(),
        next_id: 0,
    });

    crate::control::fork::fork_safe_lock! {
        /// Locks the pool (held across `fork`).
        fn lock_raw() -> Pool = POOL;
    }

    /// Locks the pool, first forgetting the state of a parent process (in a forked child):
    /// its threads do not exist here and its jobs belong to callers that do not either. Their
    /// values are leaked, not dropped: a thread's handle would detach a thread of another
    /// process, and a job's channel may be locked by a thread that vanished.
    fn lock() -> std::sync::MutexGuard<'static, Pool> {
        let mut p = lock_raw();
        let g = crate::control::fork::fork_generation();
        if p.generation != g {
            p.generation = g;
            std::mem::forget(std::mem::take(&mut p.workers));
            std::mem::forget(std::mem::take(&mut p.jobs));
        }
        p
    }

    /// A queued job: dropping this takes it back out of the queue if no thread started it.
    pub(super) struct Queued(u64);

    impl Drop for Queued {
        fn drop(&mut self) {
            let job = {
                let mut p = lock();
                let i = p.jobs.iter().position(|(id, _)| *id == self.0);
                i.and_then(|i| p.jobs.remove(i))
            };
            // Dropped outside the lock: the job holds a channel and the caller's address value.
            drop(job);
        }
    }

    /// Queues `job` and makes sure a thread will run it: a new thread if fewer than
    /// `RESOLUTIONS` run (joining ended ones first), else the first of the running ones to
    /// finish its job.
    ///
    /// # Errors
    /// The error of `spawn` (`EAGAIN`) if no thread could be started and none runs.
    pub(super) fn submit(job: Job) -> io::Result<Queued> {
        let (id, wid, ended) = {
            let mut p = lock();
            let id = p.next_id;
            p.next_id += 1;
            p.jobs.push_back((id, job));
            // Threads that ended (their handle stored) are joined (below) and make room.
            let mut ended = Vec::new();
            let mut i = 0;
            while i < p.workers.len() {
                if p.workers[i].ended && p.workers[i].handle.is_some() {
                    ended.extend(p.workers.swap_remove(i).handle);
                } else {
                    i += 1;
                }
            }
            if p.workers.len() == RESOLUTIONS {
                // All busy: the first to finish its job takes this one.
                drop(p);
                let queued = Queued(id);
                join(ended);
                return Ok(queued);
            }
            let wid = p.next_id;
            p.next_id += 1;
            p.workers.push(Worker {
                id: wid,
                handle: None,
                ended: false,
            });
            (id, wid, ended)
        };
        let queued = Queued(id);
        join(ended);
        let started = std::thread::Builder::new()
            .name("thread-cancel-resolve".into())
            .spawn(move || work(wid));
        let mut p = lock();
        let at = p.workers.iter().position(|w| w.id == wid);
        match (started, at) {
            (Ok(h), Some(i)) => p.workers[i].handle = Some(h),
            // Not listed any more: never (only a fork's reset empties the list, in a child
            // where this thread does not run); the thread is left detached.
            (Ok(h), None) => drop(h),
            (Err(e), at) => {
                if let Some(i) = at {
                    p.workers.swap_remove(i);
                }
                if p.workers.iter().all(|w| w.ended) {
                    // Nobody will run the job: the caller gets the error (and `queued`, dropped
                    // after the lock, takes the job back).
                    drop(p);
                    drop(queued);
                    return Err(e);
                }
            }
        }
        Ok(queued)
    }

    /// Joins threads that ended their work: the join only waits for their last steps, so that
    /// one that ends and one that starts never both count.
    fn join(ended: Vec<JoinHandle<()>>) {
        for h in ended {
            let _ = h.join();
        }
    }

    /// A resolution thread: runs queued jobs until there is none, then marks itself ended.
    fn work(id: u64) {
        loop {
            let job = {
                let mut p = lock();
                match p.jobs.pop_front() {
                    Some((_, job)) => job,
                    None => {
                        if let Some(w) = p.workers.iter_mut().find(|w| w.id == id) {
                            w.ended = true;
                        }
                        return;
                    }
                }
            };
            // A panic of the caller's `to_socket_addrs` ends that job alone (its caller sees
            // the channel closed), not the thread.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        }
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
