//! Interleaved sampling: one sample of each series per round, in an order shuffled afresh each
//! round, so that machine noise (a frequency change, a neighbour on the host) hits every series
//! alike, and so does what a series leaves behind for the next one (a thread that slept, a
//! cache another series filled): no series always follows the same other one. A series may
//! ask for fewer samples than the others (an expensive one, such as the cancel of 10,000
//! threads): its samples are then spread evenly over the rounds.
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
/// exactly `t` times, evenly spread. Within a round the series are taken in an order shuffled
/// for that round (by a fixed seed: the same plans give the same order, run after run).
/// `progress(r, R)` is called before each round.
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
    let mut order: Vec<usize> = (0..k).collect();
    let mut rng = SplitMix(0x7468_7265_6164_2d63);
    for r in 0..rounds {
        progress(r, rounds);
        rng.shuffle(&mut order);
        for &i in &order {
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

/// SplitMix64: a small generator for the rounds' order (no dependency for a shuffle).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Fisher–Yates.
    fn shuffle(&mut self, v: &mut [usize]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_gets_its_samples_and_no_series_always_follows_the_same_one() {
        let plans = [
            Plan {
                warmup: 2,
                samples: 398,
            },
            Plan {
                warmup: 0,
                samples: 400,
            },
            Plan {
                warmup: 1,
                samples: 99,
            },
            Plan {
                warmup: 0,
                samples: 400,
            },
        ];
        let mut calls = [0usize; 4];
        let mut trace = Vec::new();
        let series = interleave(
            &plans,
            |i| -> Result<f64, ()> {
                calls[i] += 1;
                trace.push(i);
                Ok(calls[i] as f64)
            },
            |_, _| {},
        )
        .unwrap();
        assert_eq!(calls, [400, 400, 100, 400]);
        assert_eq!(series[0].kept.len(), 398);
        assert_eq!(
            series[2].kept,
            (2..=100).map(|v| v as f64).collect::<Vec<_>>()
        );
        // No series mostly follows one other (a rotated fixed cycle gives each series the same
        // predecessor in all rounds but one in four here).
        for i in [0, 1, 3] {
            let before: Vec<usize> = trace
                .windows(2)
                .filter(|w| w[1] == i)
                .map(|w| w[0])
                .collect();
            let most = (0..4)
                .map(|p| before.iter().filter(|&&b| b == p).count())
                .max()
                .unwrap();
            assert!(
                most * 2 < before.len(),
                "series {i} follows one series {most} times in {}",
                before.len()
            );
        }
    }
}
