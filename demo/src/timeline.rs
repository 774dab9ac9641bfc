//! What a flood records and is made of: the two classes of applications,
//! when each was submitted, started and finished, and what a target shows
//! while the flood runs. The other modules read it; it reads none of them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When each application was submitted, started and finished, in
/// nanoseconds since the flood began. Written once per slot.
pub struct Timeline {
    epoch: Instant,
    pub submitted: Vec<AtomicU64>,
    pub started: Vec<AtomicU64>,
    pub finished: Vec<AtomicU64>,
}

impl Timeline {
    pub fn new(jobs: usize) -> Timeline {
        let zeros = || (0..jobs).map(|_| AtomicU64::new(0)).collect();
        Timeline {
            epoch: Instant::now(),
            submitted: zeros(),
            started: zeros(),
            finished: zeros(),
        }
    }

    pub fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Of the applications of `class` that have started so far, the 99th
    /// percentile of their waits (zero before any has started).
    pub fn p99_wait_so_far(&self, classes: &[Class], class: Class) -> Duration {
        let mut waits: Vec<u64> = (0..classes.len())
            .filter(|&i| classes[i] == class)
            .filter_map(|i| {
                let started = self.started[i].load(Ordering::Relaxed);
                (started != 0)
                    .then(|| started.saturating_sub(self.submitted[i].load(Ordering::Relaxed)))
            })
            .collect();
        waits.sort_unstable();
        quantile(&waits, 0.99)
    }

    /// Per class, the applications submitted and not yet started, and
    /// those finished.
    pub fn counts(&self, classes: &[Class]) -> ([usize; 2], [u64; 2]) {
        let (mut queued, mut done) = ([0usize; 2], [0u64; 2]);
        for (i, &class) in classes.iter().enumerate() {
            let submitted = self.submitted[i].load(Ordering::Relaxed) != 0;
            let started = self.started[i].load(Ordering::Relaxed) != 0;
            if submitted && !started {
                queued[class as usize] += 1;
            }
            if self.finished[i].load(Ordering::Relaxed) != 0 {
                done[class as usize] += 1;
            }
        }
        (queued, done)
    }
}

/// What a target shows while the flood runs, per class (priority,
/// standard) and for its threads.
pub struct Live {
    pub queued: [usize; 2],
    pub done: [u64; 2],
    pub threads: usize,
    pub busy: usize,
}

/// The two classes of the flood.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Priority,
    Standard,
}

impl Class {
    pub fn label(self) -> &'static str {
        match self {
            Class::Priority => "priority",
            Class::Standard => "standard",
        }
    }
}

/// Which application is which: one priority application after every
/// `ratio` standard ones.
pub fn classes(jobs: usize, ratio: usize) -> Vec<Class> {
    (0..jobs)
        .map(|i| {
            if i % (ratio + 1) == ratio {
                Class::Priority
            } else {
                Class::Standard
            }
        })
        .collect()
}

/// The `q` quantile (0 to 1) of `sorted` nanoseconds, zero if empty.
pub fn quantile(sorted: &[u64], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Duration::from_nanos(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_priority_application_per_ratio_standard_ones() {
        let c = classes(10, 4);
        assert_eq!(c.iter().filter(|&&x| x == Class::Priority).count(), 2);
        assert_eq!(c[4], Class::Priority);
        assert_eq!(c[9], Class::Priority);
    }
}
