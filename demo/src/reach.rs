//! The reach: code the crate does not own, ended by a deadline. The demo is built with the
//! feature `interpose`, so std's blocking calls, a crates.io HTTP client and a C library from
//! the distribution meet the crate's cancellation points in the C library's functions: each
//! ends at its deadline with an error, and nothing is lost — the bytes a canceled read did not
//! take are still there, the child process of a canceled command is killed with what it wrote
//! kept, and the thread goes on.

use std::ffi::CString;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};
use thread_cancel::{with_timeout, Canceled};

const DEADLINE: Duration = Duration::from_millis(100);

/// One line of the section: what ran, what happened, and whether it is what the crate promises.
fn report(ok: &mut bool, what: &str, line: String, good: bool) {
    super::check(ok, what, line, good);
}

/// `Some(true)` if the run ended with the deadline as its error and the call's own error was
/// recognised as the crate's deadline; the time past the deadline.
fn ended_at_deadline<T>(
    r: &Result<std::io::Result<T>, thread_cancel::TimedOut<std::io::Result<T>>>,
) -> bool {
    match r {
        Err(e) => {
            e.deadline_passed()
                && e.acted()
                && match e.value() {
                    Some(Err(io)) => {
                        Canceled::from_io_error(io).is_some_and(|c| c.deadline_passed())
                    }
                    Some(Ok(_)) => false,
                    None => true,
                }
        }
        Ok(_) => false,
    }
}

pub(crate) fn run() -> bool {
    println!(
        "\nthe reach (feature `interpose`): code the crate does not own, inside \
         with_timeout({DEADLINE:?})"
    );
    let fds_before = super::open_fds();
    let mut ok = true;

    // std's TcpStream::read of a server that never answers; then the server's late bytes are
    // all there: the canceled read took none.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let mut client = TcpStream::connect(listener.local_addr().unwrap()).expect("connect");
    let (mut server, _) = listener.accept().expect("accept");
    let t = Instant::now();
    let r = with_timeout(DEADLINE, || {
        let mut b = [0u8; 16];
        client.read(&mut b)
    });
    let took = t.elapsed();
    server.write_all(b"late").expect("write");
    let mut late = [0u8; 4];
    let kept = client.read_exact(&mut late).is_ok() && &late == b"late";
    let good = ended_at_deadline(&r) && kept;
    drop((listener, client, server));
    report(
        &mut ok,
        "std TcpStream::read",
        format!(
            "ended after {took:.1?} ({}); the 4 bytes sent after it were all read after",
            r.as_ref()
                .err()
                .and_then(|e| e.value())
                .map_or("never started".into(), |v| format!(
                    "{:?}",
                    v.as_ref().map_err(|e| e.kind())
                )),
        ),
        good,
    );

    // std::thread::sleep(10 s).
    let t = Instant::now();
    let r = with_timeout(DEADLINE, || std::thread::sleep(Duration::from_secs(10)));
    let took = t.elapsed();
    report(
        &mut ok,
        "std thread::sleep(10 s)",
        format!("returned after {took:.1?}, the run's error: deadline passed"),
        r.is_err_and(|e| e.deadline_passed() && e.acted()) && took < Duration::from_secs(5),
    );

    // A blocking HTTP client from crates.io, against a server that accepts and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/", silent.local_addr().unwrap());
    let t = Instant::now();
    let r = with_timeout(DEADLINE, || {
        ureq::get(&url)
            .call()
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    let took = t.elapsed();
    let says = match &r {
        Err(e) => match e.value() {
            Some(Err(e)) => e.clone(),
            _ => "stopped".into(),
        },
        Ok(_) => "answered?".into(),
    };
    report(
        &mut ok,
        "ureq::get(..).call()",
        format!("ended after {took:.1?}: {says}"),
        r.is_err_and(|e| e.deadline_passed() && e.acted()) && took < Duration::from_secs(5),
    );
    drop(silent);

    // std's Command::output of a shell that prints, then sleeps: killed at the deadline, what
    // it wrote kept, nothing left running.
    let t = Instant::now();
    let r = with_timeout(Duration::from_millis(300), || {
        std::process::Command::new("sh")
            .args(["-c", "echo before; sleep 10; echo after"])
            .output()
    });
    let took = t.elapsed();
    let (good, line) = match &r {
        Err(e) => match e.value() {
            Some(Ok(out)) => {
                use std::os::unix::process::ExitStatusExt;
                (
                    e.deadline_passed()
                        && out.stdout == b"before\n"
                        && out.status.signal() == Some(libc::SIGKILL),
                    format!(
                        "ended after {took:.1?}: stdout {:?}, killed by signal {:?}",
                        String::from_utf8_lossy(&out.stdout),
                        out.status.signal()
                    ),
                )
            }
            other => (false, format!("{other:?}")),
        },
        Ok(out) => (false, format!("completed: {out:?}")),
    };
    report(&mut ok, "std Command::output", line, good);

    // A C library from the distribution: zlib's gzread of an empty pipe (zlib calls read(2)
    // through the C library's `read`).
    match zlib() {
        Some(z) => {
            let (r, mut w) = std::io::pipe().expect("pipe");
            let t = Instant::now();
            let res = with_timeout(DEADLINE, || z.read_some(r.as_raw_fd()));
            let took = t.elapsed();
            w.write_all(b"x").expect("write");
            drop(w);
            let mut rest = Vec::new();
            let mut r = r;
            let kept = r.read_to_end(&mut rest).is_ok() && rest == b"x";
            report(
                &mut ok,
                "zlib gzread (C)",
                format!(
                    "ended after {took:.1?}, gzread returned {}; the byte written after it was \
                     still in the pipe",
                    res.as_ref()
                        .err()
                        .and_then(|e| e.value())
                        .map_or("nothing (stopped)".into(), |v| v.to_string())
                ),
                res.is_err_and(|e| e.deadline_passed() && e.acted()) && kept,
            );
        }
        None => println!("  zlib gzread (C)          skipped: libz.so.1 is not installed"),
    }

    let fds_after = super::open_fds();
    let line = format!("{fds_before} open before, {fds_after} after");
    report(&mut ok, "descriptors", line, fds_before == fds_after);
    let left = children_left();
    report(
        &mut ok,
        "child processes",
        format!("{left} left running"),
        left == 0,
    );
    ok
}

/// zlib, loaded from the distribution at run time.
type GzDopen = unsafe extern "C" fn(libc::c_int, *const libc::c_char) -> *mut libc::c_void;
type GzRead =
    unsafe extern "C" fn(*mut libc::c_void, *mut libc::c_void, libc::c_uint) -> libc::c_int;
type GzClose = unsafe extern "C" fn(*mut libc::c_void) -> libc::c_int;

struct Zlib {
    gzdopen: GzDopen,
    gzread: GzRead,
    gzclose: GzClose,
}

fn zlib() -> Option<Zlib> {
    let name = CString::new("libz.so.1").unwrap();
    // SAFETY: loads the system's zlib (its constructors are zlib's own).
    let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        return None;
    }
    let sym = |s: &str| {
        let s = CString::new(s).unwrap();
        // SAFETY: `h` is a live handle; `s` is nul-terminated.
        let p = unsafe { libc::dlsym(h, s.as_ptr()) };
        (!p.is_null()).then_some(p)
    };
    let (open, read, close) = (sym("gzdopen")?, sym("gzread")?, sym("gzclose")?);
    // SAFETY: zlib's functions of these C signatures (zlib.h).
    unsafe {
        Some(Zlib {
            gzdopen: std::mem::transmute::<*mut libc::c_void, GzDopen>(open),
            gzread: std::mem::transmute::<*mut libc::c_void, GzRead>(read),
            gzclose: std::mem::transmute::<*mut libc::c_void, GzClose>(close),
        })
    }
}

impl Zlib {
    /// `gzread` of up to 16 bytes from a copy of `fd` (closed with the stream): its result.
    fn read_some(&self, fd: libc::c_int) -> libc::c_int {
        // SAFETY: `dup` of an open descriptor; zlib owns the copy (gzclose closes it).
        let copy = unsafe { libc::dup(fd) };
        let mode = CString::new("rb").unwrap();
        // SAFETY: a valid descriptor and mode string.
        let gz = unsafe { (self.gzdopen)(copy, mode.as_ptr()) };
        if gz.is_null() {
            // SAFETY: the copy is ours when zlib refused it.
            unsafe { libc::close(copy) };
            return -1;
        }
        let mut buf = [0u8; 16];
        // SAFETY: `gz` is open; `buf` is valid for its length.
        let n = unsafe { (self.gzread)(gz, buf.as_mut_ptr().cast(), buf.len() as libc::c_uint) };
        // SAFETY: `gz` is open; closed once.
        unsafe { (self.gzclose)(gz) };
        n
    }
}

/// The child processes of this process still running (from `/proc`).
fn children_left() -> usize {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
                .filter(|stat| {
                    // pid (comm) state ppid ...: the field after the command's closing paren.
                    stat.rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                        .is_some_and(|ppid| ppid == me)
                })
                .count()
        })
        .unwrap_or(0)
}
