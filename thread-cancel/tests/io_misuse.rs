//! Misuse of the safe system-call functions (issue 13, finding 1): every argument that would let
//! the kernel read or write memory outside what the caller lent (a length, a count, an `nfds`)
//! is rejected with `EINVAL` before the call, and nothing around the buffer is touched. Each
//! test surrounds the buffer it lends with canary bytes and checks them afterwards.
//!
//! The property tests (`proptest`) try every small length and `nfds` around the limits; the
//! cancellation test checks that a rejected call is still a cancellation point, so a loop
//! retrying a bad call can be canceled.

use proptest::prelude::*;
use std::io::{IoSliceMut, Read};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::time::Duration;
use thread_cancel::io;

const CANARY: u8 = 0xA5;
const GUARD: usize = 32;
/// The size of the message type in front of a System V message (`long`).
const MTYPE: usize = std::mem::size_of::<libc::c_long>();

/// A buffer of `len` bytes with `GUARD` canary bytes on each side.
struct Guarded {
    bytes: Vec<u8>,
    len: usize,
}

impl Guarded {
    fn new(len: usize) -> Self {
        Self {
            bytes: vec![CANARY; len + 2 * GUARD],
            len,
        }
    }

    /// The lent part. The whole allocation is passed through `black_box` first, so that the
    /// compiler cannot assume the canaries are unchanged by the call that follows.
    fn inner(&mut self) -> &mut [u8] {
        std::hint::black_box(self.bytes.as_mut_ptr());
        &mut self.bytes[GUARD..GUARD + self.len]
    }

    /// The canaries that were overwritten: (index relative to the lent part's start, value).
    fn damage(&self) -> Vec<(isize, u8)> {
        let b = std::hint::black_box(&self.bytes);
        b.iter()
            .enumerate()
            .filter(|&(i, &v)| (i < GUARD || i >= GUARD + self.len) && v != CANARY)
            .map(|(i, &v)| (i as isize - GUARD as isize, v))
            .collect()
    }
}

fn assert_einval(r: std::io::Result<impl std::fmt::Debug>, what: &str) {
    let e = r.expect_err(what);
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{what}: {e:?}");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{what}: {e:?}");
}

/// A private System V message queue, removed on drop.
struct Queue(i32);

impl Queue {
    fn new() -> Self {
        // SAFETY: msgget takes plain integers.
        let q = unsafe { libc::msgget(libc::IPC_PRIVATE, 0o600) };
        assert!(q >= 0, "msgget: {}", std::io::Error::last_os_error());
        Self(q)
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // SAFETY: removing the queue this value created; IPC_RMID takes no buffer.
        unsafe { libc::msgctl(self.0, libc::IPC_RMID, std::ptr::null_mut()) };
    }
}

/// A message: the type's bytes then the text.
fn message(mtype: libc::c_long, text: &[u8]) -> Vec<u8> {
    let mut m = mtype.to_ne_bytes().to_vec();
    m.extend_from_slice(text);
    m
}

/// Takes the next message of `q` without waiting: (type, text), or the error.
fn take(q: &Queue) -> std::io::Result<(libc::c_long, Vec<u8>)> {
    let mut buf = vec![0u8; MTYPE + 64];
    let n = io::msgrcv(q.0, &mut buf, 0, libc::IPC_NOWAIT)?;
    let mtype = libc::c_long::from_ne_bytes(buf[..MTYPE].try_into().unwrap());
    Ok((mtype, buf[MTYPE..MTYPE + n].to_vec()))
}

#[test]
fn msgrcv_rejects_a_buffer_shorter_than_the_message_type() {
    let q = Queue::new();
    // A type whose bytes are all distinct from the canary, and no text.
    let mtype: libc::c_long = 0x0807_0605_0403_0201;
    io::msgsnd(q.0, &message(mtype, b""), 0).unwrap();
    for len in 0..MTYPE {
        let mut g = Guarded::new(len);
        let r = io::msgrcv(q.0, g.inner(), 0, libc::IPC_NOWAIT);
        assert_eq!(g.damage(), [], "a {len}-byte buffer: written past its end");
        assert_einval(r, &format!("msgrcv into {len} bytes"));
    }
    // The message was not consumed by the rejected calls.
    assert_eq!(take(&q).unwrap(), (mtype, vec![]));
}

#[test]
fn msgsnd_rejects_a_message_shorter_than_its_type() {
    let q = Queue::new();
    // The byte lent, then bytes that would make a valid type (0x0201) if the kernel read them.
    let mut bytes = [0u8; 2 * MTYPE];
    bytes[0] = 0x01;
    bytes[1] = 0x02;
    for len in 0..MTYPE {
        let r = io::msgsnd(q.0, std::hint::black_box(&bytes[..len]), libc::IPC_NOWAIT);
        let queued = take(&q);
        assert!(
            queued.is_err(),
            "a {len}-byte message: the kernel read past it and queued {queued:?}"
        );
        assert_einval(r, &format!("msgsnd of {len} bytes"));
    }
    // The smallest valid message: a type and no text.
    io::msgsnd(q.0, &message(7, b""), 0).unwrap();
    assert_eq!(take(&q).unwrap(), (7, vec![]));
}

/// An `fd_set` followed by canaries in memory, as a variable declared after it might be.
#[repr(C)]
struct FdSetAndAfter {
    set: libc::fd_set,
    after: [u8; 128],
}

fn empty_fd_set() -> libc::fd_set {
    // SAFETY: fd_set is plain data; FD_ZERO initialises it.
    let mut s: libc::fd_set = unsafe { std::mem::zeroed() };
    // SAFETY: `s` is a valid fd_set.
    unsafe { libc::FD_ZERO(&mut s) };
    s
}

/// Raises the soft descriptor limit to at least `n` (if the hard limit allows) and returns it.
fn raise_nofile(n: u64) -> u64 {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) }, 0);
    if l.rlim_cur < n {
        l.rlim_cur = n.min(l.rlim_max);
        // SAFETY: setrlimit reads one rlimit.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) }, 0);
    }
    l.rlim_cur
}

#[test]
fn select_rejects_nfds_beyond_fd_setsize() {
    let setsize = libc::FD_SETSIZE as i32;
    let (r, _w) = std::io::pipe().unwrap();
    // Grow the descriptor table past FD_SETSIZE: descriptor `setsize` is a copy of the (empty)
    // pipe's read end. Its bit is the first bit after the fd_set: if the kernel looks at it,
    // it finds it not readable and clears it.
    let high = if raise_nofile(2 * setsize as u64) > setsize as u64 {
        // SAFETY: dup2 onto a descriptor number this test uses alone; the result is owned below.
        let fd = unsafe { libc::dup2(r.as_raw_fd(), setsize) };
        assert_eq!(fd, setsize, "dup2: {}", std::io::Error::last_os_error());
        // SAFETY: `fd` is a new descriptor nothing else owns.
        Some(unsafe { OwnedFd::from_raw_fd(fd) })
    } else {
        None // the table cannot grow here; the error is still checked
    };
    for nfds in [setsize + 1, setsize + 64, 2 * setsize, i32::MAX] {
        let mut s = FdSetAndAfter {
            set: empty_fd_set(),
            after: [0; 128],
        };
        // SAFETY: `r` is below FD_SETSIZE.
        unsafe { libc::FD_SET(r.as_raw_fd(), &mut s.set) };
        s.after[0] = 0x01; // descriptor `setsize`, watched for reading
        std::hint::black_box(&mut s as *mut FdSetAndAfter);
        let res = io::select(nfds, Some(&mut s.set), None, None, Some(Duration::ZERO));
        let after = std::hint::black_box(&s).after;
        let mut expected = [0u8; 128];
        expected[0] = 0x01;
        assert_eq!(after, expected, "select({nfds}): written past the fd_set");
        assert_einval(res, &format!("select({nfds})"));
    }
    // No set: still rejected (nfds is documented as 0..=FD_SETSIZE).
    assert_einval(
        io::select(setsize + 1, None, None, None, Some(Duration::ZERO)),
        "select beyond FD_SETSIZE without sets",
    );
    assert_einval(
        io::select(-1, None, None, None, Some(Duration::ZERO)),
        "select(-1)",
    );
    // The limit itself is valid.
    let mut set = empty_fd_set();
    // SAFETY: `r` is below FD_SETSIZE.
    unsafe { libc::FD_SET(r.as_raw_fd(), &mut set) };
    let n = io::select(setsize, Some(&mut set), None, None, Some(Duration::ZERO)).unwrap();
    assert_eq!(n, 0);
    drop(high);
}

#[test]
fn open_rejects_a_path_with_a_nul_byte_as_einval() {
    let dir = std::env::temp_dir().join(format!("tc-io-misuse-nul-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut with_nul = dir.as_os_str().as_bytes().to_vec();
    with_nul.extend_from_slice(b"/created\0ignored");
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(&with_nul));
    assert_einval(io::creat(path, 0o600), "creat");
    assert_einval(
        io::open(path, libc::O_CREAT | libc::O_WRONLY, 0o600),
        "open",
    );
    assert_einval(
        io::openat(None, path, libc::O_CREAT | libc::O_WRONLY, 0o600),
        "openat",
    );
    // Not truncated at the NUL: nothing was created.
    assert!(!dir.join("created").exists(), "the path was truncated");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file in the temporary directory, removed on drop.
struct TempFile(std::path::PathBuf, std::fs::File);

impl TempFile {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("tc-io-misuse-{name}-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&p)
            .unwrap();
        Self(p, f)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// An offset that does not fit in 32 bits (a sparse file: nothing is allocated below it).
const FAR: u64 = (1 << 32) + 7;
const NEAR: u64 = FAR & 0xffff_ffff;

#[test]
fn preadv_reads_at_offsets_beyond_4_gib() {
    let t = TempFile::new("preadv");
    assert_eq!(io::pwrite(t.1.as_fd(), b"near", NEAR).unwrap(), 4);
    assert_eq!(io::pwrite(t.1.as_fd(), b"far!", FAR).unwrap(), 4);
    let mut b = [0u8; 4];
    let n = io::preadv(t.1.as_fd(), &mut [IoSliceMut::new(&mut b)], FAR).unwrap();
    assert_eq!((n, &b), (4, b"far!"), "preadv read at the wrong offset");
}

#[test]
fn pwritev_writes_at_offsets_beyond_4_gib() {
    let t = TempFile::new("pwritev");
    assert_eq!(io::pwrite(t.1.as_fd(), b"near", NEAR).unwrap(), 4);
    let n = io::pwritev(t.1.as_fd(), &[std::io::IoSlice::new(b"far!")], FAR).unwrap();
    assert_eq!(n, 4);
    let (mut near, mut far) = ([0u8; 4], [0u8; 4]);
    io::pread(t.1.as_fd(), &mut near, NEAR).unwrap();
    io::pread(t.1.as_fd(), &mut far, FAR).unwrap();
    assert_eq!(&near, b"near", "pwritev overwrote data at the wrong offset");
    assert_eq!(&far, b"far!");
}

#[test]
fn send_rejects_msg_zerocopy() {
    let (a, b) = UnixStream::pair().unwrap();
    assert_einval(io::send(a.as_fd(), b"x", libc::MSG_ZEROCOPY), "send");
    b.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 1];
    let r = (&b).read(&mut buf);
    assert_eq!(
        r.map_err(|e| e.kind()).unwrap_err(),
        std::io::ErrorKind::WouldBlock,
        "something was sent"
    );
}

/// What the kernel already rejects stays rejected, with nothing written: more buffers than
/// `IOV_MAX`.
#[test]
fn readv_rejects_more_than_iov_max_buffers() {
    // SAFETY: sysconf takes a plain integer.
    let iov_max = unsafe { libc::sysconf(libc::_SC_IOV_MAX) } as usize;
    let f = std::fs::File::open("/dev/zero").unwrap();
    let mut g = Guarded::new(iov_max + 1);
    let inner = g.inner();
    let mut bufs: Vec<IoSliceMut<'_>> = inner.chunks_mut(1).map(IoSliceMut::new).collect();
    assert_einval(io::readv(f.as_fd(), &mut bufs), "readv");
    drop(bufs);
    assert!(
        g.inner().iter().all(|&b| b == CANARY),
        "readv wrote into its buffers"
    );
    assert_eq!(g.damage(), []);
}

#[test]
fn epoll_wait_rejects_an_empty_event_slice() {
    // SAFETY: epoll_create1 takes a flag and returns a new descriptor that we then own.
    let ep = unsafe { OwnedFd::from_raw_fd(libc::epoll_create1(libc::EPOLL_CLOEXEC)) };
    assert_einval(io::epoll_wait(ep.as_fd(), &mut [], 0), "epoll_wait");
}

/// A POSIX message queue with messages of at most `msgsize` bytes, unlinked at once.
fn mq(msgsize: libc::c_long) -> Option<libc::mqd_t> {
    let name = format!("/tc-io-misuse-{}\0", std::process::id());
    // SAFETY: mq_attr is plain data.
    let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
    attr.mq_maxmsg = 4;
    attr.mq_msgsize = msgsize;
    // SAFETY: a NUL-terminated name, valid flags, and a pointer to an mq_attr.
    let q = unsafe {
        libc::mq_open(
            name.as_ptr().cast(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
            0o600 as libc::mode_t,
            &attr as *const libc::mq_attr,
        )
    };
    // SAFETY: the NUL-terminated name created above (or not: then it fails harmlessly).
    unsafe { libc::mq_unlink(name.as_ptr().cast()) };
    if q < 0 {
        eprintln!("mq_open unavailable: {}", std::io::Error::last_os_error());
        return None;
    }
    Some(q)
}

/// What the kernel already rejects stays rejected, with nothing written: a receive buffer
/// shorter than the queue's message size (`EMSGSIZE`, as in C).
#[test]
fn mq_timedreceive_rejects_a_buffer_shorter_than_the_queue_msgsize() {
    let Some(q) = mq(64) else { return };
    io::mq_timedsend(q, b"m", 1, None).unwrap();
    let mut g = Guarded::new(63);
    let mut prio = 0;
    let e = io::mq_timedreceive(q, g.inner(), Some(&mut prio), None).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EMSGSIZE));
    assert_eq!(g.damage(), []);
    assert!(g.inner().iter().all(|&b| b == CANARY));
    // Too long a message is refused too; the queued one is still there.
    assert_eq!(
        io::mq_timedsend(q, &[0; 65], 1, None)
            .unwrap_err()
            .raw_os_error(),
        Some(libc::EMSGSIZE)
    );
    let mut buf = [0u8; 64];
    assert_eq!(
        io::mq_timedreceive(q, &mut buf, Some(&mut prio), None).unwrap(),
        1
    );
    assert_eq!((buf[0], prio), (b'm', 1));
    // SAFETY: closing the descriptor mq() returned, once.
    unsafe { libc::mq_close(q) };
}

/// One call of each kind that is rejected before the system call; each panics if the call was
/// not rejected with `EINVAL` or if it wrote outside its buffer.
const REJECTED_CALLS: [(&str, fn()); 5] = [
    ("select", || {
        let mut s = FdSetAndAfter {
            set: empty_fd_set(),
            after: [0; 128],
        };
        std::hint::black_box(&mut s as *mut FdSetAndAfter);
        let r = io::select(i32::MAX, Some(&mut s.set), None, None, None);
        assert_eq!(std::hint::black_box(&s).after, [0; 128]);
        assert_einval(r, "select");
    }),
    ("msgrcv", || {
        let mut g = Guarded::new(1);
        let r = io::msgrcv(0, g.inner(), 0, 0);
        assert_eq!(g.damage(), []);
        assert_einval(r, "msgrcv");
    }),
    ("msgsnd", || {
        assert_einval(io::msgsnd(0, &[1u8], 0), "msgsnd")
    }),
    ("open", || {
        assert_einval(io::open("a\0b".as_ref(), libc::O_RDONLY, 0), "open");
    }),
    ("send", || {
        let (a, _b) = UnixStream::pair().unwrap();
        assert_einval(io::send(a.as_fd(), b"x", libc::MSG_ZEROCOPY), "send");
    }),
];

fn stress_iters() -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

/// Joins `h`, failing the test if it does not finish within 10 s (a hang).
fn join_or_hang<T: Send + 'static>(h: thread_cancel::JoinHandle<T>, what: &str) -> bool {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let o = h.join();
        let canceled = o.is_canceled();
        tx.send((
            canceled,
            canceled || matches!(o, thread_cancel::Outcome::Returned(_)),
        ))
        .unwrap()
    });
    let (canceled, ok) = rx
        .recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what}: not finished after 10 s (a hang)"));
    assert!(ok, "{what}: the thread panicked (a rejection failed)");
    canceled
}

/// A rejected call is still a cancellation point: a thread retrying a bad call in a loop is
/// canceled, not left spinning.
#[test]
fn a_rejected_call_is_still_a_cancellation_point() {
    for (name, call) in REJECTED_CALLS {
        let h = thread_cancel::spawn(move || loop {
            call();
            std::hint::spin_loop();
        });
        h.cancel().unwrap();
        assert!(join_or_hang(h, name), "{name}: not canceled");
    }
}

/// Rejected calls racing a cancel (`THREAD_CANCEL_STRESS` races per kind, default 2,000, run
/// in rounds of 8 threads): each thread makes a few rejected calls, checking the error and its
/// canaries every time, then returns; every thread ends, canceled or finished, never
/// panicked, never hung.
#[test]
fn rejected_calls_racing_cancel_stress() {
    const ROUND: usize = 8;
    for (name, call) in REJECTED_CALLS {
        let (mut canceled, mut finished) = (0, 0);
        for r in 0..stress_iters().div_ceil(ROUND) {
            let hs: Vec<_> = (0..ROUND)
                .map(|i| {
                    let h = thread_cancel::spawn(move || {
                        for _ in 0..(r + i) % 16 {
                            call();
                        }
                    });
                    for _ in 0..(r * 7 + i) % 4096 {
                        std::hint::spin_loop();
                    }
                    let _ = h.cancel(); // NoSuchThread if it already finished
                    h
                })
                .collect();
            for h in hs {
                if join_or_hang(h, name) {
                    canceled += 1;
                } else {
                    finished += 1;
                }
            }
        }
        eprintln!("{name}: {canceled} canceled, {finished} finished");
        assert_eq!(canceled + finished, stress_iters().div_ceil(ROUND) * ROUND);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any buffer length: msgrcv either writes within the buffer or is rejected.
    #[test]
    fn msgrcv_never_writes_outside_its_buffer(len in 0usize..3 * MTYPE, text in 0usize..MTYPE) {
        let q = Queue::new();
        io::msgsnd(q.0, &message(0x0807_0605_0403_0201, &vec![0x5a; text]), 0).unwrap();
        let mut g = Guarded::new(len);
        let r = io::msgrcv(q.0, g.inner(), 0, libc::IPC_NOWAIT | libc::MSG_NOERROR);
        prop_assert_eq!(g.damage(), vec![]);
        match r {
            Ok(n) => prop_assert!(len >= MTYPE && n == text.min(len - MTYPE)),
            Err(e) => prop_assert!(len < MTYPE && e.raw_os_error() == Some(libc::EINVAL)),
        }
    }

    /// Any nfds: select either stays within the fd_set or is rejected.
    #[test]
    fn select_never_writes_outside_its_fd_set(nfds in -8i32..3 * libc::FD_SETSIZE as i32) {
        let mut s = FdSetAndAfter { set: empty_fd_set(), after: [0; 128] };
        std::hint::black_box(&mut s as *mut FdSetAndAfter);
        let r = io::select(nfds, Some(&mut s.set), None, None, Some(Duration::ZERO));
        prop_assert_eq!(std::hint::black_box(&s).after, [0u8; 128]);
        let valid = (0..=libc::FD_SETSIZE as i32).contains(&nfds);
        match r {
            Ok(n) => prop_assert!(valid && n == 0),
            Err(e) => prop_assert!(!valid && e.raw_os_error() == Some(libc::EINVAL)),
        }
    }
}
