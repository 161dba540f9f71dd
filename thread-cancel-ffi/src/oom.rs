//! Out of memory on the C paths: an error (`EAGAIN`, `ENOMEM`), not an abort of the process.
//!
//! Rust's global allocator aborts the process when an allocation fails, and `std` offers no
//! fallible way to build an `Arc` or to spawn a thread. So this library's allocator is the
//! system's with an *emergency reserve* (the idea of libstdc++'s emergency pool for
//! exceptions): when `malloc` fails, a small block comes from a static reserve instead, and the
//! calling thread is marked as having run out. The C calls that can fail ([`Watch`] around
//! their work: `tc_create`, `tc_key_create`, `tc_setspecific`) then undo what they did, which
//! gives the blocks back, and return `EAGAIN` or `ENOMEM` as glibc does. Anywhere else the
//! reserve only postpones the abort; a request larger than its largest block, or one that finds
//! it empty, still aborts.
//!
//! The reserve: size classes of 64 B, 256 B, 1 KiB and 4 KiB blocks, each block aligned to its
//! size, with one atomic bitmap word per 64 blocks; no lock, no system call.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicU64, Ordering};

/// The system's allocator, with the reserve behind it.
struct WithReserve;

#[global_allocator]
static ALLOCATOR: WithReserve = WithReserve;

/// Block sizes and counts of the reserve (each count a multiple of 64).
const CLASSES: [(usize, usize); 4] = [(64, 256), (256, 128), (1024, 64), (4096, 16)];
const WORDS: usize = 4 + 2 + 1 + 1;
const ARENA: usize = 64 * 256 + 256 * 128 + 1024 * 64 + 4096 * 16;

#[repr(C, align(4096))]
struct Arena(UnsafeCell<[u8; ARENA]>);

// SAFETY: blocks are handed out at most once at a time (the bitmaps), and each is used only
// by whoever holds it.
unsafe impl Sync for Arena {}

static RESERVE: Arena = Arena(UnsafeCell::new([0; ARENA]));
static USED: [AtomicU64; WORDS] = [const { AtomicU64::new(0) }; WORDS];

thread_local! {
    /// The calling thread got memory from the reserve since its current [`Watch`] began.
    /// `const`, no destructor: usable from the allocator at any time, even in thread teardown.
    static RAN_OUT: Cell<bool> = const { Cell::new(false) };
}

/// The first bitmap word and the start offset of class `c`.
fn class_base(c: usize) -> (usize, usize) {
    let (mut word, mut offset) = (0, 0);
    for &(size, count) in &CLASSES[..c] {
        word += count / 64;
        offset += size * count;
    }
    (word, offset)
}

fn reserve_alloc(layout: Layout) -> *mut u8 {
    for (c, &(size, count)) in CLASSES.iter().enumerate() {
        if layout.size() > size || layout.align() > size {
            continue;
        }
        let (word0, offset) = class_base(c);
        for w in 0..count / 64 {
            let word = &USED[word0 + w];
            let mut bits = word.load(Ordering::Relaxed);
            while bits != u64::MAX {
                let bit = bits.trailing_ones() as usize;
                match word.compare_exchange_weak(
                    bits,
                    bits | 1 << bit,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        RAN_OUT.set(true);
                        let at = offset + (w * 64 + bit) * size;
                        // SAFETY: `at + size <= ARENA` (the block is inside its class's run).
                        return unsafe { RESERVE.0.get().cast::<u8>().add(at) };
                    }
                    Err(now) => bits = now,
                }
            }
        }
    }
    std::ptr::null_mut()
}

/// The class and block index of `ptr` if it is a block of the reserve.
fn reserve_block(ptr: *mut u8) -> Option<(usize, usize)> {
    let offset = (ptr as usize).checked_sub(RESERVE.0.get() as usize)?;
    let mut start = 0;
    for (c, &(size, count)) in CLASSES.iter().enumerate() {
        if offset < start + size * count {
            return Some((c, (offset - start) / size));
        }
        start += size * count;
    }
    None
}

fn reserve_free(c: usize, block: usize) {
    let (word0, _) = class_base(c);
    USED[word0 + block / 64].fetch_and(!(1 << (block % 64)), Ordering::Release);
}

// SAFETY: every block returned is valid for `layout` (the system's, or a reserve block at least
// as large and as aligned, owned by the caller until it is freed), and each pointer is freed by
// the allocator it came from (reserve blocks are recognised by their address).
unsafe impl GlobalAlloc for WithReserve {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded; `layout` has a non-zero size (the caller's contract).
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            reserve_alloc(layout)
        } else {
            p
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            return p;
        }
        let p = reserve_alloc(layout);
        if !p.is_null() {
            // SAFETY: a reserve block of at least `layout.size()` bytes, ours.
            unsafe { p.write_bytes(0, layout.size()) };
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match reserve_block(ptr) {
            Some((c, block)) => reserve_free(c, block),
            // SAFETY: not a reserve block, so the system's, with this layout.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if let Some((c, block)) = reserve_block(ptr) {
            if new_size <= CLASSES[c].0 {
                return ptr;
            }
            // SAFETY: `new_size` is non-zero and, rounded to the alignment, fits (the caller's
            // contract for `realloc`).
            let new =
                unsafe { self.alloc(Layout::from_size_align_unchecked(new_size, layout.align())) };
            if !new.is_null() {
                // SAFETY: both blocks are valid for the bytes copied, and distinct.
                unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size()) };
                reserve_free(c, block);
            }
            return new;
        }
        // SAFETY: a block of the system's, with this layout.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            return p;
        }
        // SAFETY: as above.
        let new =
            reserve_alloc(unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) });
        if !new.is_null() {
            // SAFETY: the old block is still valid (a failed realloc keeps it); the new one is
            // at least `new_size` bytes, which exceeds the old size here.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                System.dealloc(ptr, layout);
            }
        }
        new
    }
}

/// Whether the system's `malloc` can still give `bytes`: a probe (the block is freed at once).
/// For the side of an operation that cannot fail softly: a new thread's own set-up (glibc's
/// registration of its thread-local destructors, `std`'s handle of the thread) aborts when
/// `malloc` fails, so `tc_create` makes sure the heap is not exhausted before it starts one.
/// A probe, not a reservation: another thread may take the memory in between.
pub(crate) fn system_has(bytes: usize) -> bool {
    // SAFETY: `malloc`/`free` of a block of our own.
    unsafe {
        let p = libc::malloc(bytes);
        libc::free(p);
        !p.is_null()
    }
}

/// Watches the calling thread's allocations: [`Watch::ran_out`] says whether one of them
/// failed (and was served from the reserve) since the watch began. Watches nest.
pub(crate) struct Watch {
    outer: bool,
}

impl Watch {
    pub(crate) fn new() -> Self {
        Self {
            outer: RAN_OUT.replace(false),
        }
    }

    /// Whether memory ran out since this watch began.
    pub(crate) fn ran_out(&self) -> bool {
        RAN_OUT.get()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let inner = RAN_OUT.get();
        RAN_OUT.set(self.outer || inner);
    }
}
