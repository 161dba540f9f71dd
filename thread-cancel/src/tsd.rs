//! Thread-specific data with destructors: [`Key`].
//!
//! A process-wide registry maps a key's index to its destructor; each thread keeps its values in
//! a thread-local vector indexed the same way. Each key also has a unique id, stored with every
//! value, so a value left behind by a deleted key is never handed to a new key that reuses the
//! index.

use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// At most this many rounds of destructors run at thread exit (`PTHREAD_DESTRUCTOR_ITERATIONS`).
pub const DESTRUCTOR_ITERATIONS: usize = 4;

type Destructor = Arc<dyn Fn(Box<dyn Any>) + Send + Sync>;

struct Entry {
    uid: u64,
    destructor: Destructor,
}

static REGISTRY: Mutex<Vec<Option<Entry>>> = Mutex::new(Vec::new());
static NEXT_UID: AtomicU64 = AtomicU64::new(1);

type Values = RefCell<Vec<Option<(u64, Box<dyn Any>)>>>;

/// The calling thread's values. Its destructor runs the key destructors for threads that the
/// crate did not spawn; spawned threads run them earlier, from their root (see `thread/mod.rs`).
struct Slots(Values);

impl Drop for Slots {
    fn drop(&mut self) {
        run_rounds(&self.0);
    }
}

thread_local! {
    static SLOTS: Slots = const { Slots(RefCell::new(Vec::new())) };
    /// Whether the thread has touched `SLOTS` (whose first use registers its destructor with
    /// the C library, which takes the dynamic loader's lock): a thread that never did has no
    /// value to destroy, and its end must not register anything.
    static USED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn registry() -> std::sync::MutexGuard<'static, Vec<Option<Entry>>> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

fn destructor_of(index: usize, uid: u64) -> Option<Destructor> {
    match registry().get(index) {
        Some(Some(e)) if e.uid == uid => Some(e.destructor.clone()),
        _ => None,
    }
}

/// Runs the destructors of the calling thread's values, in rounds, at most
/// [`DESTRUCTOR_ITERATIONS`]; each slot is cleared before its destructor gets the value. Values
/// still set after the last round are dropped without their destructor.
pub(crate) fn run_destructors() {
    if !USED.with(std::cell::Cell::get) {
        return;
    }
    let _ = SLOTS.try_with(|s| run_rounds(&s.0));
}

fn run_rounds(values: &Values) {
    for _ in 0..DESTRUCTOR_ITERATIONS {
        let mut ran = false;
        let len = values.borrow().len();
        for index in 0..len {
            let taken = values.borrow_mut().get_mut(index).and_then(Option::take);
            let Some((uid, value)) = taken else { continue };
            match destructor_of(index, uid) {
                Some(d) => {
                    ran = true;
                    // A panicking destructor must not stop the others (its hook has reported it).
                    let _ = catch_unwind(AssertUnwindSafe(|| d(value)));
                }
                None => drop(value), // its key was deleted: no destructor (as POSIX)
            }
        }
        if !ran {
            break;
        }
    }
    let rest = std::mem::take(&mut *values.borrow_mut());
    drop(rest);
}

/// A thread-specific data key: each thread sees its own value, and a thread's value is passed to
/// the key's destructor when the thread ends, after its cleanup handlers — whether it
/// returns, is canceled or exits.
///
/// Dropping the `Key` deletes it: values that threads still hold are then dropped without the
/// destructor.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// static FREED: AtomicU32 = AtomicU32::new(0);
/// let key = std::sync::Arc::new(thread_cancel::Key::new(|v: u32| {
///     FREED.fetch_add(v, Ordering::SeqCst);
/// }));
/// let k = key.clone();
/// thread_cancel::spawn(move || { k.set(5); }).join();
/// assert_eq!(FREED.load(Ordering::SeqCst), 5);
/// ```
pub struct Key<T: 'static> {
    index: usize,
    uid: u64,
    _value: PhantomData<fn(T) -> T>,
}

impl<T: 'static> std::fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key").field("index", &self.index).finish()
    }
}

impl<T: 'static> Key<T> {
    /// Creates a key whose destructor receives each thread's value at thread end.
    ///
    /// ```
    /// let key = thread_cancel::Key::new(|v: String| println!("freeing {v}"));
    /// key.set("mine".to_string());
    /// assert_eq!(key.get().as_deref(), Some("mine"));
    /// ```
    pub fn new(destructor: impl Fn(T) + Send + Sync + 'static) -> Self {
        let uid = NEXT_UID.fetch_add(1, Ordering::Relaxed);
        let destructor: Destructor = Arc::new(move |b: Box<dyn Any>| {
            if let Ok(v) = b.downcast::<T>() {
                destructor(*v);
            }
        });
        let mut reg = registry();
        let entry = Some(Entry { uid, destructor });
        let index = match reg.iter().position(Option::is_none) {
            Some(i) => {
                reg[i] = entry;
                i
            }
            None => {
                reg.push(entry);
                reg.len() - 1
            }
        };
        Self {
            index,
            uid,
            _value: PhantomData,
        }
    }

    /// Sets the calling thread's value, returning the previous one.
    ///
    /// ```
    /// let key = thread_cancel::Key::new(|_: u8| {});
    /// assert_eq!(key.set(1), None);
    /// assert_eq!(key.set(2), Some(1));
    /// ```
    pub fn set(&self, value: T) -> Option<T> {
        self.replace(Some(Box::new(value)))
    }

    /// Removes and returns the calling thread's value; its destructor does not run.
    ///
    /// ```
    /// let key = thread_cancel::Key::new(|_: u8| unreachable!());
    /// key.set(3);
    /// assert_eq!(key.take(), Some(3));
    /// assert_eq!(key.take(), None);
    /// ```
    pub fn take(&self) -> Option<T> {
        self.replace(None)
    }

    /// Calls `f` with the calling thread's value. `f` may use the key (set or take) itself.
    ///
    /// ```
    /// let key = thread_cancel::Key::new(|_: Vec<u8>| {});
    /// key.set(vec![1, 2, 3]);
    /// assert_eq!(key.with(|v| v.map_or(0, Vec::len)), 3);
    /// ```
    pub fn with<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> R {
        let mine = self.take();
        let r = f(mine.as_ref());
        if let Some(v) = mine {
            // Put it back unless `f` stored a new value meanwhile.
            if let Some(newer) = self.replace(Some(Box::new(v))) {
                self.set(newer);
            }
        }
        r
    }

    /// A clone of the calling thread's value.
    ///
    /// ```
    /// let key = thread_cancel::Key::new(|_: u8| {});
    /// assert_eq!(key.get(), None);
    /// key.set(9);
    /// assert_eq!(key.get(), Some(9));
    /// ```
    pub fn get(&self) -> Option<T>
    where
        T: Clone,
    {
        self.with(|v| v.cloned())
    }

    fn replace(&self, value: Option<Box<dyn Any>>) -> Option<T> {
        USED.with(|u| u.set(true));
        let old = SLOTS
            .try_with(|s| {
                let mut v = s.0.borrow_mut();
                if v.len() <= self.index {
                    v.resize_with(self.index + 1, || None);
                }
                std::mem::replace(&mut v[self.index], value.map(|b| (self.uid, b)))
            })
            .ok()
            .flatten()?;
        match old {
            (uid, b) if uid == self.uid => b.downcast::<T>().ok().map(|b| *b),
            _ => None, // a deleted key's leftover: dropped here
        }
    }
}

impl<T: 'static> Drop for Key<T> {
    fn drop(&mut self) {
        let mut reg = registry();
        if let Some(e) = reg.get_mut(self.index) {
            if e.as_ref().is_some_and(|e| e.uid == self.uid) {
                *e = None;
            }
        }
    }
}
