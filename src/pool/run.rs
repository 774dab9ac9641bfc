//! A worker's turn: claim the job the picker chooses, check its deadline,
//! run it between the hooks, record its outcome, and queue a retry again.

use super::Shared;
use super::tally::{self, Count, Tally};
use super::timer::{self, Entry};
use crate::clock::now_ns;
use crate::hooks::{DeadJob, ExpiredJob, JobInfo, JobOutcome};
use crate::job::JobError;
use crate::job::task::{JobMeta, Observer, Retry, Task};
use crate::lane::Claim;
use crate::observe::facade::Recent;
use crate::observe::span;
use crate::sync::atomic::Ordering;
use crate::sync::{Arc, lock};
use crate::util::call_quietly;
use std::time::{Duration, Instant};

/// Records the outcomes of one attempt in its lane's counters and hooks.
struct LaneObserver<'a> {
    shared: &'a Shared,
    lane: usize,
    /// Set when the hooks need it (they are told the job's wait).
    info: Option<&'a JobInfo<'a>>,
    /// When the attempt started (crate clock), or 0 if it was not timed.
    started_ns: u64,
    /// Where the time the attempt ended goes, if it was read.
    recent: &'a Recent,
    /// The worker's own counts, if a worker runs the job (the shared
    /// counters otherwise).
    tally: Option<&'a Tally>,
}

impl Observer for LaneObserver<'_> {
    fn record(&self, outcome: JobOutcome) {
        let c = &self.shared.lanes[self.lane].counters;
        let counter = match outcome {
            JobOutcome::Completed => {
                tally::count(self.tally, &self.shared.lanes, self.lane, Count::Completed);
                None
            }
            JobOutcome::Panicked => Some(&c.panicked),
            JobOutcome::Retrying => Some(&c.retried),
            JobOutcome::DeadLettered => Some(&c.dead_lettered),
            JobOutcome::Suspended => None,
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        let ended = self
            .shared
            .instruments
            .finished(self.lane, outcome, self.started_ns);
        self.recent.set(ended);
        if let (Some(hook), Some(info)) = (&self.shared.hooks.after, self.info) {
            call_quietly(|| hook(info, outcome));
        }
    }

    fn may_retry(&self) -> bool {
        !self.shared.is_stopped()
    }

    fn cancelled(&self) {
        self.shared.count_cancelled(self.lane, true);
    }

    fn dead_letter(&self, attempts: u32, error: &str) {
        if let Some(hook) = &self.shared.hooks.dead_letter {
            let letter = DeadJob {
                priority: self.shared.lanes[self.lane].priority,
                attempts,
                error: error.to_owned(),
            };
            call_quietly(|| hook(letter));
        }
    }
}

impl Shared {
    /// Claims the next job the picker chooses, unless `shutdown_now` ran;
    /// counts it dispatched in `tally` (the worker's), or in the lane's
    /// shared counters.
    #[inline]
    pub(super) fn next_task(&self, tally: Option<&Tally>) -> Option<(usize, Task)> {
        if self.is_stopped() {
            return None;
        }
        let lanes = &self.lanes;
        loop {
            let promoted = if self.aging {
                self.overdue_lane()
            } else {
                None
            };
            let (lane, claim) = match promoted {
                Some(found) => found,
                None => self.schedule.pick(
                    lanes[self.cursor_lane].pick_cursor(),
                    lanes.len(),
                    |l| lanes[l].is_claimable(),
                    |l| lanes[l].try_claim_to_run(),
                )?,
            };
            let chosen = &lanes[lane];
            let Some(task) = chosen.take_claimed(claim) else {
                // A tombstone of a producer refused at shutdown.
                chosen.finished_running();
                continue;
            };
            if chosen.ages() {
                chosen.new_head(now_ns());
            }
            tally::count(tally, lanes, lane, Count::Dispatched);
            return Some((lane, task));
        }
    }

    /// A job cancelled through its handle was met in lane `index` and
    /// dropped unrun; `dispatched` if a worker took it as its next job
    /// (and counted it dispatched), not `shutdown_now` or discard-oldest.
    #[cold]
    pub(super) fn count_cancelled(&self, index: usize, dispatched: bool) {
        let counters = &self.lanes[index].counters;
        counters.cancelled.fetch_add(1, Ordering::Relaxed);
        if !dispatched {
            counters
                .cancelled_undispatched
                .fetch_add(1, Ordering::Relaxed);
        }
        self.instruments.cancelled(index);
    }

    /// Aging: a lane whose head job has waited past its threshold, claimed.
    #[cold]
    fn overdue_lane(&self) -> Option<(usize, Claim)> {
        let now = now_ns();
        let found = self.lanes.iter().enumerate().find_map(|(index, lane)| {
            (lane.ages() && lane.is_claimable() && lane.head_overdue(now))
                .then(|| lane.try_claim_to_run())
                .flatten()
                .map(|claim| (index, claim))
        })?;
        self.lanes[found.0]
            .counters
            .promoted
            .fetch_add(1, Ordering::Relaxed);
        Some(found)
    }

    /// Runs a task a worker claimed, then frees its running slot. `recent`
    /// carries the end of one job to the dispatch of the next that the
    /// same worker takes straight away (feature `metrics`).
    #[inline]
    pub(super) fn execute(
        self: &Arc<Self>,
        index: usize,
        task: Task,
        recent: &Recent,
        tally: Option<&Tally>,
    ) {
        if let Some(retry) = self.run_task(index, task, recent, tally) {
            self.retry(index, retry);
        }
        if self.lanes[index].finished_running() {
            // A capped lane has room again and work: a sleeper may take it.
            self.sleep.wake_one();
        }
    }

    /// Runs a task: expiry check, hooks, the job. Returns a retry it asks
    /// for.
    #[inline]
    pub(super) fn run_task(
        &self,
        index: usize,
        task: Task,
        recent: &Recent,
        tally: Option<&Tally>,
    ) -> Option<Retry> {
        let enqueued_ns = task.meta().map_or(0, JobMeta::enqueued_ns);
        if enqueued_ns == 0 {
            task.run(&LaneObserver {
                shared: self,
                lane: index,
                info: None,
                started_ns: 0,
                recent,
                tally,
            })
        } else {
            self.run_timed(index, task, enqueued_ns, recent, tally)
        }
    }

    /// A job stamped at enqueue: its deadline, its wait for the hooks and
    /// metrics, its span.
    #[inline]
    fn run_timed(
        &self,
        index: usize,
        mut task: Task,
        enqueued_ns: u64,
        recent: &Recent,
        tally: Option<&Tally>,
    ) -> Option<Retry> {
        // Before the deadline and the hooks: a cancelled job neither
        // expires nor calls them.
        if task.cancelled() {
            self.count_cancelled(index, true);
            return None;
        }
        let lane = &self.lanes[index];
        let now = match recent.take() {
            0 => now_ns(),
            ended => ended,
        };
        let waited = Duration::from_nanos(now.saturating_sub(enqueued_ns));
        let deadline_ns = task.meta().map_or(0, |m| m.deadline_ns);
        if deadline_ns != 0 && now > deadline_ns {
            lane.counters.expired.fetch_add(1, Ordering::Relaxed);
            self.instruments.expired(index);
            if let Some(hook) = &self.hooks.expired {
                let job = ExpiredJob {
                    priority: lane.priority,
                    waited,
                };
                call_quietly(|| hook(job));
            }
            task.resolve(JobError::Expired);
            return None;
        }
        if self.record_waits {
            tally::record_wait(tally, &self.waits, index, now.saturating_sub(enqueued_ns));
        }
        self.instruments
            .started(&self.lanes, index, waited, now, recent);
        let info = JobInfo {
            priority: lane.priority,
            waited,
            executor: &self.name,
            // SAFETY: `cancelled` said `false` above, and the task has
            // not run since.
            attempt: unsafe { task.next_attempt() },
        };
        // The hooks run inside the attempt's span too.
        let parent = task.meta().map(JobMeta::parent);
        let _span = span::enter(
            match parent {
                Some(parent) => {
                    span::attempt(parent, &self.name, lane.priority, info.attempt, waited)
                }
                None => span::none(),
            },
            parent,
        );
        if let Some(hook) = &self.hooks.before {
            call_quietly(|| hook(&info));
        }
        task.run(&LaneObserver {
            shared: self,
            lane: index,
            info: Some(&info),
            started_ns: now,
            recent,
            tally,
        })
    }

    /// The lane a retry of a job that ran in lane `from` goes to.
    pub(super) fn retry_lane(&self, from: usize, retry: &Retry) -> usize {
        retry
            .priority
            .and_then(|p| self.lane_index(p))
            .unwrap_or(from)
    }

    /// Re-queues a retry of a job that ran in lane `from`: now, or after
    /// its delay through the timer. After `shutdown_now` it is not queued
    /// but dead-lettered with the error of its last attempt.
    #[cold]
    fn retry(self: &Arc<Self>, from: usize, retry: Retry) {
        let lane = self.retry_lane(from, &retry);
        let gate = lock(&self.requeue);
        if self.is_stopped() {
            drop(gate);
            retry.give_up(&LaneObserver {
                shared: self,
                lane: from,
                info: None,
                started_ns: 0,
                recent: &Recent::new(),
                tally: None,
            });
            return;
        }
        let task = if retry.delay.is_zero() {
            retry.into_task()
        } else {
            let due = Instant::now()
                .checked_add(retry.delay)
                .unwrap_or_else(Instant::now);
            match self.timer.schedule(due, lane, retry.into_task()) {
                Ok(false) => return,
                Ok(true) => {
                    drop(gate);
                    self.start_timer();
                    return;
                }
                Err(task) => task,
            }
        };
        self.lanes[lane].push_retry(task);
        drop(gate);
        self.after_publish();
    }

    #[cold]
    fn start_timer(self: &Arc<Self>) {
        let owner = Arc::clone(self);
        let deliver = Arc::clone(self);
        let spawned = timer::spawn(
            format!("{}-timer", self.name),
            move || owner.timer.next(),
            move |entries: Vec<Entry>| deliver.requeue_due(entries),
        );
        match spawned {
            Ok(handle) => lock(&self.threads).push(handle),
            // No timer thread: retries skip their backoff.
            Err(_) => self.requeue_due(self.timer.take_for_delivery()),
        }
    }

    /// Re-queues retries the timer handed over (counted in flight there),
    /// then takes them off its counts.
    fn requeue_due(self: &Arc<Self>, entries: Vec<Entry>) {
        let n = entries.len();
        for entry in entries {
            self.lanes[entry.lane].push_retry(entry.task);
            self.after_publish();
        }
        self.timer.delivered(n);
        // The last job may have run and its worker looked for idle-waiters
        // while these still counted as pending.
        self.look_for_idle_waiters();
    }
}
