//! W03: what a whole program with feature `interpose` meets besides std — a plugin loaded at
//! run time, another interposer of the same functions — tried, and what happens pinned down
//! (the guide's table of cases, `docs/interpose.md`, cites these tests).
// Where the interposition is built (the one condition, named by build.rs), and where the
// fixtures' C code is (glibc).
#![cfg(all(thread_cancel_interpose, target_env = "gnu"))]

mod common;

use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// A symbol of a shared object opened with `dlopen`.
fn symbol(handle: *mut libc::c_void, name: &str) -> *mut libc::c_void {
    let n = CString::new(name).unwrap();
    // SAFETY: `handle` is a live handle from `dlopen` (or `RTLD_DEFAULT`); `n` is nul-terminated.
    let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
    assert!(!p.is_null(), "{name} not found");
    p
}

/// A plugin loaded with `dlopen(RTLD_LOCAL)` after the program started (as a Python extension
/// or a plugin host loads one) and blocked in the C library's `read`: its `read` resolves to the
/// program's definition (the executable comes first in every lookup), so a deadline reaches it.
#[test]
fn w03_a_dlopened_plugin_blocked_in_read_is_reached_by_a_deadline() {
    let path = CString::new(thread_cancel_fixtures::PLUGIN).unwrap();
    // SAFETY: loads a plain C shared object built for this test (no constructors of note).
    let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    assert!(!h.is_null(), "dlopen {}", thread_cancel_fixtures::PLUGIN);
    // SAFETY: the plugin's function has this C signature (c/w03_plugin.c).
    let read_one: extern "C" fn(libc::c_int) -> libc::c_long =
        unsafe { std::mem::transmute(symbol(h, "w03_plugin_read_one")) };
    let (r, _w) = std::io::pipe().unwrap();
    // The budget grows until the run started its closure (a deadline that passes before the
    // run's entry rightly never starts it, and the plugin is not called).
    let e = common::once_started(Duration::from_millis(50), |budget, started| {
        thread_cancel::with_timeout(budget, || {
            started.store(true, std::sync::atomic::Ordering::SeqCst);
            read_one(r.as_raw_fd())
        })
    })
    .unwrap_err();
    assert!(e.deadline_passed() && e.acted(), "{e:?}");
    assert_eq!(
        e.into_value(),
        Some(-libc::c_long::from(libc::ETIMEDOUT)),
        "the plugin's read did not fail with the deadline"
    );
}

/// Another interposer of `read` preloaded into the process (`LD_PRELOAD`: a tracer, a fault
/// injector): the program's own definition (the crate's) comes first for every caller. A thread
/// that never met the crate goes on to the next definition — the preloaded one, which sees the
/// call; a thread of the crate's makes the system call itself, so the preloaded `read` never
/// sees its calls (and in a canceled run the call fails before either).
#[test]
fn w03_another_interposer_of_read_sees_the_calls_of_threads_that_never_met_the_crate() {
    const NAME: &str =
        "w03_another_interposer_of_read_sees_the_calls_of_threads_that_never_met_the_crate";
    if common::child_value().is_some() {
        let calls: extern "C" fn() -> libc::c_long =
            // SAFETY: the preloaded library's counter has this C signature.
            unsafe { std::mem::transmute(symbol(libc::RTLD_DEFAULT, "w03_preload_read_calls")) };
        let read_one = |fd: libc::c_int| {
            let mut b = [0u8; 1];
            // SAFETY: `fd` is open; `b` valid for one byte.
            unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) }
        };
        let (r, mut w) = std::io::pipe().unwrap();
        use std::io::Write;
        w.write_all(b"ab").unwrap();
        let fd = r.as_raw_fd();
        // A thread that never met the crate.
        let before = calls();
        assert_eq!(std::thread::spawn(move || read_one(fd)).join().unwrap(), 1);
        let foreign = calls() - before;
        // A thread of the crate's.
        let before = calls();
        assert_eq!(
            thread_cancel::spawn(move || read_one(fd)).join().unwrap(),
            1
        );
        let ours = calls() - before;
        // In a canceled run.
        let before = calls();
        let s = thread_cancel::CancelScope::new();
        s.cancel_and_run_for_test(|| read_one(fd));
        let canceled = calls() - before;
        eprintln!("preloaded read saw: foreign {foreign}, crate {ours}, canceled {canceled}");
        assert_eq!((foreign, ours, canceled), (1, 0, 0));
        return;
    }
    if std::env::var("THREAD_CANCEL_TEST_RUNNER").is_ok_and(|r| !r.is_empty()) {
        println!(
            "skipped under an emulator: LD_PRELOAD would be the emulator's, not the program's"
        );
        return;
    }
    let out = common::run_child_with_env(
        NAME,
        "child",
        Duration::from_secs(20),
        &[("LD_PRELOAD", thread_cancel_fixtures::PRELOAD_READ)],
    );
    assert!(out.status.success(), "{}", out.stderr);
    assert!(out.stderr.contains("preloaded read saw"), "{}", out.stderr);
}

/// A scope canceled before its run starts would not start the closure: cancel it inside.
trait CancelInside {
    fn cancel_and_run_for_test(&self, f: impl FnOnce() -> isize);
}

impl CancelInside for thread_cancel::CancelScope {
    fn cancel_and_run_for_test(&self, f: impl FnOnce() -> isize) {
        let e = self
            .run(|| {
                self.cancel();
                let r = f();
                (r, std::io::Error::last_os_error().raw_os_error())
            })
            .unwrap_err();
        assert_eq!(e.into_value(), Some((-1, Some(libc::ECANCELED))));
    }
}
