//! W03: the C library's public functions that block through its own internal calls are points
//! of feature `interpose` or listed as not reached. Here the ones made points: `sleep`, `usleep`
//! and `thrd_sleep` (glibc's call its own `nanosleep`/`clock_nanosleep` by a hidden alias, which
//! no interposed symbol sees), `wait`/`wait3` (its own `wait4`) and `lockf`/`lockf64` (its own
//! `fcntl`). The case that showed it: the
//! system's SQLite waits on a locked database with `usleep`, so its `busy_timeout` ran past a
//! run's deadline with the feature on. And what SQLite reports when an interposed call fails
//! (item 5 of issue 36): recorded, with the database checked intact.
// Where the interposition is built (the one condition, named by build.rs).
#![cfg(thread_cancel_interpose)]

mod common;

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::time::{Duration, Instant};

/// The deadline of the runs below, and the bound they must end within: `HANG`, generous for a
/// loaded machine (a requirement's bound: the deadline acted on, not a measure of speed; no
/// requirement bounds the latency).
const DEADLINE: Duration = Duration::from_millis(100);
const BOUND: Duration = common::HANG;

/// How long the calls below would block if nothing acted on the deadline, in seconds: longer
/// than `BOUND`, so that a call that ran to its end fails the bound.
const LONG_S: u32 = 3 * BOUND.as_secs() as u32;

extern "C" {
    // The C library's functions, declared here as glibc declares them (the crate defines them
    // with feature `interpose`; the test binary links it as an application does).
    fn sleep(seconds: libc::c_uint) -> libc::c_uint;
    fn usleep(usec: libc::useconds_t) -> c_int;
    fn thrd_sleep(req: *const libc::timespec, rem: *mut libc::timespec) -> c_int;
    fn wait(status: *mut c_int) -> libc::pid_t;
    fn wait3(status: *mut c_int, options: c_int, usage: *mut libc::rusage) -> libc::pid_t;
    fn lockf64(fd: c_int, cmd: c_int, len: libc::off64_t) -> c_int;
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap()
}

fn set_errno(e: i32) {
    // SAFETY: the calling thread's errno.
    unsafe { *libc::__errno_location() = e };
}

/// Runs `f` under `with_timeout(DEADLINE)`: checks that the run ended within `BOUND` and never
/// before its deadline, that it reports the deadline and that an interposed call acted on it;
/// returns the closure's value and how long the run took. The budget grows until the run
/// started its closure: on a loaded or emulated machine a deadline can pass before the run's
/// entry, which then rightly never starts it, and there is no value. (The calls below block
/// for `LONG_S`, past any budget.)
fn timed_out<R>(what: &str, mut f: impl FnMut() -> R) -> (R, Duration) {
    let (r, took, budget) = common::once_started(DEADLINE, |budget, started| {
        let t = Instant::now();
        let r = thread_cancel::with_timeout(budget, || {
            started.store(true, std::sync::atomic::Ordering::SeqCst);
            f()
        });
        (r, t.elapsed(), budget)
    });
    assert!(
        took < BOUND,
        "{what}: the run took {took:?}, its deadline was {budget:?}"
    );
    assert!(
        took >= budget,
        "{what}: the run ended before its deadline {budget:?}: {took:?}"
    );
    let e = r
        .err()
        .expect("the deadline passed: the run reports it")
        .into_canceled();
    assert!(e.deadline_passed(), "{what}: the cause is the deadline");
    assert!(
        e.acted(),
        "{what}: an interposed call acted on the deadline"
    );
    (e.into_value().expect("the closure returned"), took)
}

/// In a run whose deadline passes, `sleep`, `usleep` and `thrd_sleep` return as interrupted
/// with nothing left to sleep: the first one blocked returns at the deadline, every later one
/// at once. `sleep` returns 0 (the seconds left: none, so a loop that sleeps again for what is
/// left ends) with errno `EINTR`; `usleep` -1 with `EINTR`; `thrd_sleep` -1 (C11's
/// "interrupted") with a remaining time of zero.
#[test]
fn w03_sleep_usleep_and_thrd_sleep_return_early_in_a_canceled_run() {
    for first in ["sleep", "usleep", "thrd_sleep"] {
        let (got, took) = timed_out(first, || {
            let mut got = Vec::new();
            let order: Vec<&str> = std::iter::once(first)
                .chain(
                    ["sleep", "usleep", "thrd_sleep"]
                        .into_iter()
                        .filter(|n| *n != first),
                )
                .collect();
            for name in order {
                set_errno(0);
                let t = Instant::now();
                let (r, rem) = match name {
                    // SAFETY: plain integer arguments.
                    "sleep" => (i64::from(unsafe { sleep(LONG_S) }), None),
                    // SAFETY: as above.
                    "usleep" => (i64::from(unsafe { usleep(LONG_S * 1_000_000) }), None),
                    _ => {
                        let req = libc::timespec {
                            tv_sec: LONG_S.into(),
                            tv_nsec: 0,
                        };
                        let mut rem = libc::timespec {
                            tv_sec: -1,
                            tv_nsec: -1,
                        };
                        // SAFETY: both timespecs are locals, alive for the call.
                        let r = unsafe { thrd_sleep(&req, &mut rem) };
                        (i64::from(r), Some((rem.tv_sec, rem.tv_nsec)))
                    }
                };
                got.push((name, r, errno(), rem, t.elapsed()));
            }
            // A loop that sleeps again for the seconds left ends too.
            let mut left = LONG_S;
            let mut rounds = 0;
            while left > 0 {
                // SAFETY: an integer argument.
                left = unsafe { sleep(left) };
                rounds += 1;
                assert!(rounds < 1000, "a sleep-what-is-left loop spins");
            }
            got
        });
        println!("first {first}: the run took {took:?}");
        for (i, (name, r, e, rem, t)) in got.into_iter().enumerate() {
            println!("  {name}: returned {r}, errno {e}, remaining {rem:?}, after {t:?}");
            match name {
                "sleep" => assert_eq!((r, e), (0, libc::EINTR), "sleep"),
                "usleep" => assert_eq!((r, e), (-1, libc::EINTR), "usleep"),
                _ => {
                    assert_eq!(r, -1, "thrd_sleep");
                    assert_eq!(rem, Some((0, 0)), "thrd_sleep: nothing left");
                }
            }
            if i > 0 {
                assert!(
                    t < BOUND,
                    "{name} after the deadline returns at once (within {BOUND:?}): {t:?}"
                );
            }
        }
    }
}

/// Outside a canceled run (in a run whose deadline is far, and in a thread that never met the
/// crate) they are the plain calls: they sleep the time asked and return 0; interrupted by a
/// handled signal, `sleep` returns the whole seconds left, truncated (glibc's: `sleep(60)`
/// interrupted after a moment returns 59) and `usleep` -1 with `EINTR`. (The time slept is
/// measured around the call: a signal that comes late, on a loaded machine, allows a smaller
/// value, never 60.)
#[test]
fn w03_sleep_usleep_and_thrd_sleep_are_the_plain_calls_outside_a_canceled_run() {
    fn plain() {
        let t = Instant::now();
        // SAFETY: an integer argument.
        assert_eq!(unsafe { usleep(30_000) }, 0);
        assert!(t.elapsed() >= Duration::from_millis(30));
        let req = libc::timespec {
            tv_sec: 0,
            tv_nsec: 30_000_000,
        };
        let t = Instant::now();
        // SAFETY: a local timespec; no remaining time asked for.
        assert_eq!(unsafe { thrd_sleep(&req, std::ptr::null_mut()) }, 0);
        assert!(t.elapsed() >= Duration::from_millis(30));
        set_errno(7);
        let t = Instant::now();
        // SAFETY: an integer argument.
        assert_eq!(unsafe { sleep(1) }, 0);
        assert!(t.elapsed() >= Duration::from_secs(1));
        assert_eq!(errno(), 7, "a completed sleep leaves errno alone");
    }
    thread_cancel::with_timeout(Duration::from_secs(60), plain).unwrap();
    std::thread::spawn(plain).join().unwrap();

    // Interrupted by a handled signal, in a run (a thread with a control block).
    extern "C" fn on_usr2(_: c_int) {}
    // SAFETY: a handler that does nothing, installed without SA_RESTART.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_usr2 as extern "C" fn(c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut()), 0);
    }
    for name in ["sleep", "usleep"] {
        let (tx, rx) = std::sync::mpsc::channel();
        let h = std::thread::spawn(move || {
            // SAFETY: the calling thread's id.
            tx.send((common::gettid(), unsafe { libc::pthread_self() }))
                .unwrap();
            thread_cancel::with_timeout(Duration::from_secs(2 * u64::from(LONG_S)), || {
                set_errno(0);
                let t = Instant::now();
                // SAFETY: integer arguments.
                let r = unsafe {
                    if name == "sleep" {
                        i64::from(sleep(LONG_S))
                    } else {
                        i64::from(usleep(LONG_S * 1_000_000))
                    }
                };
                (r, errno(), t.elapsed())
            })
            .unwrap()
        });
        let (tid, pt) = rx.recv().unwrap();
        common::wait_blocked(tid);
        // SAFETY: the thread is alive (it is blocked in the sleep until the signal).
        assert_eq!(unsafe { libc::pthread_kill(pt, libc::SIGUSR2) }, 0);
        let (r, e, slept) = h.join().unwrap();
        println!(
            "{name} interrupted by a handled signal: returned {r}, errno {e}, after {slept:?}"
        );
        assert_eq!(e, libc::EINTR, "{name}");
        if name == "sleep" {
            // The seconds left, truncated: at most LONG_S - 1 (some time was slept), at least
            // what is left after the time measured around the call.
            let least = (Duration::from_secs(LONG_S.into()).saturating_sub(slept)).as_secs();
            assert!(
                (least..u64::from(LONG_S)).contains(&r.unsigned_abs()) && r >= 0,
                "sleep({LONG_S}) interrupted after {slept:?} returned {r}: not the seconds left, \
                 truncated"
            );
        } else {
            assert_eq!(r, -1, "{name}");
        }
    }
}

/// `wait` and `wait3` (glibc's call its own `wait4`, which no interposed symbol sees) are
/// points: in a run whose deadline passes, a wait for a child that is not the run's fails with
/// `ETIMEDOUT` and takes nothing (the child is reaped afterwards, by its id).
#[test]
fn w03_wait_and_wait3_end_at_the_deadline() {
    // The only test of this binary that starts a child: `wait` takes any child.
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    for name in ["wait", "wait3"] {
        let ((r, e), took) = timed_out(name, || {
            let mut st = 0;
            // SAFETY: `st` is a local int; no usage asked for.
            let r = unsafe {
                if name == "wait" {
                    wait(&mut st)
                } else {
                    wait3(&mut st, 0, std::ptr::null_mut())
                }
            };
            (r, errno())
        });
        println!("{name}: {r}, errno {e}, after {took:?}");
        assert_eq!((r, e), (-1, libc::ETIMEDOUT), "{name}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// `lockf` and `lockf64` (glibc's call its own `fcntl`): `F_LOCK`, waiting for a lock another
/// holder has, fails with `ETIMEDOUT` at a run's deadline and takes no lock; once the lock is
/// free it is taken as by the plain call, and the other commands are the C library's.
#[test]
fn w03_lockf_f_lock_ends_at_the_deadline() {
    use std::os::fd::AsRawFd;
    let dir = tempdir("lockf");
    let path = dir.join("locked");
    let holder = std::fs::File::create(&path).unwrap();
    let waiter = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    // An open file description lock conflicts with this process's own record locks (`lockf`'s),
    // so one process is enough to hold it against them.
    // SAFETY: all-zero is a valid `flock`.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: a valid descriptor and `flock`; `F_OFD_SETLK` does not wait.
    assert_eq!(
        unsafe { libc::fcntl(holder.as_raw_fd(), libc::F_OFD_SETLK, &fl) },
        0
    );
    let fd = waiter.as_raw_fd();
    for name in ["lockf", "lockf64"] {
        let call = |cmd| {
            // SAFETY: a valid descriptor; the whole file from the offset (0).
            unsafe {
                if name == "lockf" {
                    libc::lockf(fd, cmd, 0)
                } else {
                    lockf64(fd, cmd, 0)
                }
            }
        };
        // SAFETY: as above.
        assert_eq!((call(libc::F_TLOCK), errno()), (-1, libc::EAGAIN), "{name}");
        let ((r, e), took) = timed_out(name, || (call(libc::F_LOCK), errno()));
        println!("{name}(F_LOCK) on a held lock: {r}, errno {e}, after {took:?}");
        assert_eq!((r, e), (-1, libc::ETIMEDOUT), "{name}");
        // It took nothing: the holder's lock is still there, and F_TEST says so.
        assert_eq!((call(libc::F_TEST), errno()), (-1, libc::EACCES), "{name}");
    }
    fl.l_type = libc::F_UNLCK as libc::c_short;
    // SAFETY: as above.
    assert_eq!(
        unsafe { libc::fcntl(holder.as_raw_fd(), libc::F_OFD_SETLK, &fl) },
        0
    );
    thread_cancel::with_timeout(Duration::from_secs(60), || {
        // SAFETY: as above.
        assert_eq!(unsafe { libc::lockf(fd, libc::F_LOCK, 0) }, 0);
        // SAFETY: as above.
        assert_eq!(unsafe { lockf64(fd, libc::F_ULOCK, 0) }, 0);
    })
    .unwrap();
}

// -------------------------------------------------------------------------------------------
// SQLite from the distribution, loaded with `dlopen`: its calls of `usleep`, `fcntl64`,
// `pread64`, ... resolve to the definitions of the executable, the crate's.

type Db = *mut c_void;

type OpenV2 = unsafe extern "C" fn(*const c_char, *mut Db, c_int, *const c_char) -> c_int;
type Callback =
    unsafe extern "C" fn(*mut c_void, c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;
type Exec = unsafe extern "C" fn(
    Db,
    *const c_char,
    Option<Callback>,
    *mut c_void,
    *mut *mut c_char,
) -> c_int;
type BusyTimeout = unsafe extern "C" fn(Db, c_int) -> c_int;
type ErrMsg = unsafe extern "C" fn(Db) -> *const c_char;
type ErrCode = unsafe extern "C" fn(Db) -> c_int;

/// The few functions of the SQLite C API the tests call.
struct Sqlite {
    open_v2: OpenV2,
    exec: Exec,
    busy_timeout: BusyTimeout,
    errmsg: ErrMsg,
    extended_errcode: ErrCode,
    system_errno: ErrCode,
    close: ErrCode,
}

const SQLITE_OPEN_READWRITE: c_int = 0x2;
const SQLITE_OPEN_CREATE: c_int = 0x4;
const SQLITE_BUSY: c_int = 5;
const SQLITE_IOERR: c_int = 10;

/// The system's SQLite (`libsqlite3.so.0`, Debian's `libsqlite3-0`), or `None` with the reason
/// printed when it is not installed.
fn system_sqlite() -> Option<Sqlite> {
    // SAFETY: a NUL-terminated name; loading the library runs its (trivial) initialisers.
    let h = unsafe { libc::dlopen(c"libsqlite3.so.0".as_ptr(), libc::RTLD_NOW) };
    if h.is_null() {
        // SAFETY: dlerror returns a NUL-terminated message after a failed dlopen.
        let why = unsafe { CStr::from_ptr(libc::dlerror()) };
        println!(
            "skipped: the system's SQLite is not installed (Debian: libsqlite3-0): {}",
            why.to_string_lossy()
        );
        return None;
    }
    let sym = |name: &CStr| {
        // SAFETY: `h` is a valid handle, `name` NUL-terminated.
        let p = unsafe { libc::dlsym(h, name.as_ptr()) };
        assert!(!p.is_null(), "libsqlite3 defines {name:?}");
        p
    };
    // SAFETY: each pointer is the SQLite function of that name, whose C signature is the one
    // the field declares (sqlite3.h).
    unsafe {
        Some(Sqlite {
            open_v2: std::mem::transmute::<*mut c_void, OpenV2>(sym(c"sqlite3_open_v2")),
            exec: std::mem::transmute::<*mut c_void, Exec>(sym(c"sqlite3_exec")),
            busy_timeout: std::mem::transmute::<*mut c_void, BusyTimeout>(sym(
                c"sqlite3_busy_timeout",
            )),
            errmsg: std::mem::transmute::<*mut c_void, ErrMsg>(sym(c"sqlite3_errmsg")),
            extended_errcode: std::mem::transmute::<*mut c_void, ErrCode>(sym(
                c"sqlite3_extended_errcode",
            )),
            system_errno: std::mem::transmute::<*mut c_void, ErrCode>(sym(c"sqlite3_system_errno")),
            close: std::mem::transmute::<*mut c_void, ErrCode>(sym(c"sqlite3_close")),
        })
    }
}

/// A connection.
struct Conn<'a> {
    lib: &'a Sqlite,
    db: Db,
}

impl<'a> Conn<'a> {
    fn open(lib: &'a Sqlite, path: &std::path::Path) -> Self {
        let p = CString::new(path.to_str().unwrap()).unwrap();
        let mut db = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path; `db` receives the handle.
        let rc = unsafe {
            (lib.open_v2)(
                p.as_ptr(),
                &mut db,
                SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "sqlite3_open_v2");
        Conn { lib, db }
    }

    /// Runs `sql`: its result code, extended result code and message.
    fn exec(&self, sql: &str) -> (c_int, c_int, String) {
        let s = CString::new(sql).unwrap();
        // SAFETY: an open handle and a NUL-terminated statement; no callback.
        let rc = unsafe {
            (self.lib.exec)(
                self.db,
                s.as_ptr(),
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        (rc, self.extended(), self.message())
    }

    fn ok(&self, sql: &str) {
        let (rc, _, msg) = self.exec(sql);
        assert_eq!(rc, 0, "{sql}: {msg}");
    }

    /// The errno of the system call that made the last statement fail
    /// (`sqlite3_system_errno`).
    fn system_errno(&self) -> c_int {
        // SAFETY: an open handle.
        unsafe { (self.lib.system_errno)(self.db) }
    }

    fn extended(&self) -> c_int {
        // SAFETY: an open handle.
        unsafe { (self.lib.extended_errcode)(self.db) }
    }

    fn message(&self) -> String {
        // SAFETY: an open handle; the message is NUL-terminated, valid until the next call.
        unsafe { CStr::from_ptr((self.lib.errmsg)(self.db)) }
            .to_string_lossy()
            .into_owned()
    }

    /// The first column of the first row of `sql`.
    fn value(&self, sql: &str) -> String {
        unsafe extern "C" fn first(
            out: *mut c_void,
            n: c_int,
            vals: *mut *mut c_char,
            _: *mut *mut c_char,
        ) -> c_int {
            // SAFETY: `out` is the `String` passed below; `vals` has `n` entries, each null or
            // NUL-terminated (sqlite3_exec's contract).
            unsafe {
                let out = &mut *out.cast::<String>();
                if out.is_empty() && n > 0 && !(*vals).is_null() {
                    *out = CStr::from_ptr(*vals).to_string_lossy().into_owned();
                }
            }
            0
        }
        let s = CString::new(sql).unwrap();
        let mut out = String::new();
        // SAFETY: an open handle, a NUL-terminated statement, and a callback that writes to
        // `out`, alive for the call.
        let rc = unsafe {
            (self.lib.exec)(
                self.db,
                s.as_ptr(),
                Some(first),
                (&raw mut out).cast(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(rc, 0, "{sql}: {}", self.message());
        out
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        // SAFETY: an open handle, closed once.
        unsafe { (self.lib.close)(self.db) };
    }
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("thread-cancel-w03-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The system's SQLite waiting on a locked database (another connection holds it locked;
/// `sqlite3_busy_timeout(LONG_S)`, longer than `BOUND`) inside `with_timeout(100 ms)` ends soon
/// after the deadline: its busy handler sleeps with `usleep`, a point now, and the run reports
/// its deadline.
///
/// - A reader waiting for an exclusive lock (a writer committing): between two sleeps SQLite
///   only tries the lock (no read), so before `usleep` was a point nothing stopped the wait: the
///   run took the whole busy timeout. Now SQLite's busy handler, whose sleeps return at once, counts its
///   timeout out in a moment and reports `SQLITE_BUSY` ("database is locked").
/// - A writer waiting for the write lock: between two sleeps SQLite takes its shared lock again
///   and reads the database's header; after the deadline that read fails, and SQLite reports
///   `SQLITE_IOERR_READ` ("disk I/O error": issue 36, item 5).
///
/// Either way the database is intact: the other connection's transaction commits and the data
/// checks.
#[test]
fn w03_system_sqlite_waiting_on_a_locked_database_ends_at_the_deadline() {
    let Some(lib) = system_sqlite() else { return };
    // (what the other connection holds, what `b` runs, what SQLite reports)
    let cases = [
        (
            "BEGIN EXCLUSIVE; INSERT INTO t VALUES (2);",
            "SELECT count(*) FROM t;",
            SQLITE_BUSY,
        ),
        (
            "BEGIN IMMEDIATE; INSERT INTO t VALUES (2);",
            "BEGIN IMMEDIATE; INSERT INTO t VALUES (3); COMMIT;",
            SQLITE_IOERR,
        ),
    ];
    for (i, (hold, run, want)) in cases.into_iter().enumerate() {
        let dir = tempdir(&format!("sqlite-busy-{i}"));
        let path = dir.join("db.sqlite");
        let a = Conn::open(&lib, &path);
        a.ok("CREATE TABLE t(x); INSERT INTO t VALUES (1);");
        a.ok(hold);
        let b = Conn::open(&lib, &path);
        let ms = c_int::try_from(LONG_S * 1000).unwrap();
        // SAFETY: an open handle.
        assert_eq!(unsafe { (lib.busy_timeout)(b.db, ms) }, 0);
        let ((rc, ext, msg), took) = timed_out(run, || b.exec(run));
        println!(
            "{hold:?} held, {run:?} with busy_timeout {LONG_S} s in with_timeout({DEADLINE:?}): \
             the run took {took:?}; SQLite returned {rc} (extended {ext}): {msg:?}"
        );
        assert_eq!(rc & 0xff, want, "{run}: {msg}");
        // `b` holds nothing: `a` commits, and the database is whole.
        b.exec("ROLLBACK");
        a.ok("COMMIT");
        assert_eq!(b.value("SELECT group_concat(x) FROM t"), "1,2");
        assert_eq!(b.value("PRAGMA integrity_check"), "ok");
    }
}

/// What SQLite makes of an interposed call that fails with `ETIMEDOUT` (issue 36, item 5): a
/// write transaction whose run's deadline passed before it starts fails with `SQLITE_IOERR`
/// ("disk I/O error"), the run's own error says the deadline passed, and the database is
/// intact (nothing of the failed transaction is in it; the next one, outside the run, works).
/// How the caller tells it from a failing disk: `sqlite3_system_errno` is `ETIMEDOUT`, and the
/// run's deadline has passed (`current_deadline()`, and the run's error).
#[test]
fn w03_system_sqlite_reports_a_deadline_as_a_disk_io_error_and_the_database_stays_intact() {
    let Some(lib) = system_sqlite() else { return };
    let dir = tempdir("sqlite-ioerr");
    let path = dir.join("db.sqlite");
    let c = Conn::open(&lib, &path);
    c.ok("CREATE TABLE t(x); INSERT INTO t VALUES (1);");
    let ((rc, ext, msg, sys, deadline_seen), took) = timed_out("sqlite write", || {
        // Returns at the deadline (interposed `nanosleep`).
        std::thread::sleep(Duration::from_secs(LONG_S.into()));
        let (rc, ext, msg) = c.exec("BEGIN; INSERT INTO t VALUES (2); COMMIT;");
        let sys = c.system_errno();
        // How the caller tells the deadline from a failing disk: its run's deadline passed.
        let seen = thread_cancel::current_deadline().is_some_and(|d| d <= Instant::now());
        (rc, ext, msg, sys, seen)
    });
    println!(
        "SQLite's write after the run's deadline: the run took {took:?}; SQLite returned {rc} \
         (extended {ext}): {msg:?}; sqlite3_system_errno {sys}"
    );
    assert_eq!(rc & 0xff, SQLITE_IOERR, "{msg}");
    assert_eq!(sys, libc::ETIMEDOUT, "sqlite3_system_errno");
    assert!(deadline_seen, "current_deadline() says the deadline passed");
    c.exec("ROLLBACK");
    assert_eq!(c.value("SELECT group_concat(x) FROM t"), "1");
    assert_eq!(c.value("PRAGMA integrity_check"), "ok");
    c.ok("INSERT INTO t VALUES (3)");
    assert_eq!(c.value("SELECT group_concat(x) FROM t"), "1,3");

    // A transaction cut in the middle: 2,000 rows written before the deadline (a small cache
    // spills them to the database file, their old pages to the journal), the commit after it.
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it, and writes nothing).
    let r = common::once_started(Duration::from_secs(1), |budget, started| {
        let t = Instant::now();
        thread_cancel::with_timeout(budget, || {
            started.store(true, std::sync::atomic::Ordering::SeqCst);
            let first = c.exec(
                "PRAGMA cache_size = 10; BEGIN; INSERT INTO t SELECT randomblob(1000) FROM \
                 (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) \
                 SELECT i FROM n);",
            );
            let before = t.elapsed();
            // Returns at the deadline.
            std::thread::sleep(budget * 5);
            (first, before, c.exec("INSERT INTO t VALUES (4); COMMIT;"))
        })
    });
    let e = r.expect_err("the deadline passed").into_canceled();
    assert!(e.deadline_passed() && e.acted());
    let (first, before, (rc, ext, msg)) = e.into_value().expect("the closure returned");
    println!(
        "SQLite's commit after the run's deadline, 2,000 rows written {before:?} into the run: \
         SQLite returned {rc} (extended {ext}): {msg:?}"
    );
    assert_eq!(first.0, 0, "the rows before the deadline: {}", first.2);
    assert_eq!(rc & 0xff, SQLITE_IOERR, "{msg}");
    // Rolled back (SQLite asks for an explicit ROLLBACK after an I/O error): the database is
    // as before the transaction.
    c.exec("ROLLBACK");
    assert_eq!(c.value("SELECT group_concat(x) FROM t"), "1,3");
    assert_eq!(c.value("PRAGMA integrity_check"), "ok");
}
