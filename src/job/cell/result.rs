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
        // SAFETY: the caller gives up the handle's hold on this cell.
        if unsafe { Self::detach(cell) } {
            // SAFETY: both holds are gone now.
            unsafe { Self::free(cell) };
        }
    }

    /// Handle side, as the handle goes: drops what the handle will never
    /// read and lets go of its hold, as its last touch of the cell (from
    /// `EMPTY` or `WAITING` by moving to `DROPPED` in the same operation).
    /// Returns whether the task side had let go already, so the cell is
    /// the handle's to free.
    ///
    /// # Safety
    ///
    /// `cell` is live, and the caller owns its handle-side hold and gives
    /// it up here. The task side may free the cell as soon as the hold is
    /// gone, so this takes a pointer, not `&self`: a reference argument
    /// would be held to the end of the call, past that point.
    unsafe fn detach(cell: NonNull<Self>) -> bool {
        // SAFETY: the hold keeps the cell alive until it is let go of
        // below. These are local references, used only before that.
        let (state, stage) = unsafe {
            let cell = cell.as_ptr();
            (&(*cell).state, &(*cell).stage)
        };
        // ORDERING: Acquire so a `READY` seen here comes with the result.
        let mut current = state.load(Ordering::Acquire);
        loop {
            if current & CANCELLED != 0 {
                // A cancelled job's task side never touches the waiter,
                // nor publishes a result: what is left is the handle's.
                if current & WAITING != 0 {
                    // SAFETY: as above: nobody else takes the waiter.
                    drop_quietly(unsafe { Waiter::from_state(current) });
                }
                break;
            }
            match value(current) {
                TAKEN => break,
                READY => {
                    // SAFETY: `READY` gave `stage` to the handle for good,
                    // with the result `finish` stored, which the handle
                    // never took (the value is not `TAKEN`).
                    let result =
                        stage.with_mut(|slot| unsafe { ManuallyDrop::take(&mut (*slot).done) });
                    // The unread result is user code: its destructor may
                    // panic, and the hold below must be let go of all the
                    // same. The panic is swallowed, as when the task side
                    // drops it.
                    drop_quietly(result);
                    break;
                }
                value => {
                    // `EMPTY` or `WAITING`: nothing of the handle's is left
                    // in the cell (a waiter is a box of its own), so it
                    // lets go in the operation that moves to `DROPPED`.
                    let next = ((current & FLAGS) | DROPPED) & !HANDLE;
                    // ORDERING: AcqRel: Release so the task side, seeing
                    // `DROPPED`, and the side that frees the cell see the
                    // handle's writes; Acquire so this side, if it frees
                    // it, sees the task side's.
                    match state.compare_exchange_weak(
                        current,
                        next,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => {
                            if value == WAITING {
                                // SAFETY: the exchange moved the state away
                                // from the waiter's address: the handle
                                // took it back. The cell may be gone by
                                // now; the waiter is not part of it.
                                drop_quietly(unsafe { Waiter::from_state(current) });
                            }
                            return current & TASK == 0;
                        }
                        Err(actual) => current = actual,
                    }
                }
            }
        }
        // ORDERING: AcqRel, as in `release_task`.
        state.fetch_and(!HANDLE, Ordering::AcqRel) & TASK == 0
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
