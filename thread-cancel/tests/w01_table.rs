//! The table of points is the one definition of "this C library function is a point here"
//! (W01): the symbols the crate defines with feature `interpose` are its rows, the user docs
//! list every row as reached or as not reached, and a point added to the table (the
//! `_FORTIFY_SOURCE` forms) is a point without anything else written.
// Where the interposition is built (the one condition, named by build.rs).
#![cfg(thread_cancel_interpose)]

mod common;

use std::collections::BTreeSet;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};
use thread_cancel::__points::ROWS;
use thread_cancel_fixtures::{defined_functions, libc_path};

/// Every C library function this program defines — the test binary links the crate with
/// `interpose`, as an application does — is a row of the table that says so, and every row
/// that says so is defined: nothing interposed outside the table, nothing in it missing.
#[test]
fn w01_every_interposed_symbol_is_a_row_and_every_interposed_row_is_defined() {
    let ours = defined_functions(&std::env::current_exe().unwrap(), false);
    let libc = defined_functions(&libc_path(), true);
    let interposed: BTreeSet<String> = ours.intersection(&libc).cloned().collect();
    let rows: BTreeSet<String> = ROWS
        .iter()
        .filter(|r| r.interposed())
        .map(|r| r.name.to_owned())
        .collect();
    // The C library names the program defines that are not the crate's (std and the test
    // harness define none; the test's C fixtures define none).
    let outside: Vec<_> = interposed.difference(&rows).collect();
    assert!(
        outside.is_empty(),
        "defined with feature `interpose` but not rows of the table of points \
         (thread-cancel/src/sys/points.rs) marked as interposed: {outside:?}"
    );
    let missing: Vec<_> = rows.difference(&ours).collect();
    assert!(
        missing.is_empty(),
        "rows marked as interposed that the program does not define: {missing:?}"
    );
    println!(
        "{} C library functions interposed, each a row; {} rows in all",
        interposed.len(),
        ROWS.len()
    );
}

/// The section of `docs/interpose.md` under the heading `title`, up to the next `## `.
fn section<'a>(doc: &'a str, title: &str) -> &'a str {
    let start = doc
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("docs/interpose.md has a section \"{title}\""));
    let rest = &doc[start + title.len() + 4..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// The names in code quotes in the first column of the table in `section`.
fn first_column(section: &str) -> BTreeSet<String> {
    section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| function"))
        .filter_map(|l| l.split('|').nth(1))
        .flat_map(|cell| cell.split('`').skip(1).step_by(2).map(str::to_owned))
        .collect()
}

/// The user docs list every row: an interposed one in the first column of the table under
/// "Covered functions" (and only those are there), any other under "What is not reached".
#[test]
fn w01_every_row_is_in_the_user_docs_as_reached_or_not_reached() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/interpose.md")).unwrap();
    let covered = first_column(section(
        &doc,
        "Covered functions and what std does with each",
    ));
    let unreached = section(&doc, "What is not reached");
    let mut wrong = Vec::new();
    for r in ROWS {
        let listed = covered.contains(r.name);
        let ok = if r.interposed() {
            listed
        } else if r.c_library_only() {
            // The C ABI's own definitions (condition waits, `SIGRTMIN`): never covered here.
            !listed
        } else {
            !listed && unreached.contains(&format!("`{}`", r.name))
        };
        if !ok {
            wrong.push(format!(
                "{} ({})",
                r.name,
                if r.interposed() {
                    "interposed: not in the first column under \"Covered functions\""
                } else {
                    "not interposed: not under \"What is not reached\", or listed as covered"
                }
            ));
        }
    }
    let names: BTreeSet<&str> = ROWS.iter().map(|r| r.name).collect();
    for c in &covered {
        if !names.contains(c.as_str()) {
            wrong.push(format!("{c} (listed as covered, not a row of the table)"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/interpose.md and the table of points (thread-cancel/src/sys/points.rs) \
         disagree: {wrong:#?}"
    );
}

extern "C" {
    fn __read_chk(fd: i32, buf: *mut libc::c_void, n: usize, buflen: usize) -> isize;
    fn __recv_chk(fd: i32, buf: *mut libc::c_void, n: usize, buflen: usize, flags: i32) -> isize;
    fn __recvfrom_chk(
        fd: i32,
        buf: *mut libc::c_void,
        n: usize,
        buflen: usize,
        flags: i32,
        addr: *mut libc::sockaddr,
        len: *mut libc::socklen_t,
    ) -> isize;
    fn __poll_chk(fds: *mut libc::pollfd, n: libc::nfds_t, timeout: i32, fdslen: usize) -> i32;
    fn __ppoll_chk(
        fds: *mut libc::pollfd,
        n: libc::nfds_t,
        timeout: *const libc::timespec,
        mask: *const libc::sigset_t,
        fdslen: usize,
    ) -> i32;
}

/// The deadline of the runs below, and the bound they must end within (a requirement's
/// bound: the deadline acted on, not a measure of speed).
const DEADLINE: Duration = Duration::from_millis(50);
const BOUND: Duration = Duration::from_secs(20);

/// The `_FORTIFY_SOURCE` forms that C code built with `_FORTIFY_SOURCE` calls (Debian builds
/// with it) are points, added to the table as rows and nothing else: each, blocked on a socket
/// with no data, fails with `ETIMEDOUT` at a run's deadline, with no effect (the byte written
/// afterwards is read whole by the same call).
#[test]
fn w01_fortify_source_forms_are_points() {
    type Call = Box<dyn Fn(i32) -> isize>;
    let calls: Vec<(&str, Call)> = vec![
        (
            "__read_chk",
            Box::new(|fd| {
                let mut b = [0u8; 4];
                // SAFETY: `b` is valid for its length.
                unsafe { __read_chk(fd, b.as_mut_ptr().cast(), 1, b.len()) }
            }),
        ),
        (
            "__recv_chk",
            Box::new(|fd| {
                let mut b = [0u8; 4];
                // SAFETY: as above.
                unsafe { __recv_chk(fd, b.as_mut_ptr().cast(), 1, b.len(), 0) }
            }),
        ),
        (
            "__recvfrom_chk",
            Box::new(|fd| {
                let mut b = [0u8; 4];
                // SAFETY: as above; no address asked for.
                unsafe {
                    __recvfrom_chk(
                        fd,
                        b.as_mut_ptr().cast(),
                        1,
                        b.len(),
                        0,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                    )
                }
            }),
        ),
        (
            "__poll_chk",
            Box::new(|fd| {
                let mut p = [libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                }];
                let size = std::mem::size_of_val(&p);
                // SAFETY: one entry, its size given.
                unsafe { __poll_chk(p.as_mut_ptr(), 1, -1, size) as isize }
            }),
        ),
        (
            "__ppoll_chk",
            Box::new(|fd| {
                let mut p = [libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                }];
                let size = std::mem::size_of_val(&p);
                // SAFETY: one entry, its size given; no timeout, no mask.
                unsafe {
                    __ppoll_chk(p.as_mut_ptr(), 1, std::ptr::null(), std::ptr::null(), size)
                        as isize
                }
            }),
        ),
    ];
    for (name, call) in calls {
        let (mut a, b) = UnixStream::pair().unwrap();
        let fd = b.as_raw_fd();
        // The budget grows until the run started its closure (a deadline that passes before
        // the run's entry rightly never starts it, and the call is not made).
        let (r, took) = common::once_started(DEADLINE, |budget, started| {
            let t = Instant::now();
            let r = thread_cancel::with_timeout(budget, || {
                started.store(true, std::sync::atomic::Ordering::SeqCst);
                let r = call(fd);
                (r, std::io::Error::last_os_error().raw_os_error())
            });
            (r, t.elapsed())
        });
        let e = r.expect_err("the deadline passed").into_canceled();
        assert!(
            e.acted(),
            "{name}: the interposed call acted on the deadline"
        );
        let (r, errno) = e.into_value().expect("the closure returned");
        assert_eq!((r, errno), (-1, Some(libc::ETIMEDOUT)), "{name}");
        assert!(took < BOUND, "{name}: the run took {took:?}");
        // No effect: the byte written now is there for the same call.
        a.write_all(b"z").unwrap();
        assert_eq!(call(fd), 1, "{name} after the deadline");
        println!("{name}: ETIMEDOUT after {took:?}, then 1");
    }
}
