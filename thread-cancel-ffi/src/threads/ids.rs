//! Thread ids: the registry that maps them to threads, `tc_self`, `tc_equal`, and the registry's
//! lock across `fork`.
//!
//! A registry id is `1 << 63 | generation << 32 | (slot + 1)`: the top bit, never set in a system
//! `pthread_t` (a user-space address on 64-bit glibc, musl and bionic), tells them from system
//! ids. A slot's generation (31 bits) grows each time it is freed (join, or the end of a detached
//! thread), so an old registry id never names a new thread.
//!
//! The ids the program holds ([`public`]) are, on glibc, the system's `pthread_t` of every thread
//! ([`SYSTEM_IDS`]): a library built without the header compares them with `==` and passes them
//! to the C library. The threads created here run on stacks of the library's (`stacks.rs`), so
//! their system ids are never reused either: once such an id's registry entry is gone, the id
//! lies in a stack of the library's and is stale (`Registry::stale`): every call on it is
//! `ESRCH`, never another thread. Elsewhere the program holds registry ids. A thread that has ended but whose id lives (not joined, not detached)
//! is still a valid target: cancel and kill return 0 and do nothing, as glibc >= 2.34.
//! The slot remembers whether the id it last freed was a detached thread that ended, so that
//! join and detach of that id answer `EINVAL` as glibc's (which still finds the detached
//! thread's descriptor), until the slot's next thread has lived and gone.

use crate::SendPtr;
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use thread_cancel::c_abi::CJoinHandle;
use thread_cancel::Canceler;

pub(super) struct Entry {
    /// `None` only while `tc_create` fills the slot (under the registry lock).
    pub(super) canceler: Option<Canceler>,
    /// `None` once detached, while being joined, or for a thread not created here.
    pub(super) handle: Option<CJoinHandle<SendPtr>>,
    pub(super) detached: bool,
    /// The thread's closure has ended (its slot may be freed once it is also detached); for
    /// the main thread, its `tc_exit` has ended it.
    pub(super) ended: bool,
    /// Not created here (an id `tc_self` gave): its slot is freed when the thread ends.
    pub(super) foreign: bool,
    /// The system's id: valid while the slot lives, except for a foreign thread that has
    /// `ended` (the main thread after `tc_exit`, whose slot stays). `None` while `tc_create`
    /// fills the slot.
    pub(super) native: Option<Native>,
    /// In a forked child: a thread of the parent other than the forking one, which the child
    /// does not have (`Registry::forked`). It counts as ended: cancel and kill return 0 and do
    /// nothing, join returns 0 at once with a null value (as glibc's, whose descriptor of such a
    /// thread says it has ended), and its system id is never used (the C library may give it
    /// to a thread the child creates).
    pub(super) left_in_parent: bool,
    /// glibc: the base of the stack of the library's the thread runs on (`stacks.rs`), given
    /// back once the thread has been joined.
    pub(super) stack: Option<usize>,
}

/// A system thread id kept in the registry: an integer on glibc, a pointer on musl and bionic.
#[derive(Clone, Copy)]
pub(super) struct Native(pub(super) libc::pthread_t);

// SAFETY: a `pthread_t` is an id, only passed back to the system's pthread calls (under the
// registry lock that keeps it valid, see `with_native`); it is never dereferenced here.
unsafe impl Send for Native {}

impl Entry {
    /// The system's id of a thread that has not gone (an ended foreign thread has).
    pub(super) fn live_native(&self) -> Option<libc::pthread_t> {
        self.native
            .filter(|_| !(self.left_in_parent || self.foreign && self.ended))
            .map(|n| n.0)
    }
}

struct Slot {
    generation: u32,
    entry: Option<Entry>,
    /// The id of the previous generation (`generation - 1`) was a detached thread that ended
    /// (`Registry::ended_detached`); false after a join or a foreign thread's end.
    ended_detached: bool,
}

/// A cancel queued for a system id that no known thread had (`foreign::cancel_unknown`).
pub(super) struct Pending {
    pub(super) native: u64,
    /// The threads of the process when it was sent (`None`: not known, no `/proc`): the thread
    /// it was for was one of them (a thread's system id does not change while it lives), so a
    /// thread that was not, to which the C library has since given the same system id, is not
    /// canceled by it.
    pub(super) alive: Option<Vec<libc::pid_t>>,
}

pub(super) struct Registry {
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// System ids of threads not created here that were canceled before they were known (see
    /// `foreign.rs`): each such thread takes its request when it first calls a mapped function.
    pub(super) pending: Vec<Pending>,
    /// The slot that last took each system id ([`Registry::find_native`]: one lookup, whatever
    /// the number of threads); room for one more is kept for each slot in use.
    by_native: HashMap<u64, usize, BuildHasherDefault<IdHasher>>,
    /// In a forked child whose forking thread was not main: the parent's main thread's system
    /// id, stale in the child.
    parents_main: Option<u64>,
    /// glibc: the stacks of the threads created here (their ids are glibc's, never reused).
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    pub(super) stacks: super::stacks::Stacks,
    /// glibc: the threads that code built without the header created (`system_owned.rs`), by
    /// system id, while they run.
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    pub(super) system_owned: HashMap<u64, thread_cancel::Canceler, BuildHasherDefault<IdHasher>>,
}

/// The hash of a system id (an address: its low bits are alignment): a multiplication, its high
/// half folded onto the low one (the table indexes with the low bits, and a product's low bits
/// keep the key's zeros); SipHash's protection against chosen keys is not needed for ids the C
/// library makes.
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl Registry {
    /// A new id for `entry`; `None` if the registry cannot grow (out of memory).
    pub(super) fn alloc(&mut self, entry: Entry) -> Option<u64> {
        // Room for this slot's system id, so that `set_native` never allocates.
        self.by_native.try_reserve(1).ok()?;
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.try_reserve(1).ok()?;
                self.slots.push(Slot {
                    generation: 0,
                    entry: None,
                    ended_detached: false,
                });
                self.slots.len() - 1
            }
        };
        let native = entry.native;
        let slot = &mut self.slots[index];
        slot.entry = Some(entry);
        let id = OURS | (u64::from(slot.generation) << 32) | (index as u64 + 1);
        if let Some(n) = native {
            self.by_native.insert(system_id(n.0), index);
        }
        Some(id)
    }

    /// Records the system id of `id`'s thread (created here: known once it is created).
    pub(super) fn set_native(&mut self, id: u64, native: libc::pthread_t) {
        if let Some(e) = self.get(id) {
            e.native = Some(Native(native));
            let index = (id & 0xffff_ffff) as usize - 1;
            self.by_native.insert(system_id(native), index);
        }
    }

    pub(super) fn get(&mut self, id: u64) -> Option<&mut Entry> {
        let index = slot_of(id)?;
        let slot = self.slots.get_mut(index)?;
        if u64::from(slot.generation) != generation_of(id) {
            return None;
        }
        slot.entry.as_mut()
    }

    /// The registry's id of the thread whose system id is `native`, while its id lives: created
    /// here (until joined, or ended detached), or not created here and known (it has called a
    /// mapped function: `tc_self`, `foreign::enter`; until it ends; main's, after its `tc_exit`
    /// too), if any.
    pub(super) fn find_native(&self, native: u64) -> Option<u64> {
        let &i = self.by_native.get(&native)?;
        let slot = self.slots.get(i)?;
        let e = slot.entry.as_ref()?;
        let n = e.native.filter(|_| !(e.foreign && e.left_in_parent))?;
        (system_id(n.0) == native)
            .then(|| OURS | (u64::from(slot.generation) << 32) | (i as u64 + 1))
    }

    /// The registry's id of the thread `thread` (an id the program holds) names, while its id
    /// lives. On glibc every id the program holds is a system id (`tc_create` and `tc_self`
    /// give the C library's `pthread_t`); elsewhere ours are registry ids (top bit set), and a
    /// system id names a known thread not created here.
    pub(super) fn resolve(&self, thread: u64) -> Option<u64> {
        if !SYSTEM_IDS && is_ours(thread) {
            Some(thread)
        } else {
            self.find_native(thread)
        }
    }

    /// Whether `thread` (an id the program holds) is stale: named a thread of ours whose id's
    /// lifetime has ended. Never another thread's (ids are not reused).
    pub(super) fn stale(&self, thread: u64) -> bool {
        #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
        if self.stacks.owns(thread) {
            return true;
        }
        is_ours(thread) || self.parents_main == Some(thread)
    }

    /// Whether `id` (an id the program holds) was a detached thread that has ended, its id's
    /// lifetime ended since (and no later thread's since): join and detach answer `EINVAL` for
    /// it, as glibc.
    pub(super) fn ended_detached(&self, id: u64) -> bool {
        #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
        return self.stacks.was_detached_and_ended(id);
        #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
        self.ended_detached_slot(id)
    }

    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    fn ended_detached_slot(&self, id: u64) -> bool {
        let Some(index) = slot_of(id) else {
            return false;
        };
        self.slots.get(index).is_some_and(|slot| {
            slot.ended_detached && u64::from(slot.generation) == generation_of(id) + 1
        })
    }

    /// Ends the lifetime of `id` (joined, or a thread not created here that has ended): every
    /// call on it is `ESRCH` from now on.
    pub(super) fn release(&mut self, id: u64) {
        self.free_slot(id, false);
    }

    /// Ends the lifetime of `id`, a detached thread that has ended: cancel and kill are `ESRCH`
    /// from now on, join and detach `EINVAL` (`ended_detached`).
    pub(super) fn release_detached(&mut self, id: u64) {
        self.free_slot(id, true);
    }

    /// In a forked child (its only thread is the forking one, whose id is `keep`): the
    /// parent's main thread (`main`) has no descriptor left to answer for it, so its id ends
    /// (`ESRCH`, as glibc's cancel and kill of it); every other thread of the parent is
    /// `left_in_parent`, its join handle forgotten (its system thread is not in this process:
    /// neither joined nor detached with the C library). Cancels queued for system ids not yet
    /// known are dropped: those threads are not in the child either.
    fn forked(&mut self, keep: u64, main: u64) {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let id = OURS | (u64::from(slot.generation) << 32) | (i as u64 + 1);
            if id == keep || id == main {
                continue;
            }
            if let Some(e) = slot.entry.as_mut() {
                e.left_in_parent = true;
                e.ended = true;
                if let Some(h) = e.handle.take() {
                    std::mem::forget(h);
                }
            }
        }
        if main != keep {
            // The parent's main thread: its system id is not a thread of the child's (nor ever
            // will be: its descriptor lives in the initial thread's memory, which no new
            // thread gets).
            if let Some(n) = self.get(main).and_then(|e| e.native) {
                self.parents_main = Some(system_id(n.0));
            }
            self.release(main);
        }
        self.pending.clear();
        PENDING.store(0, Ordering::Relaxed);
        #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
        {
            self.stacks.forked();
            // The child's only thread keeps its own; the others are not in the child.
            // SAFETY: no preconditions.
            let me = unsafe { libc::pthread_self() } as u64;
            self.system_owned.retain(|&id, _| id == me);
        }
    }

    fn free_slot(&mut self, id: u64, detached: bool) {
        if self.get(id).is_some() {
            let index = (id & 0xffff_ffff) as usize - 1;
            let slot = &mut self.slots[index];
            let e = slot.entry.take().expect("a live slot");
            if let Some(n) = e.native {
                // Unless a later slot has taken the same system id since.
                if self.by_native.get(&system_id(n.0)) == Some(&index) {
                    self.by_native.remove(&system_id(n.0));
                }
                // A detached thread on a stack of the library's: its stack is reused once the
                // C library is done with the thread.
                #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
                if let (true, Some(base)) = (detached, e.stack) {
                    self.stacks.ended_detached(n.0, base);
                }
            }
            let slot = &mut self.slots[index];
            slot.ended_detached = detached;
            // A slot whose generation would wrap is retired (never reused), so no id ever names
            // two threads: one slot lost per 2^32 threads through it.
            // (Also lost if the free list cannot grow: out of memory.)
            if let Some(next) = slot
                .generation
                .checked_add(1)
                .filter(|g| *g <= MAX_GENERATION)
            {
                slot.generation = next;
                if self.free.try_reserve(1).is_ok() {
                    self.free.push(index);
                }
            }
        }
    }
}

/// How many system ids `Registry::pending` holds (read without the lock by `foreign::enter`).
pub(super) static PENDING: AtomicUsize = AtomicUsize::new(0);

/// The bit that marks registry ids (never set in a system `pthread_t`: a user-space address).
const OURS: u64 = 1 << 63;

/// Whether the ids the program holds are the C library's `pthread_t` (glibc, 64-bit: the
/// threads created here run on stacks of the library's, so an id is never reused, `stacks.rs`),
/// rather than registry ids.
pub(super) const SYSTEM_IDS: bool = cfg!(all(
    target_os = "linux",
    target_env = "gnu",
    target_pointer_width = "64"
));

/// The id the program holds for the thread of registry id `id`, whose system id is `native`.
pub(super) fn public(id: u64, native: libc::pthread_t) -> u64 {
    if SYSTEM_IDS {
        system_id(native)
    } else {
        id
    }
}

/// Whether `thread`, an id the program holds, is the calling thread's (which has an id).
pub(super) fn is_me(thread: u64) -> bool {
    let id = MY_ID.get();
    // SAFETY: no preconditions.
    id != 0 && thread == public(id, unsafe { libc::pthread_self() })
}
const MAX_GENERATION: u32 = (1 << 31) - 1;

/// A system `pthread_t` as the `pthread_t` of the C ABI carries it (an integer on glibc, a
/// pointer's bits on musl and bionic).
#[allow(clippy::unnecessary_cast)] // `pthread_t` is `u64` on 64-bit glibc only
pub(super) fn system_id(t: libc::pthread_t) -> u64 {
    t as u64
}

/// Whether `thread` is in our ids' space (not a system `pthread_t`).
pub(super) fn is_ours(thread: u64) -> bool {
    thread & OURS != 0
}

fn slot_of(id: u64) -> Option<usize> {
    if !is_ours(id) {
        return None;
    }
    (id & 0xffff_ffff).checked_sub(1).map(|i| i as usize)
}

fn generation_of(id: u64) -> u64 {
    (id & !OURS) >> 32
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    slots: Vec::new(),
    free: Vec::new(),
    pending: Vec::new(),
    by_native: HashMap::with_hasher(BuildHasherDefault::new()),
    parents_main: None,
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    stacks: super::stacks::Stacks::new(),
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    system_owned: HashMap::with_hasher(BuildHasherDefault::new()),
});

/// How many threads created by `tc_create` have not ended, and whether the main thread has
/// ended (`tc_exit` in `main`): the last of them to end then calls `exit(0)`.
pub(super) struct Process {
    pub(super) live: usize,
    pub(super) main_ended: bool,
}

static PROCESS: Mutex<Process> = Mutex::new(Process {
    live: 0,
    main_ended: false,
});

thread_local! {
    pub(super) static MY_ID: Cell<u64> = const { Cell::new(0) };
}

pub(super) fn registry() -> MutexGuard<'static, Registry> {
    AT_FORK.call_once(register_at_fork);
    crate::lock(&REGISTRY)
}

/// The registry lock if no one holds it: for a thread that must not wait for it (it may hold it
/// itself, interrupted by a signal whose handler calls a mapped point).
pub(super) fn try_registry() -> Option<MutexGuard<'static, Registry>> {
    AT_FORK.call_once(register_at_fork);
    match REGISTRY.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

pub(super) fn process() -> MutexGuard<'static, Process> {
    AT_FORK.call_once(register_at_fork);
    crate::lock(&PROCESS)
}

/// The registry and process locks across `fork`: the forking thread takes both (in the order
/// every other path takes them) before the fork and releases them in the parent and in the
/// child, so a child never inherits a lock some other thread of the parent held (its first
/// registry use, at the latest its thread's end, would wait forever).
static AT_FORK: std::sync::Once = std::sync::Once::new();

type HeldAtFork = (MutexGuard<'static, Registry>, MutexGuard<'static, Process>);

thread_local! {
    static HELD_AT_FORK: std::cell::RefCell<Option<HeldAtFork>> =
        const { std::cell::RefCell::new(None) };
}

fn register_at_fork() {
    extern "C" fn prepare() {
        let held = (crate::lock(&REGISTRY), crate::lock(&PROCESS));
        FORKER_IS_MAIN.store(is_main_thread(), Ordering::Relaxed);
        let _ = HELD_AT_FORK.try_with(|h| *h.borrow_mut() = Some(held));
    }
    extern "C" fn release() {
        let _ = HELD_AT_FORK.try_with(|h| drop(h.borrow_mut().take()));
    }
    extern "C" fn child() {
        let _ = HELD_AT_FORK.try_with(|h| {
            if let Some((mut reg, mut p)) = h.borrow_mut().take() {
                in_forked_child(&mut reg, &mut p);
            }
        });
    }
    // SAFETY: the handlers only take and release this module's locks (and change what they
    // guard), in the forking thread (the child's only thread). If registration fails (ENOMEM)
    // forks go unguarded, as before.
    unsafe { libc::pthread_atfork(Some(prepare), Some(release), Some(child)) };
}

/// The process after `fork`, in the child, whose only thread is the forking one: the live
/// threads created here are that one if it is one of them, else none; main has ended unless it
/// is the forking thread (its `tc_exit` then ends the child at once, as glibc's last thread, and
/// does not wait for the parent's threads, which the child does not have).
fn in_forked_child(reg: &mut Registry, p: &mut Process) {
    reg.forked(MY_ID.get(), MAIN_ID.load(Ordering::Relaxed));
    let created_here = reg.get(MY_ID.get()).is_some_and(|e| !e.foreign);
    p.live = usize::from(created_here);
    p.main_ended = !FORKER_IS_MAIN.load(Ordering::Relaxed);
}

/// Whether the thread that forks is the main thread (set before the fork, under the locks).
static FORKER_IS_MAIN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the calling thread is the process's main thread.
pub(crate) fn is_main_thread() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::getpid() == libc::gettid() }
}

/// The id `tc_self` gave the main thread (0: none yet): the one thread not created here that can
/// be joined (POSIX allows it; glibc's join waits until main has ended).
pub(super) static MAIN_ID: AtomicU64 = AtomicU64::new(0);

/// Frees the id of a thread not created here (given by `tc_self`) when the thread ends: its
/// thread-local destructor. `MY_ID` (no destructor) keeps the id, so a `tc_self` in a later
/// thread-local destructor (a key destructor, say) returns the same id, by then stale (`ESRCH`)
/// rather than a new slot that nothing would free.
struct ForeignId;

impl Drop for ForeignId {
    fn drop(&mut self) {
        registry().release(MY_ID.get());
    }
}

thread_local! {
    static FOREIGN_ID: ForeignId = const { ForeignId };
}

/// `pthread_self`: the calling thread's id. A thread not created here gets one on first use,
/// freed when the thread ends (its thread-local destructors), after which the id is stale.
#[no_mangle]
pub extern "C" fn tc_self() -> u64 {
    let mut id = MY_ID.get();
    if id == 0 {
        id = give_id(|| Some(registry()), true);
    }
    // SAFETY: no preconditions.
    public(id, unsafe { libc::pthread_self() })
}

/// Gives the calling thread, not created here and without an id, its id (0 if `lock`, which
/// takes the registry lock, finds it busy: `foreign::enter`, which must never wait for it),
/// freed by a thread-local destructor when the thread ends if `freed_at_end` (the main thread's,
/// given before `main`, lives as long as the process: see `threads::know_main_thread`).
pub(super) fn give_id(
    lock: impl FnOnce() -> Option<MutexGuard<'static, Registry>>,
    freed_at_end: bool,
) -> u64 {
    // A thread that code built without the header created, whose cancellation was the C
    // library's (`system_owned.rs`), is the library's from now on, as any other.
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    let owned = thread_cancel::c_abi::own_system_thread();
    let canceler = thread_cancel::current();
    // SAFETY: no preconditions; the slot is freed before the thread ends.
    let native = unsafe { libc::pthread_self() };
    let Some(mut reg) = lock() else {
        return 0;
    };
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    if owned {
        reg.system_owned.remove(&system_id(native));
    }
    let Some(id) = reg.alloc(Entry {
        canceler: Some(canceler.clone()),
        handle: None,
        detached: false,
        ended: false,
        foreign: true,
        native: Some(Native(native)),
        left_in_parent: false,
        stack: None,
    }) else {
        eprintln!("thread-cancel: out of memory for pthread_self's id; aborting");
        std::process::abort()
    };
    MY_ID.set(id);
    // A cancel sent to this thread's system id before it was known (`tc_cancel`): taken now,
    // acted on at the point the thread is entering (or its next one).
    let mut canceled = false;
    if let Some(i) = reg
        .pending
        .iter()
        .position(|p| p.native == system_id(native))
    {
        let p = reg.pending.swap_remove(i);
        PENDING.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: no preconditions.
        let me = unsafe { libc::gettid() };
        canceled = p.alive.is_none_or(|alive| alive.contains(&me));
    }
    if is_main_thread() {
        MAIN_ID.store(id, Ordering::Relaxed);
    }
    // Registers the destructor that frees the slot. If the thread is so far into its teardown
    // that it can no longer register one, the id is freed at once (stale from the start).
    drop(reg);
    if freed_at_end && FOREIGN_ID.try_with(|_| ()).is_err() {
        registry().release(id);
    }
    if canceled {
        let _ = canceler.cancel();
    }
    id
}

/// `pthread_equal`: also true for one of our ids and the system id of the same thread not
/// created here (a `std::thread`'s `native_handle()` and its `pthread_self()`).
#[no_mangle]
pub extern "C" fn tc_equal(a: u64, b: u64) -> i32 {
    if a == b {
        return 1;
    }
    // On glibc every id the program holds is the thread's system id.
    if SYSTEM_IDS || is_ours(a) == is_ours(b) {
        return 0;
    }
    let (ours, system) = if is_ours(a) { (a, b) } else { (b, a) };
    i32::from(registry().find_native(system) == Some(ours))
}
