//! A snapshot of an executor's counters, per lane and for its threads.
//!
//! Taking one reads relaxed atomics and takes no lock; the figures are each
//! exact but not taken at one instant.

use crate::lane::config::RejectionPolicy;
use crate::priority::{Capacity, Priority};
use crate::waits::WaitTimes;
use std::fmt;

/// Counters of one executor, as returned by
/// [`Executor::metrics`](crate::Executor::metrics).
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
///
/// let exec = Executor::builder()
///     .lane(Priority(10), Capacity::Bounded(100))
///     .lane(Priority(1), Capacity::Unbounded)
///     .build()
///     .unwrap();
/// exec.enqueue(Priority(10), || ()).unwrap().join().unwrap();
/// let m = exec.metrics();
/// let high = m.lane(Priority(10)).unwrap();
/// assert_eq!((high.submitted, high.completed), (1, 1));
/// assert_eq!(m.lane(Priority(1)).unwrap().submitted, 0);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metrics {
    /// The executor's name.
    pub name: String,
    /// One entry per lane, highest priority first.
    pub lanes: Vec<LaneMetrics>,
    /// The worker threads.
    pub threads: ThreadMetrics,
}

impl Metrics {
    /// The lane of a priority, if there is one.
    ///
    /// # Examples
    ///
    /// See [`Metrics`].
    pub fn lane(&self, priority: Priority) -> Option<&LaneMetrics> {
        self.lanes.iter().find(|l| l.priority == priority)
    }

    /// Jobs accepted in all lanes.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// exec.enqueue(Priority(1), || ()).unwrap().join().unwrap();
    /// assert_eq!(exec.metrics().submitted(), 1);
    /// ```
    pub fn submitted(&self) -> u64 {
        self.lanes.iter().map(|l| l.submitted).sum()
    }

    /// Jobs queued in all lanes, not yet started.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// assert_eq!(exec.metrics().queued(), 0);
    /// ```
    pub fn queued(&self) -> usize {
        self.lanes.iter().map(|l| l.queued).sum()
    }
}

/// Counters of one lane.
///
/// Once an executor has shut down, `submitted ==`
/// [`settled()`](LaneMetrics::settled) over all its lanes together, and
/// for every lane its retries stay in: nothing is lost. A job whose retry goes to another lane
/// ([`RetryPolicy::retry_at`](crate::RetryPolicy::retry_at)) is submitted
/// in its first lane and settles in the lane it ends in: with such
/// retries only the sums over all lanes balance.
///
/// # Examples
///
/// See [`Metrics`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaneMetrics {
    /// How long its jobs waited before they started, per attempt: read
    /// percentiles from it (`waits.percentile(99.0)`).
    pub waits: WaitTimes,
    /// The lane's priority.
    pub priority: Priority,
    /// The lane's weight in the picker.
    pub weight: u32,
    /// The lane's capacity.
    pub capacity: Capacity,
    /// Jobs waiting in the lane now.
    pub queued: usize,
    /// Jobs accepted into the lane. Derived from the other counters so
    /// that `enqueue` keeps no counter of its own: exact whenever the lane
    /// is quiet, it may trail by the few jobs a worker is taking at the
    /// instant of the snapshot.
    pub submitted: u64,
    /// Jobs taken from the lane by a worker.
    pub dispatched: u64,
    /// Jobs that ran to completion.
    pub completed: u64,
    /// Jobs that panicked (the panic was caught).
    pub panicked: u64,
    /// Jobs refused because the lane was full (handed back to the caller).
    pub rejected: u64,
    /// Jobs handed back unrun by `shutdown_now`.
    pub handed_back: u64,
    /// Jobs not started because their deadline had passed.
    pub expired: u64,
    /// Jobs pushed out of the full lane by newer ones (discard-oldest).
    pub discarded: u64,
    /// Failed attempts that were queued again.
    pub retried: u64,
    /// Retrying jobs whose last attempt failed.
    pub dead_lettered: u64,
    /// Jobs run on the producer's thread because the lane was full
    /// (caller-runs); included in `submitted` and `completed`/`panicked`.
    pub caller_ran: u64,
    /// Dispatches made ahead of the weighted order by aging.
    pub promoted: u64,
    /// Jobs cancelled through their handles
    /// ([`JobHandle::cancel`](crate::JobHandle::cancel)) and since met in
    /// the lane and dropped unrun (until then they count as `queued`), and
    /// futures ([`spawn_future`](crate::Executor::spawn_future))
    /// parked when `shutdown_now` ran and woken afterwards, or still
    /// parked when the pool ended: dropped unfinished, their handles
    /// resolve [`JobError::Cancelled`](crate::JobError::Cancelled).
    pub cancelled: u64,
    /// Jobs of this lane running now (lanes with `max_running` only).
    pub running: Option<usize>,
    /// The lane's cap on running jobs, in threads, if it has one.
    pub max_running: Option<usize>,
    /// What `enqueue` does when the lane is full.
    pub when_full: RejectionPolicy,
    /// The lane is paused ([`Executor::pause_lane`](crate::Executor::pause_lane)):
    /// it accepts jobs and workers start none of them.
    pub paused: bool,
}

impl LaneMetrics {
    /// Jobs accepted and since finished one way or another: completed,
    /// panicked, handed back, expired, discarded, dead-lettered or
    /// cancelled. Equal to `submitted`
    /// once the lane is idle.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// exec.enqueue(Priority(1), || ()).unwrap().join().unwrap();
    /// let lane = &exec.metrics().lanes[0];
    /// assert_eq!(lane.settled(), lane.submitted);
    /// ```
    pub fn settled(&self) -> u64 {
        self.completed
            + self.panicked
            + self.handed_back
            + self.expired
            + self.discarded
            + self.dead_lettered
            + self.cancelled
    }
}

/// Counts of an executor's worker threads.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
///
/// let exec = Executor::builder()
///     .core_threads(2)
///     .max_threads(4)
///     .lane(Priority(1), Capacity::Unbounded)
///     .build()
///     .unwrap();
/// assert_eq!(exec.prestart_core_threads(), 2);
/// let t = exec.metrics().threads;
/// assert_eq!(t.live, 2);
/// assert!(t.peak >= 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ThreadMetrics {
    /// Worker threads alive now.
    pub live: usize,
    /// Workers not running a job (searching or asleep).
    pub idle: usize,
    /// Workers running a job.
    pub busy: usize,
    /// The most workers ever alive at once.
    pub peak: usize,
    /// Of the idle workers, those asleep (parked until a job arrives or
    /// their keep-alive runs out) rather than still searching.
    pub sleeping: usize,
    /// Worker threads the operating system refused to start, since the
    /// executor was built. The job that asked for one stays queued for the
    /// workers alive; with none alive, its enqueue gets it back as
    /// [`EnqueueError::NoThread`](crate::EnqueueError::NoThread).
    pub spawn_failures: u64,
}

/// One line for the threads, then one per lane, highest priority first;
/// counters that are zero are left out, past the first three.
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
///
/// let exec = Executor::builder()
///     .name("visa")
///     .core_threads(1)
///     .record_waits(true)
///     .lane(Priority(10), Capacity::Bounded(100))
///     .lane(Priority(1), Capacity::Unbounded)
///     .build()?;
/// exec.enqueue(Priority(10), || ())?.join()?;
/// exec.shutdown();
/// let text = exec.metrics().to_string();
/// assert!(text.starts_with("executor \"visa\": threads 0 live"));
/// assert!(text.contains("\n  lane 10 (weight 10, capacity 100): queued 0, submitted 1, completed 1; waited p50 "));
/// assert!(text.contains("\n  lane 1 (weight 1, capacity unbounded): queued 0, submitted 0, completed 0"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl fmt::Display for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.threads;
        write!(
            f,
            "executor {:?}: threads {} live ({} busy, {} idle, {} asleep), peak {}",
            self.name, t.live, t.busy, t.idle, t.sleeping, t.peak
        )?;
        for lane in &self.lanes {
            write!(f, "\n  {lane}")?;
        }
        Ok(())
    }
}

/// The lane's settings, then its counters (zero ones left out past the
/// first three), then its waits' percentiles if any was recorded.
impl fmt::Display for LaneMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lane {} (weight {}, capacity {}): queued {}, submitted {}, completed {}",
            self.priority.0,
            self.weight,
            self.capacity,
            self.queued,
            self.submitted,
            self.completed
        )?;
        let counters = [
            ("panicked", self.panicked),
            ("rejected", self.rejected),
            ("handed back", self.handed_back),
            ("expired", self.expired),
            ("discarded", self.discarded),
            ("retried", self.retried),
            ("dead-lettered", self.dead_lettered),
            ("caller-ran", self.caller_ran),
            ("promoted", self.promoted),
            ("cancelled", self.cancelled),
        ];
        for (name, value) in counters {
            if value != 0 {
                write!(f, ", {name} {value}")?;
            }
        }
        if self.paused {
            f.write_str(", paused")?;
        }
        if let (Some(running), Some(max)) = (self.running, self.max_running) {
            write!(f, ", running {running} of at most {max}")?;
        }
        if self.waits.count() != 0 {
            write!(f, "; waited {}", self.waits)?;
        }
        Ok(())
    }
}
