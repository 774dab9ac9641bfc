//! A job as the lanes and workers see it: the type-erased [`Task`], what it
//! reports while it runs ([`Observer`]) and a retry it asks for
//! ([`Retry`]). The cell behind it is in `cell/`.

use super::error::JobError;
use crate::clock::now_ns;
use crate::hooks::JobOutcome;
use crate::priority::Priority;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Facts about a job that its holder reads without touching the body.
#[derive(Debug)]
pub(crate) struct JobMeta {
    /// When it was queued (crate clock), or 0 if nobody needs to know. A
    /// retry is stamped again when it is queued again. Written only by the
    /// holder of the job's one [`Task`], before it queues the task (the
    /// queue orders it before the next holder's read), hence relaxed.
    enqueued_ns: AtomicU64,
    /// When it expires (crate clock), or 0 for never.
    pub(crate) deadline_ns: u64,
    /// The span current at `enqueue`: the parent of each attempt's span.
    #[cfg(feature = "tracing")]
    pub(crate) parent: crate::observe::span::Parent,
}

impl JobMeta {
    pub(crate) fn new(enqueued_ns: u64, deadline_ns: u64) -> JobMeta {
        JobMeta {
            enqueued_ns: AtomicU64::new(enqueued_ns),
            deadline_ns,
            #[cfg(feature = "tracing")]
            parent: crate::observe::span::current(enqueued_ns),
        }
    }

    /// When the job was queued (crate clock), or 0 if it was not stamped.
    #[inline]
    pub(crate) fn enqueued_ns(&self) -> u64 {
        self.enqueued_ns.load(Ordering::Relaxed)
    }

    /// The span current at `enqueue`, the parent of each attempt's span
    /// (nothing without the `tracing` feature).
    #[inline]
    pub(crate) fn parent(&self) -> &crate::observe::span::Parent {
        #[cfg(feature = "tracing")]
        {
            &self.parent
        }
        #[cfg(not(feature = "tracing"))]
        {
            &()
        }
    }

    /// The job is queued again (a retry): its next wait counts from now.
    pub(crate) fn requeued(&self) {
        if self.enqueued_ns() != 0 {
            self.enqueued_ns.store(now_ns(), Ordering::Relaxed);
        }
    }
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
    /// The job was cancelled through its handle before it started: it was
    /// dropped unrun.
    fn cancelled(&self);
}

/// An observer that records nothing.
pub(crate) struct Unobserved;

impl Observer for Unobserved {
    fn record(&self, _: JobOutcome) {}
    fn may_retry(&self) -> bool {
        true
    }
    fn dead_letter(&self, _: u32, _: &str) {}
    fn cancelled(&self) {}
}

/// A failed attempt that asks to be queued again. Made only by
/// [`Task::run`], so its task is always a retry's: the failed attempt put
/// the job's body back in its slot (what [`Retry::give_up`] relies on).
pub(crate) struct Retry {
    task: Task,
    /// The backoff before the next attempt.
    pub(crate) delay: Duration,
    /// The lane to queue it in, if not its own.
    pub(crate) priority: Option<Priority>,
    /// The failed attempt's error, reported if the retry cannot be queued.
    pub(crate) error: String,
}

impl Retry {
    /// The task to queue again (or to run again at once).
    pub(crate) fn task(&self) -> &Task {
        &self.task
    }

    /// The task, to queue again (or to run again at once).
    pub(crate) fn into_task(self) -> Task {
        self.task
    }

    /// The retry cannot be queued (the executor stopped while the attempt
    /// ran): the job is dead-lettered with its last error instead.
    pub(crate) fn give_up(mut self, observer: &dyn Observer) {
        if let Some(raw) = self.task.raw.take() {
            // SAFETY: the task holds the job until `release` below, and it
            // is a retry's (only `Task::run` makes a `Retry`): its body is
            // back in its slot.
            unsafe { raw.as_ref().give_up(observer, self.error) };
            // SAFETY: the task's hold, given up once.
            unsafe { release(raw) };
        }
    }
}

/// What a failed attempt asks for: a delay, another lane perhaps, and its
/// error.
pub(crate) type Again = (Duration, Option<Priority>, String);

/// Lets go of a job's task-side hold; the job may be freed by it. Called
/// once per hold, and the pointer is not used afterwards.
pub(crate) type ReleaseTask = unsafe fn(NonNull<dyn RawJob>);

/// A job type-erased for the lanes. The lane's [`Task`] holds it through a
/// raw pointer and lets go of it with the function [`releaser`] gives: a
/// job cell counts its two holders in its own state word (`cell/`), a
/// future is an `Arc` (`pool/future/mod.rs`).
///
/// [`releaser`]: RawJob::releaser
pub(crate) trait RawJob: Send + Sync {
    /// Claims the job before it runs or is resolved: `false` if its handle
    /// cancelled it first (the body is dropped then, unrun). Called again
    /// for a retry's attempt, it answers `true`.
    fn start(&self) -> bool;
    /// Runs one attempt (unless the job was cancelled: [`start`] comes
    /// first, and tells the observer). `Some` asks for another attempt;
    /// `None` means the task side is done with the job.
    ///
    /// [`start`]: RawJob::start
    fn run(&self, observer: &dyn Observer) -> Option<Again>;
    /// Resolves the handle without running the job (dropping its body).
    fn resolve_unrun(&self, error: JobError);
    /// Dead-letters a job waiting for a retry that will not come.
    ///
    /// # Safety
    ///
    /// The job's body is in its slot: the caller holds the task of a retry
    /// (an attempt that failed and put the body back), not yet run again.
    unsafe fn give_up(&self, observer: &dyn Observer, error: String);
    /// The job's facts; `None` for a job that was not stamped and has no
    /// deadline.
    fn meta(&self) -> Option<&JobMeta>;
    /// The number of the job's next attempt (1 for its first run).
    ///
    /// # Safety
    ///
    /// The job's body is in its slot: the caller holds the job's task,
    /// [`start`](RawJob::start) said it was not cancelled, and it has not
    /// run since.
    unsafe fn next_attempt(&self) -> u32;
    /// How this job's task-side hold is let go of.
    fn releaser(&self) -> ReleaseTask;
}

/// Lets go of the task-side hold on `raw`.
///
/// # Safety
///
/// `raw` is a hold the caller owns, let go of once; it is not used
/// afterwards.
unsafe fn release(raw: NonNull<dyn RawJob>) {
    // SAFETY: the hold keeps the job alive until the call below; the
    // reference ends before it.
    let releaser = unsafe { raw.as_ref() }.releaser();
    // SAFETY: as promised by the caller.
    unsafe { releaser(raw) };
}

/// A job as a lane holds it. Dropping a task that never ran resolves its
/// handle (as [`JobError::Cancelled`]), so no handle waits for ever.
pub(crate) struct Task {
    /// The task-side hold on the job, or `None` for a tombstone.
    raw: Option<NonNull<dyn RawJob>>,
}

// SAFETY: a task is the one task-side hold on a job, which is `Send +
// Sync` (`RawJob`'s bounds); moving the hold to another thread moves the
// right to run and release the job with it.
unsafe impl Send for Task {}

impl Task {
    /// The task for a hold on a job.
    ///
    /// # Safety
    ///
    /// `raw` is a task-side hold that the job's
    /// [`releaser`](RawJob::releaser) lets go of, owned by the new task.
    pub(crate) unsafe fn from_hold(raw: NonNull<dyn RawJob>) -> Task {
        Task { raw: Some(raw) }
    }

    /// A task for a job kept in an `Arc` (a future's, `pool/future/mod.rs`),
    /// whose releaser drops one reference.
    pub(crate) fn from_arc(raw: Arc<dyn RawJob>) -> Task {
        let ptr = Arc::into_raw(raw).cast_mut();
        // SAFETY: `Arc::into_raw` never returns null.
        let raw = unsafe { NonNull::new_unchecked(ptr) };
        Task { raw: Some(raw) }
    }

    /// A place-holder with no job (see `Lane::push_tombstone`).
    pub(crate) fn tombstone() -> Task {
        Task { raw: None }
    }

    pub(crate) fn is_tombstone(&self) -> bool {
        self.raw.is_none()
    }

    #[inline]
    fn job(&self) -> Option<&dyn RawJob> {
        // SAFETY: the task holds the job alive as long as it is `Some`.
        self.raw.map(|raw| unsafe { &*raw.as_ptr() })
    }

    /// Claims the job before the hooks or a deadline see it: `true` if its
    /// handle cancelled it (the body is then dropped, and the task is
    /// spent). A job that was not cancelled then runs or is resolved as
    /// usual. A tombstone has nothing to claim.
    pub(crate) fn cancelled(&mut self) -> bool {
        match self.job() {
            Some(job) if !job.start() => {
                if let Some(raw) = self.raw.take() {
                    // SAFETY: the task's hold, given up once.
                    unsafe { release(raw) };
                }
                true
            }
            _ => false,
        }
    }

    /// Runs one attempt on the current thread, catching a panic (or drops
    /// the job unrun if its handle cancelled it). Returns the task again
    /// when it asks to be retried.
    #[inline]
    pub(crate) fn run(mut self, observer: &dyn Observer) -> Option<Retry> {
        let raw = self.raw.take()?;
        // SAFETY: the hold keeps the job alive; the reference ends before
        // the release below.
        match unsafe { raw.as_ref() }.run(observer) {
            Some((delay, priority, error)) => Some(Retry {
                task: Task { raw: Some(raw) },
                delay,
                priority,
                error,
            }),
            None => {
                // SAFETY: the task's hold, given up once.
                unsafe { release(raw) };
                None
            }
        }
    }

    /// Resolves the handle with `error` without running the job.
    pub(crate) fn resolve(mut self, error: JobError) {
        if let Some(raw) = self.raw.take() {
            // SAFETY: the hold keeps the job alive until its release.
            unsafe { raw.as_ref() }.resolve_unrun(error);
            // SAFETY: the task's hold, given up once.
            unsafe { release(raw) };
        }
    }

    /// The job's facts; `None` for a tombstone, or a job not stamped and
    /// without a deadline.
    #[inline]
    pub(crate) fn meta(&self) -> Option<&JobMeta> {
        self.job().and_then(RawJob::meta)
    }

    /// The job is queued again: its next wait counts from now.
    pub(crate) fn requeued(&self) {
        if let Some(meta) = self.meta() {
            meta.requeued();
        }
    }

    /// The number of the attempt the next run makes (1 for a tombstone).
    ///
    /// # Safety
    ///
    /// As [`RawJob::next_attempt`]: [`Task::cancelled`] said `false`, and
    /// the task has not run since.
    #[inline]
    pub(crate) unsafe fn next_attempt(&self) -> u32 {
        // SAFETY: the caller's promise.
        self.job().map_or(1, |job| unsafe { job.next_attempt() })
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            // SAFETY: the hold keeps the job alive until its release.
            unsafe { raw.as_ref() }.resolve_unrun(JobError::Cancelled);
            // SAFETY: the task's hold, given up once.
            unsafe { release(raw) };
        }
    }
}
