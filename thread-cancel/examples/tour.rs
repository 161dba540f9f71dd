//! A tour of thread-cancel: threads that are canceled where they stand, their cleanup handlers,
//! their thread-specific data destructors, and what join reports.
//!
//! Run: `cargo run --release --example tour`

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thread_cancel::{
    cleanup_push, current, disable, exit, spawn, testcancel, Builder, Key, Outcome,
};

/// When each thread's first cleanup handler ran, to report the cancel latency.
type Stamp = Arc<Mutex<Option<Instant>>>;

fn stamp() -> Stamp {
    Arc::new(Mutex::new(None))
}

fn describe<T: std::fmt::Debug>(o: &Outcome<T>) -> String {
    match o {
        Outcome::Returned(v) => format!("returned {v:?}"),
        Outcome::Exited(v) => format!("exited with {v:?}"),
        Outcome::Canceled => "canceled".into(),
        Outcome::Panicked(_) => "panicked".into(),
    }
}

fn main() {
    println!("thread-cancel tour\n");
    let freed = Arc::new(Mutex::new(Vec::<String>::new()));
    let f = freed.clone();
    let buffers = Arc::new(Key::new(move |v: Vec<u8>| {
        f.lock().unwrap().push(format!("{} bytes", v.len()))
    }));

    // 1. A compute loop with a cancellation point in it.
    let t1 = stamp();
    let (s, k) = (t1.clone(), buffers.clone());
    let cruncher = Builder::new()
        .name("cruncher".into())
        .spawn(move || {
            k.set(vec![0; 4096]);
            let _g = cleanup_push(move || *s.lock().unwrap() = Some(Instant::now()));
            let mut x = 1u64;
            loop {
                for _ in 0..1000 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
                testcancel();
            }
        })
        .unwrap();

    // 2. A critical section with cancellation disabled: the request waits for it.
    let t2 = stamp();
    let s = t2.clone();
    let in_section = Arc::new(AtomicBool::new(false));
    let finished_section = Arc::new(AtomicBool::new(false));
    let (i, fin) = (in_section.clone(), finished_section.clone());
    let careful = Builder::new()
        .name("careful".into())
        .spawn(move || {
            let _g = cleanup_push(move || *s.lock().unwrap() = Some(Instant::now()));
            {
                let _d = disable();
                i.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(30)); // the request arrives in here
                fin.store(true, Ordering::SeqCst);
            }
            loop {
                testcancel();
            }
        })
        .unwrap();

    // 3. A thread blocked in join (a cancellation point) on a thread that never ends by itself.
    let t3 = stamp();
    let s = t3.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let joiner = Builder::new()
        .name("joiner".into())
        .spawn(move || {
            let _g = cleanup_push(move || *s.lock().unwrap() = Some(Instant::now()));
            let endless = spawn(|| loop {
                thread_cancel::sleep(Duration::from_millis(1))
            });
            tx.send(endless.canceler()).unwrap();
            endless.join();
        })
        .unwrap();
    let endless = rx.recv().unwrap();

    // 4. Threads blocked in a sleep, a channel receive and a condition wait.
    // A reader blocked in read(2) on a pipe, and a server blocked in accept(2).
    let reader_t = stamp();
    let s = reader_t.clone();
    let (pipe_r, mut pipe_w) = std::io::pipe().unwrap();
    let got = Arc::new(Mutex::new(0usize));
    let g = got.clone();
    let reader = spawn(move || {
        use std::io::Read;
        let _g = cleanup_push(move || *s.lock().unwrap() = Some(Instant::now()));
        let mut r = thread_cancel::io::Cancelable::new(pipe_r);
        let mut buf = [0u8; 64];
        loop {
            let n = r.read(&mut buf).unwrap();
            *g.lock().unwrap() += n;
        }
    });
    std::io::Write::write_all(&mut pipe_w, b"twelve bytes").unwrap();
    let server_t = stamp();
    let s = server_t.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = spawn(move || {
        let _g = cleanup_push(move || *s.lock().unwrap() = Some(Instant::now()));
        loop {
            let _ = thread_cancel::net::accept_tcp(&listener);
        }
    });

    let sleeper_t = stamp();
    let s = sleeper_t.clone();
    let sleeper = spawn(move || {
        let _g = cleanup_push(move || *s.lock().unwrap() = Some(Instant::now()));
        thread_cancel::sleep(Duration::from_secs(3600));
    });
    let consumer_t = stamp();
    let s = consumer_t.clone();
    let (tx, rx) = thread_cancel::sync::channel::<u32>();
    tx.send(1).unwrap();
    let consumer = spawn(move || {
        let _g = cleanup_push(move || *s.lock().unwrap() = Some(Instant::now()));
        let mut got = 0;
        while rx.recv().is_ok() {
            got += 1; // the message sent before is received; then it blocks
        }
        got
    });
    let waiter_t = stamp();
    let s = waiter_t.clone();
    let pair = Arc::new((
        thread_cancel::sync::Mutex::new(false),
        thread_cancel::sync::Condvar::new(),
    ));
    let p = pair.clone();
    let waiter = spawn(move || {
        let _g = cleanup_push(move || *s.lock().unwrap() = Some(Instant::now()));
        let g = p.0.lock().unwrap();
        let _g = p.1.wait_while(g, |ready| !*ready);
    });

    // 5. A thread that ends itself with exit(value).
    let exiter = spawn(|| -> &'static str {
        let _g = cleanup_push(|| println!("  [exiter] cleanup handler ran on exit()"));
        exit("goodbye")
    });

    while !in_section.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    std::thread::sleep(Duration::from_millis(5));
    let sent = Instant::now();
    cruncher.cancel().unwrap();
    careful.cancel().unwrap();
    joiner.cancel().unwrap();
    std::thread::sleep(Duration::from_millis(5)); // the three below are surely blocked by now
    let sent2 = Instant::now();
    sleeper.cancel().unwrap();
    consumer.cancel().unwrap();
    waiter.cancel().unwrap();
    reader.cancel().unwrap();
    server.cancel().unwrap();

    let latency = |s: &Stamp| match *s.lock().unwrap() {
        Some(t) => format!("{:>8.1?}", t.duration_since(sent)),
        None => "no cleanup".into(),
    };
    let o1 = cruncher.join();
    let o2 = careful.join();
    let o3 = joiner.join();
    println!("  thread    where it was                     outcome   cancel -> first cleanup");
    println!(
        "  cruncher  compute loop with testcancel()  {:<9} {}",
        describe(&o1),
        latency(&t1)
    );
    println!(
        "  careful   disabled section (finished: {}) {:<9} {}",
        finished_section.load(Ordering::SeqCst),
        describe(&o2),
        latency(&t2)
    );
    println!(
        "  joiner    blocked in join()                {:<9} {}",
        describe(&o3),
        latency(&t3)
    );
    let latency2 = |s: &Stamp| match *s.lock().unwrap() {
        Some(t) => format!("{:>8.1?}", t.duration_since(sent2)),
        None => "no cleanup".into(),
    };
    let (o4, o5, o6) = (sleeper.join(), consumer.join(), waiter.join());
    println!(
        "  sleeper   sleep(1 hour)                    {:<9} {}",
        describe(&o4),
        latency2(&sleeper_t)
    );
    println!(
        "  consumer  channel recv (after 1 message)   {:<9} {}",
        describe(&o5),
        latency2(&consumer_t)
    );
    println!(
        "  waiter    Condvar::wait_while              {:<9} {}",
        describe(&o6),
        latency2(&waiter_t)
    );
    println!(
        "            the condvar's mutex is free and not poisoned: {}",
        pair.0.try_lock().is_ok()
    );
    let (o7, o8) = (reader.join(), server.join());
    println!(
        "  reader    read(2) on a pipe                {:<9} {}  (12 bytes sent, {} read)",
        describe(&o7),
        latency2(&reader_t),
        got.lock().unwrap()
    );
    println!(
        "  server    accept(2) on 127.0.0.1           {:<9} {}",
        describe(&o8),
        latency2(&server_t)
    );
    drop(tx);
    println!(
        "  exiter    called exit(\"goodbye\")           {}",
        describe(&exiter.join())
    );
    println!(
        "  endless   still running after its joiner was canceled: {}",
        !endless.is_finished()
    );
    endless.cancel().unwrap();
    while !endless.is_finished() {
        std::thread::yield_now();
    }
    println!(
        "\n  thread-specific data destructors ran for: {:?}",
        freed.lock().unwrap()
    );
    println!("  a stale handle answers: {:?}", endless.cancel());
    println!(
        "  the main thread can be canceled too: {:?}",
        current().cancel().map(|_| "queued")
    );
    let _still_here = disable(); // ... but we keep it from acting.
    assert!([
        o1.is_canceled(),
        o2.is_canceled(),
        o3.is_canceled(),
        o4.is_canceled()
    ]
    .iter()
    .all(|c| *c));
    assert!(o5.is_canceled() && o6.is_canceled() && o7.is_canceled() && o8.is_canceled());
}
