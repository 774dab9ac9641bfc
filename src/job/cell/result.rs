//! The handle side of a job cell: poll or join for the result, cancel a
//! job that has not started, and let go of the cell when the handle drops.

use super::*;
use crate::sync::thread;
use crate::util::drop_quietly;
use std::sync::Arc;
use std::task::{Poll, Wake};

/// The result side of a job, type-erased for [`JobHandle`](crate::JobHandle).
pub(crate) trait Completion<T>: Send + Sync {
    /// Takes the result if the job has finished; otherwise registers
    /// `waker` (if any) to be woken when it does.
    fn poll_result(&self, waker: Option<&Waker>) -> Poll<Result<T, JobError>>;
    /// Blocks until the job has finished and takes the result.
    fn wait(&self) -> Result<T, JobError>;
    fn is_finished(&self) -> bool;
    /// Cancels the job if it has not started; says whether it did.
    fn cancel(&self) -> bool;
    /// How this job's handle-side hold is let go of (the handle is gone:
    /// what it will never read is dropped).
    fn releaser(&self) -> ReleaseHandle<T>;
}

/// Lets go of a job's handle-side hold; the job may be freed by it. Called
/// once per hold, and the pointer is not used afterwards.
pub(crate) type ReleaseHandle<T> = unsafe fn(NonNull<dyn Completion<T>>);

impl<B: Body, M: Meta> Completion<B::Output> for JobCell<B, M> {
    fn poll_result(&self, waker: Option<&Waker>) -> Poll<Result<B::Output, JobError>> {
        // A waiter taken back from the state word (to replace its waker),
        // or one whose publishing lost to the result: reused, not
        // allocated again.
        let mut spare: Option<Box<Waiter>> = None;
        // ORDERING: Acquire pairs with the task side's Release in `finish`,
        // so a `READY` seen here comes with the result.
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & CANCELLED != 0 {
                // Only this handle sets the flag, and the task side never
                // publishes a result after it.
                return Poll::Ready(Err(JobError::Cancelled));
            }
            let flags = state & FLAGS;
            match value(state) {
                READY => {
                    // SAFETY: `READY` hands `stage` to the handle for good,
                    // with the result `finish` stored; it is taken once,
                    // as the state moves to `TAKEN` below.
                    let result = self
                        .stage
                        .with_mut(|slot| unsafe { ManuallyDrop::take(&mut (*slot).done) });
                    // `READY -> TAKEN`, keeping the flags (the task side
                    // may be clearing `TASK` right now).
                    // ORDERING: Relaxed: only the handle reads the value
                    // from here on; the holds are let go of with their own
                    // ordering.
                    self.state.fetch_add(TAKEN - READY, Ordering::Relaxed);
                    return Poll::Ready(result.map_err(|e| *e));
                }
                EMPTY => {
                    let Some(waker) = waker else {
                        return Poll::Pending;
                    };
                    let waiter = match spare.take() {
                        Some(mut waiter) => {
                            // No clone if it is the same waker.
                            waiter.0.clone_from(waker);
                            waiter
                        }
                        None => Box::new(Waiter(waker.clone())),
                    };
                    let published = flags | Waiter::into_state(waiter);
                    // ORDERING: Release publishes the waiter to the task
                    // side's exchange in `finish`; on failure, Acquire so a
                    // `READY` comes with the result.
                    match self.state.compare_exchange(
                        flags | EMPTY,
                        published,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => return Poll::Pending,
                        Err(actual) => {
                            // SAFETY: never published: the waiter is still
                            // this handle's alone.
                            spare = Some(unsafe { Waiter::from_state(published) });
                            state = actual;
                        }
                    }
                }
                WAITING => {
                    if waker.is_none() {
                        return Poll::Pending;
                    }
                    // Take the waiter back to give it this waker; if the
                    // result came meanwhile, take that instead.
                    // ORDERING: Acquire, though nobody else wrote to the
                    // waiter (the task side only takes it by moving to
                    // `READY`, which fails this exchange); on failure as
                    // above.
                    match self.state.compare_exchange(
                        state,
                        flags | EMPTY,
                        Ordering::Acquire,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => {
                            // SAFETY: the exchange moved the state away from
                            // the waiter's address: it is this handle's again.
                            // Published again with `waker`, below.
                            spare = Some(unsafe { Waiter::from_state(state) });
                            state = flags | EMPTY;
                        }
                        Err(actual) => state = actual,
                    }
                }
                // `TAKEN`, or `DROPPED` (cannot be seen through a live
                // handle): nothing more to give.
                _ => return Poll::Ready(Err(JobError::Cancelled)),
            }
        }
    }

    fn wait(&self) -> Result<B::Output, JobError> {
        if let Poll::Ready(result) = self.poll_result(None) {
            return result;
        }
        let waker = thread_waker();
        loop {
            match self.poll_result(Some(&waker)) {
                Poll::Ready(result) => return result,
                // Spurious unparks just poll again.
                Poll::Pending => thread::park(),
            }
        }
    }

    fn is_finished(&self) -> bool {
        let state = self.state.load(Ordering::Acquire);
        state & CANCELLED != 0 || matches!(value(state), READY | TAKEN)
    }

    fn cancel(&self) -> bool {
        // ORDERING: Relaxed throughout: see `start`; the handle takes
        // nothing from the task side by cancelling.
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & (STARTED | CANCELLED) != 0 || !matches!(value(state), EMPTY | WAITING) {
                return false;
            }
            match self.state.compare_exchange_weak(
                state,
                state | CANCELLED,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => state = actual,
            }
        }
    }

    fn releaser(&self) -> ReleaseHandle<B::Output> {
        Self::release_handle
    }
}

impl<B: Body, M: Meta> JobCell<B, M> {
    /// Handle side: drops what the handle will never read and lets go of
    /// its hold, as its last touch of the cell.
    ///
    /// # Safety
    ///
    /// `raw` points to a `JobCell<B, M>` whose handle-side hold the caller
    /// owns and gives up.
    unsafe fn release_handle(raw: NonNull<dyn Completion<B::Output>>) {
        let cell = raw.cast::<Self>();
        // SAFETY: the hold keeps the cell alive until the operation that
        // clears it, in `detach`.
        let last = unsafe { cell.as_ref() }.detach();
        if last {
            // SAFETY: both holds are gone now.
            unsafe { Self::free(cell) };
        }
    }

    /// Handle side, as the handle goes: moves to `DROPPED` (unless the job
    /// was cancelled), drops what the handle will never read, and clears
    /// `HANDLE` as its last touch of the cell. Returns whether the task
    /// side had let go already, so the cell is the handle's to free.
    fn detach(&self) -> bool {
        // ORDERING: Acquire so a `READY` seen here comes with the result.
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let value = value(state);
            if state & CANCELLED != 0 || value == TAKEN {
                // Nothing left for the task side to know: a cancelled job's
                // task never touches the waiter (the handle drops it,
                // below) and still sees `CANCELLED`; a taken result is gone.
                break;
            }
            // From `EMPTY` or `WAITING` the handle leaves nothing in the
            // cell to drop: it lets go in the same operation (a waiter is a
            // box of its own, dropped after). From `READY` it drops the
            // result first, and lets go after.
            let dropped = (state & FLAGS) | DROPPED;
            let next = if value == READY {
                dropped
            } else {
                dropped & !HANDLE
            };
            // ORDERING: AcqRel: Acquire to take a published result;
            // Release so the task side, seeing `DROPPED`, owns `stage`
            // after whatever the handle did to it (and, letting go, so the
            // side that frees sees the handle's writes).
            match self
                .state
                .compare_exchange_weak(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if value == READY => break,
                Ok(_) => {
                    if value == WAITING {
                        // SAFETY: the exchange moved the state away from
                        // the waiter's address: the handle took it back.
                        drop_quietly(unsafe { Waiter::from_state(state) });
                    }
                    return state & TASK == 0;
                }
                Err(actual) => state = actual,
            }
        }
        if state & CANCELLED != 0 {
            if state & WAITING != 0 {
                // SAFETY: a cancelled job's task side never takes the
                // waiter, and only this handle, now going, would.
                drop_quietly(unsafe { Waiter::from_state(state) });
            }
        } else if value(state) == READY {
            // SAFETY: `READY` gave `stage` to the handle for good, with the
            // result `finish` stored, which the handle never took (the
            // state is not `TAKEN`).
            let result = self
                .stage
                .with_mut(|slot| unsafe { ManuallyDrop::take(&mut (*slot).done) });
            // The unread result is user code: its destructor may panic, and
            // the hold below must be let go of all the same. The panic is
            // swallowed, as when the task side drops it.
            drop_quietly(result);
        }
        // ORDERING: AcqRel, as in `release_task`.
        self.state.fetch_and(!HANDLE, Ordering::AcqRel) & TASK == 0
    }
}

crate::sync::thread_local! {
    /// The waker of this thread's joins, made once: a join's clone of it
    /// costs a reference count, not an allocation.
    static THREAD_WAKER: Waker = Waker::from(Arc::new(Unpark(thread::current())));
}

/// A waker that unparks the calling thread (a new one while the thread's
/// own is being destroyed, for a join made by a thread-local destructor).
fn thread_waker() -> Waker {
    THREAD_WAKER
        .try_with(Waker::clone)
        .unwrap_or_else(|_| Waker::from(Arc::new(Unpark(thread::current()))))
}

/// Wakes a thread blocked in `join`.
struct Unpark(thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}
