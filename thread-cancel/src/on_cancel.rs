//! `on_cancel`: run a callback in the canceling thread, to make a foreign blocking call return.

use crate::control::Control;
use crate::current::current_control;
use crate::point::runs;
use std::marker::PhantomData;
use std::sync::Arc;

/// While the returned guard lives, the first cancellation request for the calling thread runs
/// `f` once, in the thread that calls `cancel` (like C++'s `std::stop_callback`). If a request
/// is already pending, `f` runs at once, here. Use it to make a blocking call that is not a
/// cancellation point return (shut a socket down, close a foreign handle, signal a condition),
/// so the thread reaches its next point.
///
/// `f` runs whatever the cancel state: a disabled thread is woken, and holds the request.
///
/// Registered inside [`CancelScope::run`](crate::CancelScope::run), `f` also runs when the
/// scope of that run (or of an enclosing run) is canceled, or its deadline passes — once, in
/// the canceling thread, or, for a deadline, on a thread the crate starts for the callbacks it
/// owes (never on the thread that keeps the process's deadlines: a slow callback delays no
/// other deadline; keep them short all the same), or at once here if one is already canceled.
/// A callback registered outside every run is only for the thread's own cancellation: a
/// scope's cancel never runs it. A run whose callback ran reports its cancel as acted on
/// ([`Canceled::acted`](crate::Canceled::acted)) when the guard is dropped inside it, even if
/// the call the callback ended returned normally.
///
/// A callback belongs to the runs it was registered in: a scope's cancel runs it only while
/// its run of that scope is in progress (never for a later run), and a run whose callback a
/// cancel decided to run does not return before the callback has run to its end — so a run
/// whose callback fired never returns `Ok`. The cancel's own thread (or the crate's callback
/// thread, for a deadline) runs it; if the guard is dropped after the cancel was decided but
/// before that thread reached the callback, it runs at the end of the canceled run, on the
/// run's thread, after the closure has returned. When the run's own thread is the one that
/// notices its deadline (in a wait of the crate's), the callbacks also run at the end of the
/// run, not inside the wait.
///
/// Dropping the guard never waits for a callback running in another thread: it returns at
/// once, and it is the end of the run that waits. So a callback that blocks on something the
/// run holds (a lock taken inside the run) does not deadlock: the run unwinds, releases it,
/// and its end waits for the callback. A callback registered while the run is already
/// canceled runs at once, here: it must not wait for anything the registering code holds.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel::<()>();
/// let res = thread_cancel::with_timeout(std::time::Duration::from_millis(10), move || {
///     let _g = thread_cancel::on_cancel(move || {
///         let _ = tx.send(()); // what ends the blocking call below
///     });
///     rx.recv().unwrap(); // std's recv is not a cancellation point: only the callback ends it
///     thread_cancel::testcancel(); // acts here
/// });
/// assert!(res.is_err());
/// ```
///
/// # Panics in `f`
///
/// A panic in `f` does not escape: it is reported by the panic hook (by default, printed to
/// standard error with its message, like any panic) and caught, so `cancel()` returns normally
/// and every other callback still runs (one of them may be what unblocks the thread). The
/// same holds when `f` runs at once here: `on_cancel` returns normally. Only a termination of
/// the calling thread itself begun inside `f` (a cancellation point that acts, an
/// [`exit`](crate::exit)) goes on, once the other callbacks have run.
///
/// ```
/// let h = thread_cancel::spawn(|| {
///     let _a = thread_cancel::on_cancel(|| panic!("reported by the panic hook, then caught"));
///     let _b = thread_cancel::on_cancel(|| println!("still runs"));
///     loop { thread_cancel::sleep(std::time::Duration::MAX) }
/// });
/// # std::thread::sleep(std::time::Duration::from_millis(20));
/// assert_eq!(h.cancel(), Ok(())); // does not panic
/// assert!(h.join().is_canceled());
/// ```
///
/// ```
/// use std::net::{TcpListener, Shutdown};
/// let listener = TcpListener::bind("127.0.0.1:0").unwrap();
/// let addr = listener.local_addr().unwrap();
/// let h = thread_cancel::spawn(move || {
///     let (stream, _) = listener.accept().unwrap();
///     let s2 = stream.try_clone().unwrap();
///     let _g = thread_cancel::on_cancel(move || { let _ = s2.shutdown(Shutdown::Both); });
///     let mut buf = [0u8; 16];
///     let _ = std::io::Read::read(&mut &stream, &mut buf); // std read: returns 0 on shutdown
///     thread_cancel::testcancel();
/// });
/// let _client = std::net::TcpStream::connect(addr).unwrap();
/// std::thread::sleep(std::time::Duration::from_millis(20));
/// h.cancel().unwrap();
/// assert!(h.join().is_canceled());
/// ```
#[must_use = "the callback is unregistered when the guard is dropped"]
pub fn on_cancel<F: FnOnce() + Send + 'static>(f: F) -> OnCancelGuard {
    let control = current_control();
    let id = control.add_callback(Box::new(f), runs::run_count(), || {
        runs::own_canceled_run_depth()
    });
    if id.is_none() {
        // It ran at once: a run of a canceled scope reports the cancel as acted on.
        runs::mark_acted();
    }
    OnCancelGuard {
        control,
        id,
        _not_send: PhantomData,
    }
}

/// [`on_cancel`] for the calling thread's own cancellation only (registered outside every run:
/// a scope's cancel never runs it). For the C ABI's waits in code that handles no error.
#[cfg(feature = "c-abi")]
pub(crate) fn on_thread_cancel<F: FnOnce() + Send + 'static>(f: F) -> OnCancelGuard {
    let control = current_control();
    let id = control.add_callback(Box::new(f), 0, || None);
    OnCancelGuard {
        control,
        id,
        _not_send: PhantomData,
    }
}

/// Unregisters an [`on_cancel`] callback when dropped (if it has not run).
#[derive(Debug)]
pub struct OnCancelGuard {
    control: Arc<Control>,
    id: Option<u64>,
    _not_send: PhantomData<*const ()>,
}

impl Drop for OnCancelGuard {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        match self.control.remove_callback(id) {
            None => {
                // It ran (or runs now, in the canceling thread: the run's end waits for it):
                // what it does is what makes a call that is not a point return, so the canceled
                // runs report the cancel as acted on, not as missed.
                runs::mark_acted();
            }
            Some((registered_in, f)) => {
                // Still registered: if a cancel of a run it was registered in has been decided
                // (the scope is marked before its delivery takes the callbacks), that delivery
                // has not come yet, and would find it gone. It is run at the end of the
                // canceled run (its closure has returned then), so that it is never lost; not
                // here, where the run may hold what it waits for. Dropping a guard never waits.
                match runs::own_canceled_run_depth() {
                    Some(d) if d < registered_in => {
                        self.control.defer_callback(d, f);
                        runs::mark_acted();
                    }
                    _ => drop(f),
                }
            }
        }
    }
}
