//! A queued job and the slot its result lands in, in one allocation.
//!
//! `enqueue` allocates one `JobCell<B>` behind an `Arc`. The lane holds it
//! as a [`Task`] (type-erased to run it), the caller's
//! [`JobHandle`](crate::JobHandle) holds it as a `Completion<T>` (type-erased
//! to read the result). Neither side needs a second allocation.
//!
//! The cell's own lock is taken twice per attempt (to take the body, then to
//! store the result) and is never contended except by a handle being polled
//! or joined at that moment. The handle's condition variable is notified
//! only when someone is blocked in `join`, so a finished job costs no
//! system call.
//!
//! The cell keeps a retrying body between attempts, and the lane re-queues
//! the same task.

use super::body::Body;
use super::error::JobError;
use crate::hooks::JobOutcome;
use crate::priority::Priority;
use crate::sync::{Condvar, Mutex, lock};
use crate::util::{drop_quietly, panic_message};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Poll, Waker};
use std::time::Duration;

/// Fixed facts about a job, readable without its lock.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JobMeta {
    /// When it was queued (crate clock), or 0 if nobody needs to know.
    pub(crate) enqueued_ns: u64,
    /// When it expires (crate clock), or 0 for never.
    pub(crate) deadline_ns: u64,
}

/// Where a running job reports how its attempt ended. The pool records
/// outcomes in its lane's counters and hooks; a job handed back and run by
/// the caller records nothing.
pub(crate) trait Observer {
    /// Called before the handle can see the result, so counters are
    /// current once `join` returns.
    fn record(&self, outcome: JobOutcome);
    /// May a failed attempt be queued again? (Not once the executor has
    /// stopped.)
    fn may_retry(&self) -> bool;
    /// The last attempt failed after `attempts` runs.
    fn dead_letter(&self, attempts: u32, error: &str);
}

/// An observer that records nothing.
pub(crate) struct Unobserved;

impl Observer for Unobserved {
    fn record(&self, _: JobOutcome) {}
    fn may_retry(&self) -> bool {
        true
    }
    fn dead_letter(&self, _: u32, _: &str) {}
}

/// A failed attempt that asks to be queued again.
pub(crate) struct Retry {
    pub(crate) task: Task,
    /// The backoff before the next attempt.
    pub(crate) delay: Duration,
    /// The lane to queue it in, if not its own.
    pub(crate) priority: Option<Priority>,
    /// The failed attempt's error, reported if the retry cannot be queued.
    pub(crate) error: String,
}

impl Retry {
    /// The retry cannot be queued (the executor stopped while the attempt
    /// ran): the job is dead-lettered with its last error instead.
    pub(crate) fn give_up(mut self, observer: &dyn Observer) {
        if let Some(raw) = self.task.raw.take() {
            raw.give_up(observer, self.error);
            drop_quietly(raw);
        }
    }
}

/// A job type-erased for the lanes.
pub(crate) trait RawJob: Send + Sync {
    /// Runs one attempt; returns the task again when it asks to be retried.
    fn run(self: Arc<Self>, observer: &dyn Observer) -> Option<Retry>;
    /// Resolves the handle without running the job (dropping its body).
    fn resolve_unrun(&self, error: JobError);
    /// Dead-letters a job waiting for a retry that will not come.
    fn give_up(&self, observer: &dyn Observer, error: String);
    fn meta(&self) -> JobMeta;
}

/// The result side of a job, type-erased for [`JobHandle`](crate::JobHandle).
pub(crate) trait Completion<T>: Send + Sync {
    /// Takes the result if the job has finished; otherwise registers
    /// `waker` (if any) to be woken when it does.
    fn poll_result(&self, waker: Option<&Waker>) -> Poll<Result<T, JobError>>;
    /// Blocks until the job has finished and takes the result.
    fn wait(&self) -> Result<T, JobError>;
    fn is_finished(&self) -> bool;
}

enum Stage<B: Body> {
    Queued(B),
    Running,
    /// The error is boxed so a job's cell stays small while it waits.
    Done(Result<B::Output, Box<JobError>>),
    Taken,
}

struct State<B: Body> {
    stage: Stage<B>,
    attempt: u32,
    waker: Option<Waker>,
    joining: bool,
}

pub(crate) struct JobCell<B: Body> {
    state: Mutex<State<B>>,
    finished: Condvar,
    meta: JobMeta,
}

/// A job allocated but not yet queued: it can still be taken apart to give
/// the caller's closure back.
pub(crate) struct NewJob<B: Body>(Arc<JobCell<B>>);

impl<B: Body> NewJob<B> {
    pub(crate) fn new(body: B, meta: JobMeta) -> Self {
        NewJob(Arc::new(JobCell {
            state: Mutex::new(State {
                stage: Stage::Queued(body),
                attempt: 0,
                waker: None,
                joining: false,
            }),
            finished: Condvar::new(),
            meta,
        }))
    }

    /// The task for a lane and the result side for the handle.
    pub(crate) fn split(self) -> (Task, Arc<dyn Completion<B::Output>>) {
        let raw: Arc<dyn RawJob> = self.0.clone();
        (Task { raw: Some(raw) }, self.0)
    }

    /// The body back, unrun. `None` cannot happen: nothing else has seen
    /// the cell yet.
    pub(crate) fn into_body(self) -> Option<B> {
        let cell = Arc::try_unwrap(self.0).ok()?;
        let state = match cell.state.into_inner() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        match state.stage {
            Stage::Queued(body) => Some(body),
            _ => None,
        }
    }
}

impl<B: Body> JobCell<B> {
    fn finish(&self, result: Result<B::Output, JobError>) {
        let mut state = lock(&self.state);
        state.stage = Stage::Done(result.map_err(Box::new));
        let waker = state.waker.take();
        let joining = state.joining;
        drop(state);
        if joining {
            self.finished.notify_all();
        }
        if let Some(waker) = waker {
            // A waker is user code too: its panic must not unwind a worker.
            drop_quietly(catch_unwind(AssertUnwindSafe(|| waker.wake())));
        }
    }
}

impl<B: Body> RawJob for JobCell<B> {
    fn run(self: Arc<Self>, observer: &dyn Observer) -> Option<Retry> {
        match self.attempt(observer) {
            Some((delay, priority, error)) => Some(Retry {
                task: Task { raw: Some(self) },
                delay,
                priority,
                error,
            }),
            None => {
                // If the handle is gone, this drops the result, which is
                // user code and may panic: not on the worker's stack.
                drop_quietly(self);
                None
            }
        }
    }

    fn resolve_unrun(&self, error: JobError) {
        let body = {
            let mut state = lock(&self.state);
            match std::mem::replace(&mut state.stage, Stage::Running) {
                Stage::Queued(body) => body,
                other => {
                    state.stage = other;
                    return;
                }
            }
        };
        // Drop the body outside the lock: its captures may do anything,
        // panic included.
        drop_quietly(body);
        self.finish(Err(error));
    }

    fn give_up(&self, observer: &dyn Observer, error: String) {
        let (body, attempts) = {
            let mut state = lock(&self.state);
            match std::mem::replace(&mut state.stage, Stage::Running) {
                Stage::Queued(body) => (body, state.attempt),
                other => {
                    state.stage = other;
                    return;
                }
            }
        };
        drop_quietly(body);
        self.dead_letter(observer, attempts, error);
    }

    #[inline]
    fn meta(&self) -> JobMeta {
        self.meta
    }
}

impl<B: Body> JobCell<B> {
    /// Runs one attempt. `Some` asks for another after a delay, possibly at
    /// another priority; the body is then back in the cell.
    fn attempt(&self, observer: &dyn Observer) -> Option<(Duration, Option<Priority>, String)> {
        let (mut body, attempt) = {
            let mut state = lock(&self.state);
            match std::mem::replace(&mut state.stage, Stage::Running) {
                Stage::Queued(body) => {
                    state.attempt += 1;
                    (body, state.attempt)
                }
                other => {
                    // Already resolved: never run a job twice.
                    state.stage = other;
                    return None;
                }
            }
        };
        let failure = match catch_unwind(AssertUnwindSafe(|| body.attempt(attempt))) {
            Ok(Ok(value)) => {
                observer.record(JobOutcome::Completed);
                drop_quietly(body);
                self.finish(Ok(value));
                return None;
            }
            Ok(Err(error)) => error,
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                // The payload may itself panic when dropped; keep that on
                // this side of the worker's loop.
                drop_quietly(payload);
                if !body.retries() {
                    observer.record(JobOutcome::Panicked);
                    drop_quietly(body);
                    self.finish(Err(JobError::Panicked { message }));
                    return None;
                }
                format!("panicked: {message}")
            }
        };
        if observer.may_retry()
            && let Some((delay, priority)) = body.retry_after(attempt)
        {
            observer.record(JobOutcome::Retrying);
            lock(&self.state).stage = Stage::Queued(body);
            return Some((delay, priority, failure));
        }
        drop_quietly(body);
        self.dead_letter(observer, attempt, failure);
        None
    }

    fn dead_letter(&self, observer: &dyn Observer, attempts: u32, error: String) {
        observer.record(JobOutcome::DeadLettered);
        observer.dead_letter(attempts, &error);
        self.finish(Err(JobError::Failed {
            attempts,
            message: error,
        }));
    }
}

impl<B: Body> Completion<B::Output> for JobCell<B> {
    fn poll_result(&self, waker: Option<&Waker>) -> Poll<Result<B::Output, JobError>> {
        let mut state = lock(&self.state);
        match std::mem::replace(&mut state.stage, Stage::Taken) {
            Stage::Done(result) => Poll::Ready(result.map_err(|e| *e)),
            Stage::Taken => Poll::Ready(Err(JobError::Cancelled)),
            other => {
                state.stage = other;
                if let Some(waker) = waker {
                    match &state.waker {
                        Some(old) if old.will_wake(waker) => {}
                        _ => state.waker = Some(waker.clone()),
                    }
                }
                Poll::Pending
            }
        }
    }

    fn wait(&self) -> Result<B::Output, JobError> {
        let mut state = lock(&self.state);
        loop {
            match std::mem::replace(&mut state.stage, Stage::Taken) {
                Stage::Done(result) => return result.map_err(|e| *e),
                Stage::Taken => return Err(JobError::Cancelled),
                other => state.stage = other,
            }
            state.joining = true;
            state = match self.finished.wait(state) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
    }

    fn is_finished(&self) -> bool {
        matches!(lock(&self.state).stage, Stage::Done(_) | Stage::Taken)
    }
}

/// A job as a lane holds it. Dropping a task that never ran resolves its
/// handle (as [`JobError::Cancelled`]), so no handle waits for ever.
pub(crate) struct Task {
    raw: Option<Arc<dyn RawJob>>,
}

impl Task {
    /// A task for a job kept outside this file (a future's, `pool/future.rs`).
    pub(crate) fn from_raw(raw: Arc<dyn RawJob>) -> Task {
        Task { raw: Some(raw) }
    }

    /// A place-holder with no job (see `Lane::push_tombstone`).
    pub(crate) fn tombstone() -> Task {
        Task { raw: None }
    }

    pub(crate) fn is_tombstone(&self) -> bool {
        self.raw.is_none()
    }

    /// Runs one attempt on the current thread, catching a panic. Returns
    /// the task again when it asks to be retried.
    #[inline]
    pub(crate) fn run(mut self, observer: &dyn Observer) -> Option<Retry> {
        self.raw.take()?.run(observer)
    }

    /// Resolves the handle with `error` without running the job.
    pub(crate) fn resolve(mut self, error: JobError) {
        if let Some(raw) = self.raw.take() {
            raw.resolve_unrun(error);
            drop_quietly(raw);
        }
    }

    #[inline]
    pub(crate) fn meta(&self) -> JobMeta {
        self.raw.as_ref().map(|r| r.meta()).unwrap_or_default()
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            raw.resolve_unrun(JobError::Cancelled);
            drop_quietly(raw);
        }
    }
}
