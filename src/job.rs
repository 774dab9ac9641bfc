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
//! A body is either a plain closure run once, or a retrying closure
//! (`enqueue_retrying`) that may ask for further attempts; the cell keeps
//! the body between attempts and the lane re-queues the same task.

use crate::handle::JobError;
use crate::hooks::DeadLetter;
use crate::policy::{Attempt, RetryPolicy};
use crate::priority::Priority;
use crate::sync::{Condvar, Mutex, lock};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Poll, Waker};
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
}

/// What the worker does with a task after running it.
pub(crate) enum Disposition {
    Finished,
    Retry {
        delay: Duration,
        priority: Option<Priority>,
    },
}

/// Fixed facts about a job, readable without its lock.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JobMeta {
    /// When it was queued (crate clock), or 0 if nobody needs to know.
    pub(crate) enqueued_ns: u64,
    /// When it expires (crate clock), or 0 for never.
    pub(crate) deadline_ns: u64,
}

/// What a worker lends a job while it runs.
pub(crate) struct RunCtx<'a> {
    pub(crate) priority: Priority,
    pub(crate) record: &'a dyn Fn(JobOutcome),
    pub(crate) dead_letter: Option<&'a (dyn Fn(DeadLetter) + Send + Sync)>,
}

/// A job type-erased for the lanes.
pub(crate) trait RawJob: Send + Sync {
    /// Runs one attempt; `ctx.record` sees the outcome before the handle
    /// does, so counters are current once `join` returns.
    fn run(&self, ctx: &RunCtx<'_>) -> Disposition;
    /// Resolves the handle without running the job (dropping its body).
    fn resolve_unrun(&self, error: JobError);
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

// ===== bodies =====

/// What a cell runs: one attempt at a time.
pub(crate) trait Body: Send + 'static {
    type Output: Send + 'static;
    /// What the caller handed in, given back if the job is refused.
    type Payload;
    fn into_payload(self) -> Option<Self::Payload>;
    /// Runs attempt `n` (1-based). `Err` carries the attempt's error.
    fn attempt(&mut self, n: u32) -> Result<Self::Output, String>;
    /// After failed attempt `n`: another attempt, or `None` to give up.
    fn retry_after(&self, n: u32) -> Option<(Duration, Option<Priority>)>;
    /// Whether failures are retried (a panic then counts as a failed
    /// attempt rather than ending the job).
    fn retries(&self) -> bool;
}

/// A plain closure, run once.
pub(crate) struct Once<F>(pub(crate) Option<F>);

impl<F, T> Body for Once<F>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    type Output = T;
    type Payload = F;

    fn into_payload(self) -> Option<F> {
        self.0
    }

    #[inline]
    fn attempt(&mut self, _n: u32) -> Result<T, String> {
        match self.0.take() {
            Some(f) => Ok(f()),
            None => Err("job body already consumed".to_owned()),
        }
    }

    fn retry_after(&self, _n: u32) -> Option<(Duration, Option<Priority>)> {
        None
    }

    fn retries(&self) -> bool {
        false
    }
}

/// A closure that may fail and be tried again under a [`RetryPolicy`].
pub(crate) struct Retrying<F> {
    pub(crate) f: F,
    pub(crate) policy: RetryPolicy,
}

impl<F, T, E> Body for Retrying<F>
where
    F: FnMut(Attempt) -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: std::fmt::Display,
{
    type Output = T;
    type Payload = F;

    fn into_payload(self) -> Option<F> {
        Some(self.f)
    }

    fn attempt(&mut self, n: u32) -> Result<T, String> {
        let last = n > self.policy.max_retries;
        (self.f)(Attempt { number: n, last }).map_err(|e| e.to_string())
    }

    fn retry_after(&self, n: u32) -> Option<(Duration, Option<Priority>)> {
        (n <= self.policy.max_retries)
            .then(|| (self.policy.delay_after(n), self.policy.retry_priority))
    }

    fn retries(&self) -> bool {
        true
    }
}

// ===== the cell =====

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

/// Creates the cell for `body`: its task for a lane and its result side.
pub(crate) fn new_job<B: Body>(body: B, meta: JobMeta) -> (Task, Arc<dyn Completion<B::Output>>) {
    NewJob::new(body, meta).split()
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
            waker.wake();
        }
    }
}

impl<B: Body> RawJob for JobCell<B> {
    fn run(&self, ctx: &RunCtx<'_>) -> Disposition {
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
                    return Disposition::Finished;
                }
            }
        };
        let failure = match catch_unwind(AssertUnwindSafe(|| body.attempt(attempt))) {
            Ok(Ok(value)) => {
                (ctx.record)(JobOutcome::Completed);
                drop(body);
                self.finish(Ok(value));
                return Disposition::Finished;
            }
            Ok(Err(error)) => error,
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                // The payload may itself panic when dropped; keep that on
                // this side of the worker's loop.
                let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
                if !body.retries() {
                    (ctx.record)(JobOutcome::Panicked);
                    drop(body);
                    self.finish(Err(JobError::Panicked { message }));
                    return Disposition::Finished;
                }
                format!("panicked: {message}")
            }
        };
        if let Some((delay, priority)) = body.retry_after(attempt) {
            (ctx.record)(JobOutcome::Retrying);
            lock(&self.state).stage = Stage::Queued(body);
            return Disposition::Retry { delay, priority };
        }
        (ctx.record)(JobOutcome::DeadLettered);
        drop(body);
        if let Some(dead_letter) = ctx.dead_letter {
            let letter = DeadLetter {
                priority: ctx.priority,
                attempts: attempt,
                error: failure.clone(),
            };
            let _ = catch_unwind(AssertUnwindSafe(|| dead_letter(letter)));
        }
        self.finish(Err(JobError::Failed {
            attempts: attempt,
            message: failure,
        }));
        Disposition::Finished
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
        // Drop the body outside the lock: its captures may do anything.
        drop(body);
        self.finish(Err(error));
    }

    #[inline]
    fn meta(&self) -> JobMeta {
        self.meta
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

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "job panicked with a non-string payload".to_owned()
    }
}

/// A job as a lane holds it. Dropping a task that never ran resolves its
/// handle (as [`JobError::Cancelled`]), so no handle waits for ever.
pub(crate) struct Task {
    raw: Option<Arc<dyn RawJob>>,
}

impl Task {
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
    pub(crate) fn run(mut self, ctx: &RunCtx<'_>) -> Option<(Task, Duration, Option<Priority>)> {
        let raw = self.raw.take()?;
        match raw.run(ctx) {
            Disposition::Finished => None,
            Disposition::Retry { delay, priority } => {
                Some((Task { raw: Some(raw) }, delay, priority))
            }
        }
    }

    /// Resolves the handle with `error` without running the job.
    pub(crate) fn resolve(mut self, error: JobError) {
        if let Some(raw) = self.raw.take() {
            raw.resolve_unrun(error);
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
        }
    }
}
