//! W05: with `interpose`, every module of the process sees one `SIGRTMIN`, above the crate's
//! cancel signal. A C library built for plain glibc (`thread-cancel-fixtures/c/w05_library.c`,
//! loaded with `dlopen`) reads `SIGRTMIN` through the C library's `__libc_current_sigrtmin`,
//! which the crate defines: it sees the same `SIGRTMIN` as the Rust code, installs its handler
//! there, cancellation keeps working, and `raise(SIGRTMIN)` reaches the library's handler.
// Where the interposition is built (the one condition, named by build.rs), and where the
// fixtures' C code is (glibc).
#![cfg(all(thread_cancel_interpose, target_env = "gnu"))]

mod common;

use std::ffi::CString;
use std::os::fd::AsRawFd;

/// A symbol of a shared object opened with `dlopen`.
fn symbol(handle: *mut libc::c_void, name: &str) -> *mut libc::c_void {
    let n = CString::new(name).unwrap();
    // SAFETY: `handle` is a live handle from `dlopen`; `n` is nul-terminated.
    let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
    assert!(!p.is_null(), "{name} not found");
    p
}

/// Before the fix the library saw the C library's `SIGRTMIN` (34) and the crate's signal was
/// `SIGRTMIN + 7` (41), inside the range the library takes as its own; a library counting up
/// from `SIGRTMIN` to its eighth signal took the cancel signal over.
#[test]
fn w05_a_c_library_sees_the_programs_sigrtmin_above_the_cancel_signal() {
    let path = CString::new(thread_cancel_fixtures::W05_LIBRARY).unwrap();
    // SAFETY: loads a plain C shared object built for this test (no constructors).
    let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    assert!(
        !h.is_null(),
        "dlopen {}",
        thread_cancel_fixtures::W05_LIBRARY
    );
    type Fn0 = extern "C" fn() -> libc::c_int;
    let f = |name| {
        // SAFETY: the library's functions all have this C signature (c/w05_library.c).
        unsafe { std::mem::transmute::<*mut libc::c_void, Fn0>(symbol(h, name)) }
    };
    let (lib_sigrtmin, lib_install, lib_got) = (f("lib_sigrtmin"), f("lib_install"), f("lib_got"));
    let rtmin = libc::SIGRTMIN();
    assert_eq!(
        lib_sigrtmin(),
        rtmin,
        "the library's SIGRTMIN is the program's"
    );

    // The crate starts (its signal is installed), and its signal is the one below SIGRTMIN:
    // choosing the signal in use is Ok, any other is too late.
    let (r, w) = std::io::pipe().unwrap();
    let fd = r.as_raw_fd();
    let (h1, tid) = common::spawn_watched(move || {
        let mut b = [0u8; 1];
        thread_cancel::io::read(std::os::fd::AsFd::as_fd(&r), &mut b)
    });
    tid.wait_blocked_in_read(fd);
    assert!(
        thread_cancel::io::set_signal(rtmin - 1).is_ok(),
        "the cancel signal is SIGRTMIN - 1"
    );

    // The library handles its SIGRTMIN; a thread blocked in read is still canceled.
    assert_eq!(lib_install(), 0);
    h1.cancel().unwrap();
    assert!(
        h1.join().is_canceled(),
        "the thread blocked in read was canceled"
    );
    drop(w);

    // The program's raise(SIGRTMIN) reaches the library's handler (not the cancel signal's,
    // nor the default action).
    // SAFETY: raises a signal whose handler the library installed.
    assert_eq!(unsafe { libc::raise(rtmin) }, 0);
    assert_eq!(lib_got(), 1, "the library's handler ran once");
}

/// The glibc `SIGRTMIN` behind the crate's definition.
fn system_sigrtmin() -> i32 {
    // SAFETY: a nul-terminated name; `RTLD_NEXT` is a valid handle for `dlsym`.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, c"__libc_current_sigrtmin".as_ptr()) };
    assert!(!p.is_null(), "the C library's __libc_current_sigrtmin");
    // SAFETY: the C library's function of this signature.
    let f = unsafe { std::mem::transmute::<*mut libc::c_void, extern "C" fn() -> libc::c_int>(p) };
    f()
}

/// `THREAD_CANCEL_SIGNAL`, read at load, chooses the cancel signal among the C library's first
/// eight real-time signals before any module reads `SIGRTMIN` (a program that cannot call
/// `io::set_signal` first: a C program, or one whose libraries' constructors read it); every
/// module's `SIGRTMIN` is then the one after it. A value that is not such a signal is said on
/// stderr, and the default stays.
#[test]
fn w05_the_environment_chooses_the_cancel_signal_before_main() {
    let min = system_sigrtmin();
    if let Some(v) = common::child_value() {
        // In the child: the environment said `v`.
        let chosen: i32 = v.parse().unwrap();
        let h = thread_cancel::spawn(|| ());
        assert!(matches!(h.join(), thread_cancel::Outcome::Returned(())));
        assert!(
            thread_cancel::io::set_signal(chosen).is_ok(),
            "the cancel signal is {chosen}"
        );
        assert_eq!(libc::SIGRTMIN(), chosen + 1);
        return;
    }
    let name = "w05_the_environment_chooses_the_cancel_signal_before_main";
    let chosen = (min + 2).to_string();
    let run = common::run_child_with_env(
        name,
        &chosen,
        common::HANG,
        &[("THREAD_CANCEL_SIGNAL", &chosen)],
    );
    assert!(run.status.success(), "{}", run.stderr);
    // Out of range: said, and the default stays.
    let bad = (min + 8).to_string();
    let run = common::run_child_with_env(
        name,
        &min.to_string(),
        common::HANG,
        &[("THREAD_CANCEL_SIGNAL", &bad)],
    );
    assert!(run.status.success(), "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("THREAD_CANCEL_SIGNAL={bad}: not one of")),
        "{}",
        run.stderr
    );
}
