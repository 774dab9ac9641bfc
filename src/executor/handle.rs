//! [`ExecutorHandle`]: a cheap, clonable reference to an executor, through
//! which jobs and other threads enqueue, read the metrics and shut it down.

use super::ExecutorConfig;
use crate::error::{BatchError, BuildError, EnqueueError};
use crate::job::body::{Call, Once, Retrying};
use crate::job::{Attempt, JobHandle, JobOptions, PendingJob, RetryPolicy};
use crate::lane::picker::Picker;
use crate::metrics::{LaneMetrics, Metrics, ThreadMetrics};
use crate::pool::{NewFuture, Shared, Wait};
use crate::priority::Priority;
use crate::sync::atomic::Ordering;
use crate::sync::{Arc, deadline_after};
use std::fmt;
use std::future::Future;
use std::time::Duration;

/// A cheap, clonable handle to an [`Executor`](crate::Executor), as tokio's
/// `Handle` is to its runtime: `Clone`, `Send` and `Sync`, one reference
/// count to copy. Get one with [`Executor::handle`](crate::Executor::handle).
///
/// It does everything `&Executor` does (an `Executor` dereferences to its
/// handle, so the methods below are the executor's too): the enqueue family,
/// metrics, [`shutdown`](ExecutorHandle::shutdown) through `&self`,
/// [`shutdown_now`](ExecutorHandle::shutdown_now),
/// [`await_termination`](ExecutorHandle::await_termination) and
/// [`is_terminated`](ExecutorHandle::is_terminated).
///
/// A handle does not keep the executor running: the `Executor` is the
/// owner, and dropping it is a graceful shutdown whatever handles remain.
/// From then on a handle's `enqueue` hands the job back as
/// [`EnqueueError::ShutDown`]. So a handle stored inside a queued job never
/// keeps its own executor alive.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
///
/// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
/// let handle = exec.handle();
///
/// // A job enqueues a follow-up job through its own copy of the handle.
/// let inner = handle.clone();
/// let outer = handle
///     .enqueue(Priority(1), move || inner.enqueue(Priority(1), || 21 * 2).unwrap())
///     .unwrap();
/// assert_eq!(outer.join().unwrap().join(), Ok(42));
///
/// // Another thread shuts the executor down through `&self`.
/// std::thread::spawn(move || handle.shutdown()).join().unwrap();
/// assert!(exec.is_terminated());
/// assert!(exec.enqueue(Priority(1), || ()).unwrap_err().is_shut_down());
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
#[derive(Clone)]
pub struct ExecutorHandle {
    pub(crate) shared: Arc<Shared>,
}

impl ExecutorHandle {
    /// The executor's name.
    ///
    /// # Examples
    ///
    /// See [`Executor`](crate::Executor).
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The priorities that have lanes, highest first.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .lane(Priority(10), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(exec.priorities(), vec![Priority(10), Priority(1)]);
    /// ```
    pub fn priorities(&self) -> Vec<Priority> {
        self.shared.priorities()
    }

    /// The picker choosing between lanes.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Picker, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// assert_eq!(exec.picker(), Picker::Smooth);
    /// ```
    pub fn picker(&self) -> Picker {
        self.shared.picker()
    }

    /// Queues `job` in the lane of `priority` and returns a handle to its
    /// result. Blocks while that lane is full (backpressure).
    ///
    /// # Errors
    ///
    /// [`EnqueueError::UnknownPriority`] if no lane has this priority,
    /// [`EnqueueError::ShutDown`] if the executor is shutting down (also
    /// when that happens while this call waits for a slot). The job is in
    /// the error.
    ///
    /// # Examples
    ///
    /// See [`Executor`](crate::Executor).
    pub fn enqueue<F, T>(&self, priority: Priority, job: F) -> Result<JobHandle<T>, EnqueueError<F>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.shared.submit(priority, job, None, Wait::Forever, once)
    }

    /// Like [`enqueue`](ExecutorHandle::enqueue), but never blocks.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](ExecutorHandle::enqueue), and [`EnqueueError::Full`] if the
    /// lane is full.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::mpsc;
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(1)
    ///     .max_threads(1)
    ///     .lane(Priority(1), Capacity::Bounded(1))
    ///     .build()
    ///     .unwrap();
    /// let (started_tx, started) = mpsc::channel();
    /// let (release, gate) = mpsc::channel::<()>();
    /// exec.enqueue(Priority(1), move || {
    ///     started_tx.send(()).unwrap();
    ///     gate.recv().ok();
    /// })
    /// .unwrap();
    /// started.recv().unwrap(); // the worker is busy, the lane empty
    /// exec.try_enqueue(Priority(1), || ()).unwrap(); // fills the lane
    /// let err = exec.try_enqueue(Priority(1), || ()).unwrap_err();
    /// assert!(err.is_full());
    /// release.send(()).unwrap();
    /// ```
    pub fn try_enqueue<F, T>(
        &self,
        priority: Priority,
        job: F,
    ) -> Result<JobHandle<T>, EnqueueError<F>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.shared.submit(priority, job, None, Wait::No, once)
    }

    /// Like [`enqueue`](ExecutorHandle::enqueue), but waits at most `timeout` for
    /// a slot in a full lane.
    ///
    /// # Errors
    ///
    /// As [`try_enqueue`](ExecutorHandle::try_enqueue); `Full` once the time has
    /// run out.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Bounded(8)).build().unwrap();
    /// let handle = exec
    ///     .enqueue_timeout(Priority(1), || 1, Duration::from_millis(100))
    ///     .unwrap();
    /// assert_eq!(handle.join(), Ok(1));
    /// ```
    pub fn enqueue_timeout<F, T>(
        &self,
        priority: Priority,
        job: F,
        timeout: Duration,
    ) -> Result<JobHandle<T>, EnqueueError<F>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.shared
            .submit(priority, job, None, Wait::at_most(timeout), once)
    }

    /// Like [`enqueue`](ExecutorHandle::enqueue), with per-job options: a
    /// deadline or time to live after which the job is not started (its
    /// handle resolves [`JobError::Expired`](crate::JobError::Expired), the
    /// lane counts it, and the executor's
    /// [`on_expired`](crate::ExecutorBuilder::on_expired) hook hears of it).
    /// Expired jobs are dropped at dispatch, so they never hold up a lane.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](ExecutorHandle::enqueue).
    ///
    /// # Examples
    ///
    /// See [`JobOptions`].
    pub fn enqueue_with<F, T>(
        &self,
        priority: Priority,
        job: F,
        options: JobOptions,
    ) -> Result<JobHandle<T>, EnqueueError<F>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.shared
            .submit(priority, job, options.deadline, Wait::Forever, once)
    }

    /// Queues a job that may fail and be tried again: `job` returns
    /// `Err` (or panics) to ask for another attempt, which is queued again
    /// (after the policy's backoff, at its retry priority) until
    /// `max_retries` retries have failed too. Then the handle resolves
    /// [`JobError::Failed`](crate::JobError::Failed) and the executor's
    /// [`on_dead_letter`](crate::ExecutorBuilder::on_dead_letter) hook
    /// receives it. Nothing is dropped silently.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](ExecutorHandle::enqueue).
    ///
    /// # Examples
    ///
    /// See [`Attempt`] and [`DeadLetter`](crate::DeadLetter).
    pub fn enqueue_retrying<F, T, E>(
        &self,
        priority: Priority,
        job: F,
        policy: RetryPolicy,
    ) -> Result<JobHandle<T>, EnqueueError<F>>
    where
        F: FnMut(Attempt) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: fmt::Display,
    {
        self.shared
            .submit(priority, job, None, Wait::Forever, move |f| {
                Retrying::new(f, policy)
            })
    }

    /// Queues `run(value)` in the lane of `priority`: like
    /// [`enqueue`](ExecutorHandle::enqueue), but a refused job hands back
    /// `value` itself rather than a closure, which is opaque. A caller that
    /// must get its data back from a refusal (a message to redeliver, say)
    /// then needs no shared slot to recover it from. `run` is a function,
    /// not a closure, so that nothing but `value` is lost when the job is
    /// refused; a closure that captures nothing coerces to one.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](ExecutorHandle::enqueue); the error holds `value`
    /// ([`EnqueueError::into_inner`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
    /// let length = |form: String| form.len();
    /// let handle = exec.enqueue_value(Priority(1), "visa".to_owned(), length).unwrap();
    /// assert_eq!(handle.join(), Ok(4));
    ///
    /// let err = exec.enqueue_value(Priority(9), "form".to_owned(), length).unwrap_err();
    /// assert!(err.is_unknown_priority());
    /// assert_eq!(err.into_inner(), "form"); // the value, not a closure
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn enqueue_value<V, T>(
        &self,
        priority: Priority,
        value: V,
        run: fn(V) -> T,
    ) -> Result<JobHandle<T>, EnqueueError<V>>
    where
        V: Send + 'static,
        T: Send + 'static,
    {
        self.shared
            .submit(priority, value, None, Wait::Forever, move |value| Call {
                value: Some(value),
                run,
            })
    }

    /// Like [`enqueue_value`](ExecutorHandle::enqueue_value), but never
    /// blocks.
    ///
    /// # Errors
    ///
    /// As [`try_enqueue`](ExecutorHandle::try_enqueue); the error holds
    /// `value`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
    /// let _pending = exec.shutdown_now();
    /// let err = exec.try_enqueue_value(Priority(1), vec![1, 2, 3], |v: Vec<i32>| v.len()).unwrap_err();
    /// assert!(err.is_shut_down());
    /// assert_eq!(err.into_inner(), [1, 2, 3]);
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn try_enqueue_value<V, T>(
        &self,
        priority: Priority,
        value: V,
        run: fn(V) -> T,
    ) -> Result<JobHandle<T>, EnqueueError<V>>
    where
        V: Send + 'static,
        T: Send + 'static,
    {
        self.shared
            .submit(priority, value, None, Wait::No, move |value| Call {
                value: Some(value),
                run,
            })
    }

    /// Blocks until the executor is idle: no job queued, none running, no
    /// retry waiting out its backoff (`threadpool`'s and `rusty_pool`'s
    /// `join`). The executor keeps running and accepting jobs; any number
    /// of threads may wait at once. Returns at once if it is idle already,
    /// and also once it has terminated.
    ///
    /// It is a moment, not a state: jobs enqueued concurrently may or may
    /// not be waited for. Not counted: jobs running on a producer's thread
    /// under [`RejectionPolicy::CallerRuns`](crate::RejectionPolicy), and a
    /// future from [`spawn_future`](ExecutorHandle::spawn_future) parked
    /// until its waker is woken (it is neither queued nor running). After
    /// [`shutdown_now`](ExecutorHandle::shutdown_now), what was queued
    /// will not run, so only the running jobs are waited for.
    ///
    /// Called from inside one of the executor's own jobs, it waits for
    /// everything but that job; if that job's worker is the only one left
    /// to run what is queued, the wait never ends.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let done = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..100 {
    ///     let done = done.clone();
    ///     let _detached = exec.enqueue(Priority(1), move || done.fetch_add(1, Ordering::SeqCst));
    /// }
    /// exec.wait_idle();
    /// assert_eq!(done.load(Ordering::SeqCst), 100);
    /// // Still running: more jobs are welcome.
    /// assert_eq!(exec.enqueue(Priority(1), || 1).unwrap().join(), Ok(1));
    /// ```
    pub fn wait_idle(&self) {
        self.shared.wait_idle(None);
    }

    /// Like [`wait_idle`](ExecutorHandle::wait_idle), but waits at most
    /// `timeout`. Returns whether the executor was idle (or terminated).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::mpsc;
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let (release, gate) = mpsc::channel::<()>();
    /// let job = exec.enqueue(Priority(1), move || gate.recv().ok()).unwrap();
    /// assert!(!exec.wait_idle_timeout(Duration::from_millis(10))); // the job waits
    /// release.send(()).unwrap();
    /// assert!(exec.wait_idle_timeout(Duration::from_secs(30)));
    /// assert!(job.is_finished());
    /// ```
    pub fn wait_idle_timeout(&self, timeout: Duration) -> bool {
        self.shared.wait_idle_timeout(timeout)
    }

    /// The settings the executor runs with: thread counts, keep-alive,
    /// picker and every lane's configuration.
    ///
    /// # Examples
    ///
    /// See [`ExecutorConfig`].
    pub fn config(&self) -> ExecutorConfig {
        let shared = &self.shared;
        let limits = shared.limits.snapshot();
        ExecutorConfig {
            name: shared.name.clone(),
            core_threads: limits.core,
            max_threads: limits.max,
            keep_alive: limits.keep_alive,
            allow_core_timeout: limits.allow_core_timeout,
            picker: shared.picker(),
            lanes: shared.lane_configs.to_vec(),
            stack_size: shared.thread_settings.stack_size,
        }
    }

    /// Queues many jobs of one priority in one call (Java's `invokeAll`,
    /// without the wait): in order, published into the lane a chunk at a
    /// time with one count and one wake-up per chunk instead of one per
    /// job, so idle workers are woken once, as soon as the first jobs are
    /// in. Returns the handles in the batch's order.
    ///
    /// Each job is offered as [`enqueue`](ExecutorHandle::enqueue) would
    /// offer it: on a full lane the batch waits for a slot (after
    /// publishing what it holds, so the workers can free one), or follows
    /// the lane's [`RejectionPolicy`](crate::RejectionPolicy) (caller-runs
    /// runs that job here and goes on; discard-oldest pushes out the
    /// lane's oldest job, possibly one of this batch).
    ///
    /// # Errors
    ///
    /// The batch stops at the first job refused ([`EnqueueError::Full`]
    /// under the reject policy, [`EnqueueError::ShutDown`] once the
    /// executor closes, or [`EnqueueError::UnknownPriority`] for the
    /// first job). Nothing is lost: the [`BatchError`](crate::BatchError)
    /// holds the handles of the jobs queued before it, which run as usual,
    /// and gives back the refused job and all after it, unrun, in order.
    /// An empty batch is always `Ok`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let handles = exec
    ///     .enqueue_batch(Priority(1), (0..100u64).map(|i| move || i * i))
    ///     .unwrap();
    /// let sum: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    /// assert_eq!(sum, (0..100).map(|i| i * i).sum());
    ///
    /// // Refused as a whole for an unknown priority, jobs handed back.
    /// let err = exec.enqueue_batch(Priority(2), vec![|| 0u64, || 1]).unwrap_err();
    /// assert!(err.error.is_unknown_priority());
    /// assert_eq!(err.into_parts().refused.len(), 2);
    /// ```
    pub fn enqueue_batch<F, T, I>(
        &self,
        priority: Priority,
        jobs: I,
    ) -> Result<Vec<JobHandle<T>>, BatchError<F, T>>
    where
        I: IntoIterator<Item = F>,
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.shared.submit_batch(priority, jobs)
    }

    /// Runs a `Future` to completion on the pool at `priority`, without an
    /// async runtime (rusty_pool's `spawn`/`complete`). A worker polls it;
    /// when it returns `Pending` the worker goes back to other jobs, and
    /// once the future's waker is woken its next poll is queued in the same
    /// lane (a wake while it is being polled is not lost; a wake after it
    /// finished does nothing). The handle gives its output
    /// ([`join`](JobHandle::join) or `.await`); a panic in `poll` comes
    /// back as [`JobError::Panicked`](crate::JobError::Panicked).
    ///
    /// The first poll is queued as [`enqueue`](ExecutorHandle::enqueue)
    /// queues a job (it waits for a slot in a full lane, or follows the
    /// lane's policy). Later polls go in as retries do: a full lane does
    /// not refuse them and a waker never blocks. A parked future (waiting
    /// for its waker) is neither queued nor running: `wait_idle` and a
    /// graceful shutdown do not wait for it, and if it is woken after a
    /// graceful shutdown it is still polled, on a thread started for it.
    /// After [`shutdown_now`](ExecutorHandle::shutdown_now) nothing is
    /// polled any more: a queued poll is handed back as a `PendingJob`
    /// (whose `run` polls once), and a parked future woken then is dropped,
    /// its handle resolving `Cancelled` (counted in the lane's
    /// `cancelled`). A future that is never woken never finishes, as under
    /// any executor.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](ExecutorHandle::enqueue), with the future in the
    /// error, unpolled.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .lane(Priority(10), Capacity::Unbounded)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// let handle = exec.handle();
    /// // A future that awaits a job of another lane, then adds to it.
    /// let total = exec
    ///     .spawn_future(Priority(10), async move {
    ///         let part = handle.enqueue(Priority(1), || 40).unwrap().await.unwrap();
    ///         part + 2
    ///     })
    ///     .unwrap();
    /// assert_eq!(total.join(), Ok(42));
    /// ```
    pub fn spawn_future<Fut>(
        &self,
        priority: Priority,
        future: Fut,
    ) -> Result<JobHandle<Fut::Output>, EnqueueError<Fut>>
    where
        Fut: Future + Send + 'static,
        Fut::Output: Send + 'static,
    {
        let pool = Arc::downgrade(&self.shared);
        self.shared.submit_with(
            priority,
            future,
            None,
            Wait::Forever,
            move |future, meta, lane| NewFuture::new(future, pool, lane, meta),
        )
    }

    /// Changes `core_threads` of the running executor (Java's
    /// `setCorePoolSize`). Growing starts threads at once for jobs that
    /// wait, up to the new core; shrinking lets the workers now above core
    /// exit once idle for the keep-alive. No job is lost or moved either
    /// way: jobs stay in their lanes and the workers alive take them.
    ///
    /// # Errors
    ///
    /// [`BuildError::CoreExceedsMax`](crate::BuildError::CoreExceedsMax)
    /// if `core` is above `max_threads` (nothing changes).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{BuildError, Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(1)
    ///     .max_threads(4)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// exec.set_core_threads(3).unwrap();
    /// assert_eq!(exec.prestart_core_threads(), 3);
    /// assert_eq!(exec.config().core_threads, 3);
    /// assert_eq!(
    ///     exec.set_core_threads(5),
    ///     Err(BuildError::CoreExceedsMax { core: 5, max: 4 })
    /// );
    /// ```
    pub fn set_core_threads(&self, core: usize) -> Result<(), BuildError> {
        self.shared.set_core(core)
    }

    /// Changes `max_threads` of the running executor (Java's
    /// `setMaximumPoolSize`). Growing starts threads at once while more
    /// jobs wait than workers are idle; shrinking lets the workers above
    /// the new max exit as soon as they are idle (a running job is never
    /// interrupted). No job is lost. A lane's `max_running` given as
    /// [`MaxRunning::Percent`](crate::MaxRunning::Percent) stays resolved
    /// against the `max_threads` the executor was built with.
    ///
    /// # Errors
    ///
    /// [`BuildError::ZeroMaxThreads`](crate::BuildError::ZeroMaxThreads)
    /// for 0, [`BuildError::CoreExceedsMax`](crate::BuildError::CoreExceedsMax)
    /// if `max` is below `core_threads` (lower the core first); nothing
    /// changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{BuildError, Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(2)
    ///     .max_threads(2)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// exec.set_max_threads(8).unwrap();
    /// assert_eq!(exec.config().max_threads, 8);
    /// assert_eq!(exec.set_max_threads(0), Err(BuildError::ZeroMaxThreads));
    /// assert_eq!(
    ///     exec.set_max_threads(1),
    ///     Err(BuildError::CoreExceedsMax { core: 2, max: 1 })
    /// );
    /// ```
    pub fn set_max_threads(&self, max: usize) -> Result<(), BuildError> {
        self.shared.set_max(max)
    }

    /// Changes how long a thread above `core_threads` (or any thread, with
    /// `allow_core_timeout`) may stay idle before it exits (Java's
    /// `setKeepAliveTime`). Sleeping workers wake to sleep again with the
    /// new value.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// exec.set_keep_alive(Duration::from_secs(5));
    /// assert_eq!(exec.config().keep_alive, Duration::from_secs(5));
    /// ```
    pub fn set_keep_alive(&self, keep_alive: Duration) {
        self.shared.set_keep_alive(keep_alive);
    }

    /// Starts the core threads now instead of on demand; returns how many
    /// were started.
    ///
    /// # Examples
    ///
    /// See [`ThreadMetrics`].
    pub fn prestart_core_threads(&self) -> usize {
        self.shared.prestart_core()
    }

    /// A snapshot of the counters, per lane and for the threads. Lock-free:
    /// relaxed atomic loads only.
    ///
    /// # Examples
    ///
    /// See [`Metrics`].
    pub fn metrics(&self) -> Metrics {
        let lanes = self
            .shared
            .lanes
            .iter()
            .map(|lane| {
                let c = &lane.counters;
                LaneMetrics {
                    priority: lane.priority,
                    weight: lane.weight,
                    capacity: lane.capacity,
                    queued: lane.queued(),
                    submitted: lane.submitted(),
                    dispatched: c.dispatched.load(Ordering::Relaxed),
                    completed: c.completed.load(Ordering::Relaxed),
                    panicked: c.panicked.load(Ordering::Relaxed),
                    rejected: c.rejected.load(Ordering::Relaxed),
                    handed_back: c.handed_back.load(Ordering::Relaxed),
                    expired: c.expired.load(Ordering::Relaxed),
                    discarded: c.discarded.load(Ordering::Relaxed),
                    retried: c.retried.load(Ordering::Relaxed),
                    dead_lettered: c.dead_lettered.load(Ordering::Relaxed),
                    caller_ran: c.caller_ran.load(Ordering::Relaxed),
                    promoted: c.promoted.load(Ordering::Relaxed),
                    cancelled: c.cancelled.load(Ordering::Relaxed),
                    running: lane.running(),
                    max_running: (lane.max_running != usize::MAX).then_some(lane.max_running),
                    when_full: lane.when_full,
                }
            })
            .collect();
        let (live, idle, peak, sleeping) = self.shared.thread_counts();
        Metrics {
            name: self.shared.name.clone(),
            lanes,
            threads: ThreadMetrics {
                live,
                idle,
                busy: live - idle,
                peak,
                sleeping,
            },
        }
    }

    /// Has shutdown begun (no new job is accepted)?
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// assert!(!exec.is_shutdown());
    /// let _ = exec.shutdown_now();
    /// assert!(exec.is_shutdown());
    /// ```
    pub fn is_shutdown(&self) -> bool {
        self.shared.is_closed()
    }

    /// Graceful shutdown through `&self`: stops accepting jobs, runs every
    /// job already queued (and retries waiting out a backoff, at once), and
    /// waits for the worker threads to exit and joins them. Producers
    /// blocked on a full lane get their job back as
    /// [`EnqueueError::ShutDown`]. Idempotent, and callable from any number
    /// of threads.
    ///
    /// Called from inside one of the executor's own jobs it does not wait
    /// for the thread running that job (it cannot): it returns once every
    /// other worker has exited, and the calling worker, once its job
    /// returns, runs what is still queued and exits too. Nothing queued is
    /// dropped either way.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let ran = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..100 {
    ///     let ran = ran.clone();
    ///     let _detached = exec.enqueue(Priority(1), move || ran.fetch_add(1, Ordering::Relaxed));
    /// }
    /// exec.shutdown();
    /// assert_eq!(ran.load(Ordering::Relaxed), 100);
    /// assert!(exec.is_terminated());
    /// ```
    pub fn shutdown(&self) {
        self.shared.close();
        self.shared.wait_exited(None);
        self.shared.join_threads();
    }

    /// Has the executor terminated: shutdown has begun, every worker has
    /// exited, and no accepted job is left queued (Java's `isTerminated`)?
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// exec.enqueue(Priority(1), || ()).unwrap().join().unwrap();
    /// assert!(!exec.is_terminated()); // running: not even shut down
    /// exec.shutdown();
    /// assert!(exec.is_terminated());
    /// ```
    pub fn is_terminated(&self) -> bool {
        self.shared.is_terminated()
    }

    /// Stops at once: no new job is accepted, workers start no further job,
    /// and every job that never started is handed back, highest priority
    /// first, retries waiting out a backoff included. Jobs already running
    /// finish their attempt; a retrying job whose attempt then fails is not
    /// queued again but dead-lettered with its error
    /// ([`JobError::Failed`](crate::JobError::Failed), the `on_dead_letter`
    /// hook, counted `dead_lettered`). Dropping the executor afterwards
    /// joins the threads.
    ///
    /// A [`PendingJob`] can be [run](PendingJob::run) or dropped (its handle
    /// then resolves [`JobError::Cancelled`](crate::JobError::Cancelled)).
    ///
    /// # Examples
    ///
    /// See [`PendingJob`].
    pub fn shutdown_now(&self) -> Vec<PendingJob> {
        self.shared.stop_now()
    }

    /// After [`shutdown_now`](ExecutorHandle::shutdown_now), waits up to
    /// `timeout` for the jobs still running to finish and every worker to
    /// exit (Java's `awaitTermination`). Returns whether they all did;
    /// returns `false` at once if shutdown has not begun, since workers of
    /// a running executor do not exit.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let _detached = exec.enqueue(Priority(1), || ());
    /// assert!(!exec.await_termination(Duration::from_secs(1)));
    /// let _pending = exec.shutdown_now();
    /// assert!(exec.await_termination(Duration::from_secs(30)));
    /// assert_eq!(exec.metrics().threads.live, 0);
    /// ```
    pub fn await_termination(&self, timeout: Duration) -> bool {
        if !self.shared.is_closed() {
            return false;
        }
        self.shared.wait_exited(deadline_after(timeout))
    }
}

impl fmt::Debug for ExecutorHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecutorHandle")
            .field("name", &self.shared.name)
            .field("shut_down", &self.is_shutdown())
            .finish_non_exhaustive()
    }
}

/// Wraps a plain closure as a job body.
#[inline]
fn once<F>(f: F) -> Once<F> {
    Once(Some(f))
}
