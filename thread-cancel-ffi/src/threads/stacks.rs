//! glibc: the stacks of the threads `tc_create` makes, owned by the library, so that a thread's
//! id — glibc's own `pthread_t`, the address of the thread's descriptor, which glibc places at
//! the top of the stack it is given — never names a later thread.
//!
//! glibc reuses a joined thread's stack, and with it its descriptor and its `pthread_t`, for the
//! next thread of the same size. Here a stack is mapped by the library (with its guard pages)
//! and given to `pthread_create` through the attribute (`pthread_attr_setstack`); once its
//! thread has been joined (by the program, or here for a detached one: `pthread_tryjoin_np`
//! once it has ended) the stack is given to a later thread with its top moved down by glibc's
//! static-TLS alignment, which moves the descriptor down by as much: every thread a stack ever
//! carries has a lower id than the one before. A stack whose room for that runs out (its
//! [`slack`] used up) or that the cache has no room for ([`CACHE`]) is retired: its memory is
//! given back, its address space kept (`PROT_NONE`), so that no later mapping, glibc's stacks
//! included, ever puts a descriptor there. Every address a stack ever had stays in [`Stacks`]:
//! an id inside one that no live thread has is stale (`ESRCH`), never another thread's.
//!
//! A stack the caller gives (`pthread_attr_setstack`) is the caller's: glibc's id, reused as the
//! caller reuses the stack.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Room above the stack size the program asks for, used up by glibc's static-TLS alignment (64
/// bytes on x86-64) per thread before the stack is retired: an eighth of the stack size, from
/// 64 KiB to 1 MiB (16,384 threads per 8 MiB stack on x86-64, 576 bytes of address space kept
/// per thread; 1,024 per 64 KiB stack). The memory of the room used up is given back as the top
/// moves down.
fn slack(size: usize) -> usize {
    (size / 8).clamp(64 * 1024, 1024 * 1024)
}

/// At most this many bytes of free stacks are kept for later threads (glibc's own cache size);
/// a stack joined beyond it is retired.
const CACHE: usize = 40 * 1024 * 1024;

/// A stack of the library's: `[base, base + len)`, its lowest `guard` bytes `PROT_NONE`.
struct Block {
    len: usize,
    guard: usize,
    /// The guard size the program asked for (glibc reports it as it was asked).
    asked_guard: usize,
    /// The stack size the program asked for (the attribute's, or glibc's default).
    size: usize,
    /// The top of the stack of the thread on it, or of the next one.
    top: usize,
    /// The id of the last thread it carried (0: none yet).
    last_id: u64,
    /// That thread was detached and has ended (join and detach of its id: `EINVAL`, as glibc).
    last_ended_detached: bool,
}

/// A stack given to a new thread: what `pthread_attr_setstack` takes, and the block's base.
#[derive(Clone, Copy)]
pub(super) struct Taken {
    pub(super) base: usize,
    pub(super) addr: *mut libc::c_void,
    pub(super) size: usize,
}

/// Every stack the library ever mapped (retired ones included), by base address.
pub(super) struct Stacks {
    all: BTreeMap<usize, Block>,
    /// Free stacks by (stack size, guard size).
    free: BTreeMap<(usize, usize), Vec<usize>>,
    free_bytes: usize,
    /// Detached threads that have ended, joined here before their stacks are reused: (system
    /// id, base).
    to_reap: Vec<(libc::pthread_t, usize)>,
}

extern "C" {
    fn pthread_attr_getstackaddr(
        attr: *const libc::pthread_attr_t,
        addr: *mut *mut libc::c_void,
    ) -> i32;
    fn pthread_getattr_default_np(attr: *mut libc::pthread_attr_t) -> i32;
}

/// glibc's static-TLS alignment: its `pthread_t` moves down by as much as the stack's top (and it
/// rounds a stack size down to it). Found once, before any registry lock is taken (the lookup takes the loader's lock,
/// which a thread holding the registry lock must never wait for).
pub(super) fn step() -> usize {
    static STEP: AtomicUsize = AtomicUsize::new(0);
    let s = STEP.load(Ordering::Relaxed);
    if s != 0 {
        return s;
    }
    type InfoFn = unsafe extern "C" fn(*mut usize, *mut usize);
    // SAFETY: a nul-terminated name; the lookup only reads it.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_dl_get_tls_static_info".as_ptr()) };
    let align = if f.is_null() {
        // Not found (a loader without it): a page, more than any static-TLS alignment in use.
        4096
    } else {
        let (mut size, mut align) = (0usize, 0usize);
        // SAFETY: the dynamic loader's function of this signature (the sanitizers' runtimes
        // call it too): it writes the two sizes.
        unsafe { std::mem::transmute::<*mut libc::c_void, InfoFn>(f)(&mut size, &mut align) };
        align
    };
    let s = align.max(16).next_power_of_two();
    executable();
    STEP.store(s, Ordering::Relaxed);
    s
}

/// The stack size and guard size a new thread asks for: `attr`'s, or glibc's defaults; `None` if
/// `attr` gives a stack of the caller's (glibc places the thread there, and its id is glibc's).
///
/// # Safety
/// `attr` is null or an initialised attribute object.
pub(super) unsafe fn wanted(attr: *const libc::pthread_attr_t) -> Option<(usize, usize)> {
    let (mut size, mut guard) = (0usize, 0usize);
    if attr.is_null() {
        // SAFETY: plain data, initialised by the call before it is read, then destroyed.
        let mut d: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
        // SAFETY: `d` is writable; once initialised, the getters read it and it is destroyed.
        unsafe {
            if pthread_getattr_default_np(&mut d) != 0 {
                return None;
            }
            libc::pthread_attr_getstacksize(&d, &mut size);
            libc::pthread_attr_getguardsize(&d, &mut guard);
            libc::pthread_attr_destroy(&mut d);
        }
    } else {
        let mut addr = std::ptr::null_mut();
        // SAFETY: `attr` is an initialised attribute object (the caller's contract); the
        // getters write locals.
        unsafe {
            pthread_attr_getstackaddr(attr, &mut addr);
            if !addr.is_null() {
                return None;
            }
            libc::pthread_attr_getstacksize(attr, &mut size);
            libc::pthread_attr_getguardsize(attr, &mut guard);
        }
    }
    Some((size, guard))
}

/// Whether thread stacks must be executable, as glibc decides for its own: an object loaded at
/// start whose `PT_GNU_STACK` asks for it, or that has none (GCC's nested functions put code on
/// the stack). Looked up once, before the registry lock is taken ([`step`] is called first;
/// the lookup takes the loader's lock); a library loaded later that asks for it (glibc 2.41
/// refuses to load one) does not make the library's stacks executable.
pub(super) fn executable() -> bool {
    // 0: not looked up; 1: no; 2: yes.
    static EXEC: AtomicUsize = AtomicUsize::new(0);
    match EXEC.load(Ordering::Relaxed) {
        0 => {}
        v => return v == 2,
    }
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid `info` whose program headers are readable, and our
        // `data`, a `bool`.
        unsafe {
            let info = &*info;
            let name = if info.dlpi_name.is_null() {
                &b""[..]
            } else {
                std::ffi::CStr::from_ptr(info.dlpi_name).to_bytes()
            };
            // The kernel's vDSO is not the program's.
            if name.starts_with(b"linux-vdso") || name.starts_with(b"linux-gate") {
                return 0;
            }
            let headers = std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into());
            let stack = headers.iter().find(|h| h.p_type == libc::PT_GNU_STACK);
            if stack.is_none_or(|h| h.p_flags & libc::PF_X != 0) {
                *data.cast::<bool>() = true;
            }
        }
        0
    }
    let mut exec = false;
    // SAFETY: `each` matches the callback's signature and only reads what it is given;
    // `exec` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut exec).cast()) };
    EXEC.store(if exec { 2 } else { 1 }, Ordering::Relaxed);
    exec
}

fn page() -> usize {
    // SAFETY: no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

impl Stacks {
    pub(super) const fn new() -> Stacks {
        Stacks {
            all: BTreeMap::new(),
            free: BTreeMap::new(),
            free_bytes: 0,
            to_reap: Vec::new(),
        }
    }

    /// A stack for a new thread asking for `size` bytes of stack and `asked_guard` of guard:
    /// a free one of those sizes, else a new mapping; `EAGAIN` if memory runs out (as glibc's
    /// `pthread_create` when its `mmap` fails).
    pub(super) fn take(&mut self, size: usize, asked_guard: usize) -> Result<Taken, i32> {
        self.reap();
        let page = page();
        let guard = asked_guard.div_ceil(page) * page;
        let size = size.max(libc::PTHREAD_STACK_MIN);
        let key = (size, guard);
        let base = match self.free.get_mut(&key).and_then(Vec::pop) {
            Some(base) => {
                self.free_bytes -= self.all[&base].len;
                base
            }
            None => self.map(size, guard, asked_guard)?,
        };
        let b = self.all.get_mut(&base).expect("a stack of ours");
        b.asked_guard = asked_guard;
        Ok(Taken {
            base,
            addr: (base + b.guard) as *mut libc::c_void,
            size: b.top - (base + b.guard),
        })
    }

    fn map(&mut self, size: usize, guard: usize, asked_guard: usize) -> Result<usize, i32> {
        let page = page();
        let len = guard + size.div_ceil(page) * page + slack(size);
        let exec = if executable() { libc::PROT_EXEC } else { 0 };
        // SAFETY: a new private anonymous mapping, as glibc maps its own stacks.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE | exec,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(libc::EAGAIN);
        }
        // SAFETY: the low `guard` bytes of the mapping just made.
        if guard > 0 && unsafe { libc::mprotect(p, guard, libc::PROT_NONE) } != 0 {
            // SAFETY: the mapping just made, used by nothing.
            unsafe { libc::munmap(p, len) };
            return Err(libc::EAGAIN);
        }
        let base = p as usize;
        self.all.insert(
            base,
            Block {
                len,
                guard,
                asked_guard,
                size,
                top: base + len,
                last_id: 0,
                last_ended_detached: false,
            },
        );
        Ok(base)
    }

    /// The thread `id` has started on the stack at `base`: its id is lower than every earlier
    /// one the stack carried (the top moved down by at least glibc's alignment).
    pub(super) fn started(&mut self, base: usize, id: u64) {
        let b = self.all.get_mut(&base).expect("a stack of ours");
        let inside = (base as u64..(base + b.len) as u64).contains(&id);
        if !inside || (b.last_id != 0 && id >= b.last_id) {
            // The C library did not place the descriptor as this module expects: an id could
            // name two threads. Never silently.
            eprintln!(
                "thread-cancel: the C library placed thread {id:#x} where an earlier thread's \
                 id may have been (stack {base:#x}); aborting"
            );
            std::process::abort();
        }
        b.last_id = id;
        b.last_ended_detached = false;
    }

    /// No thread was created on the stack at `base` (`pthread_create` failed): free again, its
    /// top where it was (no id was given out there).
    pub(super) fn unused(&mut self, base: usize) {
        let b = &self.all[&base];
        self.free_bytes += b.len;
        self.free.entry((b.size, b.guard)).or_default().push(base);
    }

    /// The thread on the stack at `base` has been joined (the C library is done with it): the
    /// stack serves a later thread, its top lower, or is retired.
    pub(super) fn joined(&mut self, base: usize) {
        let step = step();
        let b = self.all.get_mut(&base).expect("a stack of ours");
        let page = page();
        let old = b.top;
        b.top -= step;
        // The whole pages above the new top (the descriptors and thread-local storage of the
        // threads before) are never used again: their memory goes back.
        let (dead_from, dead_to) = (b.top.div_ceil(page) * page, old.div_ceil(page) * page);
        if dead_from < dead_to {
            // SAFETY: pages of our mapping that no thread uses (above the top of the next
            // thread's stack); only their contents are dropped.
            unsafe {
                libc::madvise(
                    dead_from as *mut libc::c_void,
                    dead_to - dead_from,
                    libc::MADV_DONTNEED,
                )
            };
        }
        if b.top - (base + b.guard) < b.size || self.free_bytes + b.len > CACHE {
            // SAFETY: the whole mapping is ours and no thread runs on it: its memory is given
            // back, its addresses kept, inaccessible. If that fails, it stays as it is.
            unsafe {
                libc::mmap(
                    base as *mut libc::c_void,
                    b.len,
                    libc::PROT_NONE,
                    libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            return;
        }
        self.free_bytes += b.len;
        self.free.entry((b.size, b.guard)).or_default().push(base);
    }

    /// The detached thread `native` on the stack at `base` has ended its work: joined here (at
    /// a later `take`) once the C library is done with it.
    pub(super) fn ended_detached(&mut self, native: libc::pthread_t, base: usize) {
        if let Some(b) = self.all.get_mut(&base) {
            b.last_ended_detached = true;
        }
        // Out of memory: the stack is not reused (nor is its id).
        if self.to_reap.try_reserve(1).is_ok() {
            self.to_reap.push((native, base));
        }
    }

    fn reap(&mut self) {
        let mut i = 0;
        while i < self.to_reap.len() {
            let (t, base) = self.to_reap[i];
            // SAFETY: a joinable thread of ours (`CJoinHandle::into_unjoined`), joined once:
            // removed from the list when joined.
            if unsafe { libc::pthread_tryjoin_np(t, std::ptr::null_mut()) } == 0 {
                self.to_reap.swap_remove(i);
                self.joined(base);
            } else {
                i += 1;
            }
        }
    }

    fn block_of(&self, id: u64) -> Option<(usize, &Block)> {
        let id = usize::try_from(id).ok()?;
        let (&base, b) = self.all.range(..=id).next_back()?;
        (id < base + b.len).then_some((base, b))
    }

    /// Whether `id` lies in a stack of the library's (then, if no live thread has it, it is
    /// stale: it never names another thread).
    pub(super) fn owns(&self, id: u64) -> bool {
        self.block_of(id).is_some()
    }

    /// Whether `id` was the last thread of its stack and a detached one that has ended.
    pub(super) fn was_detached_and_ended(&self, id: u64) -> bool {
        self.block_of(id)
            .is_some_and(|(_, b)| b.last_id == id && b.last_ended_detached)
    }

    /// What glibc would report for the stack of the thread at `base`, had it made the stack:
    /// (stack address, stack size, guard size) as `pthread_attr_setstack` and
    /// `pthread_attr_setguardsize` take them.
    pub(super) fn reported(&self, base: usize) -> Option<(*mut libc::c_void, usize, usize)> {
        let b = self.all.get(&base)?;
        // glibc rounds the size down to its static-TLS alignment.
        let size = b.size & !(step() - 1);
        Some(((b.top - size) as *mut libc::c_void, size, b.asked_guard))
    }

    /// In a forked child: the detached threads of the parent are not here (their stacks stay
    /// in use, never reused).
    pub(super) fn forked(&mut self) {
        self.to_reap.clear();
    }
}
