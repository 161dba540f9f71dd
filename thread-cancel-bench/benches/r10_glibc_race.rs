//! R10 beside glibc: cancel races against a `read` that is returning data, every byte counted
//! (see `thread_cancel_bench::read_race`), for glibc's `read` + `pthread_cancel` and for
//! `thread_cancel::io::read` + `cancel`, interleaved in one run (race `i` of glibc, then race
//! `i` of ours, with the same byte count and jitter). Prints, per side: races, readers
//! canceled, bytes written, bytes lost, and the share of races that lost a byte; then glibc's
//! losses by jitter kind and byte count. Not a timing: a count.
//!
//! `R10_RACES=n` sets the races per side: default 20,000 for a full run (`cargo bench`), 50 for
//! a quick one (`cargo bench -- --test`, `cargo test --benches`). `--list` lists it and exits.
//!
//! Exits with status 1 if ours lost a byte or left a reader uncanceled (R10 is a guarantee of
//! ours; glibc's figures are only reported).

use thread_cancel_bench::read_race::{race, Reader};
use thread_cancel_bench::stats::{env_usize, Mode};

const FULL_RACES: usize = 20_000;
const QUICK_RACES: usize = 50;

/// Totals of one side.
#[derive(Default)]
struct Totals {
    races: usize,
    canceled: usize,
    written: usize,
    lost: usize,
    lossy_races: usize,
    /// Races and lossy races by jitter kind `(i / 3) % 3` and bytes written `1 + i % 3`.
    by_kind: [[(usize, usize); 3]; 3],
}

impl Totals {
    fn add(&mut self, i: usize, r: &thread_cancel_bench::read_race::Race) {
        self.races += 1;
        self.canceled += usize::from(r.canceled);
        self.written += r.written;
        self.lost += r.lost();
        let lossy = r.lost() > 0;
        self.lossy_races += usize::from(lossy);
        let cell = &mut self.by_kind[(i / 3) % 3][i % 3];
        cell.0 += 1;
        cell.1 += usize::from(lossy);
    }
}

fn pct(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn main() {
    let Some(mode) = Mode::for_bench("r10_glibc_race") else {
        return;
    };
    let quick = mode == Mode::Quick;
    let n = env_usize("R10_RACES").unwrap_or(if quick { QUICK_RACES } else { FULL_RACES });

    let sides = [Reader::Glibc, Reader::Ours];
    let mut totals: [Totals; 2] = Default::default();
    let start = std::time::Instant::now();
    for i in 0..n {
        for (side, t) in sides.iter().zip(totals.iter_mut()) {
            let r = race(*side, i).unwrap_or_else(|e| panic!("{} race {i}: {e}", side.name()));
            t.add(i, &r);
        }
    }

    println!();
    println!(
        "R10 races: a reader loops read(pipe, buf, 8) counting bytes; the main thread writes \
         1-3 bytes with jitter, cancels, joins, drains ({n} races per side{}, interleaved, {:.1} s)",
        if quick { ", quick run" } else { "" },
        start.elapsed().as_secs_f64()
    );
    for (side, t) in sides.iter().zip(totals.iter()) {
        println!(
            "{:<32} {} races, {} canceled, {} bytes written, {} bytes lost, {} races lost a \
             byte ({:.2}%)",
            side.name(),
            t.races,
            t.canceled,
            t.written,
            t.lost,
            t.lossy_races,
            pct(t.lossy_races, t.races)
        );
    }
    let g = &totals[0];
    println!("glibc races that lost a byte, by jitter after each write and bytes written:");
    for (kind, name) in ["no pause", "yield", "spin"].iter().enumerate() {
        let cells: Vec<String> = (0..3)
            .map(|b| {
                let (races, lossy) = g.by_kind[kind][b];
                format!(
                    "{} byte(s): {lossy}/{races} ({:.1}%)",
                    b + 1,
                    pct(lossy, races)
                )
            })
            .collect();
        println!("  {:<9} {}", name, cells.join(", "));
    }

    let ours = &totals[1];
    if ours.lost != 0 || ours.canceled != ours.races {
        eprintln!(
            "R10 violated by thread_cancel: {} bytes lost, {} of {} readers canceled",
            ours.lost, ours.canceled, ours.races
        );
        std::process::exit(1);
    }
}
