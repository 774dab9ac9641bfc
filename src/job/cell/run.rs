//! The task side of a job cell: take the body, run an attempt, publish
//! the result (or drop it if the handle is gone), and let go of the cell.

use super::super::task::{Again, Observer, ReleaseTask};
use super::*;
use crate::hooks::JobOutcome;
use crate::util::{drop_quietly, panic_message};
use std::panic::{AssertUnwindSafe, catch_unwind};

impl<B: Body, M: Meta> JobCell<B, M> {
    /// Task side: lets go of its hold, as its last touch of the cell.
    ///
    /// # Safety
    ///
    /// `raw` points to a `JobCell<B, M>` whose task-side hold the caller
    /// owns and gives up.
    unsafe fn release_task(raw: NonNull<dyn RawJob>) {
        let cell = raw.cast::<Self>();
        // SAFETY: the hold keeps the cell alive until it is let go of
        // below.
        let state = &unsafe { cell.as_ref() }.state;
        // A detached job (its handle dropped before it finished) is the
        // usual fire-and-forget case: once the handle has let go, nobody
        // but this hold will touch the cell, so it is freed with no
        // read-modify-write. ORDERING: Acquire pairs with the Release of
        // the handle's last touch (`detach`), so its writes come first.
        if state.load(Ordering::Acquire) & HANDLE == 0 {
            // SAFETY: the handle's hold is gone, and this is the last one.
            unsafe { Self::free(cell) };
            return;
        }
        // ORDERING: AcqRel: Release so that the handle side, if it frees
        // the cell, sees every write the task side made; Acquire so that
        // this side, if it frees it, sees the handle side's.
        let before = state.fetch_and(!TASK, Ordering::AcqRel);
        if before & HANDLE == 0 {
            // SAFETY: both holds are gone now.
            unsafe { Self::free(cell) };
        }
    }

    /// Task side: takes the body out to run or drop it.
    ///
    /// # Safety
    ///
    /// The body is in the slot: [`start`](RawJob::start) returned `true`
    /// (or is about to return `false`, dropping it) and the body was not
    /// taken since it was put there (by `new` or `keep_body`). The task
    /// side owns `stage` until it publishes `READY`, and only the holder of
    /// the job's one `Task` calls this.
    unsafe fn take_body(&self) -> B {
        // SAFETY: as the caller promises.
        self.stage
            .with_mut(|slot| unsafe { ManuallyDrop::take(&mut (*slot).body) })
    }

    /// Task side: puts a body back for its next attempt.
    fn keep_body(&self, body: B) {
        // SAFETY: as in `take_body`; the slot is empty (the body was taken
        // for the attempt that failed), so nothing is overwritten.
        self.stage.with_mut(|slot| unsafe {
            slot.write(Slot {
                body: ManuallyDrop::new(body),
            })
        });
    }

    /// Task side: stores the result and hands it to the handle.
    fn finish(&self, result: Result<B::Output, JobError>) {
        // SAFETY: as in `take_body`: `READY` is not published yet, and the
        // slot is empty (the body was taken), so nothing is overwritten.
        self.stage.with_mut(|slot| unsafe {
            slot.write(Slot {
                done: ManuallyDrop::new(result.map_err(Box::new)),
            })
        });
        // ORDERING: Relaxed: only a starting value for the exchange below.
        let mut state = self.state.load(Ordering::Relaxed);
        let before = loop {
            if value(state) == DROPPED {
                break state;
            }
            // ORDERING: Release publishes the result to the handle's
            // Acquire load; Acquire takes over the waiter the handle
            // published with Release when it moved to `WAITING`.
            match self.state.compare_exchange_weak(
                state,
                (state & FLAGS) | READY,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(before) => break before,
                Err(actual) => state = actual,
            }
        };
        match value(before) {
            WAITING => {
                // SAFETY: the exchange above moved the state away from the
                // waiter's address: the task side took it over, once.
                let waiter = unsafe { Waiter::from_state(before) };
                // A waker is user code too: its panic must not unwind a
                // worker (nor leak the box).
                drop_quietly(catch_unwind(AssertUnwindSafe(move || waiter.0.wake())));
            }
            DROPPED => {
                // SAFETY: the handle is gone and never touched `stage`
                // before it went (it only does in `READY`); nobody else
                // will touch the result, stored just above.
                let result = self
                    .stage
                    .with_mut(|slot| unsafe { ManuallyDrop::take(&mut (*slot).done) });
                // Nobody will read it, and its drop may panic.
                drop_quietly(result);
            }
            _ => {}
        }
    }

    /// Runs one attempt. `Some` asks for another after a delay, possibly at
    /// another priority; the body is then back in the cell.
    fn attempt(&self, observer: &dyn Observer) -> Option<Again> {
        if !self.start() {
            observer.cancelled();
            return None;
        }
        // SAFETY: `start` said the job is not cancelled, so its body is in
        // the slot: put there by `new`, or by `keep_body` after the last
        // attempt.
        let mut body = unsafe { self.take_body() };
        let failure = match catch_unwind(AssertUnwindSafe(|| body.attempt())) {
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
        let attempts = body.attempts();
        if observer.may_retry()
            && let Some((delay, priority)) = body.retry_after(attempts)
        {
            observer.record(JobOutcome::Retrying);
            self.keep_body(body);
            return Some((delay, priority, failure));
        }
        drop_quietly(body);
        self.dead_letter(observer, attempts, failure);
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

impl<B: Body, M: Meta> RawJob for JobCell<B, M> {
    fn run(&self, observer: &dyn Observer) -> Option<Again> {
        // On `None` the result went to the handle, or was dropped quietly
        // in `finish` if the handle is gone: freeing the cell runs no user
        // code.
        self.attempt(observer)
    }

    fn releaser(&self) -> ReleaseTask {
        Self::release_task
    }

    #[inline]
    fn start(&self) -> bool {
        // ORDERING: Relaxed: `DROPPED` is final for the handle side (no
        // handle is left to cancel the job), and `STARTED` is only ever set
        // by the task side (by this thread, or by an earlier holder of the
        // task before it was queued, which the queue orders before this).
        let state = self.state.load(Ordering::Relaxed);
        if value(state) == DROPPED {
            // `detach` leaves a cancelled job's value as it is: a job whose
            // handle dropped it was not cancelled.
            return true;
        }
        if state & STARTED != 0 {
            // Claimed before: by a retry's earlier attempt (not cancelled),
            // or by a call that found it cancelled and dropped the body, as
            // this one answers again. This thread's own read-modify-write
            // set both bits, so this load sees them.
            return state & CANCELLED == 0;
        }
        // ORDERING: Relaxed: the read-modify-writes of this one word decide
        // which of `STARTED` and `CANCELLED` came first; nothing else
        // crosses with them (a cancelling handle writes nothing the task
        // side reads, and the body was published with the task).
        if self.state.fetch_or(STARTED, Ordering::Relaxed) & CANCELLED == 0 {
            return true;
        }
        // SAFETY: the first claim (`STARTED` was clear), so no attempt took
        // the body that `new` put in the slot.
        let body = unsafe { self.take_body() };
        // Its captures may do anything, panic included.
        drop_quietly(body);
        false
    }

    fn resolve_unrun(&self, error: JobError) {
        if !self.start() {
            return;
        }
        // SAFETY: not cancelled, and the task was not run since its body
        // was put in the slot (a task that was never run, or a retry's).
        let body = unsafe { self.take_body() };
        // Its captures may do anything, panic included.
        drop_quietly(body);
        self.finish(Err(error));
    }

    unsafe fn give_up(&self, observer: &dyn Observer, error: String) {
        // SAFETY: a retry's task (the caller's promise): `keep_body` put
        // the body back after the attempt that failed.
        let body = unsafe { self.take_body() };
        let attempts = body.attempts();
        drop_quietly(body);
        self.dead_letter(observer, attempts, error);
    }

    #[inline]
    fn meta(&self) -> Option<&JobMeta> {
        self.meta.get()
    }

    unsafe fn next_attempt(&self) -> u32 {
        // SAFETY: the caller's promise: it holds the job's one `Task`,
        // `start` said it is not cancelled, and it has not run since: the
        // body is in the slot.
        self.stage
            .with_mut(|slot| unsafe { (*slot).body.attempts() })
            .saturating_add(1)
    }
}
