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

impl<B: Body, M: Meta> JobCell<B, M> {
    /// Handle side, in `EMPTY` (with the flags `flags`) with a waker
    /// written: hands it to the task side (`EMPTY -> WAITING`). If the
    /// result came first, the task side never saw the waker: it is dropped
    /// here and the state returned.
    fn publish_waker(&self, flags: usize) -> Result<(), usize> {
        // ORDERING: Release publishes the waker to the task side's `swap`;
        // on failure, Acquire so a `READY` comes with the result.
        match self.state.compare_exchange(
            flags | EMPTY,
            flags | WAITING,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(()),
            Err(actual) => {
                // SAFETY: the state never was `WAITING`, so the handle still
                // owns `waker`.
                let stale = self.waker.with_mut(|w| unsafe { (*w).take() });
                drop(stale);
                Err(actual)
            }
        }
    }
}

impl<B: Body, M: Meta> Completion<B::Output> for JobCell<B, M> {
    fn poll_result(&self, waker: Option<&Waker>) -> Poll<Result<B::Output, JobError>> {
        // ORDERING: Acquire pairs with the task side's Release in `finish`,
        // so a `READY` seen here comes with the result.
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & CANCELLED != 0 {
                // Only this handle sets the flag, and the task side never
                // publishes a result after it.
                return Poll::Ready(Err(JobError::Cancelled));
            }
            let flags = state & !VALUE;
            match state & VALUE {
                READY => {
                    // SAFETY: `READY` hands `stage` to the handle for good,
                    // with the result `finish` stored; it is taken once,
                    // as the state moves to `TAKEN` below.
                    let result = self
                        .stage
                        .with_mut(|slot| unsafe { ManuallyDrop::take(&mut (*slot).done) });
                    // `READY -> TAKEN`, keeping the bits beside the value
                    // (the task side may be clearing `TASK` right now).
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
                    // SAFETY: in `EMPTY` the handle owns `waker`. A box
                    // left by an earlier registration is reused.
                    self.waker.with_mut(|w| unsafe {
                        match &mut *w {
                            Some(slot) => **slot = waker.clone(),
                            None => *w = Some(Box::new(waker.clone())),
                        }
                    });
                    match self.publish_waker(flags) {
                        Ok(()) => return Poll::Pending,
                        Err(actual) => state = actual,
                    }
                }
                WAITING => {
                    let Some(waker) = waker else {
                        return Poll::Pending;
                    };
                    // Take the slot back to replace the waker; if the result
                    // came meanwhile, take that instead.
                    // ORDERING: Acquire takes the slot back from the state
                    // the handle itself published; on failure as above.
                    match self.state.compare_exchange(
                        flags | WAITING,
                        flags | EMPTY,
                        Ordering::Acquire,
                        Ordering::Acquire,
                    ) {
                        Ok(_) => {
                            // SAFETY: back in `EMPTY`, the handle owns `waker`.
                            let same = self.waker.with_mut(|w| unsafe {
                                (*w).as_ref().is_some_and(|old| old.will_wake(waker))
                            });
                            if same {
                                match self.publish_waker(flags) {
                                    Ok(()) => return Poll::Pending,
                                    Err(actual) => state = actual,
                                }
                            } else {
                                state = flags | EMPTY;
                            }
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
        state & CANCELLED != 0 || matches!(state & VALUE, READY | TAKEN)
    }

    fn cancel(&self) -> bool {
        // ORDERING: Relaxed throughout: see `start`; the handle takes
        // nothing from the task side by cancelling.
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & (STARTED | CANCELLED) != 0 || !matches!(state & VALUE, EMPTY | WAITING) {
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
            let value = state & VALUE;
            if state & CANCELLED != 0 || value == TAKEN {
                // Nothing left for the task side to know: a cancelled job's
                // task never touches `waker` (the handle drops it, below)
                // and still sees `CANCELLED`; a taken result is gone.
                break;
            }
            let dropped = (state & !VALUE) | DROPPED;
            // From `EMPTY` the handle has nothing to drop: it lets go in
            // the same operation. From `WAITING` it drops its waker first,
            // from `READY` the result, and lets go after.
            let next = if value == EMPTY {
                dropped & !HANDLE
            } else {
                dropped
            };
            // ORDERING: AcqRel: Acquire to take a published result or our
            // own waker back; Release so the task side, seeing `DROPPED`,
            // owns the slots after whatever the handle did to them (and,
            // from `EMPTY`, so the side that frees sees the handle's
            // writes).
            match self
                .state
                .compare_exchange_weak(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if value == EMPTY => return state & TASK == 0,
                Ok(_) => break,
                Err(actual) => state = actual,
            }
        }
        match state & VALUE {
            READY if state & CANCELLED == 0 => {
                // SAFETY: `READY` gave `stage` to the handle for good, with
                // the result `finish` stored, which the handle never took
                // (the state is not `TAKEN`).
                let result = self
                    .stage
                    .with_mut(|slot| unsafe { ManuallyDrop::take(&mut (*slot).done) });
                // The unread result is user code: its destructor may panic,
                // and the hold below must be let go of all the same. The
                // panic is swallowed, as when the task side drops it.
                drop_quietly(result);
            }
            TAKEN => {}
            _ => {
                // `WAITING` (now `DROPPED`: the task side never takes the
                // waker), or cancelled: the waker, if any, is the
                // handle's.
                // SAFETY: as above.
                let waker = self.waker.with_mut(|w| unsafe { (*w).take() });
                drop_quietly(waker);
            }
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
