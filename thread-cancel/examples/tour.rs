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
                testcancel()
            });
            tx.send(endless.canceler()).unwrap();
            endless.join();
        })
        .unwrap();
    let endless = rx.recv().unwrap();

    // 4. A thread that ends itself with exit(value).
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
    assert!(o1.is_canceled() && o2.is_canceled() && o3.is_canceled());
}
