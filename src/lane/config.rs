//! Per-lane settings: priority, weight, capacity, reserved workers, aging
//! and what to do when full.

use crate::priority::{Capacity, Priority};
use std::time::Duration;

/// Everything about one lane, for
/// [`ExecutorBuilder::lane_config`](crate::ExecutorBuilder::lane_config);
/// [`ExecutorBuilder::lane`](crate::ExecutorBuilder::lane) is the shorthand
/// for a lane with only a capacity.
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
///
/// The fields read the settings back (as [`ExecutorConfig`] lists them);
/// the builder methods of the same names set them.
///
/// ```
/// use priority_executor::{Capacity, LaneConfig, MaxRunning, Priority, RejectionPolicy};
/// use std::time::Duration;
///
/// let lane = LaneConfig::new(Priority(1))
///     .weight(3)
///     .capacity(Capacity::Bounded(10))
///     .max_running(MaxRunning::Threads(2))
///     .promote_after(Duration::from_secs(1))
///     .when_full(RejectionPolicy::Reject);
/// assert_eq!(lane.priority, Priority(1));
/// assert_eq!(lane.weight, 3);
/// assert_eq!(lane.capacity, Capacity::Bounded(10));
/// assert_eq!(lane.max_running, Some(MaxRunning::Threads(2)));
/// assert_eq!(lane.promote_after, Some(Duration::from_secs(1)));
/// assert_eq!(lane.when_full, RejectionPolicy::Reject);
///
/// // The defaults: weight = priority (at least 1), unbounded, no cap,
/// // no aging, block.
/// let plain = LaneConfig::new(Priority(7));
/// assert_eq!(plain.weight, 7);
/// assert_eq!(LaneConfig::new(Priority(0)).weight, 1);
/// assert_eq!(plain.capacity, Capacity::Unbounded);
/// assert_eq!((plain.max_running, plain.promote_after), (None, None));
/// assert_eq!(plain.when_full, RejectionPolicy::Block);
/// ```
///
/// [`ExecutorConfig`]: crate::ExecutorConfig
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaneConfig {
    /// The lane's priority.
    pub priority: Priority,
    /// The lane's weight in the round robin (at least 1).
    pub weight: u32,
    /// How many jobs the lane may hold.
    pub capacity: Capacity,
    /// The cap on the lane's running jobs, as configured (`None`: no cap).
    /// A [`MaxRunning::Percent`] is resolved against `max_threads` when the
    /// executor is built and again whenever the thread settings change
    /// ([`Executor::set_threads`](crate::Executor::set_threads), a reload);
    /// [`LaneMetrics::max_running`] gives it in threads.
    ///
    /// [`LaneMetrics::max_running`]: crate::LaneMetrics::max_running
    pub max_running: Option<MaxRunning>,
    /// The aging threshold (`None`: no aging).
    pub promote_after: Option<Duration>,
    /// What `enqueue` does when the lane is full.
    pub when_full: RejectionPolicy,
    /// The lane's name, if it has one: code finds the lane by it
    /// ([`Executor::lane_priority`](crate::Executor::lane_priority)) instead of repeating its
    /// priority number.
    pub name: Option<String>,
}

impl LaneConfig {
    /// A lane of this priority: weight = priority (at least 1, so a
    /// `Priority(0)` lane shares as a `Priority(1)` lane does), unbounded,
    /// no cap, no aging, blocking when full.
    ///
    /// # Examples
    ///
    /// See [`LaneConfig`].
    pub fn new(priority: Priority) -> Self {
        LaneConfig {
            priority,
            weight: priority.0.max(1),
            capacity: Capacity::Unbounded,
            max_running: None,
            promote_after: None,
            when_full: RejectionPolicy::Block,
            name: None,
        }
    }

    /// Names the lane, so that code finds it by name
    /// ([`Executor::lane_priority`](crate::Executor::lane_priority)) and a file that changes
    /// the lane's priority changes no code. Unique per executor.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executor, LaneConfig, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .lane_config(LaneConfig::new(Priority(10)).name("interactive"))
    ///     .lane_config(LaneConfig::new(Priority(1)).name("batch"))
    ///     .build()?;
    /// let interactive = exec.lane_priority("interactive")?;
    /// assert_eq!(interactive, Priority(10));
    /// assert_eq!(exec.enqueue(interactive, || 6 * 7)?.join()?, 42);
    /// let err = exec.lane_priority("bulk").unwrap_err();
    /// assert_eq!(err.to_string(), "no lane named \"bulk\" (lanes: interactive, batch)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
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
/// use priority_executor::{Executor, LaneConfig, MaxRunning, Priority};
///
/// // Bulk work may take at most a fifth of the threads.
/// let exec = Executor::builder()
///     .max_threads(10)
///     .lane_config(LaneConfig::new(Priority(1)).max_running(MaxRunning::Percent(20)))
///     .build()
///     .unwrap();
/// assert_eq!(exec.metrics().lanes[0].max_running, Some(2));
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
    /// Not part of the API: public for the crate's tests.
    #[doc(hidden)]
    pub fn resolve(self, max_threads: usize) -> usize {
        match self {
            MaxRunning::Threads(n) => n,
            // In u128: `max_threads * p` must not overflow for any pool.
            MaxRunning::Percent(p) => {
                let threads = (max_threads as u128 * u128::from(p)).div_ceil(100).max(1);
                usize::try_from(threads).unwrap_or(usize::MAX)
            }
        }
    }
}

/// What `enqueue` does when a bounded lane is full (Java's rejection
/// policies, without a silent discard: whatever is refused or pushed out is
/// handed back).
///
/// A submission that does not wait
/// ([`JobOptions::wait_at_most`](crate::JobOptions::wait_at_most) with
/// `Duration::ZERO`) never blocks and never runs a job inline: it returns
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
    /// resolves [`JobError::Discarded`](crate::JobError::Discarded). With
    /// nothing queued to push out (every slot reserved, by held
    /// [`Permit`](crate::Permit)s say), the producer waits for room as
    /// with `Block`, within its
    /// [`wait_at_most`](crate::JobOptions::wait_at_most).
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

#[cfg(test)]
mod tests {
    use super::MaxRunning;

    #[test]
    fn max_running_resolves_to_threads() {
        assert_eq!(MaxRunning::Percent(20).resolve(100), 20);
        assert_eq!(MaxRunning::Percent(1).resolve(10), 1); // rounded up, at least 1
        assert_eq!(MaxRunning::Threads(3).resolve(100), 3);
    }
}
