//! P5: what a lightweight spawn allocates in the spawning thread. Its own binary, for its
//! global allocator: every allocation is counted for the thread that makes it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting each thread's allocations.
struct Counting;

thread_local! {
    /// Allocations made by this thread (a `const` thread-local without a destructor: reading
    /// it allocates nothing).
    static MADE: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is passed to `System` unchanged; counting touches only a thread-local
// counter, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = MADE.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _ = MADE.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = MADE.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn made() -> usize {
    MADE.with(Cell::get)
}

/// A lightweight spawn allocates its control block and the packet it shares with the thread,
/// and nothing else in the spawning thread: the closure travels in the packet (it had a box of
/// its own, which the new thread freed) and the thread attributes live in the spawn's frame
/// (they were on the heap).
#[test]
fn p5_a_lightweight_spawn_allocates_only_its_control_block_and_packet() {
    let builder = || thread_cancel::Builder::new().lightweight();
    // The process's first thread of the crate sets up what every later one shares (the cancel
    // signal's handler, the default stack size).
    builder().spawn(|| ()).unwrap().join().value().unwrap();
    for _ in 0..10 {
        let before = made();
        let h = builder().spawn(|| 7).unwrap();
        let spawned = made() - before;
        assert_eq!(h.join().value(), Some(7));
        assert_eq!(
            spawned, 2,
            "a lightweight spawn allocated {spawned} times in the spawning thread (the control \
             block and the packet: 2)"
        );
    }
}
