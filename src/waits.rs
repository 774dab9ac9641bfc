//! How long jobs waited in a lane: a histogram of fixed size per lane,
//! filled by the workers as they start each attempt and read by
//! `metrics()`.
//!
//! The buckets are log-linear, as in HdrHistogram: below 8 ns one bucket
//! per nanosecond, then each power of two split into 8 equal buckets, so a
//! bucket is at most 1/8 of its lower bound wide. Waits of 2^42 ns (73
//! minutes) and more share the last bucket. 320 buckets of 8 bytes: a
//! worker keeps its own per lane (written only by it, no locked
//! instruction, as its other counts in `pool/tally.rs`), and the lane
//! keeps shared ones for the waits no worker records (a job run by a
//! producer helping on a full lane) and for the counts of workers that
//! exited.

use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::owned::OwnedCount;
use std::fmt;
use std::time::Duration;

/// Buckets per power of two (a power of two itself, `1 << SUB_BITS`).
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// The highest power of two with buckets of its own; waits above share
/// the last bucket.
const TOP_EXPONENT: u32 = 41;
/// Buckets in all: `SUB` single nanoseconds, then `SUB` per power of two
/// from `2^SUB_BITS` to `2^TOP_EXPONENT`.
const BUCKETS: usize = (TOP_EXPONENT as usize - SUB_BITS as usize + 2) * SUB;

/// The buckets a histogram allocates: none in loom models, which never
/// record a wait (see `Shared::new`).
const ALLOCATED: usize = if cfg!(loom) { 0 } else { BUCKETS };

/// The bucket of a wait of `ns` nanoseconds.
#[inline]
fn bucket(ns: u64) -> usize {
    if ns < SUB as u64 {
        return ns as usize;
    }
    let exponent = 63 - ns.leading_zeros();
    if exponent > TOP_EXPONENT {
        return BUCKETS - 1;
    }
    let sub = (ns >> (exponent - SUB_BITS)) as usize & (SUB - 1);
    (exponent - SUB_BITS + 1) as usize * SUB + sub
}

/// The highest wait that falls in bucket `index`, in nanoseconds.
fn bucket_high(index: usize) -> u64 {
    if index < SUB {
        return index as u64;
    }
    let exponent = (index / SUB) as u32 + SUB_BITS - 1;
    let low = ((SUB + index % SUB) as u64) << (exponent - SUB_BITS);
    let width = 1u64 << (exponent - SUB_BITS);
    low + width - 1
}

/// One worker's histogram of one lane: written by that worker only.
pub(crate) struct OwnedWaits {
    counts: Box<[OwnedCount]>,
}

impl OwnedWaits {
    pub(crate) fn new() -> OwnedWaits {
        OwnedWaits {
            counts: (0..ALLOCATED).map(|_| OwnedCount::default()).collect(),
        }
    }

    /// Records a wait. Only the owner calls this.
    #[inline]
    pub(crate) fn record(&self, ns: u64) {
        self.counts[bucket(ns)].add_one();
    }

    /// Adds these counts to `into`.
    pub(crate) fn add_to(&self, into: &mut [u64]) {
        for (sum, count) in into.iter_mut().zip(self.counts.iter()) {
            *sum += count.get();
        }
    }

    /// Moves the counts into `shared`, leaving zeros (as the worker exits).
    pub(crate) fn fold_into(&self, shared: &SharedWaits) {
        for (count, to) in self.counts.iter().zip(shared.counts.iter()) {
            let n = count.take();
            if n != 0 {
                // ORDERING: a statistic; nothing is ordered by it.
                to.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}

/// A lane's shared histogram: waits recorded off the workers, and the
/// histograms of workers that exited.
pub(crate) struct SharedWaits {
    counts: Box<[AtomicU64]>,
}

impl SharedWaits {
    pub(crate) fn new() -> SharedWaits {
        SharedWaits {
            counts: (0..ALLOCATED).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Records a wait from any thread.
    pub(crate) fn record(&self, ns: u64) {
        // ORDERING: a statistic; nothing is ordered by it.
        self.counts[bucket(ns)].fetch_add(1, Ordering::Relaxed);
    }

    /// The counts, to which the workers' are then added.
    pub(crate) fn snapshot(&self) -> Vec<u64> {
        // ORDERING: a statistic; nothing is ordered by it.
        self.counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }
}

/// How long a lane's jobs waited before they started: a histogram of every
/// attempt's wait (a retry waits again), from which percentiles are read.
/// Part of [`LaneMetrics`](crate::LaneMetrics).
///
/// The figures are exact to 1/8: a percentile is the highest wait of the
/// bucket it falls in, and a bucket spans at most 1/8 of its lower bound
/// (below 8 ns, one nanosecond). Waits of 73 minutes and more are counted
/// in the last bucket.
///
/// Recorded by an executor built with
/// [`record_waits(true)`](crate::ExecutorBuilder::record_waits): two clock
/// reads per job (at enqueue and as it starts) and one count in the
/// worker's own histogram. Otherwise `WaitTimes` stay empty.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
/// use std::time::Duration;
///
/// let exec = Executor::builder()
///     .record_waits(true)
///     .lane(Priority(1), Capacity::Unbounded)
///     .build()?;
/// for _ in 0..100 {
///     exec.enqueue(Priority(1), || ())?.join()?;
/// }
/// let waits = &exec.metrics().lanes[0].waits;
/// assert_eq!(waits.count(), 100);
/// let (p50, p99) = (waits.percentile(50.0).unwrap(), waits.percentile(99.0).unwrap());
/// assert!(p50 <= p99 && p99 <= waits.max().unwrap());
/// assert!(p99 < Duration::from_secs(60));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
pub struct WaitTimes {
    /// Per bucket; empty when nothing was recorded.
    counts: Vec<u64>,
}

impl WaitTimes {
    /// Made from the counts per bucket (`BUCKETS` of them, or none).
    pub(crate) fn from_counts(counts: Vec<u64>) -> WaitTimes {
        if counts.iter().all(|&c| c == 0) {
            return WaitTimes::default();
        }
        WaitTimes { counts }
    }

    /// The waits recorded.
    ///
    /// # Examples
    ///
    /// See [`WaitTimes`].
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The wait that `percent` percent of the waits recorded were at most
    /// (`percentile(99.0)` is the p99), to within 1/8; `None` if nothing
    /// was recorded. `percent` is clamped to 0..=100.
    ///
    /// # Examples
    ///
    /// See [`WaitTimes`].
    pub fn percentile(&self, percent: f64) -> Option<Duration> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let percent = if percent.is_nan() {
            100.0
        } else {
            percent.clamp(0.0, 100.0)
        };
        // The rank of the wait asked for, counting from 1.
        let rank = ((percent / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Some(Duration::from_nanos(bucket_high(index)));
            }
        }
        None
    }

    /// The waits recorded after `earlier`, a reading of the same lane's
    /// histogram taken before this one: the counts are subtracted bucket by
    /// bucket (saturating at 0), so percentiles of the result are those of
    /// the waits in between, as over a sliding window. Against a reading
    /// of another lane, or a later one, the result means nothing (but is
    /// still a histogram).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .record_waits(true)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()?;
    /// for _ in 0..10 {
    ///     exec.enqueue(Priority(1), || ())?.join()?;
    /// }
    /// let before = exec.metrics().lanes[0].waits.clone();
    /// for _ in 0..5 {
    ///     exec.enqueue(Priority(1), || ())?.join()?;
    /// }
    /// let after = exec.metrics().lanes[0].waits.clone();
    /// assert_eq!(after.count(), 15);
    /// let window = after.since(&before);
    /// assert_eq!(window.count(), 5);
    /// assert!(window.percentile(99.0) <= after.max());
    /// assert_eq!(after.since(&after).percentile(50.0), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn since(&self, earlier: &WaitTimes) -> WaitTimes {
        if earlier.counts.is_empty() {
            return self.clone();
        }
        let counts = self
            .counts
            .iter()
            .zip(&earlier.counts)
            .map(|(&now, &then)| now.saturating_sub(then))
            .collect();
        WaitTimes::from_counts(counts)
    }

    /// The longest wait recorded, to within 1/8 (the p100).
    ///
    /// # Examples
    ///
    /// See [`WaitTimes`].
    pub fn max(&self) -> Option<Duration> {
        self.percentile(100.0)
    }
}

impl fmt::Debug for WaitTimes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitTimes")
            .field("count", &self.count())
            .field("p50", &self.percentile(50.0))
            .field("p99", &self.percentile(99.0))
            .field("max", &self.max())
            .finish()
    }
}

impl fmt::Display for WaitTimes {
    /// `p50 1.2ms p99 4.1ms max 9ms`, or `none` with nothing recorded.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.percentile(50.0), self.percentile(99.0), self.max()) {
            (Some(p50), Some(p99), Some(max)) => {
                write!(f, "p50 {p50:.1?} p99 {p99:.1?} max {max:.1?}")
            }
            _ => f.write_str("none"),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_wait_falls_in_a_bucket_whose_high_end_is_within_an_eighth() {
        let mut samples: Vec<u64> = (0..4096).collect();
        for shift in 0..64 {
            let p = 1u64 << shift;
            samples.extend([p - 1, p, p + 1, p + p / 3, p.saturating_mul(3) / 2]);
        }
        samples.push(u64::MAX);
        for ns in samples {
            let index = bucket(ns);
            assert!(index < BUCKETS, "{ns}");
            let high = bucket_high(index);
            if index == BUCKETS - 1 {
                assert!(ns >= bucket_high(index - 1), "{ns}");
                continue;
            }
            assert!(high >= ns, "{ns} in bucket {index} up to {high}");
            assert!(high - ns <= ns / 8, "{ns} in bucket {index} up to {high}");
            if index > 0 {
                assert!(
                    bucket_high(index - 1) < ns,
                    "{ns} belongs lower than {index}"
                );
            }
        }
    }

    #[test]
    fn percentiles_rank_the_recorded_waits() {
        let shared = SharedWaits::new();
        for ns in 1..=100u64 {
            shared.record(ns * 1000);
        }
        let waits = WaitTimes::from_counts(shared.snapshot());
        assert_eq!(waits.count(), 100);
        let near = |p: f64, want_us: u64| {
            let got = waits.percentile(p).unwrap().as_nanos() as u64;
            let want = want_us * 1000;
            assert!(
                got >= want && got - want <= want / 8,
                "p{p}: {got} for {want}"
            );
        };
        near(50.0, 50);
        near(99.0, 99);
        near(100.0, 100);
        near(0.0, 1);
        assert_eq!(waits.max(), waits.percentile(100.0));
        assert_eq!(waits.percentile(f64::NAN), waits.max());
        assert_eq!(WaitTimes::default().percentile(50.0), None);
        assert_eq!(WaitTimes::default().to_string(), "none");
        assert!(waits.to_string().starts_with("p50 "));
    }

    #[test]
    fn since_subtracts_an_earlier_reading() {
        let shared = SharedWaits::new();
        for _ in 0..10 {
            shared.record(1_000_000);
        }
        let before = WaitTimes::from_counts(shared.snapshot());
        for _ in 0..4 {
            shared.record(3);
        }
        let after = WaitTimes::from_counts(shared.snapshot());
        let window = after.since(&before);
        assert_eq!(window.count(), 4);
        assert_eq!(window.max(), Some(Duration::from_nanos(3)));
        assert!(after.max() > window.max());
        assert_eq!(after.since(&WaitTimes::default()), after);
        assert_eq!(after.since(&after), WaitTimes::default());
        // A later reading subtracted saturates: nothing is left.
        assert_eq!(before.since(&after), WaitTimes::default());
        assert_eq!(WaitTimes::default().since(&after), WaitTimes::default());
    }

    #[test]
    fn a_workers_waits_fold_into_the_lanes() {
        let (own, shared) = (OwnedWaits::new(), SharedWaits::new());
        own.record(5);
        own.record(5_000);
        shared.record(7);
        let mut sum = shared.snapshot();
        own.add_to(&mut sum);
        assert_eq!(sum.iter().sum::<u64>(), 3);
        own.fold_into(&shared);
        let mut after = shared.snapshot();
        own.add_to(&mut after);
        assert_eq!(after, sum);
    }
}
