//! What a caller holds after `enqueue`: the job's result, or the job itself
//! when the executor hands it back.

use super::cell::result::{Completion, ReleaseHandle};
use super::error::JobError;
use super::task::{Task, Unobserved};
use crate::priority::Priority;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The result of a queued job: wait for it with [`join`](JobHandle::join)
/// or `.await` it.
///
/// Dropping the handle detaches: the job still runs and its result is
/// dropped. Whichever side lets go last, the handle or the worker, drops an
/// unread result, and a panic in its destructor is caught and swallowed
/// there (as tokio's `JoinHandle` does): it never reaches the thread that
/// drops the handle, and never the worker.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
///
/// let exec = Executor::builder()
///     .lane(Priority(10), Capacity::Unbounded)
///     .build()
///     .unwrap();
/// let handle = exec.enqueue(Priority(10), || 6 * 7).unwrap();
/// assert_eq!(handle.join(), Ok(42));
/// ```
///
/// A handle moves between threads only if its result may: a handle to a
/// value that must stay on one thread is not `Send`.
///
/// ```compile_fail
/// fn crosses_threads<T: Send>() {}
/// crosses_threads::<priority_executor::JobHandle<std::rc::Rc<u8>>>();
/// ```
#[must_use = "dropping a JobHandle detaches the job; call join() or .await to get its result"]
pub struct JobHandle<T> {
    /// The handle-side hold on the job, let go of when the handle drops.
    cell: NonNull<dyn Completion<T>>,
}

// SAFETY: the handle is the one handle-side hold on a job, which is
// `Send + Sync` (`Completion`'s bounds), as an `Arc<dyn Completion<T>>`
// would be. Moving the handle moves the right to take the result, a `T`
// made on another thread: so only for `T: Send` (every constructor asks
// for it too; the bound says it in the type).
unsafe impl<T: Send> Send for JobHandle<T> {}
// SAFETY: as above; `&JobHandle` only reaches the job's `&self` methods,
// none of which hands out a `&T`.
unsafe impl<T: Send> Sync for JobHandle<T> {}

impl<T> JobHandle<T> {
    /// The handle for a hold on a job.
    ///
    /// # Safety
    ///
    /// `cell` is a handle-side hold that the job's
    /// [`releaser`](Completion::releaser) lets go of, owned by the new
    /// handle.
    pub(crate) unsafe fn from_hold(cell: NonNull<dyn Completion<T>>) -> Self {
        JobHandle { cell }
    }

    /// The handle for a job kept in an `Arc` (a future's), whose releaser
    /// drops one reference.
    pub(crate) fn from_arc(cell: Arc<dyn Completion<T>>) -> Self {
        let ptr = Arc::into_raw(cell).cast_mut();
        // SAFETY: `Arc::into_raw` never returns null.
        let cell = unsafe { NonNull::new_unchecked(ptr) };
        JobHandle { cell }
    }

    #[inline]
    fn cell(&self) -> &dyn Completion<T> {
        // SAFETY: the handle holds the job alive until it drops.
        unsafe { self.cell.as_ref() }
    }

    /// Blocks until the job has run and returns its value.
    ///
    /// From inside a job, joining a job queued behind it on the same
    /// executor waits for a worker to take it: if every worker of the
    /// executor does so at once, none ever will (as in Java's pool).
    /// `.await` it from a future, or hand the work to the joined job
    /// instead. (A job *enqueueing* into a full lane of its own executor is
    /// safe: its worker runs queued jobs while it waits.)
    ///
    /// # Errors
    ///
    /// [`JobError::Panicked`] if the job panicked, [`JobError::Cancelled`]
    /// if it was [cancelled](JobHandle::cancel), or handed back by
    /// `shutdown_now` and dropped unrun.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(exec.enqueue(Priority(1), || "done").unwrap().join(), Ok("done"));
    /// ```
    pub fn join(self) -> Result<T, JobError> {
        self.cell().wait()
    }

    /// Has the job finished (run, panicked or been cancelled)? Does not
    /// block.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::sync::mpsc;
    ///
    /// let exec = Executor::builder()
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// let (tx, rx) = mpsc::channel::<()>();
    /// let handle = exec.enqueue(Priority(1), move || rx.recv()).unwrap();
    /// assert!(!handle.is_finished());
    /// tx.send(()).unwrap();
    /// assert_eq!(handle.join(), Ok(Ok(())));
    /// ```
    pub fn is_finished(&self) -> bool {
        self.cell().is_finished()
    }

    /// Cancels the job if it has not started (Java's
    /// `Future.cancel(false)`): it will never run, and the handle resolves
    /// [`JobError::Cancelled`] at once. Returns whether this call
    /// cancelled it; `false` if it has started (a running job is not
    /// interrupted), has finished, or was already cancelled.
    ///
    /// The decision is one atomic operation against the worker taking the
    /// job: `true` means it never ran, `false` that it runs (or ran) as
    /// usual. The lanes are queues without a lock, so a cancelled job keeps its
    /// place until a worker reaches it and drops it unrun, without running
    /// hooks: its lane's `queued` figure (and a bounded lane's slot)
    /// counts it until then, and its lane's `cancelled` counter from then.
    /// Jobs from [`spawn_future`](crate::Executor::spawn_future)
    /// cannot be cancelled.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, JobError, Priority};
    /// use std::sync::mpsc;
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(1)
    ///     .max_threads(1)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// let (started_tx, started) = mpsc::channel();
    /// let (release, gate) = mpsc::channel::<()>();
    /// let busy = exec
    ///     .enqueue(Priority(1), move || {
    ///         started_tx.send(()).unwrap();
    ///         gate.recv().ok();
    ///     })
    ///     .unwrap();
    /// started.recv().unwrap(); // the only worker is busy
    /// let queued = exec.enqueue(Priority(1), || unreachable!("cancelled")).unwrap();
    ///
    /// assert!(queued.cancel());
    /// assert!(!busy.cancel()); // already running
    /// assert!(queued.is_finished());
    /// assert_eq!(queued.join(), Err(JobError::Cancelled));
    /// release.send(()).unwrap();
    /// exec.shutdown();
    /// assert_eq!(exec.metrics().lanes[0].cancelled, 1);
    /// ```
    pub fn cancel(&self) -> bool {
        self.cell().cancel()
    }
}

impl<T> Drop for JobHandle<T> {
    fn drop(&mut self) {
        let release: ReleaseHandle<T> = self.cell().releaser();
        // SAFETY: the handle's hold, given up once; `self.cell` is not used
        // again.
        unsafe { release(self.cell) };
    }
}

impl<T> Future for JobHandle<T> {
    type Output = Result<T, JobError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.cell().poll_result(Some(cx.waker()))
    }
}

impl<T> fmt::Debug for JobHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

/// A job that never started, handed back by
/// [`Executor::shutdown_now`](crate::Executor::shutdown_now).
///
/// Run it with [`run`](PendingJob::run) (on the calling thread; its handle
/// gets the result) or drop it (its handle resolves
/// [`JobError::Cancelled`]).
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, JobError, Priority};
/// use std::sync::mpsc;
///
/// let exec = Executor::builder()
///     .core_threads(1)
///     .max_threads(1)
///     .lane(Priority(1), Capacity::Unbounded)
///     .build()
///     .unwrap();
/// let (started_tx, started) = mpsc::channel();
/// let (release, gate) = mpsc::channel::<()>();
/// exec.enqueue(Priority(1), move || {
///     started_tx.send(()).unwrap();
///     gate.recv().ok();
/// })
/// .unwrap();
/// started.recv().unwrap(); // the only worker is now busy
/// let queued = exec.enqueue(Priority(1), || 1).unwrap();
/// let dropped = exec.enqueue(Priority(1), || 2).unwrap();
///
/// let mut pending = exec.shutdown_now();
/// release.send(()).unwrap();
/// assert_eq!(pending.len(), 2);
/// assert!(pending.iter().all(|job| job.priority() == Priority(1)));
/// drop(pending.pop()); // the second job: its handle is cancelled
/// pending.pop().unwrap().run(); // the first runs here
/// assert_eq!(queued.join(), Ok(1));
/// assert_eq!(dropped.join(), Err(JobError::Cancelled));
/// ```
pub struct PendingJob {
    priority: Priority,
    task: Task,
}

impl PendingJob {
    pub(crate) fn new(priority: Priority, task: Task) -> Self {
        PendingJob { priority, task }
    }

    /// The priority the job was queued at.
    ///
    /// # Examples
    ///
    /// See [`PendingJob`].
    pub fn priority(&self) -> Priority {
        self.priority
    }

    /// Runs the job on the calling thread; its handle receives the result.
    /// A panic is caught and reported through the handle, as on a worker.
    ///
    /// It runs outside the pool: the executor's hooks (`on_expired`,
    /// `on_dead_letter`, before and after) are not called and its counters
    /// stay as they are (the job counts as handed back); a deadline is not
    /// checked, running the job being the caller's choice; retries run at
    /// once, without backoff, and once they are used up the handle
    /// receives the last error.
    ///
    /// # Examples
    ///
    /// See [`PendingJob`].
    pub fn run(self) {
        // Counted as handed back already; the pool's counters stay as they
        // are. Retries of a handed-back job run here at once, without backoff.
        let mut next = self.task.run(&Unobserved);
        while let Some(retry) = next {
            next = retry.into_task().run(&Unobserved);
        }
    }
}

impl fmt::Debug for PendingJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingJob")
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}
