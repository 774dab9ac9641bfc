//! The producer's path: find the lane, take a slot (or apply the lane's
//! policy when it is full), allocate the job, publish it, wake a worker.

use super::{Shared, Wait};
use crate::clock::{now_ns, to_ns};
use crate::error::EnqueueError;
use crate::job::JobError;
use crate::job::JobHandle;
use crate::job::body::Body;
use crate::job::cell::NewJob;
use crate::job::task::JobMeta;
use crate::lane::config::RejectionPolicy;
use crate::lane::{Lane, NoSlot};
use crate::observe::facade::Recent;
use crate::priority::Priority;
use crate::sync::atomic::Ordering;
use crate::sync::{Arc, yield_now};
use std::time::Instant;

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
                    return Ok(self.run_on_caller(index, payload, deadline, into_body));
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
        // Allocate first: between opening the slot and pushing, a worker
        // may already wait for this job, so keep that window short.
        let job = NewJob::new(into_body(payload), self.meta(deadline));
        // Rule 5: the job is accepted if its slot opens before the lane
        // closes.
        if !lane.open_slot() {
            lane.push_tombstone();
            return match job.into_body().and_then(Body::into_payload) {
                Some(job) => Err(EnqueueError::ShutDown { priority, job }),
                None => unreachable!("a job nothing else has seen gives its body back"),
            };
        }
        let (task, completion) = job.split();
        lane.push(task);
        self.instruments.submitted(index);
        self.after_publish();
        Ok(JobHandle::new(completion))
    }

    #[inline]
    fn meta(&self, deadline: Option<Instant>) -> JobMeta {
        let deadline_ns = deadline.map_or(0, to_ns);
        let stamp = self.stamp_jobs || deadline_ns != 0 || crate::observe::span::wants_clock();
        JobMeta::new(if stamp { now_ns() } else { 0 }, deadline_ns)
    }

    /// The lane is full: apply its rejection policy. `Ok` means a slot was
    /// reserved after all.
    #[cold]
    fn when_full(self: &Arc<Self>, index: usize, wait: Wait) -> Result<(), NoSlot> {
        let lane = &self.lanes[index];
        let deadline = match (wait, lane.when_full) {
            (Wait::No, _) | (_, RejectionPolicy::Reject | RejectionPolicy::CallerRuns) => {
                return Err(NoSlot::Full);
            }
            (_, RejectionPolicy::DiscardOldest) => return self.discard_oldest(index),
            (Wait::Forever, RejectionPolicy::Block) => None,
            (Wait::Until(deadline), RejectionPolicy::Block) => Some(deadline),
        };
        if self.is_own_worker() {
            return self.reserve_helping(lane, deadline);
        }
        lane.reserve_blocking(deadline, || self.is_closed())
    }

    /// A job blocking on a full lane of its own executor could wait for
    /// itself: if every worker did so, nothing would ever free a slot. So a
    /// worker runs queued jobs (the picker's choice) while it waits, as
    /// rayon's `join` does, until a slot frees up.
    #[cold]
    fn reserve_helping(
        self: &Arc<Self>,
        lane: &Lane,
        deadline: Option<Instant>,
    ) -> Result<(), NoSlot> {
        loop {
            if self.is_closed() {
                return Err(NoSlot::Closed);
            }
            if lane.try_reserve() {
                return Ok(());
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(NoSlot::Full);
            }
            match self.next_task() {
                Some((index, task)) => self.execute(index, task, &Recent::new()),
                // Every queued job is running (or capped): one of them
                // frees a slot.
                None => yield_now(),
            }
        }
    }

    /// Pushes the lane's oldest queued job out (its handle resolves
    /// `Discarded`) until a slot is free.
    fn discard_oldest(&self, index: usize) -> Result<(), NoSlot> {
        let lane = &self.lanes[index];
        loop {
            if self.is_closed() {
                return Err(NoSlot::Closed);
            }
            if lane.try_claim()
                && let Some(oldest) = lane.take_claimed()
            {
                lane.counters.discarded.fetch_add(1, Ordering::Relaxed);
                self.instruments.discarded(index);
                oldest.resolve(JobError::Discarded);
            }
            if lane.try_reserve() {
                return Ok(());
            }
            // Every slot is held by a producer between reserve and push.
            yield_now();
        }
    }

    /// Caller-runs: the job runs here, on the producer's thread.
    #[cold]
    fn run_on_caller<P, B: Body>(
        self: &Arc<Self>,
        index: usize,
        payload: P,
        deadline: Option<Instant>,
        into_body: impl FnOnce(P) -> B,
    ) -> JobHandle<B::Output> {
        let lane = &self.lanes[index];
        let (task, completion) = NewJob::new(into_body(payload), self.meta(deadline)).split();
        lane.counters.caller_ran.fetch_add(1, Ordering::Relaxed);
        self.instruments.submitted(index);
        lane.counters.dispatched.fetch_add(1, Ordering::Relaxed);
        // Retries run here too, at once: a producer's thread re-queueing
        // work could race a shutdown that has already let the workers go.
        let mut index = index;
        let recent = Recent::new();
        let mut next = self.run_task(index, task, &recent);
        while let Some(retry) = next {
            index = self.retry_lane(index, &retry);
            let counters = &self.lanes[index].counters;
            counters.requeued.fetch_add(1, Ordering::Relaxed);
            counters.dispatched.fetch_add(1, Ordering::Relaxed);
            retry.task.requeued();
            next = self.run_task(index, retry.task, &recent);
        }
        JobHandle::new(completion)
    }

    /// Rules 1 and 3: wake a sleeper, or add a thread if none is idle.
    #[inline]
    pub(super) fn after_publish(self: &Arc<Self>) {
        if self.sleep.wake_one() {
            return;
        }
        let live = self.live.load(Ordering::SeqCst);
        if live >= self.config.max {
            return;
        }
        // Below core every job adds a thread (as Java's pool does); above
        // it, a thread is added when more jobs wait than workers are idle.
        if live < self.config.core || self.queued() > self.idle.load(Ordering::SeqCst) {
            self.spawn_worker();
        }
    }
}
