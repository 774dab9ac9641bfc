//! A future's handle side: its result polled or awaited, and the handle
//! let go.

use super::{FutureJob, Outcome};
use crate::job::JobError;
use crate::job::cell::{Completion, ReleaseHandle};
use crate::sync::{Arc, lock};
use crate::util::drop_quietly;
use std::future::Future;
use std::ptr::NonNull;
use std::task::{Poll, Waker};

impl<F> Completion<F::Output> for FutureJob<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn poll_result(&self, waker: Option<&Waker>) -> Poll<Result<F::Output, JobError>> {
        // Cloned before the lock and the one replaced dropped after it: a
        // waker is user code, and the worker's `finish` takes this lock.
        let waker = waker.cloned();
        let mut slot = lock(&self.result);
        match std::mem::replace(&mut slot.outcome, Outcome::Taken) {
            done @ (Outcome::Done(_) | Outcome::Taken) => {
                drop(slot);
                drop_quietly(waker);
                Poll::Ready(match done {
                    Outcome::Done(result) => result,
                    _ => Err(JobError::Cancelled),
                })
            }
            Outcome::Pending => {
                slot.outcome = Outcome::Pending;
                let unused = match waker {
                    Some(new) if slot.waker.as_ref().is_none_or(|old| !old.will_wake(&new)) => {
                        slot.waker.replace(new)
                    }
                    unused => unused,
                };
                drop(slot);
                drop_quietly(unused);
                Poll::Pending
            }
        }
    }

    fn wait(&self) -> Result<F::Output, JobError> {
        let mut slot = lock(&self.result);
        loop {
            match std::mem::replace(&mut slot.outcome, Outcome::Taken) {
                Outcome::Done(result) => return result,
                Outcome::Taken => return Err(JobError::Cancelled),
                Outcome::Pending => slot.outcome = Outcome::Pending,
            }
            slot.joining = true;
            slot = match self.finished.wait(slot) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
    }

    fn is_finished(&self) -> bool {
        !matches!(lock(&self.result).outcome, Outcome::Pending)
    }

    fn cancel(&self) -> bool {
        // A future may be between polls with its waker held by whatever
        // it awaits; it is not a queued job to take back.
        false
    }

    fn releaser(&self) -> ReleaseHandle<F::Output> {
        release_handle::<F>
    }
}

/// Detaches a future's handle and drops its reference.
///
/// # Safety
///
/// `raw` came from `JobHandle::from_arc` of an `Arc<FutureJob<F>>`; this
/// is its one release.
unsafe fn release_handle<F>(raw: NonNull<dyn Completion<F::Output>>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // SAFETY: as promised by the caller: one reference, given back once.
    let job = unsafe { Arc::from_raw(raw.cast::<FutureJob<F>>().as_ptr()) };
    job.detach();
}

impl<F> FutureJob<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn detach(&self) {
        // A result nobody will read, and a waker nobody will need, are
        // dropped here, on the handle's side.
        let mut slot = lock(&self.result);
        let waker = slot.waker.take();
        let unread = match slot.outcome {
            Outcome::Done(_) => Some(std::mem::replace(&mut slot.outcome, Outcome::Taken)),
            _ => None,
        };
        drop(slot);
        // User code (a waker's, an output's destructor): a panic is
        // swallowed, whichever side lets go last.
        drop_quietly(waker);
        drop_quietly(unread);
    }
}
