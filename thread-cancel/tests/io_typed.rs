//! The typed forms of `io`'s raw-struct calls (issue 16 item 4): `poll_fds` over `PollFd`
//! (a `BorrowedFd`, typed events, a `Duration`), and `Epoll` with `EpollEvent`. They are the
//! same cancellation points as the raw `poll` and `epoll_wait`, and agree with them.

use std::io::Write;
use std::os::fd::AsFd;
use std::time::Duration;
use thread_cancel::io::{poll_fds, Epoll, EpollEvent, EpollFlags, PollFd, PollFlags};
use thread_cancel::spawn;

/// A wait longer than this for something that must happen is a hang.
const HANG: Duration = Duration::from_secs(10);

/// Cancels `h` once it has had time to block, and checks that it ends canceled (a hang is
/// reported after [`HANG`] instead of waited for).
fn cancel_blocked<T: 'static>(h: thread_cancel::JoinHandle<T>) {
    std::thread::sleep(Duration::from_millis(20));
    h.cancel().unwrap();
    assert!(h.wait_timeout(HANG), "the canceled wait did not end");
    assert!(h.join().is_canceled());
}

#[test]
fn poll_fds_reports_typed_events_like_raw_poll() {
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
    let (r, w) = std::io::pipe().unwrap();
    drop(w);
    let mut fds = [PollFd::new(r.as_fd(), PollFlags::empty())];
    assert_eq!(poll_fds(&mut fds, None).unwrap(), 1);
    assert!(fds[0].revents().contains(PollFlags::HUP));
    assert_eq!(fds[0].events(), PollFlags::empty());
}

#[test]
fn poll_fds_timeout_expires_with_no_event() {
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
    for timeout in [None, Some(Duration::from_secs(3600)), Some(Duration::MAX)] {
        let h = spawn(move || {
            let (r, _w) = std::io::pipe().unwrap();
            let mut fds = [PollFd::new(r.as_fd(), PollFlags::IN)];
            poll_fds(&mut fds, timeout)
        });
        cancel_blocked(h);
    }
    let h = spawn(|| poll_fds(&mut [], None));
    cancel_blocked(h);
}

#[test]
fn poll_fds_acts_at_entry_with_a_request_pending() {
    let h = spawn(|| {
        thread_cancel::current().cancel().unwrap();
        let (r, mut w) = std::io::pipe().unwrap();
        w.write_all(b"x").unwrap(); // ready: the call would not block
        let mut fds = [PollFd::new(r.as_fd(), PollFlags::IN)];
        let _ = poll_fds(&mut fds, None);
        unreachable!("poll_fds acts at entry");
    });
    assert!(h.join().is_canceled());
}

#[test]
fn epoll_wait_reports_the_tag_and_flags() {
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
    for timeout in [None, Some(Duration::from_secs(3600)), Some(Duration::MAX)] {
        let h = spawn(move || {
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
