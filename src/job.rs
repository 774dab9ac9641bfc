//! A queued job and the slot its result lands in, in one allocation.
//!
//! `enqueue` allocates one `JobCell<F, T>` behind an `Arc`. The lane holds
//! it as a [`Task`] (type-erased to run it), the caller's
//! [`JobHandle`](crate::JobHandle) holds it as a `Completion<T>` (type-erased
//! to read the result). Neither side needs a second allocation.
//!
//! The cell's own lock is taken twice per job (to take the closure, then to
//! store the result) and is never contended except by a handle being polled
//! or joined at that moment. The handle's condition variable is notified
//! only when someone is blocked in `join`, so a finished job costs no
//! system call.

use crate::handle::JobError;
use crate::sync::{Condvar, Mutex, lock};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Poll, Waker};

/// How a job that ran ended, for the lane's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Completed,
    Panicked,
}

/// A job type-erased for the lanes: run it, or resolve it without running.
pub(crate) trait RawJob: Send + Sync {
    /// Runs the job; `record` sees the outcome before the handle does, so
    /// counters are up to date once `join` returns.
    fn run(&self, record: &dyn Fn(Outcome));
    fn resolve_unrun(&self, error: JobError);
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

enum Stage<F, T> {
    Queued(F),
    Running,
    Done(Result<T, JobError>),
    Taken,
}

struct State<F, T> {
    stage: Stage<F, T>,
    waker: Option<Waker>,
    joining: bool,
}

pub(crate) struct JobCell<F, T> {
    state: Mutex<State<F, T>>,
    finished: Condvar,
}

/// Creates the cell for `job`: its task for a lane and its result side.
pub(crate) fn new_job<F, T>(job: F) -> (Task, Arc<dyn Completion<T>>)
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let cell = Arc::new(JobCell {
        state: Mutex::new(State {
            stage: Stage::Queued(job),
            waker: None,
            joining: false,
        }),
        finished: Condvar::new(),
    });
    let raw: Arc<dyn RawJob> = cell.clone();
    (Task { raw: Some(raw) }, cell)
}

impl<F, T> JobCell<F, T> {
    fn finish(&self, result: Result<T, JobError>) {
        let mut state = lock(&self.state);
        state.stage = Stage::Done(result);
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

impl<F, T> RawJob for JobCell<F, T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    fn run(&self, record: &dyn Fn(Outcome)) {
        let job = {
            let mut state = lock(&self.state);
            match std::mem::replace(&mut state.stage, Stage::Running) {
                Stage::Queued(job) => job,
                other => {
                    // Already resolved: never run a job twice.
                    state.stage = other;
                    return;
                }
            }
        };
        match catch_unwind(AssertUnwindSafe(job)) {
            Ok(value) => {
                record(Outcome::Completed);
                self.finish(Ok(value));
            }
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                // The payload may itself panic when dropped; keep that on
                // this side of the worker's loop.
                let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
                record(Outcome::Panicked);
                self.finish(Err(JobError::Panicked { message }));
            }
        }
    }

    fn resolve_unrun(&self, error: JobError) {
        let job = {
            let mut state = lock(&self.state);
            match std::mem::replace(&mut state.stage, Stage::Running) {
                Stage::Queued(job) => job,
                other => {
                    state.stage = other;
                    return;
                }
            }
        };
        // Drop the closure outside the lock: its captures may do anything.
        drop(job);
        self.finish(Err(error));
    }
}

impl<F, T> Completion<T> for JobCell<F, T>
where
    F: Send,
    T: Send,
{
    fn poll_result(&self, waker: Option<&Waker>) -> Poll<Result<T, JobError>> {
        let mut state = lock(&self.state);
        match std::mem::replace(&mut state.stage, Stage::Taken) {
            Stage::Done(result) => Poll::Ready(result),
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

    fn wait(&self) -> Result<T, JobError> {
        let mut state = lock(&self.state);
        loop {
            match std::mem::replace(&mut state.stage, Stage::Taken) {
                Stage::Done(result) => return result,
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
    /// Runs the job on the current thread, catching a panic; `record`
    /// sees the outcome before the job's handle does.
    #[inline]
    pub(crate) fn run(mut self, record: &dyn Fn(Outcome)) {
        if let Some(raw) = self.raw.take() {
            raw.run(record);
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            raw.resolve_unrun(JobError::Cancelled);
        }
    }
}
