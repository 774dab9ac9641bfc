//! Rates over a sliding window: the counters of each snapshot are kept a
//! few seconds, and a rate is the difference between now and the oldest
//! sample kept, over the time between them. Any number of viewers share
//! one sampler, so each sees the same rates whatever its own pace.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How far back rates look.
pub(crate) const WINDOW: Duration = Duration::from_secs(5);
/// Samples closer together than this are not kept (a burst of viewers
/// adds one sample, not one each).
const SPACING: Duration = Duration::from_millis(200);
/// The shortest window a rate is given for: over less, one job more or
/// less would swing it wildly (the page's first two looks come a moment
/// apart).
const SHORTEST: Duration = Duration::from_millis(500);

/// One executor's samples: per lane, dispatched and completed.
#[derive(Default)]
pub(crate) struct Sampler {
    samples: VecDeque<(Instant, Vec<(u64, u64)>)>,
}

/// What the window says about one lane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct LaneRates {
    pub(crate) dispatched_per_sec: f64,
    pub(crate) completed_per_sec: f64,
    /// Dispatches of this lane in the window.
    pub(crate) dispatched: u64,
}

impl Sampler {
    /// Records `counts` (per lane: dispatched, completed) taken `now` and
    /// returns the window's length in seconds and each lane's rates.
    pub(crate) fn observe(&mut self, now: Instant, counts: &[(u64, u64)]) -> (f64, Vec<LaneRates>) {
        while self
            .samples
            .front()
            .is_some_and(|(at, _)| now.saturating_duration_since(*at) > WINDOW)
        {
            self.samples.pop_front();
        }
        let rates = match self.samples.front() {
            Some((at, old))
                if old.len() == counts.len() && now.saturating_duration_since(*at) >= SHORTEST =>
            {
                let secs = now.saturating_duration_since(*at).as_secs_f64();
                let lanes = counts
                    .iter()
                    .zip(old)
                    .map(|(&(d, c), &(d0, c0))| {
                        let dispatched = d.saturating_sub(d0);
                        let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
                        LaneRates {
                            dispatched_per_sec: per_sec(dispatched),
                            completed_per_sec: per_sec(c.saturating_sub(c0)),
                            dispatched,
                        }
                    })
                    .collect();
                (secs, lanes)
            }
            _ => (0.0, vec![LaneRates::default(); counts.len()]),
        };
        if self
            .samples
            .back()
            .is_none_or(|(at, _)| now.saturating_duration_since(*at) >= SPACING)
        {
            self.samples.push_back((now, counts.to_vec()));
        }
        rates
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_differences_over_the_window() {
        let mut sampler = Sampler::default();
        let t0 = Instant::now();
        let (secs, first) = sampler.observe(t0, &[(0, 0), (10, 5)]);
        assert_eq!(secs, 0.0);
        assert_eq!(first[1], LaneRates::default());
        let (secs, rates) = sampler.observe(t0 + Duration::from_secs(2), &[(40, 30), (10, 9)]);
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
        sampler.observe(t0, &[(0, 0)]);
        sampler.observe(t0 + Duration::from_secs(4), &[(100, 100)]);
        // The first sample is now older than the window: rates start from
        // the second.
        let (secs, rates) = sampler.observe(t0 + Duration::from_secs(6), &[(110, 110)]);
        assert_eq!(secs, 2.0);
        assert_eq!(rates[0].dispatched, 10);
    }

    #[test]
    fn no_rate_over_a_moment() {
        let mut sampler = Sampler::default();
        let t0 = Instant::now();
        sampler.observe(t0, &[(0, 0)]);
        let (secs, rates) = sampler.observe(t0 + Duration::from_millis(2), &[(1, 1)]);
        assert_eq!((secs, rates[0]), (0.0, LaneRates::default()));
    }

    #[test]
    fn viewers_close_together_add_one_sample() {
        let mut sampler = Sampler::default();
        let t0 = Instant::now();
        sampler.observe(t0, &[(0, 0)]);
        sampler.observe(t0 + Duration::from_millis(50), &[(5, 5)]);
        assert_eq!(sampler.samples.len(), 1);
    }
}
