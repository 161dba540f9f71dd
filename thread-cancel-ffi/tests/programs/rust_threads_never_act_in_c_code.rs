//! A Rust program linked with `libthread_cancel.so` (its own copy of `std`): its main thread and
//! a `std` thread cancel themselves through the C ABI and reach a C cancellation point, which
//! must not act (a forced unwind would reach Rust frames of this program, its `catch_unwind`
//! among them): both go past it, and the program exits with status 0.

extern "C" {
    fn tc_self() -> u64;
    fn tc_cancel(thread: u64) -> i32;
    fn tc_testcancel();
}

fn cancel_self_then_testcancel() {
    // SAFETY: the library's calls, on the calling thread's own id.
    unsafe {
        assert_eq!(tc_cancel(tc_self()), 0);
        tc_testcancel();
    }
}

fn main() {
    cancel_self_then_testcancel();
    println!("main went past the point");
    std::thread::spawn(cancel_self_then_testcancel)
        .join()
        .unwrap();
    println!("a std thread went past the point");
}
