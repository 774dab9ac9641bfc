//! The producer's path: find the lane, take a slot (or apply the lane's
//! policy when it is full), allocate the job, publish it, wake a worker.

use super::Shared;
use crate::clock::{now_ns, to_ns};
use crate::error::{BatchError, EnqueueError};
use crate::job::JobHandle;
use crate::job::body::{Body, Once};
use crate::job::cell::NewJob;
use crate::job::task::{JobMeta, Task};
use crate::lane::NoSlot;
use crate::lane::config::RejectionPolicy;
use crate::observe::facade::Recent;
use crate::priority::Priority;
use crate::sync::Arc;
use crate::sync::Wait;
use crate::sync::atomic::Ordering;
use std::time::Instant;

/// A job allocated for a lane, not yet queued: it becomes a task for the
/// lane and a handle for the caller, or, refused, gives the caller's value
/// back.
pub(crate) trait Submission {
    /// What the caller handed in.
    type Payload;
    /// What the job's handle resolves to.
    type Output;
    fn into_parts(self) -> (Task, JobHandle<Self::Output>);
    fn into_payload(self) -> Self::Payload;
}

impl<B: Body> Submission for NewJob<B> {
    type Payload = B::Payload;
    type Output = B::Output;

    #[inline]
    fn into_parts(self) -> (Task, JobHandle<B::Output>) {
        self.split()
    }

    fn into_payload(self) -> B::Payload {
        match self.into_body().into_payload() {
            Some(payload) => payload,
            None => unreachable!("a job nothing else has seen gives its body back"),
        }
    }
}

/// At most this many handles are allocated up front for a batch, whatever
/// its iterator's size hint says (a hint is not a promise).
const BATCH_PREALLOCATE: usize = 1024;

#[inline]
fn once<F>(f: F) -> Once<F> {
    Once(Some(f))
}

impl Shared {
    /// Queues a job in the lane of `priority`. `payload` is what the
    /// caller gave (handed back in errors); `into_body` wraps it for the
    /// lane.
    #[inline]
    pub(crate) fn submit<P, B>(
        self: &Arc<Self>,
        priority: Priority,
        payload: P,
        deadline: Option<Instant>,
        wait: Wait,
        into_body: impl FnOnce(P) -> B,
    ) -> Result<JobHandle<B::Output>, EnqueueError<P>>
    where
        B: Body<Payload = P>,
    {
        self.submit_with(priority, payload, deadline, wait, |payload, meta, _| {
            NewJob::new(into_body(payload), meta)
        })
    }

    /// Queues what `make` allocates from `payload` (given the job's meta
    /// and its lane's index) in the lane of `priority`: the path of every
    /// job, closures and futures alike.
    #[inline]
    pub(crate) fn submit_with<P, S>(
        self: &Arc<Self>,
        priority: Priority,
        payload: P,
        deadline: Option<Instant>,
        wait: Wait,
        make: impl FnOnce(P, Option<JobMeta>, usize) -> S,
    ) -> Result<JobHandle<S::Output>, EnqueueError<P>>
    where
        S: Submission<Payload = P>,
    {
        let Some(index) = self.lane_index(priority) else {
            return Err(EnqueueError::UnknownPriority {
                priority,
                known: self.priorities(),
                job: payload,
            });
        };
        let lane = &self.lanes[index];
        // Refused before taking a slot: a producer that only finds the lane
        // closed in `open_slot` must leave a tombstone there, which nothing
        // claims once the workers are stopped. Only producers already past
        // this check when the executor closes can still do that.
        if self.is_closed() {
            return Err(EnqueueError::ShutDown {
                priority,
                job: payload,
            });
        }
        let started = match self.first_worker() {
            Ok(started) => started,
            Err(error) => {
                return Err(EnqueueError::NoThread {
                    priority,
                    job: payload,
                    error,
                });
            }
        };
        if !lane.try_reserve() {
            match self.when_full(index, wait) {
                Ok(()) => {}
                Err(NoSlot::Closed) => {
                    return Err(EnqueueError::ShutDown {
                        priority,
                        job: payload,
                    });
                }
                Err(NoSlot::Full)
                    if lane.when_full == RejectionPolicy::CallerRuns
                        && !matches!(wait, Wait::No) =>
                {
                    let job = make(payload, self.meta(deadline), index);
                    return Ok(self.run_on_caller(index, job));
                }
                Err(NoSlot::Full) => {
                    lane.counters.rejected.fetch_add(1, Ordering::Relaxed);
                    self.instruments.rejected(index);
                    return Err(EnqueueError::Full {
                        priority,
                        capacity: lane.capacity.limit().unwrap_or(usize::MAX),
                        job: payload,
                    });
                }
            }
        }
        self.publish(index, payload, deadline, started, make)
    }

    /// Rule 3: with no worker alive, starts one before a job is published,
    /// so a job is never queued for nobody. `Ok(true)` if it started one;
    /// the operating system's error if none could start and none is alive
    /// (the job then goes back to the caller).
    #[inline]
    fn first_worker(self: &Arc<Self>) -> std::io::Result<bool> {
        // ORDERING: SeqCst, as every access to `live` (rules 3 and 4).
        if self.live.load(Ordering::SeqCst) != 0 {
            return Ok(false);
        }
        match self.try_spawn_worker() {
            Ok(started) => Ok(started),
            Err(error) if self.live.load(Ordering::SeqCst) == 0 => Err(error),
            // Another producer started one meanwhile.
            Err(_) => Ok(false),
        }
    }

    /// Queues a job in lane `index`, whose slot the caller holds (a
    /// permit of `reserve`): as `submit_with` from the point where it has
    /// a slot. Refused, the slot is given back.
    pub(crate) fn submit_reserved<P, S>(
        self: &Arc<Self>,
        index: usize,
        payload: P,
        make: impl FnOnce(P, Option<JobMeta>, usize) -> S,
    ) -> Result<JobHandle<S::Output>, EnqueueError<P>>
    where
        S: Submission<Payload = P>,
    {
        let lane = &self.lanes[index];
        let priority = lane.priority;
        if self.is_closed() {
            lane.unreserve();
            return Err(EnqueueError::ShutDown {
                priority,
                job: payload,
            });
        }
        match self.first_worker() {
            Ok(started) => self.publish(index, payload, None, started, make),
            Err(error) => {
                lane.unreserve();
                Err(EnqueueError::NoThread {
                    priority,
                    job: payload,
                    error,
                })
            }
        }
    }

    /// Allocates the job and publishes it in lane `index`, where the
    /// caller holds a slot; then wakes or starts a worker (rules 1, 3, 5).
    #[inline]
    fn publish<P, S>(
        self: &Arc<Self>,
        index: usize,
        payload: P,
        deadline: Option<Instant>,
        started: bool,
        make: impl FnOnce(P, Option<JobMeta>, usize) -> S,
    ) -> Result<JobHandle<S::Output>, EnqueueError<P>>
    where
        S: Submission<Payload = P>,
    {
        let lane = &self.lanes[index];
        // Allocate first: between opening the slot and pushing, a worker
        // may already wait for this job, so keep that window short.
        let job = make(payload, self.meta(deadline), index);
        // Rule 5: the job is accepted if its slot opens before the lane
        // closes.
        let ticket = match lane.open_slot() {
            Ok(ticket) => ticket,
            Err(ticket) => {
                lane.push_tombstone(ticket);
                return Err(EnqueueError::ShutDown {
                    priority: lane.priority,
                    job: job.into_payload(),
                });
            }
        };
        let (task, handle) = job.into_parts();
        lane.push(ticket, task);
        if started {
            self.after_publish_started();
        } else {
            self.after_publish();
        }
        // Recorded once a worker is on its way: a recorder that blocks
        // delays this producer, never the job.
        self.instruments.submitted(index);
        Ok(handle)
    }

    /// A job's facts: when it was queued, if anyone will ask (hooks,
    /// metrics, a deadline, a tracing subscriber), and its deadline;
    /// `None` if there is nothing to keep.
    #[inline]
    pub(super) fn meta(&self, deadline: Option<Instant>) -> Option<JobMeta> {
        let deadline_ns = deadline.map_or(0, to_ns);
        let stamp = self.stamp_jobs || deadline_ns != 0 || crate::observe::span::wants_clock();
        stamp.then(|| JobMeta::new(now_ns(), deadline_ns))
    }

    /// Caller-runs: the job runs here, on the producer's thread.
    #[cold]
    fn run_on_caller<S: Submission>(
        self: &Arc<Self>,
        index: usize,
        job: S,
    ) -> JobHandle<S::Output> {
        let lane = &self.lanes[index];
        let (task, handle) = job.into_parts();
        lane.counters.caller_ran.fetch_add(1, Ordering::Relaxed);
        self.instruments.submitted(index);
        lane.counters.dispatched.fetch_add(1, Ordering::Relaxed);
        // Retries run here too, at once: a producer's thread re-queueing
        // work could race a shutdown that has already let the workers go.
        let mut index = index;
        let recent = Recent::new();
        let mut next = self.run_task(index, task, &recent, None);
        while let Some(retry) = next {
            index = self.retry_lane(index, &retry);
            let counters = &self.lanes[index].counters;
            counters.requeued.fetch_add(1, Ordering::Relaxed);
            counters.dispatched.fetch_add(1, Ordering::Relaxed);
            retry.task().requeued();
            next = self.run_task(index, retry.into_task(), &recent, None);
        }
        handle
    }

    /// Queues a batch of jobs of one lane in order. Each job is offered as
    /// `submit` with `Wait::Forever` would offer it (a full lane blocks,
    /// rejects, runs the job on the caller or discards the oldest, by its
    /// policy); the batch stops at the first job refused.
    ///
    /// Each job is published, and a worker woken for it, before the
    /// iterator (user code) is asked for the next: the batch never holds a
    /// reserved slot or an unpublished job while the iterator runs. So an
    /// iterator may wait for the jobs before it, or enqueue into the same
    /// lane, and one that panics leaves nothing behind: the jobs it yielded
    /// are queued, every slot is the lane's again.
    pub(crate) fn submit_batch<F, T>(
        self: &Arc<Self>,
        priority: Priority,
        jobs: impl IntoIterator<Item = F>,
    ) -> Result<Vec<JobHandle<T>>, BatchError<F, T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let mut jobs = jobs.into_iter();
        if self.lane_index(priority).is_none() {
            return match jobs.next() {
                None => Ok(Vec::new()),
                Some(job) => Err(BatchError {
                    error: EnqueueError::UnknownPriority {
                        priority,
                        known: self.priorities(),
                        job,
                    },
                    accepted: Vec::new(),
                    rest: jobs.collect(),
                }),
            };
        }
        let mut accepted = Vec::with_capacity(jobs.size_hint().0.min(BATCH_PREALLOCATE));
        while let Some(job) = jobs.next() {
            match self.submit(priority, job, None, Wait::Forever, once) {
                Ok(handle) => accepted.push(handle),
                Err(error) => {
                    return Err(BatchError {
                        error,
                        accepted,
                        rest: jobs.collect(),
                    });
                }
            }
        }
        Ok(accepted)
    }

    /// Rules 1 and 3 for a job whose producer has just started a worker
    /// for it: that worker counts as idle and searches, so no thread is
    /// added for being below core; but it may already have gone to sleep
    /// (woken here) or retired (its `idle` and `live` given back, rule 4),
    /// and then more jobs wait than workers are idle and one is added.
    #[cold]
    fn after_publish_started(self: &Arc<Self>) {
        if self.sleep.wake_one() {
            return;
        }
        // ORDERING: SeqCst loads after the SeqCst publish: rule 4's pair
        // with a retiring worker.
        if self.live.load(Ordering::SeqCst) < self.limits.max()
            && self.queued() > self.idle.load(Ordering::SeqCst)
        {
            self.spawn_worker();
        }
    }

    /// Rules 1 and 3: wake a sleeper, or add a thread if none is idle.
    #[inline]
    pub(super) fn after_publish(self: &Arc<Self>) {
        if self.sleep.wake_one() {
            return;
        }
        let live = self.live.load(Ordering::SeqCst);
        if live >= self.limits.max() {
            return;
        }
        // Below core every job adds a thread (as Java's pool does); above
        // it, a thread is added when more jobs wait than workers are idle.
        if live < self.limits.core() || self.queued() > self.idle.load(Ordering::SeqCst) {
            self.spawn_worker();
        }
    }
}
