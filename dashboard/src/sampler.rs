//! Rates over a sliding window: the counters of each snapshot are kept a
//! few seconds, and a rate is the difference between now and the oldest
//! sample kept, over the time between them. Wait percentiles over the
//! window come the same way, from the difference of the lane's cumulative
//! wait histograms ([`WaitTimes::since`]). Any number of viewers share
//! one sampler, so each sees the same figures whatever its own pace.

use priority_executor::WaitTimes;
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How far back rates look.
pub(crate) const WINDOW: Duration = Duration::from_secs(5);
/// Samples closer together than this are not kept (a burst of viewers
/// adds one sample, not one each).
const SPACING: Duration = Duration::from_millis(200);
/// The shortest window a rate is given for: over less, one job more or
/// less would swing it wildly (the page's first two looks come a moment
/// apart). Wait percentiles need no such floor: a few waits are still
/// waits of the window.
const SHORTEST: Duration = Duration::from_millis(500);

/// One executor's samples, per lane.
#[derive(Default)]
pub(crate) struct Sampler {
    samples: VecDeque<(Instant, Vec<LaneCounts>)>,
}

/// What one lane's metrics say at one moment: its cumulative counters.
#[derive(Clone, Debug, Default)]
pub(crate) struct LaneCounts {
    pub(crate) dispatched: u64,
    pub(crate) completed: u64,
    /// Every wait recorded since the executor started (empty unless it
    /// records waits).
    pub(crate) waits: WaitTimes,
}

impl LaneCounts {
    /// Two counters and no waits (a stage's performed and accepted).
    #[cfg(any(feature = "actor", test))]
    pub(crate) fn without_waits(dispatched: u64, completed: u64) -> LaneCounts {
        LaneCounts {
            dispatched,
            completed,
            waits: WaitTimes::default(),
        }
    }
}

/// What the window says about one lane.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LaneRates {
    pub(crate) dispatched_per_sec: f64,
    pub(crate) completed_per_sec: f64,
    /// Dispatches of this lane in the window.
    pub(crate) dispatched: u64,
    /// The waits recorded in the window: since the oldest sample kept,
    /// however recent; empty with no earlier sample.
    pub(crate) waits: WaitTimes,
}

/// [`Sampler::observe`] on a sampler that every viewer shares (a
/// poisoned lock is taken as it is: a sample is a few counts).
pub(crate) fn observe_shared(
    sampler: &Mutex<Sampler>,
    now: Instant,
    lanes: Vec<LaneCounts>,
) -> (f64, Vec<LaneRates>) {
    sampler
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .observe(now, lanes)
}

impl Sampler {
    /// Records `lanes` (each lane's counters) taken `now` and returns the
    /// window's length in seconds and what it says of each lane.
    pub(crate) fn observe(
        &mut self,
        now: Instant,
        lanes: Vec<LaneCounts>,
    ) -> (f64, Vec<LaneRates>) {
        // Samples older than the window leave it, but the newest one
        // stays, whatever its age: looks further apart than the window
        // (a long `period`, a script polling the snapshot) still get the
        // rates since the look before.
        while self.samples.len() > 1
            && self
                .samples
                .front()
                .is_some_and(|(at, _)| now.saturating_duration_since(*at) > WINDOW)
        {
            self.samples.pop_front();
        }
        let rates = match self.samples.front() {
            Some((at, old)) if old.len() == lanes.len() => {
                let span = now.saturating_duration_since(*at);
                let secs = if span >= SHORTEST {
                    span.as_secs_f64()
                } else {
                    0.0
                };
                let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
                let rates = lanes
                    .iter()
                    .zip(old)
                    .map(|(new, old)| {
                        let dispatched = new.dispatched.saturating_sub(old.dispatched);
                        LaneRates {
                            dispatched_per_sec: per_sec(dispatched),
                            completed_per_sec: per_sec(new.completed.saturating_sub(old.completed)),
                            dispatched: if secs > 0.0 { dispatched } else { 0 },
                            waits: new.waits.since(&old.waits),
                        }
                    })
                    .collect();
                (secs, rates)
            }
            _ => (0.0, vec![LaneRates::default(); lanes.len()]),
        };
        if self
            .samples
            .back()
            .is_none_or(|(at, _)| now.saturating_duration_since(*at) >= SPACING)
        {
            self.samples.push_back((now, lanes));
        }
        rates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use priority_executor::{Capacity, Executor, Priority};

    /// Lanes of these (dispatched, completed) and no waits.
    fn counts(pairs: &[(u64, u64)]) -> Vec<LaneCounts> {
        pairs
            .iter()
            .map(|&(d, c)| LaneCounts::without_waits(d, c))
            .collect()
    }

    #[test]
    fn rates_are_differences_over_the_window() {
        let mut sampler = Sampler::default();
        let t0 = Instant::now();
        let (secs, first) = sampler.observe(t0, counts(&[(0, 0), (10, 5)]));
        assert_eq!(secs, 0.0);
        assert_eq!(first[1], LaneRates::default());
        let (secs, rates) =
            sampler.observe(t0 + Duration::from_secs(2), counts(&[(40, 30), (10, 9)]));
        assert_eq!(secs, 2.0);
        assert_eq!(rates[0].dispatched_per_sec, 20.0);
        assert_eq!(rates[0].completed_per_sec, 15.0);
        assert_eq!((rates[0].dispatched, rates[1].dispatched), (40, 0));
        assert_eq!(rates[1].completed_per_sec, 2.0);
    }

    #[test]
    fn old_samples_leave_the_window() {
        let mut sampler = Sampler::default();
        let t0 = Instant::now();
        sampler.observe(t0, counts(&[(0, 0)]));
        sampler.observe(t0 + Duration::from_secs(4), counts(&[(100, 100)]));
        // The first sample is now older than the window: rates start from
        // the second.
        let (secs, rates) = sampler.observe(t0 + Duration::from_secs(6), counts(&[(110, 110)]));
        assert_eq!(secs, 2.0);
        assert_eq!(rates[0].dispatched, 10);
    }

    #[test]
    fn looks_further_apart_than_the_window_get_the_rates_between_them() {
        let mut sampler = Sampler::default();
        let t0 = Instant::now();
        sampler.observe(t0, counts(&[(0, 0)]));
        let (secs, rates) = sampler.observe(t0 + Duration::from_secs(10), counts(&[(100, 50)]));
        assert_eq!(secs, 10.0);
        assert_eq!(rates[0].dispatched_per_sec, 10.0);
        assert_eq!(rates[0].completed_per_sec, 5.0);
        let (secs, rates) = sampler.observe(t0 + Duration::from_secs(25), counts(&[(130, 80)]));
        assert_eq!((secs, rates[0].dispatched), (15.0, 30));
    }

    #[test]
    fn no_rate_over_a_moment() {
        let mut sampler = Sampler::default();
        let t0 = Instant::now();
        sampler.observe(t0, counts(&[(0, 0)]));
        let (secs, rates) = sampler.observe(t0 + Duration::from_millis(2), counts(&[(1, 1)]));
        assert_eq!((secs, &rates[0]), (0.0, &LaneRates::default()));
    }

    #[test]
    fn viewers_close_together_add_one_sample() {
        let mut sampler = Sampler::default();
        let t0 = Instant::now();
        sampler.observe(t0, counts(&[(0, 0)]));
        sampler.observe(t0 + Duration::from_millis(50), counts(&[(5, 5)]));
        assert_eq!(sampler.samples.len(), 1);
    }

    #[test]
    fn window_waits_are_those_since_the_oldest_sample() {
        let exec = Executor::builder()
            .record_waits(true)
            .lane(Priority(1), Capacity::Unbounded)
            .build()
            .unwrap();
        let run = |n: usize| {
            for _ in 0..n {
                exec.enqueue(Priority(1), || ()).unwrap().join().unwrap();
            }
            let waits = exec.metrics().lanes[0].waits.clone();
            vec![LaneCounts {
                dispatched: 0,
                completed: 0,
                waits,
            }]
        };
        let mut sampler = Sampler::default();
        let t0 = Instant::now();
        // No earlier sample: no window yet.
        let (_, first) = sampler.observe(t0, run(3));
        assert_eq!(first[0].waits.count(), 0);
        // A moment later: no rate yet, but the waits since the first look.
        let (secs, rates) = sampler.observe(t0 + Duration::from_millis(2), run(2));
        assert_eq!(secs, 0.0);
        assert_eq!(rates[0].waits.count(), 2);
        let (_, rates) = sampler.observe(t0 + Duration::from_secs(1), run(4));
        assert_eq!(rates[0].waits.count(), 6);
        // The first sample has left the window: the second one kept
        // (a second in) is the oldest.
        let (_, rates) = sampler.observe(t0 + Duration::from_secs(6), run(1));
        assert_eq!(rates[0].waits.count(), 1);
        // The next look comes long after: the window is the span since
        // the look before (at 6 s), with the one wait since.
        let (secs, rates) = sampler.observe(t0 + Duration::from_secs(60), run(1));
        assert_eq!((secs, rates[0].waits.count()), (54.0, 1));
        exec.shutdown();
    }
}
