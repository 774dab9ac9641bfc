//! Errors of building an executor and of queueing a job.
//!
//! An [`EnqueueError`] always carries the job back: a job the executor did
//! not accept is never dropped behind the caller's back.

use crate::job::JobHandle;
use crate::priority::Priority;
use crate::util::List;
use std::fmt;

/// A setting that makes [`ExecutorBuilder::build`](crate::ExecutorBuilder::build)
/// fail, naming the setting and the value.
///
/// # Examples
///
/// ```
/// use priority_executor::{BuildError, Executor, LaneConfig, Priority};
///
/// let err = Executor::builder()
///     .lane_config(LaneConfig::new(Priority(5)).weight(0))
///     .build()
///     .unwrap_err();
/// let BuildError::Invalid(invalid) = &err else { panic!("{err}") };
/// assert_eq!((invalid.lane, invalid.setting), (Some(Priority(5)), "weight"));
/// assert_eq!(
///     err.to_string(),
///     "lane 5: weight = 0 is not allowed (expected at least 1)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No lane was declared; an executor needs at least one.
    #[error("no lanes: declare at least one lane with .lane(priority, capacity)")]
    NoLanes,
    /// Two lanes share a priority.
    #[error("lane {priority} is declared twice: each priority has one lane")]
    DuplicateLane {
        /// The repeated priority.
        priority: Priority,
    },
    /// `core_threads` is larger than `max_threads`.
    #[error("core_threads ({core}) must not exceed max_threads ({max})")]
    CoreExceedsMax {
        /// The configured core thread count.
        core: usize,
        /// The configured maximum thread count.
        max: usize,
    },
    /// A setting has a value it does not allow: a weight, capacity or
    /// `max_running` of 0, a `max_running` share outside 1 to 100
    /// percent, a zero `promote_after`, `max_threads` of 0.
    #[error(transparent)]
    Invalid(#[from] InvalidSetting),
    /// The weights add up to more than the picker's cycle can hold.
    #[error(
        "lane weights add up to {sum}, more than the limit of {limit}; give the lanes explicit smaller weights with LaneConfig::weight"
    )]
    WeightsTooLarge {
        /// The sum of all lane weights.
        sum: u64,
        /// The largest sum accepted.
        limit: u64,
    },
    /// Two lanes have the same [name](crate::LaneConfig::name).
    #[error("lane name {name:?} is given to two lanes: a lane's name is unique in its executor")]
    DuplicateLaneName {
        /// The name given twice.
        name: String,
    },
    /// The name cannot name a thread: it contains a NUL byte.
    #[error("name {name:?} contains a NUL byte, which a thread name cannot hold")]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// `core_threads` is above 0 but the operating system refused to start
    /// a worker thread with these settings (most often a `stack_size` too
    /// large for it). `build` starts one such thread to find out, and
    /// joins it at once.
    #[error(
        "core_threads ({core}): a worker thread{} cannot start: {error}",
        stack_note(*.stack_size)
    )]
    CannotStartThread {
        /// The configured core thread count.
        core: usize,
        /// The configured `stack_size`, if any.
        stack_size: Option<usize>,
        /// The kind of the operating system's error.
        kind: std::io::ErrorKind,
        /// The operating system's error, as text.
        error: String,
    },
}

/// A setting given a value it does not allow, in the one form every
/// builder of the crate reports it: the lane it belongs to (if any), the
/// setting as its builder method (and `executors.toml` key) names it, the
/// value, and what is allowed.
///
/// # Examples
///
/// ```
/// use priority_executor::{BuildError, Executor, Priority};
///
/// let err = Executor::builder().max_threads(0).lane(Priority(1), Default::default()).build();
/// let Err(BuildError::Invalid(invalid)) = err else { panic!("{err:?}") };
/// assert_eq!((invalid.lane, invalid.setting, invalid.value.as_str()), (None, "max_threads", "0"));
/// assert_eq!(invalid.to_string(), "max_threads = 0 is not allowed (expected at least 1)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct InvalidSetting {
    /// The lane the setting belongs to, or `None` for a setting of the
    /// whole executor or stage.
    pub lane: Option<Priority>,
    /// The setting: `weight`, `capacity`, `max_running`, `promote_after`,
    /// `max_threads`, `instances`, ...
    pub setting: &'static str,
    /// The value given, as text.
    pub value: String,
    /// What the setting allows.
    pub expected: String,
}

impl InvalidSetting {
    /// A setting of the whole executor or stage.
    pub(crate) fn new(
        setting: &'static str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        InvalidSetting {
            lane: None,
            setting,
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// A setting of one lane.
    pub(crate) fn of_lane(
        lane: Priority,
        setting: &'static str,
        value: impl fmt::Display,
        expected: impl Into<String>,
    ) -> Self {
        InvalidSetting {
            lane: Some(lane),
            ..InvalidSetting::new(setting, value, expected)
        }
    }
}

#[cfg(feature = "actor")]
impl InvalidSetting {
    /// A setting of the whole stage outside `min..=max`.
    pub(crate) fn range(
        setting: &'static str,
        value: impl fmt::Display,
        min: impl fmt::Display,
        max: impl fmt::Display,
    ) -> Self {
        InvalidSetting::new(setting, value, format!("{min} to {max}"))
    }
}

impl fmt::Display for InvalidSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(lane) = self.lane {
            write!(f, "lane {lane}: ")?;
        }
        write!(
            f,
            "{} = {} is not allowed (expected {})",
            self.setting, self.value, self.expected
        )
    }
}

impl std::error::Error for InvalidSetting {}

/// The thread counts' own checks, as [`build`](crate::ExecutorBuilder::build)
/// and [`set_threads`](crate::Executor::set_threads) make them.
pub(crate) fn check_threads(core: usize, max: usize) -> Result<(), BuildError> {
    if max == 0 {
        return Err(InvalidSetting::new("max_threads", 0, "at least 1").into());
    }
    if core > max {
        return Err(BuildError::CoreExceedsMax { core, max });
    }
    Ok(())
}

fn stack_note(stack_size: Option<usize>) -> String {
    stack_size.map_or_else(String::new, |bytes| {
        format!(" with stack_size {bytes} bytes")
    })
}

/// A job the executor did not accept, handed back with the reason.
///
/// `Debug` and `Display` do not need `F: Debug`; get the job back with
/// [`into_inner`](EnqueueError::into_inner).
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

/// A wait with a timeout ran out of time:
/// [`Executor::shutdown_timeout`](crate::Executor::shutdown_timeout) (the
/// workers go on draining in the background; nothing is dropped),
/// [`Executor::await_termination`](crate::Executor::await_termination) or
/// [`Executor::wait_idle_timeout`](crate::Executor::wait_idle_timeout).
///
/// # Examples
///
/// ```
/// use priority_executor::TimedOut;
///
/// let t = TimedOut { queued: 3, running: 1 };
/// assert_eq!(t.to_string(), "timed out with 3 jobs queued and 1 running");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("timed out with {queued} jobs queued and {running} running")]
pub struct TimedOut {
    /// Jobs still queued when the time ran out.
    pub queued: usize,
    /// Jobs running when the time ran out.
    pub running: usize,
}

/// A name that names nothing: no lane of an executor
/// ([`Executor::lane_priority`](crate::Executor::lane_priority)), no
/// executor or no registered sequence of a registry. Its message lists the
/// names there are.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, LaneConfig, Priority};
///
/// let exec = Executor::builder()
///     .lane_config(LaneConfig::new(Priority(10)).name("interactive"))
///     .lane_config(LaneConfig::new(Priority(1)).name("batch"))
///     .lane(Priority(0), Capacity::Unbounded)
///     .build()?;
/// let err = exec.lane_priority("bulk").unwrap_err();
/// assert_eq!(err.to_string(), "no lane named \"bulk\" (lanes: interactive, batch)");
/// assert_eq!(err.name, "bulk");
/// assert_eq!(err.known, ["interactive", "batch"]);
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownName {
    /// The name that was not found.
    pub name: String,
    /// The names there are: executors and sequences sorted, lanes highest
    /// priority first (unnamed lanes are not listed).
    pub known: Vec<String>,
    /// What was named: `lane`, `executor`, `sequence`.
    what: &'static str,
}

impl UnknownName {
    pub(crate) fn new(what: &'static str, name: &str, known: Vec<String>) -> Self {
        UnknownName {
            what,
            name: name.to_owned(),
            known,
        }
    }
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known = List(&self.known);
        write!(
            f,
            "no {} named {:?} ({}s: {known})",
            self.what, self.name, self.what
        )
    }
}

impl std::error::Error for UnknownName {}
