//! A job not accepted: [`EnqueueError`] for one, [`BatchError`] for a
//! batch. Each carries the jobs back: a job the executor did not accept is
//! never dropped behind the caller's back.

use crate::job::JobHandle;
use crate::priority::Priority;
use crate::util::List;
use std::fmt;

/// A job the executor did not accept, handed back with the reason.
///
/// `Debug` and `Display` do not need `F: Debug`; get the job back with
/// [`into_inner`](EnqueueError::into_inner), and ask the reason with
/// [`is_full`](EnqueueError::is_full) and
/// [`is_shut_down`](EnqueueError::is_shut_down) as with a channel's
/// `TrySendError`.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, EnqueueError, Executor, Priority};
///
/// let exec = Executor::builder()
///     .lane(Priority(10), Capacity::Unbounded)
///     .lane(Priority(1), Capacity::Unbounded)
///     .build()
///     .unwrap();
/// let err = exec.enqueue(Priority(5), || "hello").unwrap_err();
/// assert!(matches!(err, EnqueueError::UnknownPriority { .. }));
/// assert_eq!(err.to_string(), "no lane for priority 5 (lanes: 10, 1)");
/// let job = err.into_inner();
/// assert_eq!(job(), "hello");
/// ```
#[non_exhaustive]
pub enum EnqueueError<F> {
    /// The lane was still full when the wait of
    /// [`JobOptions::wait_at_most`](crate::JobOptions::wait_at_most) ran out
    /// (at once for `Duration::ZERO`), or its policy is to reject.
    ///
    /// # Examples
    ///
    /// A shut-down executor refuses with [`ShutDown`](EnqueueError::ShutDown), not `Full`:
    ///
    /// ```
    /// use priority_executor::{Capacity, EnqueueError, Executor, JobOptions, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(0)
    ///     .max_threads(1)
    ///     .lane(Priority(1), Capacity::Bounded(1))
    ///     .build()
    ///     .unwrap();
    /// let pending = exec.shutdown_now(); // nothing runs from here on
    /// assert!(pending.is_empty());
    /// let no_wait = JobOptions::new().wait_at_most(Duration::ZERO);
    /// let err = exec.enqueue_with(Priority(1), || (), no_wait).unwrap_err();
    /// assert!(!matches!(err, EnqueueError::Full { .. }));
    /// ```
    Full {
        /// The lane's priority.
        priority: Priority,
        /// The lane's capacity.
        capacity: usize,
        /// The job, unrun.
        job: F,
    },
    /// No lane has this priority.
    UnknownPriority {
        /// The priority asked for.
        priority: Priority,
        /// The priorities that have lanes, highest first.
        known: Vec<Priority>,
        /// The job, unrun.
        job: F,
    },
    /// The executor is shutting down or shut down.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, EnqueueError, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let _ = exec.shutdown_now();
    /// let err = exec.enqueue(Priority(1), || ()).unwrap_err();
    /// assert!(matches!(err, EnqueueError::ShutDown { .. }));
    /// ```
    ShutDown {
        /// The priority asked for.
        priority: Priority,
        /// The job, unrun.
        job: F,
    },
    /// No worker was alive and none could be started for the job (the
    /// operating system refused the thread): queued, it would have waited
    /// for nobody. A pool with workers alive queues the job for them
    /// instead, and counts the failed start in
    /// [`ThreadMetrics::spawn_failures`](crate::ThreadMetrics::spawn_failures).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, EnqueueError, Executor, Priority};
    ///
    /// // No core thread to start at build; no thread of this stack size
    /// // can start at all.
    /// let exec = Executor::builder()
    ///     .core_threads(0)
    ///     .stack_size(1 << 46)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// let err = exec.enqueue(Priority(1), || 7).unwrap_err();
    /// assert!(matches!(err, EnqueueError::NoThread { .. }));
    /// assert_eq!(err.into_inner()(), 7);
    /// ```
    NoThread {
        /// The priority asked for.
        priority: Priority,
        /// The job, unrun.
        job: F,
        /// Why the thread could not start.
        error: std::io::Error,
    },
}

impl<F> EnqueueError<F> {
    /// The job, unrun.
    ///
    /// # Examples
    ///
    /// See [`EnqueueError`].
    pub fn into_inner(self) -> F {
        match self {
            EnqueueError::Full { job, .. }
            | EnqueueError::UnknownPriority { job, .. }
            | EnqueueError::ShutDown { job, .. }
            | EnqueueError::NoThread { job, .. } => job,
        }
    }

    /// Was the job refused because its lane was full: is this
    /// [`Full`](EnqueueError::Full)? As crossbeam-channel's
    /// `TrySendError::is_full`. `false` for every other variant.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Bounded(1)).build()?;
    /// exec.pause_lane(Priority(1))?; // nothing leaves the lane
    /// let _queued = exec.try_enqueue(Priority(1), || 1)?; // fills it
    /// let err = exec.try_enqueue(Priority(1), || 2).unwrap_err();
    /// assert!(err.is_full() && !err.is_shut_down());
    /// assert_eq!(err.into_inner()(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_full(&self) -> bool {
        matches!(self, EnqueueError::Full { .. })
    }

    /// Was the job refused because the executor is shutting down or shut
    /// down: is this [`ShutDown`](EnqueueError::ShutDown)? As
    /// crossbeam-channel's `TrySendError::is_disconnected`. `false` for
    /// every other variant: [`UnknownPriority`](EnqueueError::UnknownPriority)
    /// and [`NoThread`](EnqueueError::NoThread) are neither full nor shut
    /// down, and answer `false` to [`is_full`](EnqueueError::is_full) too.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
    /// let unknown = exec.try_enqueue(Priority(2), || ()).unwrap_err();
    /// assert!(!unknown.is_full() && !unknown.is_shut_down());
    /// let _ = exec.shutdown_now();
    /// let err = exec.try_enqueue(Priority(1), || 3).unwrap_err();
    /// assert!(err.is_shut_down() && !err.is_full());
    /// assert_eq!(err.into_inner()(), 3);
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn is_shut_down(&self) -> bool {
        matches!(self, EnqueueError::ShutDown { .. })
    }

    /// The priority the job was offered at.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// assert_eq!(exec.enqueue(Priority(2), || ()).unwrap_err().priority(), Priority(2));
    /// ```
    pub fn priority(&self) -> Priority {
        match self {
            EnqueueError::Full { priority, .. }
            | EnqueueError::UnknownPriority { priority, .. }
            | EnqueueError::ShutDown { priority, .. }
            | EnqueueError::NoThread { priority, .. } => *priority,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            EnqueueError::Full { .. } => "Full",
            EnqueueError::UnknownPriority { .. } => "UnknownPriority",
            EnqueueError::ShutDown { .. } => "ShutDown",
            EnqueueError::NoThread { .. } => "NoThread",
        }
    }
}

impl<F> fmt::Debug for EnqueueError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct(self.kind());
        d.field("priority", &self.priority());
        match self {
            EnqueueError::Full { capacity, .. } => {
                d.field("capacity", capacity);
            }
            EnqueueError::UnknownPriority { known, .. } => {
                d.field("known", known);
            }
            EnqueueError::ShutDown { .. } => {}
            EnqueueError::NoThread { error, .. } => {
                d.field("error", error);
            }
        }
        d.finish_non_exhaustive()
    }
}

impl<F> fmt::Display for EnqueueError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnqueueError::Full {
                priority, capacity, ..
            } => write!(f, "lane {priority} is full (capacity {capacity})"),
            EnqueueError::UnknownPriority {
                priority, known, ..
            } => write!(
                f,
                "no lane for priority {priority} (lanes: {})",
                List(known)
            ),
            EnqueueError::ShutDown { priority, .. } => {
                write!(f, "executor is shut down; job for lane {priority} refused")
            }
            EnqueueError::NoThread {
                priority, error, ..
            } => write!(
                f,
                "no worker thread alive and none could start ({error}); job for lane {priority} handed back"
            ),
        }
    }
}

impl<F> std::error::Error for EnqueueError<F> {}

/// A batch from [`enqueue_batch`](crate::Executor::enqueue_batch)
/// that stopped at a job the executor did not accept. Nothing is lost: the
/// jobs queued before it run as usual (their handles are here), and the
/// refused job and every job after it come back unrun, in order.
///
/// # Examples
///
/// ```
/// use priority_executor::{BatchError, Capacity, EnqueueError, Executor, LaneConfig, Priority, RejectionPolicy};
/// use std::sync::mpsc;
///
/// let exec = Executor::builder()
///     .core_threads(1)
///     .max_threads(1)
///     .lane_config(
///         LaneConfig::new(Priority(1))
///             .capacity(Capacity::Bounded(2))
///             .when_full(RejectionPolicy::Reject),
///     )
///     .build()
///     .unwrap();
/// // Keep the only worker busy, so the lane fills.
/// let (started_tx, started) = mpsc::channel();
/// let (release, gate) = mpsc::channel::<()>();
/// let busy = exec
///     .enqueue(Priority(1), move || {
///         started_tx.send(()).unwrap();
///         gate.recv().ok();
///         0
///     })
///     .unwrap();
/// started.recv().unwrap();
///
/// let jobs: Vec<_> = (1..=5).map(|i| move || i).collect();
/// let err = exec.enqueue_batch(Priority(1), jobs).unwrap_err();
/// assert!(matches!(err.error, EnqueueError::Full { .. })); // job 3 found the lane full
/// assert_eq!((err.accepted.len(), err.rest.len()), (2, 2));
///
/// let BatchError { error, accepted, rest, .. } = err;
/// let refused = std::iter::once(error.into_inner()).chain(rest);
/// let back: Vec<i32> = refused.map(|job| job()).collect();
/// assert_eq!(back, vec![3, 4, 5]); // handed back unrun, in order
/// release.send(()).unwrap();
/// assert_eq!(busy.join(), Ok(0));
/// let ran: Vec<i32> = accepted.into_iter().map(|h| h.join().unwrap()).collect();
/// assert_eq!(ran, vec![1, 2]);
/// ```
#[non_exhaustive]
pub struct BatchError<F, T> {
    /// Why the batch stopped, with the first job not accepted.
    pub error: EnqueueError<F>,
    /// Handles of the jobs queued before it, in the batch's order.
    pub accepted: Vec<JobHandle<T>>,
    /// The jobs after the refused one, never offered, in order.
    pub rest: Vec<F>,
}

impl<F, T> fmt::Debug for BatchError<F, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchError")
            .field("error", &self.error)
            .field("accepted", &self.accepted.len())
            .field("rest", &self.rest.len())
            .finish()
    }
}

impl<F, T> fmt::Display for BatchError<F, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "batch stopped after {} queued jobs: {}; {} more not offered",
            self.accepted.len(),
            self.error,
            self.rest.len()
        )
    }
}

impl<F, T> std::error::Error for BatchError<F, T> {}
