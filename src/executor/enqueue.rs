//! The enqueue family of [`Executor`]: one job (with options: how long
//! to wait for room, a deadline), a job with a retry policy, a value to
//! hand back if refused, a batch, or a future.

use super::Executor;
use crate::error::{BatchError, EnqueueError};
use crate::job::body::{Call, Once, Retrying};
use crate::job::{Attempt, JobHandle, JobOptions, RetryPolicy};
use crate::pool::NewFuture;
use crate::priority::Priority;
use crate::sync::Arc;
use crate::sync::Wait;
use std::fmt;
use std::future::Future;
use std::time::Duration;

impl Executor {
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

    /// Like [`enqueue`](Executor::enqueue), with per-job options: how
    /// long to wait for room in a full lane
    /// ([`wait_at_most`](JobOptions::wait_at_most); zero never blocks),
    /// and a deadline or time to live after which the job is not started
    /// (its handle resolves [`JobError::Expired`](crate::JobError::Expired),
    /// the lane counts it, and the executor's
    /// [`on_expired`](crate::ExecutorBuilder::on_expired) hook hears of it).
    /// Expired jobs are dropped at dispatch, so they never hold up a lane.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](Executor::enqueue), and [`EnqueueError::Full`] when
    /// the lane is still full once the options' wait is over.
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
        self.shared.submit(
            priority,
            job,
            options.expires_at(),
            options.wait_mode(),
            once,
        )
    }

    /// Queues `job` if its lane has room now, else hands it back at once
    /// (crossbeam-channel's, flume's and tokio's `try_send`):
    /// `enqueue_with(priority, job, JobOptions::new().wait_at_most(Duration::ZERO))`.
    /// Never blocks, never runs the job inline and never pushes another
    /// job out: a full lane refuses it whatever its policy. Returns the
    /// handle [`enqueue`](Executor::enqueue) does.
    ///
    /// # Errors
    ///
    /// As [`enqueue_with`](Executor::enqueue_with): [`EnqueueError::Full`]
    /// ([`is_full`](EnqueueError::is_full)) at once when the lane is full,
    /// [`EnqueueError::ShutDown`] ([`is_shut_down`](EnqueueError::is_shut_down))
    /// once the executor is shutting down. The job is in the error.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Bounded(1)).build()?;
    /// exec.pause_lane(Priority(1))?; // nothing leaves the lane
    /// let first = exec.try_enqueue(Priority(1), || 1)?;
    /// let err = exec.try_enqueue(Priority(1), || 2).unwrap_err();
    /// assert!(err.is_full());
    /// assert_eq!(err.into_inner()(), 2); // handed back at once, unrun
    /// exec.resume_lane(Priority(1))?;
    /// assert_eq!(first.join(), Ok(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn try_enqueue<F, T>(
        &self,
        priority: Priority,
        job: F,
    ) -> Result<JobHandle<T>, EnqueueError<F>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let no_wait = JobOptions::new().wait_at_most(Duration::ZERO);
        self.enqueue_with(priority, job, no_wait)
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
    /// See [`Attempt`] and [`DeadJob`](crate::DeadJob).
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
    /// [`enqueue_with`](Executor::enqueue_with), but a refused job hands back
    /// `value` itself rather than a closure, which is opaque. A caller that
    /// must get its data back from a refusal (a message to redeliver, say)
    /// then needs no shared slot to recover it from. `run` is a function,
    /// not a closure, so that nothing but `value` is lost when the job is
    /// refused; a closure that captures nothing coerces to one.
    ///
    /// With options that never wait (`wait_at_most(Duration::ZERO)`) this
    /// suits callers that must not block and must get their data back,
    /// such as an async server queueing a request.
    ///
    /// # Errors
    ///
    /// As [`enqueue_with`](Executor::enqueue_with); the error holds
    /// `value` ([`EnqueueError::into_inner`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, EnqueueError, Executor, JobOptions, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Bounded(4)).build()?;
    /// let length = |form: String| form.len();
    /// let options = JobOptions::new().wait_at_most(Duration::ZERO).ttl(Duration::from_secs(60));
    /// let handle = exec.enqueue_value(Priority(1), "visa".to_owned(), length, options).unwrap();
    /// assert_eq!(handle.join(), Ok(4));
    ///
    /// let err = exec.enqueue_value(Priority(9), "form".to_owned(), length, options).unwrap_err();
    /// assert!(matches!(err, EnqueueError::UnknownPriority { .. }));
    /// assert_eq!(err.into_inner(), "form"); // the value, not a closure
    /// # Ok::<(), priority_executor::BuildError>(())
    /// ```
    pub fn enqueue_value<V, T>(
        &self,
        priority: Priority,
        value: V,
        run: fn(V) -> T,
        options: JobOptions,
    ) -> Result<JobHandle<T>, EnqueueError<V>>
    where
        V: Send + 'static,
        T: Send + 'static,
    {
        let wait = options.wait_mode();
        self.shared
            .submit(priority, value, options.expires_at(), wait, move |value| {
                Call {
                    value: Some(value),
                    run,
                }
            })
    }

    /// Queues many jobs of one priority in one call (Java's `invokeAll`,
    /// without the wait), in order. Returns the handles in the batch's
    /// order.
    ///
    /// Each job is offered as [`enqueue`](Executor::enqueue) would
    /// offer it: on a full lane the batch waits for a slot, or follows the
    /// lane's [`RejectionPolicy`](crate::RejectionPolicy) (caller-runs
    /// runs that job here and goes on; discard-oldest pushes out the
    /// lane's oldest job, possibly one of this batch).
    ///
    /// Each job is published, and an idle worker woken for it, before
    /// `jobs` is asked for the next one: the batch holds no slot and no
    /// job back while the iterator runs. So a lazy iterator may wait for
    /// the results of the jobs before it, or enqueue into the same lane;
    /// if it panics, the panic reaches the caller, the jobs it yielded
    /// before are queued (their handles are lost with the unwinding, and
    /// they run detached) and the lane's capacity is whole.
    ///
    /// # Errors
    ///
    /// The batch stops queueing at the first job refused
    /// ([`EnqueueError::Full`] under the reject policy,
    /// [`EnqueueError::ShutDown`] once the executor closes, or
    /// [`EnqueueError::UnknownPriority`] for the first job). Nothing is
    /// lost: the [`BatchError`](crate::BatchError) holds the handles of
    /// the jobs queued before it, which run as usual, and gives back the
    /// refused job and all after it, unrun, in order.
    ///
    /// To give them back, the rest of the iterator is read to its end
    /// after a refusal: an endless iterator, or one that waits (a
    /// channel's `iter()`), keeps the call until it ends. Bound such a
    /// stream (`take(n)`), or queue it job by job with
    /// [`enqueue`](Executor::enqueue). If the iterator panics while the
    /// rest is read, the refused job and the rest read so far are dropped
    /// unrun with the unwinding (none was queued, so no handle waits for
    /// them). An empty batch is always `Ok`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, EnqueueError, Executor, Priority};
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
    /// assert!(matches!(err.error, EnqueueError::UnknownPriority { .. }));
    /// assert_eq!(err.rest.len(), 1);
    /// assert_eq!(err.error.into_inner()(), 0);
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
    /// The first poll is queued as [`enqueue`](Executor::enqueue)
    /// queues a job (it waits for a slot in a full lane, or follows the
    /// lane's policy). Later polls go in as retries do: a full lane does
    /// not refuse them and a waker never blocks. A parked future (waiting
    /// for its waker) is neither queued nor running: `wait_idle` and a
    /// graceful shutdown do not wait for it. Woken while a graceful
    /// shutdown still waits for the workers, it is polled as usual; once
    /// a thread outside the pool has waited for its end (closed, every
    /// worker gone), a future still parked is dropped, woken or not, its
    /// handle resolving `Cancelled` (counted in the lane's `cancelled`).
    /// After [`shutdown_now`](Executor::shutdown_now) nothing is
    /// polled any more: a queued poll is handed back as a `PendingJob`
    /// (whose `run` polls once), and a parked future woken then is dropped,
    /// its handle resolving `Cancelled` (counted in the lane's
    /// `cancelled`). A future that is never woken never finishes, as under
    /// any executor.
    ///
    /// # Errors
    ///
    /// As [`enqueue`](Executor::enqueue), with the future in the
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
    /// let for_future = exec.clone();
    /// // A future that awaits a job of another lane, then adds to it.
    /// let total = exec
    ///     .spawn_future(Priority(10), async move {
    ///         let part = for_future.enqueue(Priority(1), || 40).unwrap().await.unwrap();
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
            move |future, meta, lane| {
                let meta = meta.unwrap_or_else(|| crate::job::task::JobMeta::new(0, 0));
                NewFuture::new(future, pool, lane, meta)
            },
        )
    }
}

/// Wraps a plain closure as a job body.
#[inline]
fn once<F>(f: F) -> Once<F> {
    Once(Some(f))
}
