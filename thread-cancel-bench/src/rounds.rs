//! Interleaved sampling: one sample of each series per round, the starting series rotating
//! from round to round, so that machine noise (a frequency change, a neighbour on the host)
//! hits every series alike. A series may ask for fewer samples than the others (an expensive
//! one, such as P6's 10,000 threads): its samples are then spread evenly over the rounds.
//!
//! ```
//! use thread_cancel_bench::rounds::{interleave, Plan};
//! let plans = [Plan { warmup: 1, samples: 4 }, Plan { warmup: 0, samples: 2 }];
//! let mut calls = [0usize; 2];
//! let series = interleave(&plans, |i| -> Result<f64, ()> {
//!     calls[i] += 1;
//!     Ok(calls[i] as f64)
//! }, |_, _| {})
//! .unwrap();
//! assert_eq!(calls, [5, 2]);
//! assert_eq!(series[0].first, Some(1.0));
//! assert_eq!(series[0].kept, [2.0, 3.0, 4.0, 5.0]);
//! assert_eq!(series[1].kept, [1.0, 2.0]);
//! ```

use crate::stats::Stats;

/// How many samples of one series to take and keep, after how many taken and dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Samples taken first and dropped (the first unwind loads the unwinder's caches, the first
    /// threads fault in their stacks' pages, ...).
    pub warmup: usize,
    /// Samples kept.
    pub samples: usize,
}

impl Plan {
    fn total(self) -> usize {
        self.warmup + self.samples
    }
}

/// What one series gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// The first sample of the process (cold caches), warm-up or not.
    pub first: Option<f64>,
    /// The samples kept, in the order taken.
    pub kept: Vec<f64>,
}

impl Series {
    /// The summary of the kept samples (`None` without any).
    pub fn stats(&self) -> Option<Stats> {
        (!self.kept.is_empty()).then(|| Stats::of(self.first.unwrap_or_default(), &self.kept))
    }
}

/// Takes `plans[i].warmup + plans[i].samples` samples of every series `i` with `sample(i)`, in
/// rounds: there are as many rounds as the largest plan has samples in all, and series `i` is
/// sampled in round `r` when `⌊(r + 1) t / R⌋ > ⌊r t / R⌋` (`t` its total, `R` the rounds), so
/// exactly `t` times, evenly spread. Within a round the series are taken in turn, starting
/// from `r mod k`. `progress(r, R)` is called before each round.
///
/// # Errors
///
/// The first error of `sample`, with the series that gave it (the samples stop there).
pub fn interleave<E>(
    plans: &[Plan],
    mut sample: impl FnMut(usize) -> Result<f64, E>,
    mut progress: impl FnMut(usize, usize),
) -> Result<Vec<Series>, (usize, E)> {
    let k = plans.len();
    let rounds = plans.iter().map(|p| p.total()).max().unwrap_or(0);
    let mut out = vec![Series::default(); k];
    let mut taken = vec![0usize; k];
    for r in 0..rounds {
        progress(r, rounds);
        for j in 0..k {
            let i = (r + j) % k;
            let t = plans[i].total();
            if (r + 1) * t / rounds == r * t / rounds {
                continue;
            }
            let v = sample(i).map_err(|e| (i, e))?;
            out[i].first.get_or_insert(v);
            if taken[i] >= plans[i].warmup {
                out[i].kept.push(v);
            }
            taken[i] += 1;
        }
    }
    Ok(out)
}
