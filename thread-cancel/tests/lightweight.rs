//! `Builder::lightweight()` (issue 16, item 6; SPEC §4 P5/P6): threads made with
//! `pthread_create` directly behave as every spawned thread does — cancellation at a blocking
//! point (futex waits and the signalled system calls), R07's order, R21's exit value, a panic
//! as `Panicked`, join/wait, the joiner's own cancellation — and differ only where the docs say
//! (no alternate signal stack, `std` does not know their name).
//!
//! The stress test runs `THREAD_CANCEL_STRESS` iterations (default 2,000).

use std::ffi::CStr;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thread_cancel::{cleanup_push, exit, testcancel, Builder, JoinHandle, Key, Outcome};

fn stress_iters() -> usize {
    std::env::var("THREAD_CANCEL_STRESS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

fn light() -> Builder {
    Builder::new().lightweight()
}

fn spawn_light<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    light().spawn(f).expect("spawn a lightweight thread")
}

/// An ordered log shared by a thread and the test.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    fn get(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Runs `body` in a lightweight thread behind a cleanup handler; once the thread has started
/// and had time to block, cancels it and checks that it reports `Canceled` after the handler.
fn cancel_while_blocked(body: impl FnOnce() + Send + 'static) {
    let cleaned = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (c, s) = (cleaned.clone(), started.clone());
    let h = spawn_light(move || {
        let _g = cleanup_push(move || c.store(true, Ordering::SeqCst));
        s.store(true, Ordering::SeqCst);
        body();
        panic!("the blocking call returned");
    });
    let t = Instant::now();
    while !started.load(Ordering::SeqCst) {
        assert!(t.elapsed() < Duration::from_secs(10), "never started");
        std::thread::yield_now();
    }
    std::thread::sleep(Duration::from_millis(20)); // let it block
    h.cancel().unwrap();
    let o = h.join();
    assert!(o.is_canceled(), "outcome: {o:?}");
    assert!(cleaned.load(Ordering::SeqCst));
}

#[test]
fn lightweight_thread_is_canceled_in_sleep() {
    cancel_while_blocked(|| thread_cancel::sleep(Duration::from_secs(3600)));
}

#[test]
fn lightweight_thread_is_canceled_in_channel_recv() {
    let (tx, rx) = thread_cancel::sync::channel::<()>();
    cancel_while_blocked(move || {
        let _ = rx.recv();
    });
    drop(tx);
}

#[test]
#[cfg_attr(
    thread_cancel_portable,
    ignore = "the portable layer does not interrupt blocked system calls"
)]
fn lightweight_thread_is_canceled_in_read_by_the_signal() {
    let (r, w) = std::io::pipe().unwrap();
    cancel_while_blocked(move || {
        let _ = thread_cancel::io::read(r.as_fd(), &mut [0u8; 1]);
    });
    drop(w);
}

#[test]
fn lightweight_thread_is_canceled_in_park() {
    cancel_while_blocked(|| loop {
        thread_cancel::park();
    });
}

#[test]
fn lightweight_r07_cleanup_lifo_then_tsd_destructors_then_canceled() {
    let log = Log::default();
    let key = Arc::new(Key::new({
        let l = log.clone();
        move |v: &'static str| l.push(format!("tsd {v}"))
    }));
    let (k, l) = (key.clone(), log.clone());
    let h = spawn_light(move || {
        k.set("value");
        let (l1, l2, l3) = (l.clone(), l.clone(), l.clone());
        let _a = cleanup_push(move || l1.push("cleanup 1"));
        let _b = cleanup_push(move || l2.push("cleanup 2"));
        let _c = cleanup_push(move || l3.push("cleanup 3"));
        loop {
            testcancel();
        }
    });
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    log.push("joined");
    assert_eq!(
        log.get(),
        ["cleanup 3", "cleanup 2", "cleanup 1", "tsd value", "joined"]
    );
}

#[test]
fn lightweight_r21_exit_value_is_joined_after_handlers_and_destructors() {
    let log = Log::default();
    let key = Arc::new(Key::new({
        let l = log.clone();
        move |v: u8| l.push(format!("tsd {v}"))
    }));
    let (k, l) = (key.clone(), log.clone());
    let h = spawn_light(move || -> u32 {
        k.set(7);
        let _g = cleanup_push(move || l.push("cleanup"));
        exit(42u32)
    });
    match h.join() {
        Outcome::Exited(v) => assert_eq!(v, 42),
        o => panic!("expected Exited(42), got {o:?}"),
    }
    assert_eq!(log.get(), ["cleanup", "tsd 7"]);
}

#[test]
fn lightweight_returned_value_joins_as_returned_and_handlers_do_not_run() {
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    let h = spawn_light(move || {
        let g = cleanup_push(move || r.store(true, Ordering::SeqCst));
        drop(g); // normal scope exit: not run (R16)
        "done".to_string()
    });
    match h.join() {
        Outcome::Returned(v) => assert_eq!(v, "done"),
        o => panic!("expected Returned, got {o:?}"),
    }
    assert!(!ran.load(Ordering::SeqCst));
}

/// Messages the panic hook saw, with the thread's system name; the default hook still runs.
fn hook_log() -> &'static Mutex<Vec<String>> {
    static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .unwrap_or_default();
            LOG.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(format!("{}: {msg}", system_name()));
            prev(info);
        }));
    });
    &LOG
}

/// The calling thread's name as the system knows it (`pthread_getname_np`).
fn system_name() -> String {
    let mut buf = [0 as libc::c_char; 64];
    // SAFETY: `buf` is valid for 64 bytes, which `pthread_getname_np` is told; it writes a
    // NUL-terminated name into it on success.
    let rc = unsafe { libc::pthread_getname_np(libc::pthread_self(), buf.as_mut_ptr(), 64) };
    assert_eq!(rc, 0, "pthread_getname_np");
    // SAFETY: NUL-terminated within `buf` (success above).
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn lightweight_panic_joins_as_panicked_and_is_reported_by_the_hook() {
    let log = hook_log();
    let h = light()
        .name("lw-panics".into())
        .spawn(|| -> u8 { panic!("lightweight boom") })
        .unwrap();
    match h.join() {
        Outcome::Panicked(p) => assert_eq!(p.downcast_ref::<&str>(), Some(&"lightweight boom")),
        o => panic!("expected Panicked, got {o:?}"),
    }
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .any(|l| l == "lw-panics: lightweight boom"),
        "the hook did not report it: {:?}",
        log.lock().unwrap()
    );
}

#[test]
fn lightweight_cancellation_is_not_reported_by_the_panic_hook() {
    let log = hook_log();
    let h = light()
        .name("lw-quiet".into())
        .spawn(|| loop {
            testcancel();
        })
        .unwrap();
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
    assert!(
        !log.lock()
            .unwrap()
            .iter()
            .any(|l| l.starts_with("lw-quiet")),
        "{:?}",
        log.lock().unwrap()
    );
}

#[test]
fn lightweight_wait_and_wait_timeout_and_is_finished() {
    let h = spawn_light(|| thread_cancel::sleep(Duration::from_secs(3600)));
    assert!(!h.wait_timeout(Duration::from_millis(5)));
    assert!(!h.is_finished());
    h.cancel().unwrap();
    h.wait();
    assert!(h.canceler().is_finished());
    let t = Instant::now();
    while !h.is_finished() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "is_finished never true"
        );
        std::thread::yield_now();
    }
    assert!(h.join().is_canceled());
}

#[test]
fn lightweight_join_is_a_cancellation_point_for_the_joiner() {
    let never = spawn_light(|| thread_cancel::sleep(Duration::from_secs(3600)));
    let never_canceler = never.canceler();
    let joiner = spawn_light(move || {
        let _ = never.join();
    });
    std::thread::sleep(Duration::from_millis(20));
    joiner.cancel().unwrap();
    assert!(joiner.join().is_canceled());
    // The abandoned handle detached the thread; it can still be canceled.
    never_canceler.cancel().unwrap();
    let t = Instant::now();
    while !never_canceler.is_finished() {
        assert!(t.elapsed() < Duration::from_secs(10), "never finished");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn lightweight_name_is_given_to_the_system_not_to_std() {
    let h = light()
        .name("lw-named".into())
        .spawn(|| {
            (
                system_name(),
                std::thread::current().name().map(String::from),
            )
        })
        .unwrap();
    let (system, std_name) = h.join().unwrap();
    assert_eq!(system, "lw-named");
    assert_eq!(std_name, None, "std does not learn a name it did not give");
}

#[test]
fn lightweight_long_name_is_cut_to_15_bytes_at_a_char_boundary() {
    // 14 ASCII bytes, then a 2-byte character that would straddle the 15-byte limit.
    let h = light()
        .name("abcdefghijklmné-and-more".into())
        .spawn(system_name)
        .unwrap();
    assert_eq!(h.join().unwrap(), "abcdefghijklmn");
}

#[test]
fn lightweight_name_with_a_nul_byte_is_invalid_input() {
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    let e = light()
        .name("bad\0name".into())
        .spawn(move || r.store(true, Ordering::SeqCst))
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(!ran.load(Ordering::SeqCst));
}

#[test]
fn lightweight_handle_thread_is_the_std_thread_of_the_new_thread() {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = spawn_light(move || {
        tx.send(std::thread::current().id()).unwrap();
        thread_cancel::sleep(Duration::from_secs(3600));
    });
    // Asked at once: it waits for the thread to have started, if needed.
    let from_handle = h.thread().id();
    assert_eq!(rx.recv().unwrap(), from_handle);
    assert_ne!(from_handle, std::thread::current().id());
    h.cancel().unwrap();
    assert!(h.join().is_canceled());
}

/// The calling thread's stack size as glibc reports it.
fn own_stack_size() -> usize {
    // SAFETY: plain data, initialised by `pthread_getattr_np` before it is read.
    let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
    let mut size = 0usize;
    let mut addr = std::ptr::null_mut();
    // SAFETY: `attr` is valid for writes and destroyed once after use; `addr`/`size` are
    // valid for writes.
    unsafe {
        assert_eq!(libc::pthread_getattr_np(libc::pthread_self(), &mut attr), 0);
        assert_eq!(libc::pthread_attr_getstack(&attr, &mut addr, &mut size), 0);
        libc::pthread_attr_destroy(&mut attr);
    }
    size
}

#[test]
fn lightweight_stack_size_is_honoured() {
    for want in [64 << 10, 256 << 10, 8 << 20] {
        let got = light()
            .stack_size(want)
            .spawn(own_stack_size)
            .unwrap()
            .join()
            .unwrap();
        // Never below the architecture's minimum (16 KiB on x86_64, 128 KiB on aarch64).
        let floor = want.max(libc::PTHREAD_STACK_MIN);
        assert!(
            (floor..floor + (64 << 10)).contains(&got),
            "asked {want} (at least {floor}), got {got}"
        );
    }
    // A deep recursion that needs about 1 MiB runs on a 4 MiB stack.
    fn deep(n: u32) -> u64 {
        let pad = std::hint::black_box([n as u8; 1000]);
        if n == 0 {
            u64::from(pad[0])
        } else {
            deep(n - 1) + u64::from(pad[999])
        }
    }
    let sum = light()
        .stack_size(4 << 20)
        .spawn(|| deep(1000))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(sum, (1..=1000u64).map(|n| n % 256).sum::<u64>());
}

#[test]
fn lightweight_default_stack_size_is_std_s() {
    let ours = spawn_light(own_stack_size).join().unwrap();
    let std_size = std::thread::spawn(own_stack_size).join().unwrap();
    assert_eq!(ours, std_size);
}

#[test]
fn lightweight_spawn_failure_is_an_error_and_the_closure_is_dropped_unrun() {
    let token = Arc::new(());
    let t = token.clone();
    // 1 EiB of stack: beyond any 64-bit Linux address space (at most 2^57 bytes), so the
    // mapping cannot be made whatever the overcommit policy; and refused at once by a
    // user-mode emulator (64 TiB made qemu 7.2 describe every page and be killed for memory).
    let e = light()
        .stack_size(1 << 60)
        .spawn(move || drop(t))
        .unwrap_err();
    assert!(e.raw_os_error().is_some(), "an OS error: {e:?}");
    assert_eq!(Arc::strong_count(&token), 1, "the closure was dropped");
    // A size that cannot be rounded up to whole pages is refused, not wrapped.
    assert!(light().stack_size(usize::MAX).spawn(|| ()).is_err());
}

/// Whether the calling thread has an alternate signal stack.
fn has_alt_stack() -> bool {
    // SAFETY: plain data, written by `sigaltstack`.
    let mut old: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new stack only queries; `old` is valid for writes.
    assert_eq!(unsafe { libc::sigaltstack(std::ptr::null(), &mut old) }, 0);
    old.ss_flags & libc::SS_DISABLE == 0
}

#[test]
fn lightweight_thread_has_no_alternate_signal_stack_unlike_a_std_one() {
    assert!(!spawn_light(has_alt_stack).join().unwrap());
    assert!(Builder::new().spawn(has_alt_stack).unwrap().join().unwrap());
}

#[test]
fn lightweight_setting_leaves_scoped_threads_std_s() {
    let data = [1, 2, 3];
    thread_cancel::scope(|s| {
        let h = light()
            .name("scoped".into())
            .spawn_scoped(s, || {
                (
                    data.iter().sum::<i32>(),
                    std::thread::current().name().map(String::from),
                )
            })
            .unwrap();
        let spinner = light().spawn_scoped(s, || loop {
            testcancel();
        });
        let spinner = spinner.unwrap();
        spinner.cancel().unwrap();
        assert!(spinner.join().is_canceled());
        assert_eq!(h.join().unwrap(), (6, Some("scoped".to_string())));
    });
}

#[test]
fn lightweight_current_in_the_thread_is_its_own_control_block() {
    let h = spawn_light(|| {
        let me = thread_cancel::current();
        me.cancel().unwrap(); // a request to itself
        testcancel(); // acted on here
        unreachable!("testcancel acted");
    });
    let o: Outcome<()> = h.join();
    assert!(o.is_canceled(), "{o:?}");
}

#[test]
fn stress_lightweight_cancel_races_thread_start_and_end() {
    // A cancel at any moment of a short thread's life: before it is linked, while it runs,
    // after it returned. Every join is Canceled or Returned, never a hang; several joiners
    // meanwhile (`wait` from other threads) are all woken.
    for i in 0..stress_iters() {
        let h = Arc::new(spawn_light(move || {
            if i % 2 == 0 {
                testcancel();
            }
            i
        }));
        let waiter = {
            let h = h.clone();
            spawn_light(move || h.wait())
        };
        if i % 3 != 0 {
            let _ = h.cancel();
        }
        assert!(waiter.join().value().is_some());
        let h = Arc::into_inner(h).expect("the waiter dropped its handle");
        match h.join() {
            Outcome::Canceled => {}
            Outcome::Returned(v) => assert_eq!(v, i),
            o => panic!("iteration {i}: {o:?}"),
        }
    }
}
