//! Scheduling policies: per-lane settings (reserved workers, aging, what to
//! do when full) and per-job settings (deadline, retries).

use crate::priority::{Capacity, Priority};
use std::time::{Duration, Instant};

/// Everything about one lane. [`ExecutorBuilder::lane`] and
/// [`ExecutorBuilder::lane_weighted`] are shorthands for the common case.
///
/// [`ExecutorBuilder::lane`]: crate::ExecutorBuilder::lane
/// [`ExecutorBuilder::lane_weighted`]: crate::ExecutorBuilder::lane_weighted
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, LaneConfig, MaxRunning, Priority, RejectionPolicy};
/// use std::time::Duration;
///
/// let exec = Executor::builder()
///     .max_threads(10)
///     .lane_config(LaneConfig::new(Priority(10)).capacity(Capacity::Bounded(1000)))
///     .lane_config(
///         LaneConfig::new(Priority(1))
///             .capacity(Capacity::Bounded(1000))
///             .max_running(MaxRunning::Percent(20)) // never more than 2 of the 10 threads
///             .promote_after(Duration::from_secs(2)) // aging: no job waits at the head longer
///             .when_full(RejectionPolicy::DiscardOldest),
///     )
///     .build()
///     .unwrap();
/// assert_eq!(exec.metrics().lane(Priority(1)).unwrap().max_running, Some(2));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneConfig {
    pub(crate) priority: Priority,
    pub(crate) weight: u32,
    pub(crate) capacity: Capacity,
    pub(crate) max_running: Option<MaxRunning>,
    pub(crate) promote_after: Option<Duration>,
    pub(crate) when_full: RejectionPolicy,
}

impl LaneConfig {
    /// A lane of this priority: weight = priority, unbounded, no cap, no
    /// aging, blocking when full.
    ///
    /// # Examples
    ///
    /// See [`LaneConfig`].
    pub fn new(priority: Priority) -> Self {
        LaneConfig {
            priority,
            weight: priority.0,
            capacity: Capacity::Unbounded,
            max_running: None,
            promote_after: None,
            when_full: RejectionPolicy::Block,
        }
    }

    /// The lane's weight in the round robin (at least 1).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{LaneConfig, Priority};
    ///
    /// let lane = LaneConfig::new(Priority(1000)).weight(4);
    /// # let _ = lane;
    /// ```
    pub fn weight(mut self, weight: u32) -> Self {
        self.weight = weight;
        self
    }

    /// How many jobs the lane may hold.
    ///
    /// # Examples
    ///
    /// See [`LaneConfig`].
    pub fn capacity(mut self, capacity: Capacity) -> Self {
        self.capacity = capacity;
        self
    }

    /// Reserved workers: at most this many of the lane's jobs run at once.
    /// When reached, the picker skips the lane, so long jobs of one lane can
    /// never occupy every worker while other lanes wait.
    ///
    /// # Examples
    ///
    /// See [`LaneConfig`].
    pub fn max_running(mut self, limit: MaxRunning) -> Self {
        self.max_running = Some(limit);
        self
    }

    /// Aging: once the job at the head of this lane has been there this
    /// long, it is dispatched next, ahead of the weighted order. Bounds the
    /// wait of this lane's jobs whatever the weights are.
    ///
    /// # Examples
    ///
    /// See [`LaneConfig`].
    pub fn promote_after(mut self, after: Duration) -> Self {
        self.promote_after = Some(after);
        self
    }

    /// What [`Executor::enqueue`](crate::Executor::enqueue) does when the
    /// lane is full.
    ///
    /// # Examples
    ///
    /// See [`LaneConfig`].
    pub fn when_full(mut self, policy: RejectionPolicy) -> Self {
        self.when_full = policy;
        self
    }
}

/// A lane's cap on running jobs.
///
/// # Examples
///
/// ```
/// use priority_executor::MaxRunning;
///
/// assert_eq!(MaxRunning::Percent(20).resolve(100), 20);
/// assert_eq!(MaxRunning::Percent(1).resolve(10), 1); // rounded up, at least 1
/// assert_eq!(MaxRunning::Threads(3).resolve(100), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxRunning {
    /// At most this many threads (at least 1).
    Threads(usize),
    /// At most this share of `max_threads`, in percent (1 to 100), rounded
    /// up.
    Percent(u8),
}

impl MaxRunning {
    /// The cap in threads for a pool of `max_threads`.
    ///
    /// # Examples
    ///
    /// See [`MaxRunning`].
    pub fn resolve(self, max_threads: usize) -> usize {
        match self {
            MaxRunning::Threads(n) => n,
            MaxRunning::Percent(p) => (max_threads * usize::from(p)).div_ceil(100).max(1),
        }
    }
}

/// What `enqueue` does when a bounded lane is full (Java's rejection
/// policies, without a silent discard: whatever is refused or pushed out is
/// handed back).
///
/// `try_enqueue` never blocks and never runs a job inline: it returns
/// [`EnqueueError::Full`](crate::EnqueueError::Full) under every policy.
///
/// # Examples
///
/// ```
/// use priority_executor::RejectionPolicy;
///
/// assert_eq!("caller-runs".parse(), Ok(RejectionPolicy::CallerRuns));
/// assert_eq!(RejectionPolicy::default(), RejectionPolicy::Block);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RejectionPolicy {
    /// Wait for a slot (backpressure). The default.
    #[default]
    Block,
    /// Return the job at once in [`EnqueueError::Full`](crate::EnqueueError::Full).
    Reject,
    /// Run the job on the calling thread, which slows the producer down.
    CallerRuns,
    /// Push out the lane's oldest queued job to make room; its handle
    /// resolves [`JobError::Discarded`](crate::JobError::Discarded).
    DiscardOldest,
}

impl RejectionPolicy {
    /// The name used in configuration files.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::RejectionPolicy;
    ///
    /// assert_eq!(RejectionPolicy::DiscardOldest.as_str(), "discard-oldest");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            RejectionPolicy::Block => "block",
            RejectionPolicy::Reject => "reject",
            RejectionPolicy::CallerRuns => "caller-runs",
            RejectionPolicy::DiscardOldest => "discard-oldest",
        }
    }
}

impl std::str::FromStr for RejectionPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "block" => Ok(RejectionPolicy::Block),
            "reject" => Ok(RejectionPolicy::Reject),
            "caller-runs" => Ok(RejectionPolicy::CallerRuns),
            "discard-oldest" => Ok(RejectionPolicy::DiscardOldest),
            other => Err(format!(
                "unknown rejection policy {other:?} (expected one of: block, reject, caller-runs, discard-oldest)"
            )),
        }
    }
}

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
///     .enqueue_with(Priority(1), JobOptions::new().ttl(Duration::from_secs(60)), || 1)
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
/// assert_eq!(policy.delay_after(3), Duration::from_millis(40));
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
    ///
    /// # Examples
    ///
    /// See [`RetryPolicy`].
    pub fn delay_after(&self, n: u32) -> Duration {
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
///     .enqueue_retrying(Priority(1), RetryPolicy::new(2), |attempt| {
///         if attempt.number < 3 { Err("not yet") } else { Ok(attempt.number) }
///     })
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
