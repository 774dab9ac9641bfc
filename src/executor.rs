//! The executor: the public face of the pool.

use crate::error::{EnqueueError, ShutdownTimeout};
use crate::job::body::{Call, Once, Retrying};
use crate::job::{Attempt, JobHandle, JobOptions, PendingJob, RetryPolicy};
use crate::lane::picker::Picker;
use crate::metrics::{LaneMetrics, Metrics, ThreadMetrics};
use crate::pool::{Shared, Wait};
use crate::priority::Priority;
use crate::sync::atomic::Ordering;
use crate::sync::{Arc, deadline_after};
use std::fmt;
use std::time::Duration;

/// A thread pool that runs jobs from one FIFO lane per priority, choosing
/// between lanes by weighted round robin.
///
/// Build one with [`Executor::builder`]. Share it between threads by
/// reference or in an `Arc`. Dropping it is a graceful
/// [`shutdown`](Executor::shutdown): every queued job runs, then the threads
/// are joined.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
///
/// let exec = Executor::builder()
///     .name("visa")
///     .lane(Priority(10), Capacity::Bounded(1000))
///     .lane(Priority(1), Capacity::Bounded(1000))
///     .build()?;
///
/// let urgent = exec.enqueue(Priority(10), || "priority visa").unwrap();
/// let normal = exec.enqueue(Priority(1), || "standard visa").unwrap();
/// assert_eq!(urgent.join(), Ok("priority visa"));
/// assert_eq!(normal.join(), Ok("standard visa"));
/// exec.shutdown();
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
pub struct Executor {
    shared: Arc<Shared>,
    /// Set when `shutdown_timeout` gave up waiting: `Drop` must not wait.
    detached: bool,
}

impl Executor {
    pub(crate) fn from_shared(shared: Arc<Shared>) -> Executor {
        Executor {
            shared,
            detached: false,
        }
    }

    /// The executor's name.
    ///
    /// # Examples
    ///
    /// See [`Executor`].
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
    /// See [`Executor`].
    pub fn enqueue<F, T>(&self, priority: Priority, job: F) -> Result<JobHandle<T>, EnqueueError<F>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.shared.submit(priority, job, None, Wait::Forever, once)
    }

    /// Like [`enqueue`](Executor::enqueue), but never blocks.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](Executor::enqueue), and [`EnqueueError::Full`] if the
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

    /// Like [`enqueue`](Executor::enqueue), but waits at most `timeout` for
    /// a slot in a full lane.
    ///
    /// # Errors
    ///
    /// As [`try_enqueue`](Executor::try_enqueue); `Full` once the time has
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

    /// Like [`enqueue`](Executor::enqueue), with per-job options: a
    /// deadline or time to live after which the job is not started (its
    /// handle resolves [`JobError::Expired`](crate::JobError::Expired), the
    /// lane counts it, and the executor's
    /// [`on_expired`](crate::ExecutorBuilder::on_expired) hook hears of it).
    /// Expired jobs are dropped at dispatch, so they never hold up a lane.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](Executor::enqueue).
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

    /// Queues `run(value)` in the lane of `priority`: like
    /// [`enqueue`](Executor::enqueue), but a refused job hands back `value`
    /// itself rather than a closure, which is opaque. A caller that must
    /// get its data back from a refusal (a message to redeliver, say) then
    /// needs no shared slot to recover it from. `run` is a function, not a
    /// closure, so that nothing but `value` is lost when the job is
    /// refused; a closure that captures nothing coerces to one.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](Executor::enqueue); the error holds `value`
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

    /// Like [`enqueue_value`](Executor::enqueue_value), but never blocks.
    ///
    /// # Errors
    ///
    /// As [`try_enqueue`](Executor::try_enqueue); the error holds `value`.
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
    /// As [`enqueue`](Executor::enqueue).
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

    /// Stops accepting jobs, runs every job already queued, and joins the
    /// threads. Producers blocked on a full lane get their job back as
    /// [`EnqueueError::ShutDown`].
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
    /// ```
    pub fn shutdown(self) {
        drop(self);
    }

    /// Like [`shutdown`](Executor::shutdown), but waits at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`ShutdownTimeout`] with the jobs still queued and running when the
    /// time ran out. The threads go on draining in the background: nothing
    /// queued is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let _detached = exec.enqueue(Priority(1), || ());
    /// assert!(exec.shutdown_timeout(Duration::from_secs(10)).is_ok());
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Result<(), ShutdownTimeout> {
        self.shared.close();
        if self.shared.wait_exited(deadline_after(timeout)) {
            self.shared.join_threads();
            Ok(())
        } else {
            self.detached = true;
            let m = self.metrics();
            Err(ShutdownTimeout {
                queued: m.queued(),
                running: m.threads.busy,
            })
        }
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

    /// After [`shutdown_now`](Executor::shutdown_now), waits up to
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

impl Drop for Executor {
    fn drop(&mut self) {
        if self.detached {
            return;
        }
        self.shared.close();
        self.shared.wait_exited(None);
        self.shared.join_threads();
    }
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executor")
            .field("name", &self.shared.name)
            .field("picker", &self.picker())
            .field("priorities", &self.priorities())
            .field("core_threads", &self.shared.config.core)
            .field("max_threads", &self.shared.config.max)
            .field("keep_alive", &self.shared.config.keep_alive)
            .finish_non_exhaustive()
    }
}

/// Wraps a plain closure as a job body.
#[inline]
fn once<F>(f: F) -> Once<F> {
    Once(Some(f))
}
