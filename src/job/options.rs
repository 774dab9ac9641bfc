//! Per-job settings: a deadline, and retries with backoff.

use crate::priority::Priority;
use std::time::{Duration, Instant};

/// Options of one job: a deadline after which it is not started.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, JobOptions, Priority};
/// use std::time::Duration;
///
/// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
/// let h = exec
///     .enqueue_with(Priority(1), || 1, JobOptions::new().ttl(Duration::from_secs(60)))
///     .unwrap();
/// assert_eq!(h.join(), Ok(1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobOptions {
    pub(crate) deadline: Option<Instant>,
}

impl JobOptions {
    /// No deadline.
    ///
    /// # Examples
    ///
    /// See [`JobOptions`].
    pub fn new() -> Self {
        JobOptions::default()
    }

    /// Not started after this instant: the handle resolves
    /// [`JobError::Expired`](crate::JobError::Expired) instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::JobOptions;
    /// use std::time::{Duration, Instant};
    ///
    /// let opts = JobOptions::new().deadline(Instant::now() + Duration::from_secs(1));
    /// # let _ = opts;
    /// ```
    pub fn deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Not started once it has waited this long (time to live).
    ///
    /// # Examples
    ///
    /// See [`JobOptions`].
    pub fn ttl(self, ttl: Duration) -> Self {
        match Instant::now().checked_add(ttl) {
            Some(deadline) => self.deadline(deadline),
            None => self,
        }
    }
}

/// How a job run with
/// [`enqueue_retrying`](crate::Executor::enqueue_retrying) is tried again
/// when it fails (returns `Err` or panics).
///
/// # Examples
///
/// ```
/// use priority_executor::{Priority, RetryPolicy};
/// use std::time::Duration;
///
/// let policy = RetryPolicy::new(3)
///     .backoff(Duration::from_millis(10), 2.0) // 10 ms, 20 ms, 40 ms
///     .retry_at(Priority(10)); // retries jump the queue
/// assert_ne!(policy, RetryPolicy::new(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub(crate) max_retries: u32,
    pub(crate) initial_delay: Duration,
    pub(crate) multiplier: f64,
    pub(crate) max_delay: Duration,
    pub(crate) retry_priority: Option<Priority>,
}

impl RetryPolicy {
    /// Up to `max_retries` further attempts after the first, re-queued at
    /// once at the same priority.
    ///
    /// # Examples
    ///
    /// See [`RetryPolicy`].
    pub fn new(max_retries: u32) -> Self {
        RetryPolicy {
            max_retries,
            initial_delay: Duration::ZERO,
            multiplier: 1.0,
            max_delay: Duration::from_secs(3600),
            retry_priority: None,
        }
    }

    /// Wait `initial` before the first retry, then `multiplier` times
    /// longer before each next one (capped at one hour). The waiting job
    /// holds no worker.
    ///
    /// # Examples
    ///
    /// See [`RetryPolicy`].
    pub fn backoff(mut self, initial: Duration, multiplier: f64) -> Self {
        self.initial_delay = initial;
        self.multiplier = if multiplier.is_finite() && multiplier >= 1.0 {
            multiplier
        } else {
            1.0
        };
        self
    }

    /// Re-queue retries in the lane of this priority (it must exist, or the
    /// retry stays in its own lane).
    ///
    /// # Examples
    ///
    /// See [`RetryPolicy`].
    pub fn retry_at(mut self, priority: Priority) -> Self {
        self.retry_priority = Some(priority);
        self
    }

    /// The wait before retry number `n` (1-based).
    pub(crate) fn delay_after(&self, n: u32) -> Duration {
        if self.initial_delay.is_zero() {
            return Duration::ZERO;
        }
        let factor = self.multiplier.powi(n.saturating_sub(1).min(64) as i32);
        let secs = self.initial_delay.as_secs_f64() * factor;
        if !secs.is_finite() || secs >= self.max_delay.as_secs_f64() {
            self.max_delay
        } else {
            Duration::from_secs_f64(secs)
        }
    }
}

/// Which attempt of a retrying job is running.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority, RetryPolicy};
///
/// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
/// let h = exec
///     .enqueue_retrying(Priority(1), |attempt| {
///         if attempt.number < 3 { Err("not yet") } else { Ok(attempt.number) }
///     }, RetryPolicy::new(2))
///     .unwrap();
/// assert_eq!(h.join(), Ok(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// 1 for the first run, 2 for the first retry, …
    pub number: u32,
    /// No retry follows if this attempt fails.
    pub last: bool,
}

#[cfg(test)]
mod tests {
    use super::RetryPolicy;
    use crate::Priority;
    use std::time::Duration;

    #[test]
    fn backoff_doubles() {
        let policy = RetryPolicy::new(3)
            .backoff(Duration::from_millis(10), 2.0) // 10 ms, 20 ms, 40 ms
            .retry_at(Priority(10));
        assert_eq!(policy.delay_after(3), Duration::from_millis(40));
    }
}
