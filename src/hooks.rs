//! Callbacks an executor runs on its worker threads: before and after each
//! job, for expired jobs and for dead letters. The place to plug in what
//! the `metrics` and `tracing` features do not record.

use crate::priority::Priority;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// How one run of a job ended, for the lane's counters and the hooks.
///
/// # Examples
///
/// ```
/// use priority_executor::JobOutcome;
///
/// assert_ne!(JobOutcome::Completed, JobOutcome::Panicked);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobOutcome {
    /// The job returned a value.
    Completed,
    /// The job panicked (caught; the worker lives on).
    Panicked,
    /// The attempt failed and the job was queued again.
    Retrying,
    /// The last attempt failed; the job went to the dead letters.
    DeadLettered,
    /// A future (from
    /// [`spawn_future`](crate::Executor::spawn_future)) returned
    /// `Poll::Pending`: it holds no worker now and is polled again once
    /// woken. Counted in no counter: the poll that completes it is.
    Suspended,
}

/// What a hook is told about the job it is called for: its lane, its queue
/// wait, the executor's name and which attempt this is. Building it costs
/// nothing when no hook is set: the executor's name is borrowed, not
/// copied.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, JobOutcome, Priority};
/// use std::sync::{Arc, Mutex};
///
/// let runs = Arc::new(Mutex::new(Vec::new()));
/// let seen = runs.clone();
/// let exec = Executor::builder()
///     .name("visa")
///     .lane(Priority(1), Capacity::Unbounded)
///     .after_execute(move |info, outcome| {
///         // `info.waited` is the queue wait of this attempt.
///         let run = (info.executor.to_owned(), info.priority, info.attempt, outcome);
///         seen.lock().unwrap().push(run);
///     })
///     .build()
///     .unwrap();
/// exec.enqueue(Priority(1), || ()).unwrap().join().unwrap();
/// exec.shutdown();
/// let first = ("visa".to_owned(), Priority(1), 1, JobOutcome::Completed);
/// assert_eq!(*runs.lock().unwrap(), [first]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct JobInfo<'a> {
    /// The lane the job was dispatched from.
    pub priority: Priority,
    /// How long it waited in the queue before this run: since `enqueue`,
    /// or for a retry since it was queued again.
    pub waited: Duration,
    /// The name of the executor running it (borrowed from the executor).
    pub executor: &'a str,
    /// Which run of the job this is: 1 for its first, `n + 1` for its
    /// `n`-th retry.
    pub attempt: u32,
}

/// A job whose last attempt failed, as given to the dead-letter callback.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, JobError, Priority, RetryPolicy};
/// use std::sync::mpsc;
///
/// let (tx, dead) = mpsc::channel();
/// let exec = Executor::builder()
///     .lane(Priority(1), Capacity::Unbounded)
///     .on_dead_letter(move |letter| tx.send(letter).unwrap())
///     .build()
///     .unwrap();
/// let h = exec
///     .enqueue_retrying(Priority(1), |_| Err::<(), _>("backend down"), RetryPolicy::new(1))
///     .unwrap();
/// assert_eq!(h.join(), Err(JobError::Failed { attempts: 2, message: "backend down".into() }));
/// let letter = dead.recv().unwrap();
/// assert_eq!((letter.attempts, letter.error.as_str()), (2, "backend down"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeadJob {
    /// The lane of the last attempt.
    pub priority: Priority,
    /// How many times the job ran.
    pub attempts: u32,
    /// The last attempt's error (or panic message).
    pub error: String,
}

/// A job that was not started because its deadline had passed.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, JobError, JobOptions, Priority};
/// use std::sync::mpsc;
/// use std::time::Instant;
///
/// let (tx, expired) = mpsc::channel();
/// let exec = Executor::builder()
///     .lane(Priority(1), Capacity::Unbounded)
///     .on_expired(move |job| tx.send(job.priority).unwrap())
///     .build()
///     .unwrap();
/// let past = Instant::now();
/// let h = exec.enqueue_with(Priority(1), || (), JobOptions::new().deadline(past)).unwrap();
/// assert_eq!(h.join(), Err(JobError::Expired));
/// assert_eq!(expired.recv().unwrap(), Priority(1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExpiredJob {
    /// The job's lane.
    pub priority: Priority,
    /// How long it had waited.
    pub waited: Duration,
}

pub(crate) type BeforeHook = Arc<dyn Fn(&JobInfo<'_>) + Send + Sync>;
pub(crate) type AfterHook = Arc<dyn Fn(&JobInfo<'_>, JobOutcome) + Send + Sync>;
pub(crate) type DeadJobHook = Arc<dyn Fn(DeadJob) + Send + Sync>;
pub(crate) type ExpiredHook = Arc<dyn Fn(ExpiredJob) + Send + Sync>;
pub(crate) type ThreadHook = Arc<dyn Fn() + Send + Sync>;
pub(crate) type ThreadNameFn = Arc<dyn Fn(usize) -> String + Send + Sync>;

/// How worker threads are started: stack size, name, and the hooks run on
/// each worker as it starts and before it exits.
#[derive(Clone, Default)]
pub(crate) struct ThreadSettings {
    pub(crate) stack_size: Option<usize>,
    pub(crate) name: Option<ThreadNameFn>,
    pub(crate) on_start: Option<ThreadHook>,
    pub(crate) on_stop: Option<ThreadHook>,
}

impl fmt::Debug for ThreadSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadSettings")
            .field("stack_size", &self.stack_size)
            .field("thread_name", &self.name.is_some())
            .field("on_thread_start", &self.on_start.is_some())
            .field("on_thread_stop", &self.on_stop.is_some())
            .finish()
    }
}

/// The executor's callbacks, all optional.
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) before: Option<BeforeHook>,
    pub(crate) after: Option<AfterHook>,
    pub(crate) dead_letter: Option<DeadJobHook>,
    pub(crate) expired: Option<ExpiredHook>,
}

impl Hooks {
    /// Do the hooks need each job's enqueue time?
    pub(crate) fn need_clock(&self) -> bool {
        self.before.is_some() || self.after.is_some() || self.expired.is_some()
    }
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("before_execute", &self.before.is_some())
            .field("after_execute", &self.after.is_some())
            .field("on_dead_letter", &self.dead_letter.is_some())
            .field("on_expired", &self.expired.is_some())
            .finish()
    }
}
