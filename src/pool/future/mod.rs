//! Futures on the pool, without an async runtime: a future is polled on a
//! worker at its lane's priority; when it returns `Pending` the worker is
//! released, and the future is queued in its lane again when its waker is
//! woken.
//!
//! # The state of a future
//!
//! One word, changed by compare-and-swap, or by a plain store only by the
//! thread that owns the step:
//!
//! - `SCHEDULED`: a task for it is in its lane (or about to be pushed).
//! - `RUNNING`: a worker is polling it.
//! - `NOTIFIED`: woken while being polled.
//! - `IDLE`: it returned `Pending` and waits for its waker.
//! - `DONE`: finished, panicked or cancelled; wake-ups do nothing.
//!
//! A wake moves `IDLE` to `SCHEDULED` and queues the task (one waker wins
//! the swap, so the future is queued once), or `RUNNING` to `NOTIFIED`. A
//! poll that returns `Pending` moves `RUNNING` back to `IDLE`; if that
//! swap fails the state is `NOTIFIED`, and the poller queues the task
//! itself. So a wake during a poll is never lost, a future is never queued
//! or polled twice at once, and a wake after completion does nothing.
//!
//! A re-queued poll goes into its lane as a retry does (`push_retry`): the
//! future was accepted long ago, so neither a full lane nor a graceful
//! close refuses it, and no waker ever blocks. After `shutdown_now` nothing
//! runs any more: a parked future woken then is dropped, its handle
//! resolves `Cancelled`, and its lane counts it (`cancelled`). A future
//! still parked when a thread outside the pool has waited for its end
//! (closed, every worker gone: `shutdown`, `await_termination`, the last
//! `Executor` dropped there) is dropped the same way then, woken or not
//! (`parked.rs`); one woken after a shutdown made from a job is polled
//! as the pool's last work.

use super::Shared;
use super::parked::Abandon;
use super::submit::Submission;
use crate::hooks::JobOutcome;
use crate::job::JobError;
use crate::job::JobHandle;
use crate::job::task::{Again, JobMeta, Observer, RawJob, ReleaseTask, Task};
use crate::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::sync::{Arc, Condvar, Mutex, lock};
use crate::util::{drop_quietly, panic_message};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::{PoisonError, Weak};
use std::task::{Context, Poll, Wake, Waker};

mod handle;

const IDLE: usize = 0;
const SCHEDULED: usize = 1;
const RUNNING: usize = 2;
const NOTIFIED: usize = 3;
const DONE: usize = 4;

/// The future itself. It stays unpinned until its first poll, so that a
/// refused one can be handed back to the caller (a pinned `!Unpin` future
/// cannot be moved out of its box).
enum Body<F> {
    Fresh(F),
    Pinned(Pin<Box<F>>),
    Gone,
}

/// Where the result waits for the handle.
enum Outcome<T> {
    Pending,
    Done(Result<T, JobError>),
    Taken,
}

struct ResultSlot<T> {
    outcome: Outcome<T>,
    waker: Option<Waker>,
    joining: bool,
}

/// A future on the pool: the task in its lane, the waker it is polled
/// with, and the result side of its handle, in one allocation.
pub(crate) struct FutureJob<F: Future> {
    state: AtomicUsize,
    body: Mutex<Body<F>>,
    result: Mutex<ResultSlot<F::Output>>,
    finished: Condvar,
    /// The pool to queue it in again: weak, so that a parked future does
    /// not keep an executor's state alive after its last owner is gone.
    pool: Weak<Shared>,
    lane: usize,
    /// When it was last queued (stamped again at each re-queue, if at
    /// all), and the span it was spawned in.
    meta: JobMeta,
    /// Polled off the pool after `shutdown_now` handed it back: counted as
    /// handed back then, so not counted again if later cancelled.
    handed_back: AtomicBool,
    /// The job's own allocation, for the worker that polls it: `run` is
    /// reached through a shared reference, which carries no right to the
    /// `Arc`'s counts, so the waker and a re-queued task are made from
    /// this, never from `&self`.
    this: Weak<FutureJob<F>>,
}

impl<F: Future> Drop for FutureJob<F> {
    /// The future and a result nobody took are user code, dropped by
    /// whoever lets go of the job last: a handle, a waker a reactor kept,
    /// the pool. A panic in their destructors is caught here, so it
    /// unwinds into none of them.
    fn drop(&mut self) {
        // `&mut self`: no guard can exist, so no lock is taken.
        let body = self.body.get_mut().unwrap_or_else(PoisonError::into_inner);
        drop_quietly(std::mem::replace(body, Body::Gone));
        let slot = self
            .result
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        let outcome = std::mem::replace(&mut slot.outcome, Outcome::Taken);
        drop_quietly((outcome, slot.waker.take()));
    }
}

/// A future allocated for a lane, not yet queued (see [`Submission`]).
pub(crate) struct NewFuture<F: Future>(Arc<FutureJob<F>>);

impl<F> NewFuture<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    pub(crate) fn new(future: F, pool: Weak<Shared>, lane: usize, meta: JobMeta) -> Self {
        let job = NewFuture(Arc::new_cyclic(|this| FutureJob {
            state: AtomicUsize::new(SCHEDULED),
            body: Mutex::new(Body::Fresh(future)),
            result: Mutex::new(ResultSlot {
                outcome: Outcome::Pending,
                waker: None,
                joining: false,
            }),
            finished: Condvar::new(),
            pool,
            lane,
            meta,
            handed_back: AtomicBool::new(false),
            this: this.clone(),
        }));
        if let Some(shared) = job.0.pool.upgrade() {
            let weak: Weak<dyn Abandon> = Arc::downgrade(&job.0) as Weak<FutureJob<F>>;
            shared.parked.register(weak);
        }
        job
    }
}

impl<F> Submission for NewFuture<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    type Payload = F;
    type Output = F::Output;

    fn into_parts(self) -> (Task, JobHandle<F::Output>) {
        let raw: Arc<dyn RawJob> = self.0.clone();
        (Task::from_arc(raw), JobHandle::from_arc(self.0))
    }

    fn into_payload(self) -> F {
        let body = std::mem::replace(&mut *lock(&self.0.body), Body::Gone);
        match body {
            Body::Fresh(future) => future,
            Body::Pinned(_) | Body::Gone => {
                unreachable!("a future nothing else has seen is still fresh")
            }
        }
    }
}

impl<F> FutureJob<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    /// Polls the future once on this thread.
    fn poll_once(self: &Arc<Self>, observer: &dyn Observer) {
        // Only a scheduled future is polled: a task for a future already
        // cancelled has nothing to do.
        if self
            .state
            .compare_exchange(SCHEDULED, RUNNING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        // A worker's observer refuses retries once the executor stopped;
        // the caller running a handed-back job has one that does not, so a
        // poll that finds the executor stopped with such an observer is
        // that caller's. The stop is looked at first: it never clears, so
        // a worker that sees it also sees its own observer refuse, and a
        // worker's poll racing `shutdown_now` is never taken for the
        // caller's (looked at the other way round, the stop could land
        // between the two looks, and a later cancellation of the future
        // went uncounted: its lane ended one short of balanced).
        if self.pool_stopped() && observer.may_retry() {
            self.handed_back.store(true, Ordering::Relaxed);
        }
        let mut body = lock(&self.body);
        if let Body::Fresh(_) = &*body
            && let Body::Fresh(future) = std::mem::replace(&mut *body, Body::Gone)
        {
            *body = Body::Pinned(Box::pin(future));
        }
        let Body::Pinned(future) = &mut *body else {
            drop(body);
            self.state.store(DONE, Ordering::Release);
            return;
        };
        let waker = Waker::from(Arc::clone(self));
        let mut cx = Context::from_waker(&waker);
        let polled = catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx)));
        let result = match polled {
            Ok(Poll::Pending) => {
                drop(body);
                observer.record(JobOutcome::Suspended);
                if self
                    .state
                    .compare_exchange(RUNNING, IDLE, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
                {
                    // NOTIFIED: woken during the poll; queue it again.
                    self.state.store(SCHEDULED, Ordering::Release);
                    self.requeue();
                }
                return;
            }
            Ok(Poll::Ready(value)) => {
                observer.record(JobOutcome::Completed);
                Ok(value)
            }
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                drop_quietly(payload);
                observer.record(JobOutcome::Panicked);
                Err(JobError::Panicked { message })
            }
        };
        // The future is user code: drop it without letting a panic out.
        let spent = std::mem::replace(&mut *body, Body::Gone);
        drop(body);
        drop_quietly(spent);
        self.state.store(DONE, Ordering::Release);
        self.finish(result);
    }

    fn pool_stopped(&self) -> bool {
        self.pool.upgrade().is_none_or(|pool| pool.is_stopped())
    }

    /// Queues a poll in the future's lane (the state is `SCHEDULED`).
    fn requeue(self: &Arc<Self>) {
        self.meta.requeued();
        let task = Task::from_arc(Arc::clone(self) as Arc<dyn RawJob>);
        match self.pool.upgrade() {
            Some(pool) => {
                let count = !self.handed_back.load(Ordering::Relaxed);
                pool.requeue_future(self.lane, task, count);
            }
            // The executor is gone: nothing will ever poll it.
            None => task.resolve(JobError::Cancelled),
        }
    }

    /// Drops the future unfinished and resolves the handle.
    fn cancel(&self, error: JobError) {
        if self.state.swap(DONE, Ordering::AcqRel) == DONE {
            return;
        }
        let spent = std::mem::replace(&mut *lock(&self.body), Body::Gone);
        drop_quietly(spent);
        self.finish(Err(error));
    }

    fn finish(&self, result: Result<F::Output, JobError>) {
        let mut slot = lock(&self.result);
        slot.outcome = Outcome::Done(result);
        let waker = slot.waker.take();
        let joining = slot.joining;
        drop(slot);
        if joining {
            self.finished.notify_all();
        }
        if let Some(waker) = waker {
            drop_quietly(catch_unwind(AssertUnwindSafe(|| waker.wake())));
        }
    }
}

impl<F> Abandon for FutureJob<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn abandon(&self) -> Option<(usize, bool)> {
        // Only a parked future: one queued is in a lane (or in the hands
        // of a caller `shutdown_now` gave it to), one being polled is some
        // thread's, and a wake racing this takes `IDLE` first or finds it
        // `RUNNING`, then `DONE`, and does nothing.
        self.state
            .compare_exchange(IDLE, RUNNING, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        self.cancel(JobError::Cancelled);
        Some((self.lane, !self.handed_back.load(Ordering::Relaxed)))
    }

    fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }
}

impl<F> Wake for FutureJob<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let next = match state {
                IDLE => SCHEDULED,
                RUNNING => NOTIFIED,
                // Already queued, already noted, or finished.
                _ => return,
            };
            match self
                .state
                .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if next == SCHEDULED => return self.requeue(),
                Ok(_) => return,
                Err(actual) => state = actual,
            }
        }
    }
}

impl<F> RawJob for FutureJob<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn start(&self) -> bool {
        // A future's handle cannot cancel it (see `cancel` below).
        true
    }

    fn run(&self, observer: &dyn Observer) -> Option<Again> {
        // The task running it holds a strong reference for the whole call,
        // so the upgrade cannot fail; should it, there is nothing to poll.
        if let Some(this) = self.this.upgrade() {
            this.poll_once(observer);
        }
        None
    }

    fn releaser(&self) -> ReleaseTask {
        release_task::<F>
    }

    fn resolve_unrun(&self, error: JobError) {
        // Only a scheduled future has a task to drop unrun.
        if self
            .state
            .compare_exchange(SCHEDULED, RUNNING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.cancel(error);
        }
    }

    unsafe fn give_up(&self, _observer: &dyn Observer, error: String) {
        // A future is never retried; nothing calls this.
        self.cancel(JobError::Failed {
            attempts: 1,
            message: error,
        });
    }

    fn meta(&self) -> Option<&JobMeta> {
        Some(&self.meta)
    }

    unsafe fn next_attempt(&self) -> u32 {
        // A future is polled, never retried: every poll is its first run.
        1
    }
}

/// Drops the task's reference to a future.
///
/// # Safety
///
/// `raw` came from `Task::from_arc` of an `Arc<FutureJob<F>>`; this is its
/// one release.
unsafe fn release_task<F>(raw: NonNull<dyn RawJob>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // SAFETY: as promised by the caller: one reference, given back once.
    let job = unsafe { Arc::from_raw(raw.cast::<FutureJob<F>>().as_ptr()) };
    // If the handle is gone this may drop the result, user code: not on
    // the worker's stack.
    drop_quietly(job);
}

impl Shared {
    /// Queues a woken future's next poll in lane `lane`, as a retry is
    /// queued: under the re-queue lock, so that it is either in the lane
    /// before `shutdown_now` empties the lanes (and handed back), or sees
    /// the executor stopped and is cancelled (counted in the lane when
    /// `count` says it was not handed back before).
    fn requeue_future(self: &Arc<Self>, lane: usize, task: Task, count: bool) {
        let gate = lock(&self.requeue);
        if self.is_stopped() {
            drop(gate);
            if count {
                self.count_cancelled(lane, true);
            }
            task.resolve(JobError::Cancelled);
            return;
        }
        self.lanes[lane].push_retry(task);
        drop(gate);
        self.after_publish();
    }
}
