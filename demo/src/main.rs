//! The demonstration: threads blocked in real places — `accept(2)` and `read(2)` on loopback
//! TCP, a full bounded channel, a condition wait, an empty channel, a sleep — and a compute loop
//! in an asynchronous region are canceled one by one. Each reports where it was blocked (and what the kernel said it was doing), the
//! cleanup that ran, the cancel latency (the `cancel()` call to its first cleanup handler) and
//! what `join` reported. Then the books are balanced: as many descriptors open as before, and
//! every byte and message sent was either received or is still queued.
//!
//! Then operation-level cancellation: a server whose request handlers run each request in a
//! `CancelScope` with a deadline. One client asks for more than the deadline allows and gets a
//! timeout answer; another leaves mid-request, a watcher sees the hang-up and cancels that
//! request's scope; both handler threads carry on and serve the next requests.
//!
//! Then the reach (the demo is built with the feature `interpose`): std's `TcpStream::read`,
//! `thread::sleep` and `Command::output`, a crates.io HTTP client and zlib from the
//! distribution, each inside `with_timeout`, end at the deadline with an error; the bytes a
//! canceled read did not take are still there and the canceled command's child is killed.
//!
//! Run: `cargo run --release -p thread-cancel-demo` (exit status 1 if anything leaked or was
//! lost, a reply included).

mod reach;

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use thread_cancel::io::Cancelable;
use thread_cancel::sync::{channel, sync_channel, Condvar, Mutex, MutexGuard, Receiver};
use thread_cancel::{cleanup_push, Builder, JoinHandle, Key, Outcome};

/// Long enough for a loaded machine; a healthy run waits a few milliseconds at most.
const PATIENCE: Duration = Duration::from_secs(10);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What one thread tells the report: where it is, and what ran while it was canceled.
struct Probe {
    name: &'static str,
    /// Kernel thread id, to ask `/proc/self/task/<tid>/syscall` where the thread waits.
    tid: AtomicI32,
    /// Where the thread is now: set just before each blocking call.
    at: Mutex<String>,
    /// `at` as the first cleanup handler saw it.
    blocked_in: Mutex<String>,
    /// The cleanup that ran, in order.
    cleanup: Mutex<Vec<String>>,
    first_cleanup: OnceLock<Instant>,
}

impl Probe {
    fn new(name: &'static str) -> Arc<Self> {
        Arc::new(Self {
            name,
            tid: AtomicI32::new(0),
            at: Mutex::new("(starting)".into()),
            blocked_in: Mutex::new(String::new()),
            cleanup: Mutex::new(Vec::new()),
            first_cleanup: OnceLock::new(),
        })
    }

    /// First thing in the thread.
    fn enter(&self) {
        // SAFETY: `gettid` has no preconditions.
        self.tid.store(unsafe { libc::gettid() }, Ordering::SeqCst);
    }

    fn at(&self, place: impl Into<String>) {
        *lock(&self.at) = place.into();
    }

    /// The body of the cleanup handler each thread pushes last, so that it runs first.
    fn handler(&self, note: &str) {
        self.first_cleanup.get_or_init(Instant::now);
        *lock(&self.blocked_in) = lock(&self.at).clone();
        self.ran(format!("handler{note}"));
    }

    fn ran(&self, what: String) {
        lock(&self.cleanup).push(what);
    }

    /// The system call the thread is in now, as the kernel reports it.
    fn kernel_wait(&self) -> String {
        let tid = self.tid.load(Ordering::SeqCst);
        let path = format!("/proc/self/task/{tid}/syscall");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        match text.split_whitespace().next() {
            Some("running") => "running".into(),
            Some(nr) => nr.parse().map_or("?".into(), syscall_name),
            None => "?".into(),
        }
    }

    /// Waits (at most a second) until the kernel shows the thread blocked in `syscall`; just
    /// a moment if the kernel does not say.
    fn settle(&self, syscall: &str) {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let now = self.kernel_wait();
            if now == syscall || Instant::now() >= deadline {
                return;
            }
            if now == "?" {
                std::thread::sleep(Duration::from_millis(20));
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn syscall_name(nr: libc::c_long) -> String {
    match nr {
        libc::SYS_read => "read".into(),
        libc::SYS_accept4 => "accept4".into(),
        libc::SYS_futex => "futex".into(),
        libc::SYS_recvfrom => "recvfrom".into(),
        libc::SYS_ppoll => "ppoll".into(),
        n => format!("syscall {n}"),
    }
}

/// A value whose `Drop` reports to its thread's probe: the unwind runs destructors.
struct Tracked<T> {
    value: T,
    what: &'static str,
    probe: Arc<Probe>,
}

impl<T> Tracked<T> {
    fn new(value: T, what: &'static str, probe: &Arc<Probe>) -> Self {
        let probe = probe.clone();
        Self { value, what, probe }
    }
}

impl<T> Drop for Tracked<T> {
    fn drop(&mut self) {
        self.probe.ran(format!("Drop {}", self.what));
    }
}

/// Sets its flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Spawns a named cancelable thread.
fn start<T: Send + 'static>(
    name: &'static str,
    f: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    Builder::new()
        .name(name.into())
        .spawn(f)
        .expect("spawn a thread")
}

/// Waits (bounded) for `cond`; false if it never held.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        if Instant::now() >= deadline {
            eprintln!("demo: gave up waiting for {what}");
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// One line of the report.
struct Row {
    name: &'static str,
    blocked_in: String,
    kernel: String,
    cleanup: String,
    latency: String,
    join: String,
    canceled: bool,
}

/// Cancels the thread, joins it, and reads its probe.
fn cancel_and_join<T>(p: &Probe, h: JoinHandle<T>) -> Row {
    let kernel = p.kernel_wait();
    let sent = Instant::now();
    let queued = h.cancel();
    let finished = h.wait_timeout(PATIENCE);
    let join = match (queued, finished) {
        (Err(e), _) => format!("cancel failed: {e}"),
        (Ok(()), false) => "still running".into(),
        (Ok(()), true) => match h.join() {
            Outcome::Returned(_) => "Returned".into(),
            Outcome::Exited(_) => "Exited".into(),
            Outcome::Canceled => "Canceled".into(),
            Outcome::Panicked(_) => "Panicked".into(),
        },
    };
    let latency = match p.first_cleanup.get() {
        Some(t) => format!("{:.1?}", t.saturating_duration_since(sent)),
        None => "-".into(),
    };
    Row {
        name: p.name,
        blocked_in: lock(&p.blocked_in).clone(),
        kernel,
        cleanup: lock(&p.cleanup).join(", "),
        latency,
        canceled: join == "Canceled",
        join,
    }
}

/// A connection's server side as the acceptor hands it over.
struct Conn {
    reader: JoinHandle<io::Result<()>>,
    probe: Arc<Probe>,
    received: Arc<AtomicU64>,
    /// A second descriptor for the same socket: what is still queued is read through it.
    audit: TcpStream,
}

/// One line of the books.
fn check(ok: &mut bool, what: &str, line: String, good: bool) {
    println!(
        "  {what:<16}  {line:<52}  {}",
        if good { "ok" } else { "LOST" }
    );
    *ok &= good;
}

fn main() {
    let started = Instant::now();
    let fds_before = open_fds();
    let mut ok = true;

    // The server: an acceptor blocked in accept(2); it gives each connection to a reader.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    let (conn_tx, conn_rx) = std::sync::mpsc::channel::<Conn>();
    let acceptor_p = Probe::new("acceptor");
    let p = acceptor_p.clone();
    let acceptor = start("acceptor", move || -> io::Result<()> {
        p.enter();
        let listener = Tracked::new(listener, "TcpListener", &p);
        let _h = cleanup_push(|| p.handler(""));
        for i in 1u32.. {
            p.at(format!("net::accept_tcp on :{}", addr.port()));
            let (stream, _) = thread_cancel::net::accept_tcp(&listener.value)?;
            let audit = stream.try_clone()?;
            // reader-1 reads as fast as it can; reader-2 takes 5 ms over each 256 bytes.
            let pace = (i == 2).then(|| Duration::from_millis(5));
            let name = if i == 1 { "reader-1" } else { "reader-2" };
            let probe = Probe::new(name);
            let received = Arc::new(AtomicU64::new(0));
            let (rp, r) = (probe.clone(), received.clone());
            let reader = start(name, move || -> io::Result<()> {
                rp.enter();
                let mut conn = Tracked::new(Cancelable::new(stream), "TcpStream", &rp);
                let _h = cleanup_push(|| rp.handler(""));
                let mut buf = [0u8; 256];
                loop {
                    let total = r.load(Ordering::SeqCst);
                    rp.at(format!("Cancelable::read ({total} B in)"));
                    let n = conn.value.read(&mut buf)?;
                    if n == 0 {
                        return Ok(());
                    }
                    let total = r.fetch_add(n as u64, Ordering::SeqCst) + n as u64;
                    if let Some(pace) = pace {
                        rp.at(format!("sleep after read ({total} B in)"));
                        thread_cancel::sleep(pace);
                    }
                }
            });
            let conn = Conn {
                reader,
                probe,
                received,
                audit,
            };
            if conn_tx.send(conn).is_err() {
                break;
            }
        }
        Ok(())
    });

    // A producer that fills a bounded channel, and a consumer that takes one message per
    // credit and waits on a condition variable for the next credit.
    let (tx, rx) = sync_channel::<u64>(4);
    let rx = Arc::new(rx);
    let sent = Arc::new(AtomicU64::new(0));
    let producer_p = Probe::new("producer");
    let (p, s) = (producer_p.clone(), sent.clone());
    let producer = start("producer", move || {
        p.enter();
        let tx = Tracked::new(tx, "SyncSender", &p);
        let _h = cleanup_push(|| p.handler(""));
        for n in 1u64.. {
            p.at(format!("SyncSender::send #{n}"));
            if tx.value.send(n).is_err() {
                break;
            }
            s.fetch_add(1, Ordering::SeqCst);
        }
    });
    let credit = Arc::new((Mutex::new(0u32), Condvar::new()));
    let received = Arc::new(AtomicU64::new(0));
    let consumer_p = Probe::new("consumer");
    let (p, c, r, rx2) = (
        consumer_p.clone(),
        credit.clone(),
        received.clone(),
        rx.clone(),
    );
    let consumer = start("consumer", move || {
        p.enter();
        let rx = Tracked::new(rx2, "Arc<Receiver>", &p);
        let (m, cv) = &*c;
        // The canceled wait re-acquired the mutex first, and its guard, inside `wait_while`,
        // released it as the unwind left: the handler can lock it, and it is not poisoned.
        let _h = cleanup_push(|| {
            p.first_cleanup.get_or_init(Instant::now);
            let credit = m.try_lock().map(|g| *g);
            p.handler(&match credit {
                Ok(c) => format!(" (mutex free, credit {c})"),
                Err(_) => " (mutex unavailable)".into(),
            })
        });
        loop {
            {
                p.at("Condvar::wait_while (no credit)");
                let g = lock(m);
                let mut g = cv
                    .wait_while(g, |c| *c == 0)
                    .unwrap_or_else(|e| e.into_inner());
                *g -= 1;
            }
            p.at("Receiver::recv");
            if rx.value.recv().is_err() {
                break;
            }
            r.fetch_add(1, Ordering::SeqCst);
        }
    });

    // A mailbox thread blocked in recv on an empty channel.
    let (mail_tx, mail_rx) = channel::<String>();
    let mail_rx: Arc<Receiver<String>> = Arc::new(mail_rx);
    let mail_got = Arc::new(AtomicU64::new(0));
    let mailbox_p = Probe::new("mailbox");
    let (p, r, g) = (mailbox_p.clone(), mail_rx.clone(), mail_got.clone());
    let mailbox = start("mailbox", move || {
        p.enter();
        let rx = Tracked::new(r, "Arc<Receiver>", &p);
        let _h = cleanup_push(|| p.handler(""));
        loop {
            p.at("Receiver::recv (empty)");
            if rx.value.recv().is_err() {
                break;
            }
            g.fetch_add(1, Ordering::SeqCst);
        }
    });

    // A sleeper holding a buffer, and a thread-specific value whose destructor reports.
    let key = Arc::new(Key::new(|p: Arc<Probe>| p.ran("TSD destructor".into())));
    let sleeper_p = Probe::new("sleeper");
    let (p, k) = (sleeper_p.clone(), key.clone());
    let sleeper = start("sleeper", move || {
        p.enter();
        k.set(p.clone());
        let _buf = Tracked::new(vec![0u8; 1 << 20], "Vec (1 MiB)", &p);
        let _h = cleanup_push(|| p.handler(""));
        p.at("thread_cancel::sleep(1 h)");
        thread_cancel::sleep(Duration::from_secs(3600));
    });

    // The client: two connections, and some traffic on everything.
    let mut c1 = TcpStream::connect(addr).expect("connect");
    let mut c2 = TcpStream::connect(addr).expect("connect");
    let mut conns: Vec<Conn> = Vec::new();
    for _ in 0..2 {
        match conn_rx.recv_timeout(PATIENCE) {
            Ok(c) => conns.push(c),
            Err(e) => {
                eprintln!("demo: the acceptor handed over no connection: {e}");
                std::process::exit(1);
            }
        }
    }
    // Match each server side to its client by address (accept order is not relied on).
    let c1_addr = c1.local_addr().ok();
    conns.sort_by_key(|c| c.audit.peer_addr().ok() != c1_addr);
    let (conn1, conn2) = {
        let mut it = conns.into_iter();
        (it.next().unwrap(), it.next().unwrap())
    };
    let mail_sent = 3u64;
    for i in 0..mail_sent {
        mail_tx
            .send(format!("letter {i}"))
            .expect("mailbox is alive");
    }
    *lock(&credit.0) = 6;
    credit.1.notify_all();
    let payload = [b'x'; 4096];
    c1.write_all(&payload).expect("send to reader-1");
    let c1_sent = payload.len() as u64;

    // Everything reaches its blocking call: all of conn 1 read, 6 messages taken and 4 queued
    // behind them, the mailbox emptied.
    let r1 = &conn1.received;
    ok &= wait_for("reader-1 to read 4 KiB", || {
        r1.load(Ordering::SeqCst) == c1_sent
    });
    ok &= wait_for("10 messages sent, 6 received", || {
        received.load(Ordering::SeqCst) == 6 && sent.load(Ordering::SeqCst) == 10
    });
    ok &= wait_for("the mailbox to get 3 letters", || {
        mail_got.load(Ordering::SeqCst) == mail_sent
    });
    acceptor_p.settle("accept4");
    conn1.probe.settle("read");
    for p in [&producer_p, &consumer_p, &mailbox_p, &sleeper_p] {
        p.settle("futex");
    }
    // A compute loop with no cancellation point at all, in an asynchronous region: a request
    // stops it at whatever instruction it is at. (Started last and canceled first: it keeps a
    // CPU busy.)
    let progress = Arc::new(AtomicU64::new(0));
    let cruncher_p = Probe::new("cruncher");
    let (p, prog) = (cruncher_p.clone(), progress.clone());
    let cruncher = start("cruncher", move || {
        p.enter();
        let _table = Tracked::new(vec![0u64; 512], "Vec (outside)", &p);
        let inside_dropped = AtomicBool::new(false);
        let _h = cleanup_push(|| {
            p.first_cleanup.get_or_init(Instant::now);
            p.handler(if inside_dropped.load(Ordering::SeqCst) {
                " (Drop inside the region ran?)"
            } else {
                " (no Drop inside the region)"
            })
        });
        p.at("async_region: loop, no point");
        let marker = SetOnDrop(&inside_dropped);
        let prog: &AtomicU64 = &prog;
        // SAFETY: the loop holds no resources: it allocates nothing, takes no lock, does no
        // I/O; it does arithmetic and stores to an atomic that outlives the region. `marker`
        // only borrows a flag: that its `Drop` is skipped when the frames are abandoned is
        // what the handler reports.
        unsafe {
            thread_cancel::async_region(move || {
                let _marker = marker;
                let mut x = 1u64;
                loop {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    prog.store(x | 1, Ordering::Relaxed);
                }
            })
        }
    });
    ok &= wait_for("the cruncher to start", || {
        progress.load(Ordering::Relaxed) != 0
    });

    // reader-2 gets 4 KiB but reads it slowly: it is canceled part way through.
    c2.write_all(&payload).expect("send to reader-2");
    let c2_sent = payload.len() as u64;
    let r2 = &conn2.received;
    ok &= wait_for("reader-2 to read 512 B", || {
        r2.load(Ordering::SeqCst) >= 512
    });

    let rows = [
        cancel_and_join(&cruncher_p, cruncher),
        cancel_and_join(&acceptor_p, acceptor),
        cancel_and_join(&conn1.probe, conn1.reader),
        cancel_and_join(&conn2.probe, conn2.reader),
        cancel_and_join(&producer_p, producer),
        cancel_and_join(&consumer_p, consumer),
        cancel_and_join(&mailbox_p, mailbox),
        cancel_and_join(&sleeper_p, sleeper),
    ];
    println!(
        "thread-cancel demo: {} threads, blocked or computing, each canceled and joined\n",
        rows.len()
    );
    let head = Row {
        name: "thread",
        blocked_in: "where it was".into(),
        kernel: "kernel".into(),
        cleanup: "cleanup that ran, in order".into(),
        latency: "latency".into(),
        join: "join".into(),
        canceled: true,
    };
    let w = |f: fn(&Row) -> usize| rows.iter().chain([&head]).map(f).max().unwrap_or(0);
    let widths = [
        w(|r| r.name.len()),
        w(|r| r.blocked_in.chars().count()),
        w(|r| r.kernel.len()),
        w(|r| r.cleanup.chars().count()),
        w(|r| r.latency.chars().count()),
    ];
    for r in [&head].into_iter().chain(&rows) {
        println!(
            "  {:<w0$}  {:<w1$}  {:<w2$}  {:<w3$}  {:>w4$}  {}",
            r.name,
            r.blocked_in,
            r.kernel,
            r.cleanup,
            r.latency,
            r.join,
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4],
        );
        ok &= r.canceled;
    }
    println!("  kernel: the system call /proc/self/task/<tid>/syscall showed just before cancel()");
    println!("  latency: from the cancel() call to the thread's first cleanup handler\n");

    // The books. Whatever a read did not return is still in the socket: close the client's
    // sending side and read the server side to its end.
    println!("books");
    let queued_bytes = |client: &TcpStream, audit: &mut TcpStream| -> Option<u64> {
        client.shutdown(Shutdown::Write).ok()?;
        audit.set_read_timeout(Some(PATIENCE)).ok()?;
        let mut rest = Vec::new();
        audit.read_to_end(&mut rest).ok()?;
        Some(rest.len() as u64)
    };
    let mut audit1 = conn1.audit;
    let mut audit2 = conn2.audit;
    for (what, sent, received, queued) in [
        (
            "tcp connection 1",
            c1_sent,
            conn1.received.load(Ordering::SeqCst),
            queued_bytes(&c1, &mut audit1),
        ),
        (
            "tcp connection 2",
            c2_sent,
            conn2.received.load(Ordering::SeqCst),
            queued_bytes(&c2, &mut audit2),
        ),
    ] {
        let q = queued.unwrap_or(u64::MAX);
        let line = format!("{sent} B sent = {received} received + {} still queued", q);
        check(
            &mut ok,
            what,
            line,
            queued.is_some() && sent == received + q,
        );
    }
    let mut still = 0u64;
    while rx.try_recv().is_ok() {
        still += 1;
    }
    let (s, r) = (sent.load(Ordering::SeqCst), received.load(Ordering::SeqCst));
    let line = format!("{s} messages sent = {r} received + {still} still queued");
    check(&mut ok, "sync_channel(4)", line, s == r + still);
    let mut mail_still = 0u64;
    while mail_rx.try_recv().is_ok() {
        mail_still += 1;
    }
    let got = mail_got.load(Ordering::SeqCst);
    let line = format!("{mail_sent} messages sent = {got} received + {mail_still} still queued");
    check(&mut ok, "channel", line, mail_sent == got + mail_still);
    let free = credit.0.try_lock().is_ok() && !credit.0.is_poisoned();
    check(&mut ok, "condvar mutex", "free, not poisoned".into(), free);

    drop((c1, c2, audit1, audit2, mail_tx, rx, mail_rx, conn_rx));
    let fds_after = open_fds();
    let line = format!("{fds_before} open before, {fds_after} after");
    check(&mut ok, "descriptors", line, fds_before == fds_after);

    ok &= scoped_server();
    ok &= reach::run();

    let secs = started.elapsed().as_secs_f64();
    if ok {
        println!("\nnothing leaked, nothing lost ({secs:.2} s)");
    } else {
        println!("\nSOMETHING LEAKED OR WAS LOST ({secs:.2} s)");
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------------------------------------
// Operation-level cancellation: request handlers with a deadline, clients that leave.

/// The deadline of every request.
const REQUEST_DEADLINE: Duration = Duration::from_millis(100);

/// A backend that answers a query after the time it asks for (unless the demo shuts it down):
/// the handler waits for it in a blocking `read(2)` on a Unix socket.
#[derive(Default)]
struct Backend {
    shut_down: std::sync::Mutex<bool>,
    wake: std::sync::Condvar,
    threads: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl Backend {
    /// Starts a query that takes `time`; the handler's end of the connection.
    fn query(self: &Arc<Self>, time: Duration) -> io::Result<std::os::unix::net::UnixStream> {
        let (mine, mut theirs) = std::os::unix::net::UnixStream::pair()?;
        let me = self.clone();
        let t = std::thread::Builder::new()
            .name("backend".into())
            .spawn(move || {
                let g = me.shut_down.lock().unwrap_or_else(|e| e.into_inner());
                let (g, _) = me
                    .wake
                    .wait_timeout_while(g, time, |down| !*down)
                    .unwrap_or_else(|e| e.into_inner());
                if !*g {
                    // The handler may have given up and closed its end: then this fails.
                    let _ = theirs.write_all(b"answer\n");
                }
            })?;
        self.threads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(t);
        Ok(mine)
    }

    fn shut_down(&self) {
        *self.shut_down.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

/// What the watcher is told.
enum Watch {
    /// Cancel `scope` when the client on `socket` hangs up.
    Add(usize, TcpStream, thread_cancel::CancelScope),
    /// The request `id` is over.
    Remove(usize),
}

/// The watcher: blocks in `poll` on every client socket of a request in progress (and a wake-up
/// pipe); a hang-up cancels that request's scope.
fn watcher(
    rx: std::sync::mpsc::Receiver<Watch>,
    wake: std::io::PipeReader,
    hangups: std::sync::mpsc::Sender<(usize, Instant)>,
) {
    use std::os::fd::AsRawFd;
    let mut watched: Vec<(usize, TcpStream, thread_cancel::CancelScope)> = Vec::new();
    loop {
        loop {
            match rx.try_recv() {
                Ok(Watch::Add(id, s, scope)) => watched.push((id, s, scope)),
                Ok(Watch::Remove(id)) => watched.retain(|w| w.0 != id),
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
            }
        }
        let mut fds: Vec<libc::pollfd> = std::iter::once(wake.as_raw_fd())
            .chain(watched.iter().map(|w| w.1.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN | libc::POLLRDHUP,
                revents: 0,
            })
            .collect();
        if thread_cancel::io::poll(&mut fds, -1).is_err() {
            continue;
        }
        if fds[0].revents != 0 {
            let _ = (&wake).read(&mut [0u8; 64]);
        }
        let mut gone = Vec::new();
        for (fd, w) in fds[1..].iter().zip(&watched) {
            if fd.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0 {
                let seen = Instant::now();
                w.2.cancel();
                let _ = hangups.send((w.0, seen));
                gone.push(w.0);
            }
        }
        watched.retain(|w| !gone.contains(&w.0));
    }
}

/// What a handler did with one request.
struct Served {
    client: usize,
    handler: String,
    /// How the run ended.
    result: Result<(), thread_cancel::Canceled>,
    /// When the request was read, and when its run returned.
    began: Instant,
    ended: Instant,
    deadline: Option<Instant>,
    /// Whether the backend connection's `Drop` ran inside the run.
    backend_closed: bool,
}

/// A handler thread: for each connection, reads one request (`query <ms>`), runs it in a scope
/// with a deadline, registered with the watcher, and answers.
fn handler(
    conns: std::sync::mpsc::Receiver<(usize, TcpStream)>,
    backend: Arc<Backend>,
    watch: std::sync::mpsc::Sender<Watch>,
    wake: std::io::PipeWriter,
    served: std::sync::mpsc::Sender<Served>,
) {
    use std::io::BufRead;
    for (client, stream) in conns {
        // The request is the only line a client sends: nothing past it is lost with this buffer.
        let mut line = String::new();
        if io::BufReader::new(&stream).read_line(&mut line).is_err() {
            continue;
        }
        let began = Instant::now();
        let ms: u64 = line
            .trim()
            .strip_prefix("query ")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let scope = thread_cancel::CancelScope::with_timeout(REQUEST_DEADLINE);
        let watched = stream.try_clone().ok();
        if let Some(s) = watched {
            let _ = watch.send(Watch::Add(client, s, scope.clone()));
            let _ = (&wake).write_all(b"+");
        }
        let closed = std::cell::Cell::new(false);
        let result = scope.run(|| {
            /// The backend connection: its `Drop` runs when the request is canceled.
            struct Conn<'a>(
                Cancelable<std::os::unix::net::UnixStream>,
                &'a std::cell::Cell<bool>,
            );
            impl Drop for Conn<'_> {
                fn drop(&mut self) {
                    self.1.set(true);
                }
            }
            let _ = (&stream).write_all(b"102 processing\n");
            let mut conn = Conn(
                Cancelable::new(backend.query(Duration::from_millis(ms))?),
                &closed,
            );
            let mut answer = [0u8; 16];
            conn.0.read(&mut answer) // blocks in read(2): a cancellation point
        });
        let ended = Instant::now();
        let _ = watch.send(Watch::Remove(client));
        let _ = (&wake).write_all(b"-");
        let reply = match &result {
            Ok(Ok(_)) => format!("200 answered after {:.1?}\n", ended - began),
            Ok(Err(e)) => format!("500 {e}\n"),
            Err(e) if e.deadline_passed() => format!("504 {e}\n"),
            Err(_) => String::new(), // the client left: nobody to answer
        };
        let _ = (&stream).write_all(reply.as_bytes());
        let _ = served.send(Served {
            client,
            handler: std::thread::current().name().unwrap_or("?").to_string(),
            result: result
                .map(|_| ())
                .map_err(thread_cancel::Canceled::without_value),
            began,
            ended,
            deadline: scope.deadline(),
            backend_closed: closed.get(),
        });
    }
}

/// A client's connection, read through one buffer for its whole life: a reader made per line
/// would lose what its read took beyond the line (two replies can arrive in one segment).
type Client = io::BufReader<TcpStream>;

/// A client: sends `query <ms>` and returns the connection.
fn ask(addr: std::net::SocketAddr, ms: u64) -> io::Result<Client> {
    let mut c = TcpStream::connect(addr)?;
    c.set_read_timeout(Some(PATIENCE))?;
    c.write_all(format!("query {ms}\n").as_bytes())?;
    Ok(io::BufReader::new(c))
}

/// Reads the next line from `c` (empty if none came within [`PATIENCE`]).
fn answer(c: &mut Client) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    let _ = c.read_line(&mut line);
    line.trim().to_string()
}

/// The scoped server: returns whether everything happened as it should.
fn scoped_server() -> bool {
    println!(
        "\na server whose request handlers have a deadline ({REQUEST_DEADLINE:?}) and whose \
         clients can leave mid-request"
    );
    let fds_before = open_fds();
    let mut ok = true;
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    let backend = Arc::new(Backend::default());
    let (watch_tx, watch_rx) = std::sync::mpsc::channel();
    let (wake_r, wake_w) = std::io::pipe().expect("a pipe");
    let (hup_tx, hup_rx) = std::sync::mpsc::channel();
    let watcher = std::thread::Builder::new()
        .name("watcher".into())
        .spawn(move || watcher(watch_rx, wake_r, hup_tx))
        .expect("spawn the watcher");
    let (served_tx, served_rx) = std::sync::mpsc::channel();
    // Two handler threads, plain `std` threads: each runs its requests in scopes.
    let mut to_handler = Vec::new();
    let mut handlers = Vec::new();
    for name in ["handler-a", "handler-b"] {
        let (tx, rx) = std::sync::mpsc::channel();
        let (b, w, s) = (backend.clone(), watch_tx.clone(), served_tx.clone());
        let wake = wake_w.try_clone().expect("clone the wake-up pipe");
        handlers.push(
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || handler(rx, b, w, wake, s))
                .expect("spawn a handler"),
        );
        to_handler.push(tx);
    }
    drop((watch_tx, served_tx));
    let dispatch = |client: usize, h: usize| {
        let (s, _) = listener.accept().expect("accept");
        to_handler[h].send((client, s)).expect("a handler");
    };
    let served = || served_rx.recv_timeout(PATIENCE).ok();

    // Client 1 asks for a 10 s query: its handler's read of the backend is interrupted at the
    // deadline, and the client gets a timeout answer.
    let sent1 = Instant::now();
    let mut c1 = ask(addr, 10_000).expect("client 1");
    dispatch(1, 0);
    // Client 2 asks for the same, and leaves once its handler works on it.
    let mut c2 = ask(addr, 10_000).expect("client 2");
    dispatch(2, 1);
    let processing2 = answer(&mut c2);
    std::thread::sleep(Duration::from_millis(20));
    let left = Instant::now();
    drop(c2);
    let processing1 = answer(&mut c1);
    let reply1 = answer(&mut c1);
    let got1 = sent1.elapsed();
    let mut results: Vec<Served> = [served(), served()].into_iter().flatten().collect();
    // Then both handlers serve a quick request each. Client 4's two replies are in its socket
    // (often in one segment) by the time client 3's are read.
    let mut c3 = ask(addr, 10).expect("client 3");
    dispatch(3, 0);
    let mut c4 = ask(addr, 10).expect("client 4");
    dispatch(4, 1);
    let quick: Vec<[String; 2]> = [&mut c3, &mut c4]
        .into_iter()
        .map(|c| [answer(c), answer(c)])
        .collect();
    results.extend([served(), served()].into_iter().flatten());
    results.sort_by_key(|r| r.client);
    let hangup = hup_rx.try_recv().ok();

    for r in &results {
        let line = match (r.client, &r.result) {
            (1, Err(e)) if e.deadline_passed() => format!(
                "asked for 10 s: its read(2) of the backend was interrupted, the run \
                 returned {:.1?} after the deadline; the client got \"{reply1}\" after {got1:.1?}",
                r.ended
                    .saturating_duration_since(r.deadline.unwrap_or(r.ended)),
            ),
            (2, Err(e)) if !e.deadline_passed() => format!(
                "asked for 10 s and left after {:.1?}: the watcher saw the hang-up {}, the \
                 handler's run returned {:.1?} after the client left",
                left - r.began,
                hangup.map_or("(not reported)".to_string(), |(_, t)| format!(
                    "{:.1?} after",
                    t.saturating_duration_since(left)
                )),
                r.ended.saturating_duration_since(left),
            ),
            (3 | 4, Ok(())) => format!(
                "asked for 10 ms: \"{}\"",
                quick[r.client - 3][1].trim_start_matches("200 ")
            ),
            (_, res) => {
                ok = false;
                format!("UNEXPECTED: {res:?}")
            }
        };
        let dropped = if r.result.is_err() {
            if r.backend_closed {
                "; Drop closed the backend connection"
            } else {
                "; the backend connection was NOT dropped"
            }
        } else {
            ""
        };
        ok &= r.result.is_ok() || r.backend_closed;
        println!("  client {}  {:<9}  {line}{dropped}", r.client, r.handler);
    }
    // Every reply each client should have had, in order: "102 processing" first; then the
    // timeout answer (client 1), nothing (client 2 left), the answer (clients 3 and 4).
    let replies: [(usize, Vec<&String>, &[&str]); 4] = [
        (1, vec![&processing1, &reply1], &["102 ", "504 "]),
        (2, vec![&processing2], &["102 "]),
        (3, quick[0].iter().collect(), &["102 ", "200 "]),
        (4, quick[1].iter().collect(), &["102 ", "200 "]),
    ];
    for (client, got, want) in replies {
        let good = got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g.starts_with(w));
        let got: Vec<String> = got.iter().map(|g| format!("{g:?}")).collect();
        let what = format!("client {client} replies");
        check(&mut ok, &what, got.join(", "), good);
    }
    ok &= results.len() == 4;
    // The handlers served after being canceled: the two quick requests went to the same threads.
    let survived = results
        .iter()
        .filter(|r| r.client >= 3 && r.result.is_ok())
        .count()
        == 2;
    ok &= survived;

    drop((c1, c3, c4, to_handler));
    for h in handlers {
        ok &= h.join().is_ok();
    }
    let _ = (&wake_w).write_all(b"."); // the watcher sees its channel closed
    drop(wake_w);
    ok &= watcher.join().is_ok();
    backend.shut_down();
    drop((listener, backend));
    let fds_after = open_fds();
    ok &= fds_before == fds_after;
    println!(
        "  {}; descriptors: {fds_before} open before, {fds_after} after",
        if survived {
            "both handler threads survived their canceled requests and served the next ones"
        } else {
            "A HANDLER DID NOT SERVE ITS NEXT REQUEST"
        }
    );
    ok
}
