//! A queued job and the slot its result lands in, in one allocation.
//!
//! `enqueue` allocates one `JobCell<B, M>` in a `Box`. The lane holds it
//! as a [`Task`] (type-erased to run it), the caller's
//! [`JobHandle`](crate::JobHandle) holds it as a `Completion<T>` (type-erased
//! to read the result). Neither side needs a second allocation, and the
//! cell counts its two holders in its own state word rather than in an
//! `Arc`'s two counters (16 bytes less per queued job).
//!
//! The cell has no lock. Its body is only ever touched by whoever holds the
//! job's one [`Task`] (a lane, then a worker, or a `PendingJob`), so running
//! it needs no synchronisation; the cell keeps a retrying body between
//! attempts and the lane re-queues the same task. The result crosses to the
//! handle through a one-shot protocol on one state word:
//!
//! | state | meaning | who may touch `stage` / `waker` |
//! |---|---|---|
//! | `EMPTY` | no result, no waiter | task side: `stage`; handle: `waker` |
//! | `WAITING` | the handle left a waker | task side: `stage`; `waker` is published |
//! | `READY` | the result is in `stage` | handle: `stage`; task side: `waker` if it saw `WAITING` |
//! | `TAKEN` | the handle took the result | nobody |
//! | `DROPPED` | the handle is gone, or going | task side: `stage`; handle: `waker` until it lets go of the cell |
//!
//! Transitions, each one atomic operation on the value (the bits beside it
//! are kept as they are):
//! - the task side publishes its result with `EMPTY -> READY` or
//!   `WAITING -> READY` (then it takes the waker and wakes it); in
//!   `DROPPED` nobody will look, so it drops the result itself;
//! - the handle registers a waker with `EMPTY -> WAITING` (after writing
//!   it), takes it back with `WAITING -> EMPTY` to replace it, takes a
//!   `READY` result and moves to `TAKEN`, and on drop moves to `DROPPED`:
//!   from `WAITING` it then drops its waker, from `READY` the unread
//!   result.
//!
//! Beside the one-shot value, two bits of the same word decide between the
//! job starting and the handle cancelling it, whichever comes first:
//! - the task side sets `STARTED` (`fetch_or`) before it runs or resolves
//!   the job; if `CANCELLED` was already set it drops the body unrun and
//!   touches nothing else (the result slot and the waker stay as they are);
//! - the handle sets `CANCELLED` (compare-exchange) only while neither bit
//!   is set; from then on it answers `Cancelled` itself and owns `waker`
//!   outright, since the task side will never publish a result.
//!
//! A job whose handle is gone cannot be cancelled, so the task side skips
//! the read-modify-write when the value is already `DROPPED`.
//!
//! Two more bits, `TASK` and `HANDLE`, are the two holds on the cell. Each
//! side clears its own bit as its last touch of the cell (the handle in
//! the same operation that moves to `DROPPED` when it has nothing left to
//! drop); whoever clears the second one frees the cell. A hold is let go
//! of with acquire-release ordering, so the side that frees sees every
//! write the other made, as an `Arc`'s last drop does.
//!
//! A blocking `join` is a poll with a waker that unparks the joining thread.
//! The loom models `tests/loom/cell.rs` check the races between completing,
//! polling, joining, cancelling and dropping the handle; the test binary
//! `tests/leaks` counts allocations to check that every cell is freed
//! exactly once, whichever side lets go last.

use super::body::Body;
use super::error::JobError;
use super::handle::JobHandle;
use super::task::{Again, JobMeta, Observer, RawJob, ReleaseTask, Task};
use crate::hooks::JobOutcome;
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::cell::UnsafeCell;
use crate::sync::thread;
use crate::util::{drop_quietly, panic_message};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Poll, Wake, Waker};

/// No result yet, and no waiter.
const EMPTY: usize = 0;
/// The handle left a waker in `waker`.
const WAITING: usize = 1;
/// The result is in `stage`.
const READY: usize = 2;
/// The handle took the result.
const TAKEN: usize = 3;
/// The handle was dropped.
const DROPPED: usize = 4;
/// The one-shot value: one of the five above.
const VALUE: usize = 0b111;
/// Flag: the task side took the job to run or resolve it.
const STARTED: usize = 1 << 3;
/// Flag: the handle cancelled the job before it started.
const CANCELLED: usize = 1 << 4;
/// Hold: the task side (a lane, a worker, a `PendingJob`) still has the
/// cell.
const TASK: usize = 1 << 5;
/// Hold: the handle still has the cell.
const HANDLE: usize = 1 << 6;

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

enum Stage<B: Body> {
    Queued(B),
    Running,
    /// The error is boxed so a job's cell stays small while it waits.
    Done(Result<B::Output, Box<JobError>>),
}

pub(crate) struct JobCell<B: Body, M: Meta = JobMeta> {
    state: AtomicUsize,
    meta: M,
    stage: UnsafeCell<Stage<B>>,
    waker: UnsafeCell<Option<Waker>>,
}

/// What a cell keeps of its [`JobMeta`]: all of it, or nothing for the
/// usual job that was not stamped and has no deadline (16 bytes less per
/// queued job).
pub(crate) trait Meta: Send + Sync + 'static {
    fn get(&self) -> Option<&JobMeta>;
}

impl Meta for JobMeta {
    #[inline]
    fn get(&self) -> Option<&JobMeta> {
        Some(self)
    }
}

/// A job with no [`JobMeta`]: not stamped, no deadline.
pub(crate) struct NoMeta;

impl Meta for NoMeta {
    #[inline]
    fn get(&self) -> Option<&JobMeta> {
        None
    }
}

// SAFETY: the cells are only reached through the protocol in the module
// docs, which gives each of `stage` and `waker` one owner at a time, handed
// over by an atomic operation with Release on the giving side and Acquire
// on the taking side. What crosses threads is the body (`B: Send`), the
// result (`B::Output: Send`) and a `Waker` (`Send + Sync`).
unsafe impl<B: Body, M: Meta> Sync for JobCell<B, M> {}

/// A job allocated but not yet queued: it can still be taken apart to give
/// the caller's closure back.
pub(crate) enum NewJob<B: Body> {
    Stamped(Box<JobCell<B, JobMeta>>),
    Plain(Box<JobCell<B, NoMeta>>),
}

impl<B: Body> NewJob<B> {
    /// A job with `meta`, or with none (`None`: not stamped, no deadline).
    #[inline]
    pub(crate) fn new(body: B, meta: Option<JobMeta>) -> Self {
        match meta {
            Some(meta) => NewJob::Stamped(JobCell::new(body, meta)),
            None => NewJob::Plain(JobCell::new(body, NoMeta)),
        }
    }

    /// The task for a lane and the handle for the caller: the cell's two
    /// holds.
    #[inline]
    pub(crate) fn split(self) -> (Task, JobHandle<B::Output>) {
        match self {
            NewJob::Stamped(cell) => JobCell::split(cell),
            NewJob::Plain(cell) => JobCell::split(cell),
        }
    }

    /// The body back, unrun. `None` cannot happen: nothing else has seen
    /// the cell yet.
    pub(crate) fn into_body(self) -> Option<B> {
        match self {
            NewJob::Stamped(cell) => cell.into_body(),
            NewJob::Plain(cell) => cell.into_body(),
        }
    }
}

impl<B: Body, M: Meta> JobCell<B, M> {
    fn new(body: B, meta: M) -> Box<Self> {
        Box::new(JobCell {
            state: AtomicUsize::new(EMPTY | TASK | HANDLE),
            meta,
            stage: UnsafeCell::new(Stage::Queued(body)),
            waker: UnsafeCell::new(None),
        })
    }

    fn into_body(self) -> Option<B> {
        match self.stage.into_inner() {
            Stage::Queued(body) => Some(body),
            _ => None,
        }
    }

    fn split(cell: Box<Self>) -> (Task, JobHandle<B::Output>) {
        let cell = NonNull::from(Box::leak(cell));
        let task: NonNull<dyn RawJob> = cell;
        let handle: NonNull<dyn Completion<B::Output>> = cell;
        // SAFETY: the cell starts with both holds (`TASK | HANDLE`), one
        // given to each side; `release_task` and `release_handle` (the
        // releasers) let go of them.
        unsafe { (Task::from_hold(task), JobHandle::from_hold(handle)) }
    }

    /// Frees the cell once neither side holds it.
    ///
    /// # Safety
    ///
    /// The caller cleared the last hold; nobody touches the cell again.
    unsafe fn free(cell: NonNull<Self>) {
        // SAFETY: the cell was made by `Box::leak` in `split`, and the last
        // hold is gone.
        drop(unsafe { Box::from_raw(cell.as_ptr()) });
    }

    /// Task side: lets go of its hold, as its last touch of the cell.
    ///
    /// # Safety
    ///
    /// `raw` points to a `JobCell<B, M>` whose task-side hold the caller
    /// owns and gives up.
    unsafe fn release_task(raw: NonNull<dyn RawJob>) {
        let cell = raw.cast::<Self>();
        // ORDERING: AcqRel: Release so that the handle side, if it frees
        // the cell, sees every write the task side made; Acquire so that
        // this side, if it frees it, sees the handle side's.
        // SAFETY: the hold keeps the cell alive until this operation.
        let before = unsafe { cell.as_ref() }
            .state
            .fetch_and(!TASK, Ordering::AcqRel);
        if before & HANDLE == 0 {
            // SAFETY: both holds are gone now.
            unsafe { Self::free(cell) };
        }
    }

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
}

impl<B: Body, M: Meta> JobCell<B, M> {
    /// Task side: takes the body out to run or drop it. `None` if the job
    /// was already resolved (never run a job twice).
    fn take_body(&self) -> Option<B> {
        // SAFETY: the task side owns `stage` until it publishes `READY`,
        // and only the holder of the job's one `Task` calls this.
        self.stage.with_mut(|stage| unsafe {
            match std::mem::replace(&mut *stage, Stage::Running) {
                Stage::Queued(body) => Some(body),
                other => {
                    *stage = other;
                    None
                }
            }
        })
    }

    /// Task side: puts a body back for its next attempt.
    fn keep_body(&self, body: B) {
        // SAFETY: as in `take_body`.
        self.stage
            .with_mut(|stage| unsafe { *stage = Stage::Queued(body) });
    }

    /// Task side: stores the result and hands it to the handle.
    fn finish(&self, result: Result<B::Output, JobError>) {
        // SAFETY: as in `take_body`: `READY` is not published yet.
        self.stage
            .with_mut(|stage| unsafe { *stage = Stage::Done(result.map_err(Box::new)) });
        // ORDERING: Relaxed: only a starting value for the exchange below.
        let mut state = self.state.load(Ordering::Relaxed);
        let before = loop {
            if state & VALUE == DROPPED {
                break state;
            }
            // ORDERING: Release publishes the result to the handle's
            // Acquire load; Acquire takes over the waker the handle
            // published with Release when it moved to `WAITING`.
            match self.state.compare_exchange_weak(
                state,
                (state & !VALUE) | READY,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(before) => break before,
                Err(actual) => state = actual,
            }
        };
        match before & VALUE {
            WAITING => {
                // SAFETY: the handle gave `waker` up when it stored
                // `WAITING`, and cannot take it back now that the state
                // is `READY`.
                let waker = self.waker.with_mut(|w| unsafe { (*w).take() });
                if let Some(waker) = waker {
                    // A waker is user code too: its panic must not unwind
                    // a worker.
                    drop_quietly(catch_unwind(AssertUnwindSafe(|| waker.wake())));
                }
            }
            DROPPED => {
                // SAFETY: the handle is gone and never touched `stage`
                // before it went (it only does in `READY`); nobody else
                // will touch the result.
                let stage = self
                    .stage
                    .with_mut(|stage| unsafe { std::mem::replace(&mut *stage, Stage::Running) });
                // Nobody will read it, and its drop may panic.
                drop_quietly(stage);
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
        let mut body = self.take_body()?;
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
        if state & VALUE == DROPPED || state & STARTED != 0 {
            return true;
        }
        // ORDERING: Relaxed: the read-modify-writes of this one word decide
        // which of `STARTED` and `CANCELLED` came first; nothing else
        // crosses with them (a cancelling handle writes nothing the task
        // side reads, and the body was published with the task).
        if self.state.fetch_or(STARTED, Ordering::Relaxed) & CANCELLED == 0 {
            return true;
        }
        if let Some(body) = self.take_body() {
            // Its captures may do anything, panic included.
            drop_quietly(body);
        }
        false
    }

    fn resolve_unrun(&self, error: JobError) {
        if !self.start() {
            return;
        }
        let Some(body) = self.take_body() else {
            return;
        };
        // Its captures may do anything, panic included.
        drop_quietly(body);
        self.finish(Err(error));
    }

    fn give_up(&self, observer: &dyn Observer, error: String) {
        let Some(body) = self.take_body() else {
            return;
        };
        let attempts = body.attempts();
        drop_quietly(body);
        self.dead_letter(observer, attempts, error);
    }

    #[inline]
    fn meta(&self) -> Option<&JobMeta> {
        self.meta.get()
    }

    fn next_attempt(&self) -> u32 {
        // SAFETY: as in `take_body`: only the holder of the job's one
        // `Task` calls this, and it owns `stage` until it publishes `READY`.
        self.stage.with_mut(|stage| match unsafe { &*stage } {
            Stage::Queued(body) => body.attempts().saturating_add(1),
            _ => 1,
        })
    }
}

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
                    // SAFETY: `READY` hands `stage` to the handle for good.
                    let stage = self.stage.with_mut(|stage| unsafe {
                        std::mem::replace(&mut *stage, Stage::Running)
                    });
                    // `READY -> TAKEN`, keeping the bits beside the value
                    // (the task side may be clearing `TASK` right now).
                    // ORDERING: Relaxed: only the handle reads the value
                    // from here on; the holds are let go of with their own
                    // ordering.
                    self.state.fetch_add(TAKEN - READY, Ordering::Relaxed);
                    return Poll::Ready(match stage {
                        Stage::Done(result) => result.map_err(|e| *e),
                        _ => Err(JobError::Cancelled),
                    });
                }
                EMPTY => {
                    let Some(waker) = waker else {
                        return Poll::Pending;
                    };
                    // SAFETY: in `EMPTY` the handle owns `waker`.
                    self.waker.with_mut(|w| unsafe { *w = Some(waker.clone()) });
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
        let waker = Waker::from(Arc::new(Unpark(thread::current())));
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
                // SAFETY: `READY` gave `stage` to the handle for good.
                let stage = self
                    .stage
                    .with_mut(|stage| unsafe { std::mem::replace(&mut *stage, Stage::Running) });
                drop(stage);
            }
            TAKEN => {}
            _ => {
                // `WAITING` (now `DROPPED`: the task side never takes the
                // waker), or cancelled: the waker, if any, is the
                // handle's.
                // SAFETY: as above.
                let waker = self.waker.with_mut(|w| unsafe { (*w).take() });
                drop(waker);
            }
        }
        // ORDERING: AcqRel, as in `release_task`.
        self.state.fetch_and(!HANDLE, Ordering::AcqRel) & TASK == 0
    }
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
