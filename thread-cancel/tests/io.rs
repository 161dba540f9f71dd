//! System-call cancellation points (`io`, `net`, `process`): a blocked call is woken by a
//! request (R05) and either completes or has no effect (R10), standard output as a point (R23),
//! the full list of points (R24); the typed forms (`poll_fds` over `PollFd`, `Epoll` with
//! `EpollEvent`), which agree with the raw calls; `io::Cancelable`; and misuse: every argument
//! that would let the kernel read or write outside what the caller lent is rejected with
//! `EINVAL` before the call (the buffers lent are surrounded with canary bytes, checked after).
//!
//! Every test (but the property tests, which open no descriptor) holds [`serial`], so that the
//! leak check's count of `/proc/self/fd` sees no other test. `THREAD_CANCEL_STRESS` sets the
//! races per kind (default 2,000; a long run: `THREAD_CANCEL_STRESS=200000 cargo test --release
//! --test io`).

mod common;

use common::{drain, set_nonblocking, stress_iters, HANG};
use proptest::prelude::*;
use std::io::{IoSliceMut, Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use thread_cancel::io::{poll_fds, Epoll, EpollEvent, EpollFlags, PollFd, PollFlags};
use thread_cancel::{io, spawn};

// ---------------------------------------------------------------------------------------------
// Races of cancel against read/write/recv/send/accept/open, every byte and connection counted

/// Every test of this binary holds this lock, so the descriptor counts see no other test.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Pause so the race lands at different moments: none, a yield, or a short spin.
fn jitter(i: usize) {
    match i % 3 {
        0 => {}
        1 => std::thread::yield_now(),
        _ => {
            for _ in 0..(i % 200) {
                std::hint::spin_loop()
            }
        }
    }
}

/// A reader on `rx` counts every byte a read returned; the main thread writes, then cancels.
/// Bytes written == bytes returned + bytes left.
fn race_reads(name: &str, n: usize, pair: impl Fn() -> (OwnedFd, OwnedFd), use_recv: bool) {
    let mut lost = 0;
    let mut canceled = 0;
    for i in 0..n {
        let (rx, tx) = pair();
        let got = Arc::new(AtomicUsize::new(0));
        let g = got.clone();
        let r = Arc::new(rx);
        let r2 = r.clone();
        let h = spawn(move || {
            let mut buf = [0u8; 8];
            loop {
                let k = if use_recv {
                    io::recv(r2.as_fd(), &mut buf, 0)
                } else {
                    io::read(r2.as_fd(), &mut buf)
                };
                match k {
                    Ok(0) => return,
                    Ok(k) => {
                        g.fetch_add(k, Ordering::SeqCst);
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        });
        let sent = 1 + i % 3;
        let mut t = std::fs::File::from(tx);
        for _ in 0..sent {
            t.write_all(b"x").unwrap();
            jitter(i);
        }
        h.cancel().unwrap();
        if h.join().is_canceled() {
            canceled += 1;
        }
        let left = drain(&r);
        lost += sent - (got.load(Ordering::SeqCst) + left);
    }
    println!("{name}: {n} races, {canceled} canceled, {lost} bytes lost");
    assert_eq!(lost, 0, "{name}: bytes lost");
    assert_eq!(canceled, n, "{name}: every reader was canceled");
}

/// A writer fills a full pipe/socket one byte at a time, counting bytes a write reported; the
/// main thread reads some and cancels. Bytes reported written == bytes read + bytes left.
fn race_writes(name: &str, n: usize, pair: impl Fn() -> (OwnedFd, OwnedFd), use_send: bool) {
    let mut mismatched = 0;
    for i in 0..n {
        let (rx, tx) = pair();
        set_nonblocking(&tx);
        let mut prefill = 0;
        while io::write(tx.as_fd(), &[0u8; 4096])
            .map(|k| prefill += k)
            .is_ok()
        {}
        // Blocking again for the writer.
        // SAFETY: fcntl on a descriptor we own.
        unsafe {
            let fl = libc::fcntl(tx.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(tx.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
        let wrote = Arc::new(AtomicUsize::new(0));
        let w = wrote.clone();
        let t = Arc::new(tx);
        let t2 = t.clone();
        let h = spawn(move || loop {
            let k = if use_send {
                io::send(t2.as_fd(), b"y", 0)
            } else {
                io::write(t2.as_fd(), b"y")
            };
            w.fetch_add(k.unwrap(), Ordering::SeqCst);
        });
        let mut r = std::fs::File::from(rx.try_clone().unwrap());
        let mut buf = vec![0u8; 1 + (i % 3) * 4096];
        let mut read = r.read(&mut buf).unwrap();
        jitter(i);
        h.cancel().unwrap();
        assert!(h.join().is_canceled());
        read += drain(&rx);
        if read != prefill + wrote.load(Ordering::SeqCst) {
            mismatched += 1;
        }
        drop(t);
    }
    println!("{name}: {n} races, {mismatched} mismatched");
    assert_eq!(
        mismatched, 0,
        "{name}: a write both happened and was canceled"
    );
}

fn pipe_pair() -> (OwnedFd, OwnedFd) {
    let (r, w) = std::io::pipe().unwrap();
    (r.into(), w.into())
}

fn unix_pair() -> (OwnedFd, OwnedFd) {
    let (a, b) = UnixStream::pair().unwrap();
    (a.into(), b.into())
}

/// An acceptor counts connections; the main thread connects, then cancels. Connections made ==
/// accepted + still queued. A Unix socket, so many races do not exhaust TCP ports.
fn race_accepts(n: usize) {
    let path = std::env::temp_dir().join(format!("tc-accept-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let l = Arc::new(std::os::unix::net::UnixListener::bind(&path).unwrap());
    let mut lost = 0;
    for i in 0..n {
        l.set_nonblocking(false).unwrap();
        let l2 = l.clone();
        let accepted = Arc::new(AtomicUsize::new(0));
        let a = accepted.clone();
        let h = spawn(move || loop {
            let c = io::accept(l2.as_fd()).unwrap();
            a.fetch_add(1, Ordering::SeqCst);
            drop(c);
        });
        let k = 1 + i % 2;
        let clients: Vec<_> = (0..k)
            .map(|_| {
                let c = UnixStream::connect(&path).unwrap();
                jitter(i);
                c
            })
            .collect();
        h.cancel().unwrap();
        assert!(h.join().is_canceled());
        l.set_nonblocking(true).unwrap();
        let mut left = 0;
        while l.accept().is_ok() {
            left += 1;
        }
        lost += k - (accepted.load(Ordering::SeqCst) + left);
        drop(clients);
    }
    drop(l);
    let _ = std::fs::remove_file(&path);
    println!("r10 accept: {n} races, {lost} connections lost");
    assert_eq!(lost, 0);
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn r10_read_write_recv_send_accept_either_complete_or_cancel_and_leak_nothing() {
    let _serial = serial();
    let n = stress_iters();
    let before = open_fds();
    race_reads("r10 read", n, pipe_pair, false);
    race_reads("r10 recv", n, unix_pair, true);
    race_writes("r10 write", n / 4, pipe_pair, false);
    race_writes("r10 send", n / 4, unix_pair, true);
    race_accepts(n / 4);
    r10_close_releases_the_descriptor_exactly_once();
    race_opens(n / 4);
    let after = open_fds();
    println!("descriptors open before {before}, after {after}");
    assert_eq!(before, after, "descriptors leaked");
}

/// Opening a FIFO for reading blocks until a writer opens it. A reader thread opens (counting
/// descriptors it got, and closing them); the main thread opens the writer side, then cancels.
/// Every open either returned a descriptor (counted) or opened nothing: the table is checked by
/// the caller.
fn race_opens(n: usize) {
    let path = std::env::temp_dir().join(format!("tc-fifo-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path and mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut opened_total = 0;
    for i in 0..n {
        let opened = Arc::new(AtomicUsize::new(0));
        let (o, p) = (opened.clone(), path.clone());
        let h = spawn(move || loop {
            let fd = io::open(&p, libc::O_RDONLY, 0).unwrap();
            o.fetch_add(1, Ordering::SeqCst);
            drop(fd);
        });
        if i % 2 == 0 {
            // Give the reader a writer to meet (non-blocking open fails with ENXIO if no reader).
            for _ in 0..1000 {
                let w = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&path);
                if w.is_ok() {
                    jitter(i);
                    break;
                }
                std::thread::yield_now();
            }
        }
        h.cancel().unwrap();
        assert!(h.join().is_canceled());
        opened_total += opened.load(Ordering::SeqCst);
    }
    let _ = std::fs::remove_file(&path);
    println!("r10 open: {n} races, {opened_total} opens completed, descriptors checked below");
}

fn r10_close_releases_the_descriptor_exactly_once() {
    let before = open_fds();
    let h = spawn(|| {
        let (r, _w) = std::io::pipe().unwrap();
        let _d = thread_cancel::disable();
        thread_cancel::current().cancel().unwrap();
        drop(_d);
        io::close(r.into()).unwrap(); // closes, then acts
        unreachable!()
    });
    assert!(h.join().is_canceled());
    assert_eq!(open_fds(), before);
}

// ---------------------------------------------------------------------------------------------
// Blocked calls are woken by a request

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn r05_blocked_read_accept_poll_are_woken_by_cancel() {
    let _serial = serial();
    for kind in 0..3 {
        let (r, _w) = std::io::pipe().unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let (h, tid) = common::spawn_watched(move || match kind {
            0 => {
                let _ = io::read(r.as_fd(), &mut [0u8; 1]);
            }
            1 => {
                let _ = io::accept(l.as_fd());
            }
            _ => {
                let mut p = [libc::pollfd {
                    fd: r.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                }];
                let _ = io::poll(&mut p, -1);
            }
        });
        tid.wait_blocked(); // in its call: the cancel interrupts it, not its entry
        h.cancel().unwrap();
        assert!(h.join().is_canceled(), "kind {kind}");
    }
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn r05_blocked_pause_epoll_wait_waitpid_are_woken_by_cancel() {
    let _serial = serial();
    let mut child = std::process::Command::new("sleep")
        .arg("3600")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    for kind in 0..3 {
        let (h, tid) = common::spawn_watched(move || match kind {
            0 => {
                let _ = io::pause();
            }
            1 => {
                // SAFETY: epoll_create1 takes a flag and returns a descriptor we then own.
                let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
                assert!(raw >= 0);
                // SAFETY: `raw` is a new descriptor that nothing else owns.
                let ep = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) };
                let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 1];
                let _ = io::epoll_wait(ep.as_fd(), &mut evs, -1);
            }
            _ => {
                let _ = io::waitpid(pid, 0);
            }
        });
        tid.wait_blocked(); // in its call: the cancel interrupts it, not its entry
        h.cancel().unwrap();
        assert!(h.join().is_canceled(), "kind {kind}");
    }
    // The canceled waitpid reaped nothing: the child is still ours to kill and reap.
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
}

/// A canceler that finds its target parked skips the fence (`membarrier`) and relies on the
/// parker's hand-off instead. The target here parks (a short `sleep`) and then blocks in a
/// `read` that nothing but the cancel signal ends, so a request whose hand-off it missed
/// would leave it blocked for ever: every race must end with the thread canceled, at once.
///
/// Most races cancel after a varying spin, so the request lands before, in or after the park
/// as the scheduler has it. Two races in sixteen are placed on purpose, so both sides are run
/// whatever the machine's load: in one the target parks for seconds (the cancel lands in the
/// park), in the other the canceler waits until the target has left the park for the read.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn r05_cancel_racing_a_park_then_a_blocking_read_never_hangs() {
    let _serial = serial();
    let n = stress_iters();
    let (r, _w) = std::io::pipe().unwrap();
    let r = Arc::new(r);
    let (mut in_park, mut in_read) = (0, 0);
    for i in 0..n {
        let (park_anchor, read_anchor) = (i % 16 == 0, i % 16 == 1);
        let park = if park_anchor {
            Duration::from_secs(5)
        } else {
            Duration::from_micros(20)
        };
        let rr = r.clone();
        let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reading = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (st, rd) = (started.clone(), reading.clone());
        let h = spawn(move || {
            st.store(true, Ordering::SeqCst);
            loop {
                thread_cancel::sleep(park);
                rd.store(true, Ordering::SeqCst);
                let _ = io::read(rr.as_fd(), &mut [0u8; 1]);
            }
        });
        while !started.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        if read_anchor {
            // Past the park: the request lands at or in the read.
            let t = std::time::Instant::now();
            while !reading.load(Ordering::SeqCst) {
                assert!(
                    t.elapsed() < HANG,
                    "race {i}: the target never left its park"
                );
                std::thread::yield_now();
            }
        } else if !park_anchor {
            // From nothing to about 40 µs: the request lands before, in, or after the park.
            for _ in 0..(i % 64) * (i % 7) * 10 {
                std::hint::spin_loop();
            }
        }
        h.cancel().unwrap();
        let c = h.canceler();
        let t = std::time::Instant::now();
        while !c.is_finished() {
            assert!(
                t.elapsed() < HANG,
                "race {i}: the canceled thread is still blocked"
            );
            std::thread::yield_now();
        }
        assert!(h.join().is_canceled());
        let read = reading.load(Ordering::SeqCst);
        if park_anchor {
            // A cancel that did not end the long park would let the target reach the read.
            assert!(!read, "race {i}: the cancel did not end the park");
        }
        if read {
            in_read += 1;
        } else {
            in_park += 1;
        }
    }
    eprintln!("{n} races: {in_park} canceled before the read, {in_read} at or in it");
    // Both sides of the race were run (the placed races make sure of it).
    assert!(
        in_park > 0 && in_read > 0,
        "the races all landed on one side"
    );
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn r23_stdout_writer_is_a_cancellation_point() {
    let _serial = serial();
    let printed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let p = printed.clone();
    let h = spawn(move || loop {
        writeln!(io::stdout(), "r23: printing until canceled").unwrap();
        p.store(true, std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(1));
    });
    // Canceled once it prints (the request is then acted on at a later write).
    common::wait_flag(&printed, "the thread printed");
    h.cancel().unwrap();
    // Its only points are the writes: a failure, not a hang, if they are none.
    assert!(
        h.wait_timeout(common::HANG),
        "the printing thread was not canceled within {:?}",
        common::HANG
    );
    assert!(h.join().is_canceled());
}

/// R24: every cancellation point that POSIX lists and Linux has is offered; each name maps to
/// the function that
/// implements it (a compile-time check that it exists, with its address).
#[test]
fn r24_every_spec_cancellation_point_is_offered() {
    let _serial = serial();
    use thread_cancel::{net, process, sync};
    let listed =
        "accept, accept4, clock_nanosleep, close, connect, creat, fcntl, fdatasync, fsync, \
        lockf, mq_receive, mq_send, mq_timedreceive, mq_timedsend, msgrcv, msgsnd, msync, \
        nanosleep, open, openat, pause, poll, ppoll, epoll_wait, epoll_pwait, pread, preadv, \
        pselect, pwrite, pwritev, read, readv, recv, recvfrom, recvmsg, select, sem_wait, \
        sem_timedwait, send, sendmsg, sendto, sigsuspend, sigtimedwait, sigwait, sigwaitinfo, \
        sleep, tcdrain, usleep, wait, waitid, waitpid, write, writev, join, condition wait, \
        testcancel";
    let ours: &[(&str, usize)] = &[
        ("accept", io::accept as *const () as usize),
        ("accept4", net::accept_tcp as *const () as usize),
        (
            "clock_nanosleep",
            thread_cancel::sleep as *const () as usize,
        ),
        ("close", io::close as *const () as usize),
        ("connect", net::connect_tcp as *const () as usize),
        ("creat", io::creat as *const () as usize),
        ("fcntl", io::fcntl_lock_wait as *const () as usize),
        ("fdatasync", io::fdatasync as *const () as usize),
        ("fsync", io::fsync as *const () as usize),
        ("lockf", io::fcntl_lock_wait as *const () as usize),
        ("mq_receive", io::mq_timedreceive as *const () as usize),
        ("mq_send", io::mq_timedsend as *const () as usize),
        ("mq_timedreceive", io::mq_timedreceive as *const () as usize),
        ("mq_timedsend", io::mq_timedsend as *const () as usize),
        ("msgrcv", io::msgrcv as *const () as usize),
        ("msgsnd", io::msgsnd as *const () as usize),
        ("msync", io::msync as *const () as usize),
        ("nanosleep", thread_cancel::sleep as *const () as usize),
        ("open", io::open as *const () as usize),
        ("openat", io::openat as *const () as usize),
        ("pause", io::pause as *const () as usize),
        ("poll", io::poll as *const () as usize),
        ("ppoll", io::poll as *const () as usize),
        ("epoll_wait", io::epoll_wait as *const () as usize),
        ("epoll_pwait", io::epoll_wait as *const () as usize),
        ("pread", io::pread as *const () as usize),
        ("preadv", io::preadv as *const () as usize),
        ("pselect", io::select as *const () as usize),
        ("pwrite", io::pwrite as *const () as usize),
        ("pwritev", io::pwritev as *const () as usize),
        ("read", io::read as *const () as usize),
        ("readv", io::readv as *const () as usize),
        ("recv", io::recv as *const () as usize),
        ("recvfrom", io::recv as *const () as usize),
        ("recvmsg", io::recvmsg as *const () as usize),
        ("select", io::select as *const () as usize),
        ("sem_wait", sync::Semaphore::acquire as *const () as usize),
        (
            "sem_timedwait",
            sync::Semaphore::acquire_timeout as *const () as usize,
        ),
        ("send", io::send as *const () as usize),
        ("sendmsg", io::sendmsg as *const () as usize),
        ("sendto", io::send as *const () as usize),
        ("sigsuspend", io::sigsuspend as *const () as usize),
        ("sigtimedwait", io::sigtimedwait as *const () as usize),
        ("sigwait", io::sigtimedwait as *const () as usize),
        ("sigwaitinfo", io::sigtimedwait as *const () as usize),
        ("sleep", thread_cancel::sleep as *const () as usize),
        ("tcdrain", io::tcdrain as *const () as usize),
        ("usleep", thread_cancel::sleep as *const () as usize),
        ("wait", process::wait as *const () as usize),
        ("waitid", io::waitid as *const () as usize),
        ("waitpid", io::waitpid as *const () as usize),
        ("write", io::write as *const () as usize),
        ("writev", io::writev as *const () as usize),
        (
            "join",
            thread_cancel::JoinHandle::<()>::join as *const () as usize,
        ),
        (
            "condition wait",
            sync::Condvar::wait::<()> as *const () as usize,
        ),
        (
            "testcancel",
            thread_cancel::testcancel as *const () as usize,
        ),
    ];
    let names: Vec<&str> = listed.split(',').map(str::trim).collect();
    let covered: Vec<&str> = ours.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names, covered,
        "the list of R24 and this table name the same points, in order"
    );
    assert!(ours.iter().all(|(_, f)| *f != 0));
}

/// R24: the points of the list above act on a request pending at their entry. Each runs in a
/// thread that queued a request for itself first, with arguments that make it return at once
/// if it were no point (data ready, a zero timeout, a file): the thread must end canceled, with
/// nothing after the call. (The points that can only block — `pause`, `sigsuspend` — are shown
/// woken by a cancel in `r05_blocked_pause_epoll_wait_waitpid_are_woken_by_cancel`.)
#[test]
fn r24_each_offered_point_acts_on_a_request_pending_at_its_entry() {
    let _serial = serial();
    use thread_cancel::{net, sync};
    let dir = std::env::temp_dir().join(format!("tc-r24-points-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("f");
    std::fs::write(&file, b"0123456789").unwrap();
    let rw = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&file)
            .unwrap()
    };
    let ready_pipe = || {
        let (r, mut w) = std::io::pipe().unwrap();
        w.write_all(b"x").unwrap();
        (r, w)
    };
    type Point = Box<dyn FnOnce() + Send>;
    let mut points: Vec<(&str, Point)> = Vec::new();
    let (r, w) = ready_pipe();
    points.push((
        "read",
        Box::new(move || drop(io::read(r.as_fd(), &mut [0u8; 1]).map(|_| &w))),
    ));
    let (r, w) = ready_pipe();
    points.push((
        "write",
        Box::new(move || drop(io::write(w.as_fd(), b"y").map(|_| &r))),
    ));
    let (r, w) = ready_pipe();
    points.push((
        "readv",
        Box::new(move || {
            let mut b = [0u8; 1];
            drop(io::readv(r.as_fd(), &mut [IoSliceMut::new(&mut b)]).map(|_| &w))
        }),
    ));
    let (r, w) = ready_pipe();
    points.push((
        "writev",
        Box::new(move || drop(io::writev(w.as_fd(), &[std::io::IoSlice::new(b"y")]).map(|_| &r))),
    ));
    let f = rw();
    points.push((
        "pread",
        Box::new(move || drop(io::pread(f.as_fd(), &mut [0u8; 1], 0))),
    ));
    let f = rw();
    points.push((
        "pwrite",
        Box::new(move || drop(io::pwrite(f.as_fd(), b"0", 0))),
    ));
    let f = rw();
    points.push((
        "preadv",
        Box::new(move || {
            let mut b = [0u8; 1];
            drop(io::preadv(f.as_fd(), &mut [IoSliceMut::new(&mut b)], 0))
        }),
    ));
    let f = rw();
    points.push((
        "pwritev",
        Box::new(move || drop(io::pwritev(f.as_fd(), &[std::io::IoSlice::new(b"0")], 0))),
    ));
    let f = rw();
    points.push(("fsync", Box::new(move || drop(io::fsync(f.as_fd())))));
    let f = rw();
    points.push((
        "fdatasync",
        Box::new(move || drop(io::fdatasync(f.as_fd()))),
    ));
    let f = rw();
    points.push(("close", Box::new(move || drop(io::close(f.into())))));
    let p = file.clone();
    points.push((
        "open",
        Box::new(move || drop(io::open(&p, libc::O_RDONLY, 0))),
    ));
    let p = dir.join("created");
    points.push(("creat", Box::new(move || drop(io::creat(&p, 0o600)))));
    let (a, b) = UnixStream::pair().unwrap();
    (&b).write_all(b"x").unwrap();
    points.push((
        "recv",
        Box::new(move || drop(io::recv(a.as_fd(), &mut [0u8; 1], 0).map(|_| &b))),
    ));
    let (a, b) = UnixStream::pair().unwrap();
    points.push((
        "send",
        Box::new(move || drop(io::send(a.as_fd(), b"x", 0).map(|_| &b))),
    ));
    points.push(("poll", Box::new(|| drop(io::poll(&mut [], 0)))));
    // Our own process id: never a child (ECHILD), so a call that is no point reaps no child of
    // another test.
    let me = std::process::id() as i32;
    points.push((
        "waitpid",
        Box::new(move || drop(io::waitpid(me, libc::WNOHANG))),
    ));
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    points.push(("accept", Box::new(move || drop(io::accept(l.as_fd())))));
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    points.push((
        "connect",
        Box::new(move || drop(net::connect_tcp(addr).map(|_| &l))),
    ));
    points.push(("sleep", Box::new(|| thread_cancel::sleep(Duration::ZERO))));
    points.push((
        "sigtimedwait",
        Box::new(|| {
            // SAFETY: `set` is a valid sigset_t for sigemptyset to initialise.
            let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
            unsafe { libc::sigemptyset(&mut set) };
            drop(io::sigtimedwait(&set, Some(Duration::ZERO)))
        }),
    ));
    let done = spawn(|| ());
    while !done.is_finished() {
        std::thread::yield_now();
    }
    points.push(("join", Box::new(move || drop(done.join()))));
    points.push((
        "condition wait",
        Box::new(|| {
            let (m, c) = (sync::Mutex::new(()), sync::Condvar::new());
            drop(c.wait_timeout(m.lock().unwrap(), Duration::ZERO));
        }),
    ));
    points.push(("sem_wait", Box::new(|| sync::Semaphore::new(1).acquire())));
    points.push(("testcancel", Box::new(thread_cancel::testcancel)));
    let mut not_points = Vec::new();
    for (name, point) in points {
        let h = spawn(move || {
            thread_cancel::current().cancel().unwrap();
            point();
        });
        if !h.join().is_canceled() {
            not_points.push(name);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        not_points.is_empty(),
        "returned with a request pending: {not_points:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Typed forms: poll_fds and Epoll

/// Cancels `h` once it is seen blocked in the kernel, and checks that it ends canceled (a hang
/// is reported after [`HANG`] instead of waited for).
fn cancel_blocked<T: 'static>((h, tid): (thread_cancel::JoinHandle<T>, common::Tid)) {
    tid.wait_blocked();
    h.cancel().unwrap();
    assert!(h.wait_timeout(HANG), "the canceled wait did not end");
    assert!(h.join().is_canceled());
}

#[test]
fn poll_fds_reports_typed_events_like_raw_poll() {
    let _serial = serial();
    let (r, w) = std::io::pipe().unwrap();
    let mut fds = [
        PollFd::new(r.as_fd(), PollFlags::IN),
        PollFd::new(w.as_fd(), PollFlags::OUT),
    ];
    assert_eq!(poll_fds(&mut fds, Some(Duration::ZERO)).unwrap(), 1);
    assert!(fds[0].revents().is_empty());
    assert!(fds[1].revents().contains(PollFlags::OUT));

    (&w).write_all(b"x").unwrap(); // `w` stays borrowed by its entry
    assert_eq!(poll_fds(&mut fds, None).unwrap(), 2);
    assert!(fds[0].revents().contains(PollFlags::IN));

    // The raw form sees the same.
    let mut raw = [libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(&r),
        events: libc::POLLIN,
        revents: 0,
    }];
    assert_eq!(thread_cancel::io::poll(&mut raw, 0).unwrap(), 1);
    assert_eq!(raw[0].revents, fds[0].revents().bits());
}

#[test]
fn poll_fds_reports_hang_up_without_asking() {
    let _serial = serial();
    let (r, w) = std::io::pipe().unwrap();
    drop(w);
    let mut fds = [PollFd::new(r.as_fd(), PollFlags::empty())];
    assert_eq!(poll_fds(&mut fds, None).unwrap(), 1);
    assert!(fds[0].revents().contains(PollFlags::HUP));
    assert_eq!(fds[0].events(), PollFlags::empty());
}

#[test]
fn poll_fds_timeout_expires_with_no_event() {
    let _serial = serial();
    let (r, _w) = std::io::pipe().unwrap();
    let mut fds = [PollFd::new(r.as_fd(), PollFlags::IN)];
    assert_eq!(
        poll_fds(&mut fds, Some(Duration::from_millis(1))).unwrap(),
        0
    );
    assert!(fds[0].revents().is_empty());
}

/// A thread blocked in `poll_fds` is canceled, with a finite timeout, none, or the largest
/// `Duration` (saturated for the kernel, not an error).
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn poll_fds_is_a_cancellation_point() {
    let _serial = serial();
    for timeout in [None, Some(Duration::from_secs(3600)), Some(Duration::MAX)] {
        let h = common::spawn_watched(move || {
            let (r, _w) = std::io::pipe().unwrap();
            let mut fds = [PollFd::new(r.as_fd(), PollFlags::IN)];
            poll_fds(&mut fds, timeout)
        });
        cancel_blocked(h);
    }
    let h = common::spawn_watched(|| poll_fds(&mut [], None));
    cancel_blocked(h);
}

#[test]
fn poll_fds_acts_at_entry_with_a_request_pending() {
    let _serial = serial();
    let h = spawn(|| {
        let (r, mut w) = std::io::pipe().unwrap();
        w.write_all(b"x").unwrap(); // ready: the call would not block
        thread_cancel::current().cancel().unwrap();
        let mut fds = [PollFd::new(r.as_fd(), PollFlags::IN)];
        let _ = poll_fds(&mut fds, None);
        unreachable!("poll_fds acts at entry");
    });
    assert!(h.join().is_canceled());
}

#[test]
fn epoll_wait_reports_the_tag_and_flags() {
    let _serial = serial();
    let (r, mut w) = std::io::pipe().unwrap();
    let ep = Epoll::new().unwrap();
    ep.add(r.as_fd(), EpollEvent::new(EpollFlags::IN, 0xfeed))
        .unwrap();
    let mut evs = [EpollEvent::default(); 4];
    assert_eq!(ep.wait(&mut evs, Some(Duration::ZERO)).unwrap(), 0);
    w.write_all(b"x").unwrap();
    assert_eq!(ep.wait(&mut evs, None).unwrap(), 1);
    assert_eq!(evs[0].data(), 0xfeed);
    assert!(evs[0].flags().contains(EpollFlags::IN));

    drop(w);
    ep.modify(r.as_fd(), EpollEvent::new(EpollFlags::RDHUP, 7))
        .unwrap();
    assert_eq!(ep.wait(&mut evs, None).unwrap(), 1);
    assert_eq!(evs[0].data(), 7);
    assert!(evs[0].flags().contains(EpollFlags::HUP));
}

/// The kernel's errors come back as C's: registering twice, deleting what is not
/// registered, waiting with no room for an event.
#[test]
fn epoll_misuse_reports_cs_errors() {
    let _serial = serial();
    let (r, _w) = std::io::pipe().unwrap();
    let ep = Epoll::new().unwrap();
    let e = ep.delete(r.as_fd()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    ep.add(r.as_fd(), EpollEvent::new(EpollFlags::IN, 1))
        .unwrap();
    let e = ep
        .add(r.as_fd(), EpollEvent::new(EpollFlags::IN, 1))
        .unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
    let e = ep.wait(&mut [], Some(Duration::ZERO)).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    let e = ep.add(ep.as_fd(), EpollEvent::new(EpollFlags::IN, 1));
    assert_eq!(e.unwrap_err().raw_os_error(), Some(libc::EINVAL));
}

/// A sub-millisecond timeout is rounded up, not down to a non-blocking poll; a wait with a
/// timeout still returns once it expires.
#[test]
fn epoll_wait_timeout_expires_with_no_event() {
    let _serial = serial();
    let (r, _w) = std::io::pipe().unwrap();
    let ep = Epoll::new().unwrap();
    ep.add(r.as_fd(), EpollEvent::new(EpollFlags::IN, 1))
        .unwrap();
    let mut evs = [EpollEvent::default(); 1];
    for t in [Duration::from_nanos(1), Duration::from_millis(2)] {
        assert_eq!(ep.wait(&mut evs, Some(t)).unwrap(), 0);
    }
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn epoll_wait_is_a_cancellation_point() {
    let _serial = serial();
    for timeout in [None, Some(Duration::from_secs(3600)), Some(Duration::MAX)] {
        let h = common::spawn_watched(move || {
            let (r, _w) = std::io::pipe().unwrap();
            let ep = Epoll::new().unwrap();
            ep.add(r.as_fd(), EpollEvent::new(EpollFlags::IN, 1))
                .unwrap();
            let mut evs = [EpollEvent::default(); 8];
            ep.wait(&mut evs, timeout)
        });
        cancel_blocked(h);
    }
}

#[test]
fn flags_combine_and_show_their_names() {
    let _serial = serial();
    let f = PollFlags::IN | PollFlags::PRI;
    assert!(f.intersects(PollFlags::PRI | PollFlags::OUT));
    assert!(!f.contains(PollFlags::PRI | PollFlags::OUT));
    assert_eq!((f & PollFlags::IN), PollFlags::IN);
    assert_eq!(format!("{:?}", PollFlags::empty()), "PollFlags(empty)");
    let odd = EpollFlags::from_bits_retain(EpollFlags::OUT.bits() | 0x0100_0000);
    assert_eq!(format!("{odd:?}"), "EpollFlags(OUT | 0x1000000)");
    let mut g = EpollFlags::empty();
    g |= EpollFlags::ONESHOT;
    assert_eq!(g.bits(), libc::EPOLLONESHOT as u32);
}

// ---------------------------------------------------------------------------------------------
// io::Cancelable and stdin

fn scratch_file(tag: &str) -> std::fs::File {
    let p = std::env::temp_dir().join(format!("tc-io-cancelable-{tag}-{}", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&p)
        .unwrap();
    std::fs::remove_file(&p).unwrap();
    f
}

#[test]
fn cancelable_seek_moves_the_offset_reads_and_writes_use() {
    let _serial = serial();
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut c = thread_cancel::io::Cancelable::new(scratch_file("seek"));
    c.write_all(b"abcdef").unwrap();
    assert_eq!(c.stream_position().unwrap(), 6);
    assert_eq!(c.seek(SeekFrom::Current(-2)).unwrap(), 4);
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    assert_eq!(s, "ef");
    c.rewind().unwrap();
    c.write_all(b"X").unwrap();
    c.seek(SeekFrom::Start(0)).unwrap();
    s.clear();
    c.read_to_string(&mut s).unwrap();
    assert_eq!(s, "Xbcdef");
}

#[test]
fn cancelable_get_mut_and_as_fd_reach_the_inner_value() {
    let _serial = serial();
    use std::io::Write;
    use std::os::fd::{AsFd, AsRawFd};
    let mut c = thread_cancel::io::Cancelable::new(scratch_file("getmut"));
    c.write_all(b"1234").unwrap();
    c.get_mut().set_len(2).unwrap();
    assert_eq!(c.get_ref().metadata().unwrap().len(), 2);
    assert_eq!(c.as_fd().as_raw_fd(), c.get_ref().as_raw_fd());
}

#[test]
fn stdin_read_is_a_cancellation_point() {
    let _serial = serial();
    use std::io::Read;
    let h = thread_cancel::spawn(|| {
        // The request is pending before the read: the read must act on it whatever stdin is
        // (a terminal that blocks, or /dev/null that would return 0 at once).
        while !thread_cancel::cancel_requested() {
            std::hint::spin_loop();
        }
        let mut b = [0u8; 16];
        thread_cancel::io::stdin().read(&mut b)
    });
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
}

// ---------------------------------------------------------------------------------------------
// Misuse: arguments that would reach outside the caller's memory are rejected

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
    let _serial = serial();
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
    let _serial = serial();
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
    let _serial = serial();
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
    let _serial = serial();
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
    let _serial = serial();
    let t = TempFile::new("preadv");
    assert_eq!(io::pwrite(t.1.as_fd(), b"near", NEAR).unwrap(), 4);
    assert_eq!(io::pwrite(t.1.as_fd(), b"far!", FAR).unwrap(), 4);
    let mut b = [0u8; 4];
    let n = io::preadv(t.1.as_fd(), &mut [IoSliceMut::new(&mut b)], FAR).unwrap();
    assert_eq!((n, &b), (4, b"far!"), "preadv read at the wrong offset");
}

#[test]
fn pwritev_writes_at_offsets_beyond_4_gib() {
    let _serial = serial();
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
    let _serial = serial();
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
    let _serial = serial();
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
    let _serial = serial();
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
    let _serial = serial();
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

/// Joins `h`, failing the test if it does not finish within [`HANG`].
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
        .recv_timeout(HANG)
        .unwrap_or_else(|_| panic!("{what}: not finished after {HANG:?} (a hang)"));
    assert!(ok, "{what}: the thread panicked (a rejection failed)");
    canceled
}

/// A rejected call is still a cancellation point: a thread retrying a bad call in a loop is
/// canceled, not left spinning.
#[test]
fn a_rejected_call_is_still_a_cancellation_point() {
    let _serial = serial();
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
    let _serial = serial();
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

// ---------------------------------------------------------------------------------------------
// E08: the crate's own calls for code that passes budgets on.

/// An address whose resolution blocks (as a slow DNS server would) until the test says (it
/// sends on, or drops, the other end of the channel), at most [`HANG`], and then fails.
struct SlowName(std::sync::mpsc::Receiver<()>);

impl std::net::ToSocketAddrs for SlowName {
    type Iter = std::vec::IntoIter<std::net::SocketAddr>;
    fn to_socket_addrs(&self) -> std::io::Result<Self::Iter> {
        let _ = self.0.recv_timeout(HANG);
        Err(std::io::Error::other("no such name"))
    }
}

/// `net::connect`: its name resolution is a cancellation point (the C library's resolver
/// cannot be interrupted: it runs on a resolution thread, which the call stops waiting for).
#[test]
fn e08_net_connect_name_resolution_ends_at_the_deadline() {
    let _g = serial();
    // The resolution answers only once the run has ended: the deadline acts first, whatever
    // the delays (a deadline that did not act would see "no such name" after `HANG`).
    let (answer, held) = std::sync::mpsc::channel();
    let t = std::time::Instant::now();
    let r = thread_cancel::with_timeout(Duration::from_millis(100), || {
        thread_cancel::net::connect(SlowName(held))
    });
    let took = t.elapsed();
    drop(answer);
    let e = r.unwrap_err();
    assert!(e.deadline_passed() && e.acted() && !e.completed(), "{e:?}");
    assert!(took < HANG, "not ended by the deadline: {took:?}");
    // It connects, by name and by literal address.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    for a in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let s = thread_cancel::net::connect(a).unwrap();
        assert_eq!(s.peer_addr().unwrap().port(), port);
    }
    // Nothing listens: the connect error, not a resolution error.
    drop(l);
    let e = thread_cancel::net::connect(format!("127.0.0.1:{port}")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
}

/// A name resolved by `net::connect` runs on its resolution threads (named
/// `thread-cancel-resolve`) through the C library, so names of `/etc/hosts` still resolve
/// (here `localhost`), and more connects at once than there are resolution threads all get
/// their answer (a queued resolution is run by the first thread free).
#[test]
fn e08_net_connect_resolves_names_of_etc_hosts_on_its_resolution_threads() {
    let _g = serial();
    struct Recorded(u16, Arc<std::sync::Mutex<Vec<Option<String>>>>);
    impl std::net::ToSocketAddrs for Recorded {
        type Iter = std::vec::IntoIter<std::net::SocketAddr>;
        fn to_socket_addrs(&self) -> std::io::Result<Self::Iter> {
            let name = std::thread::current().name().map(str::to_owned);
            self.1.lock().unwrap().push(name);
            ("localhost", self.0).to_socket_addrs()
        }
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let connects: Vec<_> = (0..4 * RESOLUTIONS)
        .map(|_| {
            let seen = seen.clone();
            spawn(move || thread_cancel::net::connect(Recorded(port, seen)).map(|s| s.peer_addr()))
        })
        .collect();
    for c in connects {
        assert_eq!(c.join().unwrap().unwrap().unwrap().port(), port);
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4 * RESOLUTIONS);
    assert!(
        seen.iter()
            .all(|n| n.as_deref() == Some("thread-cancel-resolve")),
        "{seen:?}"
    );
}

/// The bound `net::connect` documents: resolution threads running at once in the process.
const RESOLUTIONS: usize = 4;
/// The descriptors one stuck resolution may hold: the C library's socket to the name server
/// (one per server it asks; the test's resolver lists one), and one more for a file it reads
/// on the way (`/etc/hosts`) or a resolver that asks the IPv4 and IPv6 questions on sockets of
/// their own (`single-request-reopen`).
#[cfg(target_os = "linux")]
const FDS_PER_RESOLUTION: usize = 2;

/// The threads of the process but those the deadline timer starts for a moment (it runs the
/// callbacks a run it timed out owes on a thread of its own, named `thread-cancel-callbacks`,
/// which ends at once; until it names itself it shows its creator's name,
/// `thread-cancel-deadlines`): their count, and how many of those transient ones there were.
#[cfg(target_os = "linux")]
fn threads_steady() -> (usize, usize) {
    let all = threads_named();
    let timers = all.iter().filter(|(_, n)| n == "thread-cancel-d").count();
    let callbacks = all.iter().filter(|(_, n)| n == "thread-cancel-c").count();
    let transient = callbacks + timers.saturating_sub(1);
    (all.len() - transient, transient)
}

/// Canceled connects in a row during the outage.
#[cfg(target_os = "linux")]
const OUTAGE_CONNECTS: usize = 100;

/// A name no hosts file knows, which the C library asks the name server about (not a
/// reserved `.invalid` or `localhost` name, which it may answer without asking).
#[cfg(target_os = "linux")]
const UNKNOWN: &str = "example.test";

#[cfg(target_os = "linux")]
fn threads_now() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// This process's threads, as (kernel id, name).
#[cfg(target_os = "linux")]
fn threads_named() -> Vec<(i32, String)> {
    let mut v: Vec<(i32, String)> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| {
            let t = t.ok()?;
            let tid = t.file_name().to_str()?.parse().ok()?;
            let name = std::fs::read_to_string(t.path().join("comm")).ok()?;
            Some((tid, name.trim_end().to_owned()))
        })
        .collect();
    v.sort();
    v
}

/// The kernel ids of `net::connect`'s resolution threads (named `thread-cancel-resolve`,
/// which the kernel cuts to 15 bytes).
#[cfg(target_os = "linux")]
fn resolution_threads() -> Vec<i32> {
    threads_named()
        .into_iter()
        .filter(|(_, n)| n == "thread-cancel-r")
        .map(|(t, _)| t)
        .collect()
}

/// A connect to [`UNKNOWN`] canceled by a deadline of `ms` milliseconds; it must end by that
/// deadline (the silent server gives no answer, whether it was asked or not).
#[cfg(target_os = "linux")]
fn canceled_connect(ms: u64) {
    let r = thread_cancel::with_timeout(Duration::from_millis(ms), || {
        thread_cancel::net::connect((UNKNOWN, 80))
    });
    match r {
        Err(e) => assert!(e.deadline_passed(), "{e:?}"),
        Ok(r) => panic!("a connect to {UNKNOWN} ended before its deadline: {r:?}"),
    }
}

/// Waits until the process is back to `threads` threads and `fds` descriptors; the time it
/// took (fails the test after [`HANG`]).
#[cfg(target_os = "linux")]
fn back_to(threads: usize, fds: usize) -> Duration {
    let t = std::time::Instant::now();
    assert!(
        common::wait_for(|| threads_now() == threads && open_fds() == fds),
        "not back to {threads} threads and {fds} descriptors: {} and {}; threads: {:?}",
        threads_now(),
        open_fds(),
        threads_named()
    );
    t.elapsed()
}

/// `net::connect` canceled again and again while the name server is silent (a DNS outage):
/// the process's threads and descriptors stay under a fixed bound ([`RESOLUTIONS`] running
/// resolutions and what they hold), not one thread and socket per canceled connect, and return
/// to their count before once the resolver's own timeout has passed. A connect made while the
/// bound is reached waits for a resolution to end (a cancellation point), then goes on; a
/// forked child does not wait for its parent's resolutions. Runs in a child process in its own
/// user, network and mount namespaces (`unshare`), whose `/etc/resolv.conf` names a local
/// server that never answers (`options timeout:1 attempts:1`). Before the fix each canceled
/// connect left its own resolution thread and socket for the resolver's timeout (the check
/// failed after 5 connects with 5 resolution threads; unchecked, the peak was 48 resolution
/// threads and 48 more descriptors).
///
/// Needs `unshare --user --map-root-user --net --mount`: where it fails the test prints
/// "skipped:" and its reason, or fails if `THREAD_CANCEL_REQUIRE_NAMESPACES` is set.
#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "its set-up ends a blocked read with a deadline: the portable layer has no cancel signal"
)]
fn e08_net_connect_canceled_in_a_dns_outage_leaves_bounded_threads_and_descriptors() {
    const NAME: &str =
        "e08_net_connect_canceled_in_a_dns_outage_leaves_bounded_threads_and_descriptors";
    if common::child_value().as_deref() == Some("dns-outage") {
        return dns_outage();
    }
    if std::env::var_os("THREAD_CANCEL_TEST_RUNNER").is_some() {
        eprintln!("skipped under emulation: the emulator's own threads and descriptors");
        return;
    }
    // The child's standard error is a pipe of this process while it runs.
    let _g = serial();
    let unshare = ["unshare", "--user", "--map-root-user", "--net", "--mount"];
    let probe = std::process::Command::new(unshare[0])
        .args(&unshare[1..])
        .arg("true")
        .stderr(std::process::Stdio::piped())
        .output();
    let why = match probe {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "{}: {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(e.to_string()),
    };
    if let Some(why) = why {
        let msg = format!(
            "needs `{}` (user, network and mount namespaces): {why}",
            unshare.join(" ")
        );
        assert!(
            std::env::var_os("THREAD_CANCEL_REQUIRE_NAMESPACES").is_none(),
            "{msg}"
        );
        eprintln!("skipped: {msg}");
        return;
    }
    let run = common::run_child_under(&unshare, NAME, "dns-outage", HANG * 3, &[]);
    eprint!("{}", run.stderr);
    assert!(run.status.success(), "the child failed: {}", run.status);
}

/// The child of the DNS-outage test, in its own namespaces: sets the outage up, then checks.
#[cfg(target_os = "linux")]
fn dns_outage() {
    use std::time::Instant;
    silent_resolver_setup();
    // The name server: receives every query, answers none.
    let dns = std::net::UdpSocket::bind("127.0.0.1:53").unwrap();
    let queries = Arc::new(AtomicUsize::new(0));
    let q = queries.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while dns.recv_from(&mut buf).is_ok() {
            q.fetch_add(1, Ordering::SeqCst);
        }
    });
    // The deadline timer's thread lives from the first timed run blocked in a system call on:
    // started before the count.
    let (r, w) = std::io::pipe().unwrap();
    let _ = thread_cancel::with_timeout(Duration::from_millis(1), || {
        thread_cancel::io::read(r.as_fd(), &mut [0u8; 1])
    });
    drop((r, w));
    assert!(
        common::wait_for(|| threads_steady().1 == 0),
        "{:?}",
        threads_named()
    );
    let (t0, f0) = (threads_now(), open_fds());

    // 1. Canceled connects in a row: the counts stay under the bound after each.
    let (mut tmax, mut fmax, mut rmax, mut xmax) = (t0, f0, 0, 0);
    let started = Instant::now();
    for i in 1..=OUTAGE_CONNECTS {
        canceled_connect(20);
        let ((t, x), f, r) = (threads_steady(), open_fds(), resolution_threads().len());
        (tmax, fmax, rmax, xmax) = (tmax.max(t), fmax.max(f), rmax.max(r), xmax.max(x));
        assert!(
            r <= RESOLUTIONS && t <= t0 + RESOLUTIONS && f <= f0 + FDS_PER_RESOLUTION * RESOLUTIONS,
            "after {i} canceled connects: {r} resolution threads (bound {RESOLUTIONS}), {t} \
             threads (before: {t0}, bound: {}), {f} descriptors (before: {f0}, bound: {}); \
             threads: {:?}",
            t0 + RESOLUTIONS,
            f0 + FDS_PER_RESOLUTION * RESOLUTIONS,
            threads_named(),
        );
    }
    let outage = started.elapsed();
    let asked = queries.load(Ordering::SeqCst);
    assert!(
        asked > 0,
        "the name server got no query: the lookups never reached it"
    );
    // 2. Once the resolver's own timeout has passed, the counts are back.
    let back_after_outage = back_to(t0, f0);

    // 3. The bound reached: four resolutions stuck in the resolver (each blocked, waiting for
    // an answer that does not come, for the resolver's timeout of 1 s).
    // (A connect canceled before a thread took its job takes the job back: connect until
    // that many threads run one.)
    let filled = common::wait_for(|| {
        let n = resolution_threads().len();
        if n < RESOLUTIONS {
            canceled_connect(20);
        }
        n >= RESOLUTIONS
    });
    assert!(filled, "{:?}", threads_named());
    let full = Instant::now();
    let stuck = resolution_threads();
    assert_eq!(stuck.len(), RESOLUTIONS, "{:?}", threads_named());
    for tid in stuck {
        common::wait_blocked(tid);
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    // Lookup N+1 waits behind them (a cancellation point): with a deadline shorter than the
    // resolver's timeout, it ends by that deadline, even for a name of /etc/hosts.
    let r = thread_cancel::with_timeout(Duration::from_millis(100), || {
        thread_cancel::net::connect(("localhost", port))
    });
    if full.elapsed() < Duration::from_millis(900) {
        let e = r.expect_err("lookup N+1 did not wait behind the stuck ones");
        assert!(e.deadline_passed(), "{e:?}");
    } else {
        eprintln!("(lookup N+1 not checked: the stuck resolutions may have timed out already)");
    }
    // A forked child, where the parent's resolution threads do not exist, does not wait for
    // them: its own resolution runs (a wait for the parent's would never end there).
    // SAFETY: the child resolves and connects (the crate's locks are held across the fork by
    // their owners' handlers; the C library's resolver and allocator are fork-safe) and ends
    // with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = thread_cancel::net::connect(("localhost", port)).is_ok();
        // SAFETY: ends the child at once, without the parent's exit handlers.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    let ended =
        common::wait_for(|| unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid);
    if !ended {
        // SAFETY: our own child, still running; then reaped.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
        }
    }
    assert!(
        ended && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the forked child's connect by name did not succeed (hung: {}, status {status:#x})",
        !ended
    );
    // Given the time, lookup N+1 runs once a stuck one ends, and resolves through the C
    // library (here: /etc/hosts).
    let t = Instant::now();
    let s = thread_cancel::with_timeout(HANG, || thread_cancel::net::connect(("localhost", port)))
        .unwrap()
        .unwrap();
    let n1_wait = t.elapsed();
    assert_eq!(s.peer_addr().unwrap().port(), port);
    drop((s, l));
    let back_after_full = back_to(t0, f0);
    eprintln!(
        "dns outage: {OUTAGE_CONNECTS} canceled connects in {outage:.2?} ({asked} queries to \
         the silent name server); threads {t0} before / {tmax} max ({rmax} resolution threads) \
         / {t0} after (and at most {xmax} of the deadline timer's for a moment), descriptors {f0} before / {fmax} max / {f0} after (bounds: \
         {RESOLUTIONS} resolution threads, {} threads, {} descriptors); back to the counts \
         {back_after_outage:.2?} after the last connect. With {RESOLUTIONS} resolutions \
         stuck, lookup N+1 (localhost) waited {n1_wait:.2?} with a deadline of {HANG:?}, and \
         the counts were back {back_after_full:.2?} after it",
        t0 + RESOLUTIONS,
        f0 + FDS_PER_RESOLUTION * RESOLUTIONS,
    );
}

/// In the child's own namespaces: `/etc/resolv.conf` names a server on 127.0.0.1 (timeout
/// 1 s, one attempt), `/etc/nsswitch.conf` asks `files` then `dns` (bind mounts seen by this
/// process alone; the machine's files are untouched), and the loopback interface is up.
#[cfg(target_os = "linux")]
fn silent_resolver_setup() {
    use std::ffi::CString;
    let dir = std::env::temp_dir().join(format!("tc-dns-outage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files = [
        (
            "resolv.conf",
            "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
            "/etc/resolv.conf",
        ),
        ("nsswitch.conf", "hosts: files dns\n", "/etc/nsswitch.conf"),
    ];
    let c = |p: &std::path::Path| CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: C strings that outlive the call; no source, type or data.
    let r = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    assert_eq!(
        r,
        0,
        "mount --make-rprivate /: {}",
        std::io::Error::last_os_error()
    );
    for (name, text, target) in files {
        let src = dir.join(name);
        std::fs::write(&src, text).unwrap();
        let (src, dst) = (c(&src), c(std::path::Path::new(target)));
        // SAFETY: C strings that outlive the call; a bind mount reads no type or data.
        let r = unsafe {
            libc::mount(
                src.as_ptr(),
                dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            )
        };
        assert_eq!(
            r,
            0,
            "bind mount on {target}: {}",
            std::io::Error::last_os_error()
        );
    }
    // The mounts keep the files' contents; the names can go.
    std::fs::remove_dir_all(&dir).unwrap();
    // SAFETY: a plain socket call.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    assert!(s >= 0);
    // SAFETY: `s` is a new descriptor that nothing else owns.
    let s = unsafe { OwnedFd::from_raw_fd(s) };
    // SAFETY: plain data; all-zero is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, b) in ifr.ifr_name.iter_mut().zip(b"lo") {
        *d = *b as libc::c_char;
    }
    // SAFETY: `ifr` is a valid `ifreq` for the call to read and write.
    assert_eq!(
        unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut ifr) },
        0
    );
    // SAFETY: the call above filled the flags member of the union.
    unsafe { ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    // SAFETY: as above.
    let r = unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS as _, &ifr) };
    assert_eq!(r, 0, "lo up: {}", std::io::Error::last_os_error());
}

/// `process::output`: both streams collected (more than a pipe holds, so neither blocks the
/// other), the status kept; a canceled one kills and reaps its child.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "a blocked system call is not interrupted there"
)]
fn e08_process_output_collects_and_a_canceled_one_kills_and_reaps_its_child() {
    let out = thread_cancel::process::output(std::process::Command::new("sh").args([
        "-c",
        "head -c 200000 /dev/zero; echo err >&2; head -c 200000 /dev/zero >&2; exit 3",
    ]))
    .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout.len(), 200_000);
    assert_eq!(out.stderr.len(), 200_004);
    let dir = std::env::temp_dir().join(format!("tc-e08-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let script = format!("echo $$ > {}; exec sleep 30", dir.display());
    let t = std::time::Instant::now();
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it: no shell writes its id).
    let r = common::once_started(Duration::from_millis(300), |budget, started| {
        thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            thread_cancel::process::output(std::process::Command::new("sh").args(["-c", &script]))
        })
    });
    assert!(r.unwrap_err().acted());
    assert!(
        t.elapsed() < HANG,
        "not ended by the deadline: {:?}",
        t.elapsed()
    );
    let pid: i32 = std::fs::read_to_string(&dir)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::fs::remove_file(&dir).unwrap();
    // SAFETY: signal 0 only asks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    assert_eq!(r, -1, "the child {pid} still exists (running or a zombie)");
    assert_eq!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::ESRCH)
    );
}

/// `process::wait_or_kill`: a canceled wait kills and reaps the child; `process::wait`'s
/// canceled wait leaves it alone (no effect).
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "a blocked system call is not interrupted there"
)]
fn e08_process_wait_or_kill_kills_and_reaps_on_cancel() {
    // The timer thread is started first: under emulation its start can outlast a deadline.
    let _ = thread_cancel::with_timeout(Duration::from_millis(1), || ());
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it: the child is neither killed nor reaped).
    let r = common::once_started(Duration::from_millis(50), |budget, started| {
        thread_cancel::with_timeout(budget, || {
            started.store(true, Ordering::SeqCst);
            thread_cancel::process::wait_or_kill(&mut child)
        })
    });
    assert!(r.unwrap_err().acted());
    // SAFETY: signal 0 only asks whether the process exists.
    assert_eq!(unsafe { libc::kill(pid, 0) }, -1, "not reaped");
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let r = thread_cancel::with_timeout(Duration::from_millis(50), || {
        thread_cancel::process::wait(&mut child)
    });
    assert!(r.unwrap_err().acted());
    assert!(
        child.try_wait().unwrap().is_none(),
        "a canceled wait had an effect"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

// ---------------------------------------------------------------------------------------------
// A canceled `process::output` / `process::wait_or_kill` of a shell that forks children of its
// own: the whole tree is killed, what the shell wrote before the kill is kept.

/// A process watched by pidfd (opened while it is known to run, so a reused id is never
/// confused with it); killed when dropped, so that a failed test leaves nothing running.
struct Watched {
    pid: i32,
    pidfd: OwnedFd,
}

impl Watched {
    fn new(pid: i32) -> Watched {
        // SAFETY: `pidfd_open` takes plain integers.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        assert!(
            fd >= 0,
            "pidfd_open({pid}): {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: a new descriptor, ours alone.
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        Watched { pid, pidfd }
    }

    /// Whether the process has exited (its pidfd polls readable), waiting at most `limit`.
    fn exited_within(&self, limit: Duration) -> bool {
        let mut p = libc::pollfd {
            fd: self.pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let end = std::time::Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(std::time::Instant::now());
            // SAFETY: one valid `pollfd`.
            let r = unsafe { libc::poll(&mut p, 1, left.as_millis() as i32) };
            if r > 0 {
                return true;
            }
            if r == 0 {
                return false;
            }
        }
    }

    /// Whether it is our child still waiting to be reaped (a zombie of ours) or running.
    fn unreaped_child_of_ours(&self) -> bool {
        // SAFETY: an all-zero `siginfo_t` is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pidfd and a `siginfo_t` to write.
        let r = unsafe {
            libc::waitid(
                libc::P_PIDFD,
                self.pidfd.as_raw_fd() as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        r == 0
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        // SAFETY: the pidfd refers to this very process (never to a reused id).
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.pidfd.as_raw_fd(),
                libc::SIGKILL,
                0,
                0,
            )
        };
    }
}

/// A shell that writes `before`, starts a `sleep` of its own, then writes its own id and the
/// sleep's to `file` (by a rename: complete when seen) and waits: `(script, file)`.
fn forking_shell(name: &str) -> (String, std::path::PathBuf) {
    let file = std::env::temp_dir().join(format!("tc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let script = format!(
        "echo before; echo err >&2; sleep 3600 & echo $$ $! > {f}.tmp; mv {f}.tmp {f}; wait; echo after",
        f = file.display()
    );
    (script, file)
}

/// Waits until the shell of [`forking_shell`] wrote its file (so it wrote `before`, and its
/// sleep runs), and watches both: `(shell, sleep)`.
fn watch_shell(file: &std::path::Path) -> (Watched, Watched) {
    let mut ids = String::new();
    assert!(
        common::wait_for(|| {
            ids = std::fs::read_to_string(file).unwrap_or_default();
            ids.ends_with('\n')
        }),
        "the shell never wrote {}",
        file.display()
    );
    std::fs::remove_file(file).unwrap();
    let mut it = ids.split_whitespace().map(|s| s.parse::<i32>().unwrap());
    let (shell, sleep) = (it.next().unwrap(), it.next().unwrap());
    (Watched::new(shell), Watched::new(sleep))
}

/// Both processes of the shell's tree are gone: exited (the sleep, whose parent was killed,
/// is reaped by whoever adopted it) and the shell, our child, reaped.
fn assert_tree_gone(shell: &Watched, sleep: &Watched) {
    assert!(
        sleep.exited_within(Duration::from_secs(5)),
        "the shell's `sleep` ({}) still runs after the canceled call returned",
        sleep.pid
    );
    assert!(shell.exited_within(Duration::ZERO), "the shell runs on");
    assert!(
        !shell.unreaped_child_of_ours(),
        "the shell ({}) is not reaped",
        shell.pid
    );
}

/// A scope's cancel of `process::output` of a shell with a child of its own kills both, and
/// `output` returns what the shell wrote before the kill and its status (killed): the run
/// reports the cancel, acted on, with that value.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "a blocked system call is not interrupted there"
)]
fn e08_process_output_canceled_kills_the_shells_children_and_keeps_what_it_wrote() {
    let _serial = serial();
    let (script, file) = forking_shell("e08-output-tree");
    let scope = thread_cancel::CancelScope::new();
    let canceler = {
        let scope = scope.clone();
        let file = file.clone();
        std::thread::spawn(move || {
            let watched = watch_shell(&file);
            scope.cancel();
            (watched, std::time::Instant::now())
        })
    };
    let r = scope.run(|| {
        thread_cancel::process::output(std::process::Command::new("sh").args(["-c", &script]))
    });
    let returned = std::time::Instant::now();
    let ((shell, sleep), canceled) = canceler.join().unwrap();
    let e = r.expect_err("canceled");
    assert!(e.acted(), "{e:?}");
    let out = match e.value() {
        Some(Ok(out)) => out,
        other => panic!("the output is lost: {other:?}"),
    };
    assert_eq!(
        out.stdout, b"before\n",
        "what the shell wrote before the kill"
    );
    assert_eq!(out.stderr, b"err\n");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    assert_tree_gone(&shell, &sleep);
    eprintln!(
        "e08 canceled output of a forking shell: returned {:?} after the cancel",
        returned.saturating_duration_since(canceled)
    );
}

/// A thread cancel of `process::output` of the same shell: the tree is killed and the shell
/// reaped before the thread's cancellation goes on (it ends canceled).
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "a blocked system call is not interrupted there"
)]
fn e08_process_output_thread_cancel_kills_the_shells_children_then_unwinds() {
    let _serial = serial();
    let (script, file) = forking_shell("e08-output-thread");
    let h = spawn(move || {
        thread_cancel::process::output(std::process::Command::new("sh").args(["-c", &script]))
    });
    let (shell, sleep) = watch_shell(&file);
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert_tree_gone(&shell, &sleep);
}

/// `process::wait_or_kill` of such a shell: its children are killed with it, and a scope's
/// cancel returns the status of the kill.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "a blocked system call is not interrupted there"
)]
fn e08_process_wait_or_kill_canceled_kills_the_shells_children() {
    let _serial = serial();
    let (script, file) = forking_shell("e08-wait-or-kill-tree");
    let mut child = std::process::Command::new("sh")
        .args(["-c", &script])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (shell, sleep) = watch_shell(&file);
    let scope = thread_cancel::CancelScope::new();
    // Canceled inside the run, before the wait: its first point acts.
    let r = scope.run(|| {
        scope.cancel();
        thread_cancel::process::wait_or_kill(&mut child)
    });
    let e = r.expect_err("canceled");
    assert!(e.acted(), "{e:?}");
    match e.value() {
        Some(Ok(status)) => assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}"),
        other => panic!("no status: {other:?}"),
    }
    assert_tree_gone(&shell, &sleep);
    // std recorded the status: a later wait returns it.
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
}

/// A grandchild that escaped the tree (its parent exited: it was adopted) and holds the
/// output pipe: the canceled `output` still returns, bounded, with what was written.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "a blocked system call is not interrupted there"
)]
fn e08_process_output_canceled_returns_bounded_when_an_escaped_process_holds_the_pipe() {
    let _serial = serial();
    let (script, file) = forking_shell("e08-output-escaped");
    let escaped = std::env::temp_dir().join(format!("tc-e08-escaped-{}", std::process::id()));
    let _ = std::fs::remove_file(&escaped);
    // A subshell starts a sleep in the background and exits: the sleep is adopted, out of
    // the shell's tree, with the output pipe open.
    let script = format!(
        "(sleep 3600 & echo $! > {e}.tmp; mv {e}.tmp {e}); {script}",
        e = escaped.display()
    );
    let scope = thread_cancel::CancelScope::new();
    let canceler = {
        let scope = scope.clone();
        let (file, escaped) = (file.clone(), escaped.clone());
        std::thread::spawn(move || {
            let watched = watch_shell(&file);
            let id: i32 = std::fs::read_to_string(&escaped)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            std::fs::remove_file(&escaped).unwrap();
            let escaped = Watched::new(id);
            scope.cancel();
            (watched, escaped, std::time::Instant::now())
        })
    };
    let r = scope.run(|| {
        thread_cancel::process::output(std::process::Command::new("sh").args(["-c", &script]))
    });
    let returned = std::time::Instant::now();
    let ((shell, sleep), escaped, canceled) = canceler.join().unwrap();
    let took = returned.saturating_duration_since(canceled);
    let e = r.expect_err("canceled");
    let out = match e.value() {
        Some(Ok(out)) => out,
        other => panic!("the output is lost: {other:?}"),
    };
    assert_eq!(out.stdout, b"before\n");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    assert_tree_gone(&shell, &sleep);
    // Not reached by the kill (it left the tree): still running, killed here by its pidfd.
    assert!(!escaped.exited_within(Duration::ZERO));
    drop(escaped);
    assert!(
        took < HANG,
        "output waited for the escaped process: {took:?}"
    );
    eprintln!("e08 canceled output, an escaped process holding the pipe: returned {took:?} after the cancel");
}

/// The children of the calling thread not yet reaped (running or zombies).
fn own_children() -> Vec<libc::pid_t> {
    // SAFETY: `gettid` takes nothing.
    let tid = unsafe { libc::gettid() };
    std::fs::read_to_string(format!("/proc/self/task/{tid}/children"))
        .expect("/proc/<pid>/task/<tid>/children")
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect()
}

/// The running processes whose command line is exactly `cmdline` (a zombie has none).
fn running_with_cmdline(cmdline: &[u8]) -> Vec<std::path::PathBuf> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (std::fs::read(p.join("cmdline")).ok()? == cmdline).then_some(p)
        })
        .collect()
}

/// Races of a scope's cancel against `process::output` of a shell that forks twice: the cancel
/// comes 0–15 ms after the run starts (the helper's sleep only spreads the moment; nothing
/// waits on it for correctness). Whatever the moment — the shell forking included —: nothing
/// the shell wrote is lost, neither the shell nor its children are left, and the result says
/// which side won.
#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "a blocked system call is not interrupted there"
)]
fn e08_stress_scope_cancel_against_process_output_of_a_forking_shell() {
    let _serial = serial();
    let n = (common::stress_count(2_000) / 20).max(50);
    // A duration no other test uses: a sleep of the shell that ran on would be found by it.
    let arg = format!("0.00{}", 5_000_000 + std::process::id() % 1_000_000);
    let script = format!("echo x; sleep {arg}; sleep {arg}; echo y");
    let cmdline = format!("sleep\0{arg}\0").into_bytes();
    let (to_helper, jobs) = std::sync::mpsc::channel::<(thread_cancel::CancelScope, u64)>();
    let helper = std::thread::spawn(move || {
        for (scope, us) in jobs {
            std::thread::sleep(Duration::from_micros(us));
            scope.cancel();
        }
    });
    let (mut before, mut refused, mut killed, mut completed) = (0, 0, 0, 0);
    for i in 0..n {
        let scope = thread_cancel::CancelScope::new();
        to_helper
            .send((scope.clone(), (i as u64 * 7919) % 15_000))
            .unwrap();
        let r = scope.run(|| {
            thread_cancel::process::output(std::process::Command::new("sh").args(["-c", &script]))
        });
        let out = match r {
            Ok(out) => Some(out.expect("not canceled: the output")),
            Err(e) => match e.into_value() {
                None => {
                    before += 1;
                    None
                }
                // With `interpose`, a spawn in the canceled run is refused (nothing started).
                Some(Err(e)) if cfg!(thread_cancel_interpose) => {
                    let code = e.raw_os_error();
                    assert!(
                        code == Some(libc::ECANCELED) || code == Some(libc::ETIMEDOUT),
                        "{e}"
                    );
                    refused += 1;
                    None
                }
                Some(out) => Some(out.expect("canceled: the output up to the kill")),
            },
        };
        if let Some(out) = out {
            if out.status.signal() == Some(libc::SIGKILL) {
                assert!(
                    [&b""[..], b"x\n", b"x\ny\n"].contains(&&out.stdout[..]),
                    "{out:?}"
                );
                killed += 1;
            } else {
                assert!(out.status.success(), "{out:?}");
                assert_eq!(out.stdout, b"x\ny\n", "nothing lost");
                completed += 1;
            }
        }
        assert_eq!(own_children(), Vec::<libc::pid_t>::new(), "children left");
        let left = running_with_cmdline(&cmdline);
        assert!(left.is_empty(), "the shell's sleep runs on: {left:?}");
        assert!(!thread_cancel::cancel_requested(), "the thread is clean");
    }
    drop(to_helper);
    helper.join().unwrap();
    println!(
        "e08 process::output stress: {n} races; cancel before the run {before}, spawn refused \
         {refused}, child killed {killed}, completed {completed}"
    );
    assert!(killed > 0, "the races happened");
}
