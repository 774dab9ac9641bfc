//! The pool's shared state, the producer's path and the worker loop.
//!
//! The sleep/wake and shutdown rules this file implements are written down
//! in `sleep/README.md`; the numbers in the comments refer to them.

use crate::clock::{now_ns, to_ns};
use crate::error::EnqueueError;
use crate::handle::{JobError, JobHandle, PendingJob};
use crate::hooks::{ExpiredJob, Hooks, JobInfo};
use crate::job::{Body, JobMeta, JobOutcome, NewJob, RunCtx, Task, new_job};
use crate::lane::{Lane, NoSlot};
use crate::picker::{Picker, Schedule};
use crate::policy::{LaneConfig, RejectionPolicy};
use crate::priority::Priority;
use crate::sleep::{Sleep, Wake};
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::{Arc, Condvar, Mutex, dekker_fence, lock, spin_hint, thread, yield_now};
use crate::timer::{Entry, Timer};
use crossbeam_utils::CachePadded;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// `Shared::state` once the executor stops accepting jobs. The lanes'
/// own closed bits decide which jobs were accepted (rule 5); this flag
/// wakes blocked producers and tells idle workers to drain and exit.
const CLOSED: usize = 1;

/// Rounds an idle worker looks for work before it goes to sleep.
#[cfg(not(loom))]
const SPIN_ROUNDS: u32 = 32;
/// The spin is only a shortcut past the sleep protocol, which the models
/// check; under loom every round multiplies the interleavings to explore, so
/// one round keeps the spin path covered without drowning the protocol.
#[cfg(loom)]
const SPIN_ROUNDS: u32 = 1;

#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolConfig {
    pub(crate) core: usize,
    pub(crate) max: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) allow_core_timeout: bool,
}

/// How long a producer may wait for a slot in a full lane.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    No,
    Forever,
    Until(Instant),
}

pub(crate) struct Shared {
    pub(crate) name: String,
    pub(crate) config: PoolConfig,
    pub(crate) lanes: Box<[Lane]>,
    schedule: Schedule,
    pub(crate) hooks: Hooks,
    /// Stamp every job with its enqueue time (hooks report waits).
    stamp_jobs: bool,
    /// Some lane ages its jobs: check for overdue heads before each pick.
    aging: bool,
    timer: Timer,
    /// 0, or `CLOSED` once shutdown began.
    state: CachePadded<AtomicUsize>,
    /// Non-zero once `shutdown_now` ran: workers start nothing more.
    stopped: AtomicUsize,
    sleep: Sleep,
    live: CachePadded<AtomicUsize>,
    idle: AtomicUsize,
    peak: AtomicUsize,
    next_id: AtomicUsize,
    threads: Mutex<Vec<thread::JoinHandle<()>>>,
    exited: Mutex<()>,
    all_exited: Condvar,
}

impl Shared {
    pub(crate) fn new(
        name: String,
        config: PoolConfig,
        picker: Picker,
        lanes: &[LaneConfig],
        hooks: Hooks,
    ) -> Arc<Shared> {
        let weights: Vec<u32> = lanes.iter().map(|l| l.weight).collect();
        let lanes: Box<[Lane]> = lanes.iter().map(|l| Lane::new(l, config.max)).collect();
        Arc::new(Shared {
            name,
            config,
            aging: lanes.iter().any(Lane::ages),
            lanes,
            schedule: Schedule::new(picker, &weights),
            stamp_jobs: hooks.need_clock(),
            hooks,
            timer: Timer::default(),
            state: CachePadded::new(AtomicUsize::new(0)),
            stopped: AtomicUsize::new(0),
            sleep: Sleep::new(),
            live: CachePadded::new(AtomicUsize::new(0)),
            idle: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            next_id: AtomicUsize::new(1),
            threads: Mutex::new(Vec::new()),
            exited: Mutex::new(()),
            all_exited: Condvar::new(),
        })
    }

    pub(crate) fn picker(&self) -> Picker {
        self.schedule.kind()
    }

    /// The lane of a priority. Lanes are sorted highest first.
    #[inline]
    pub(crate) fn lane_index(&self, priority: Priority) -> Option<usize> {
        self.lanes
            .binary_search_by(|lane| priority.cmp(&lane.priority))
            .ok()
    }

    pub(crate) fn priorities(&self) -> Vec<Priority> {
        self.lanes.iter().map(|l| l.priority).collect()
    }

    // ===== producer side =====

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
            match self.when_full(lane, wait) {
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
        self.after_publish();
        Ok(JobHandle::new(completion))
    }

    #[inline]
    fn meta(&self, deadline: Option<Instant>) -> JobMeta {
        let deadline_ns = deadline.map_or(0, to_ns);
        JobMeta {
            enqueued_ns: if self.stamp_jobs || deadline_ns != 0 {
                now_ns()
            } else {
                0
            },
            deadline_ns,
        }
    }

    /// The lane is full: apply its rejection policy. `Ok` means a slot was
    /// reserved after all.
    #[cold]
    fn when_full(&self, lane: &Lane, wait: Wait) -> Result<(), NoSlot> {
        let deadline = match (wait, lane.when_full) {
            (Wait::No, _) | (_, RejectionPolicy::Reject | RejectionPolicy::CallerRuns) => {
                return Err(NoSlot::Full);
            }
            (_, RejectionPolicy::DiscardOldest) => return self.discard_oldest(lane),
            (Wait::Forever, RejectionPolicy::Block) => None,
            (Wait::Until(deadline), RejectionPolicy::Block) => Some(deadline),
        };
        lane.reserve_blocking(deadline, || self.is_closed())
    }

    /// Pushes the lane's oldest queued job out (its handle resolves
    /// `Discarded`) until a slot is free.
    fn discard_oldest(&self, lane: &Lane) -> Result<(), NoSlot> {
        loop {
            if self.is_closed() {
                return Err(NoSlot::Closed);
            }
            if lane.try_claim()
                && let Some(oldest) = lane.take_claimed()
            {
                lane.counters.discarded.fetch_add(1, Ordering::Relaxed);
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
        let (task, completion) = new_job(into_body(payload), self.meta(deadline));
        lane.counters.caller_ran.fetch_add(1, Ordering::Relaxed);
        lane.counters.dispatched.fetch_add(1, Ordering::Relaxed);
        // Retries run here too, at once: a producer's thread re-queueing
        // work could race a shutdown that has already let the workers go.
        let mut next = self.run_task(index, task);
        while let Some(retry) = next {
            let counters = &self.lanes[retry.lane].counters;
            counters.requeued.fetch_add(1, Ordering::Relaxed);
            counters.dispatched.fetch_add(1, Ordering::Relaxed);
            next = self.run_task(retry.lane, retry.task);
        }
        JobHandle::new(completion)
    }

    /// Rules 1 and 3: wake a sleeper, or add a thread if none is idle.
    #[inline]
    fn after_publish(self: &Arc<Self>) {
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

    /// Unclaimed jobs in all lanes.
    fn queued(&self) -> usize {
        self.lanes.iter().map(|l| l.queued_seqcst()).sum()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.load(Ordering::SeqCst) & CLOSED != 0
    }

    fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst) != 0
    }

    // ===== threads =====

    /// Starts one worker if the pool is below `max`. Returns whether it did.
    #[cold]
    pub(crate) fn spawn_worker(self: &Arc<Self>) -> bool {
        let mut live = self.live.load(Ordering::SeqCst);
        loop {
            if live >= self.config.max {
                return false;
            }
            match self.live.compare_exchange_weak(
                live,
                live + 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => break,
                Err(actual) => live = actual,
            }
        }
        self.peak.fetch_max(live + 1, Ordering::Relaxed);
        // A new worker starts out idle: it is about to look for work, so
        // other producers need not start one more for the same job.
        self.idle.fetch_add(1, Ordering::SeqCst);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name(format!("{}-{}", self.name, id))
            .spawn(move || worker_main(shared));
        match spawned {
            Ok(handle) => {
                let mut threads = lock(&self.threads);
                #[cfg(not(loom))]
                threads.retain(|h| !h.is_finished());
                threads.push(handle);
                true
            }
            Err(_) => {
                // Nothing to report to: the job stays queued for the
                // workers there are, and the next job tries again.
                self.idle.fetch_sub(1, Ordering::SeqCst);
                self.release_live();
                false
            }
        }
    }

    /// Starts threads until `core` are alive; returns how many it started.
    pub(crate) fn prestart_core(self: &Arc<Self>) -> usize {
        let mut started = 0;
        while self.live.load(Ordering::SeqCst) < self.config.core && !self.is_closed() {
            if !self.spawn_worker() {
                break;
            }
            started += 1;
        }
        started
    }

    fn release_live(&self) {
        if self.live.fetch_sub(1, Ordering::SeqCst) == 1 {
            let _guard = lock(&self.exited);
            self.all_exited.notify_all();
        }
    }

    // ===== worker side =====

    /// Claims the next job the picker chooses, unless `shutdown_now` ran.
    #[inline]
    fn next_task(&self) -> Option<(usize, Task)> {
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
            let lane = match promoted {
                Some(lane) => lane,
                None => self.schedule.pick(
                    lanes.len(),
                    |l| lanes[l].is_claimable(),
                    |l| lanes[l].try_claim_to_run(),
                )?,
            };
            let chosen = &lanes[lane];
            let Some(task) = chosen.take_claimed() else {
                // A tombstone of a producer refused at shutdown.
                chosen.finished_running();
                continue;
            };
            if chosen.ages() {
                chosen.new_head(now_ns());
            }
            chosen.counters.dispatched.fetch_add(1, Ordering::Relaxed);
            return Some((lane, task));
        }
    }

    /// Aging: a lane whose head job has waited past its threshold, claimed.
    #[cold]
    fn overdue_lane(&self) -> Option<usize> {
        let now = now_ns();
        let lane = self.lanes.iter().position(|lane| {
            lane.ages() && lane.is_claimable() && lane.head_overdue(now) && lane.try_claim_to_run()
        })?;
        self.lanes[lane]
            .counters
            .promoted
            .fetch_add(1, Ordering::Relaxed);
        Some(lane)
    }

    #[inline]
    fn any_ready(&self) -> bool {
        self.lanes.iter().any(Lane::is_ready)
    }

    #[inline]
    fn any_claimable(&self) -> bool {
        self.lanes.iter().any(Lane::is_claimable)
    }

    /// Runs a task a worker claimed, then frees its running slot.
    #[inline]
    fn execute(self: &Arc<Self>, index: usize, task: Task) {
        if let Some(retry) = self.run_task(index, task) {
            self.retry(retry);
        }
        if self.lanes[index].finished_running() {
            // A capped lane has room again and work: a sleeper may take it.
            self.sleep.wake_one();
        }
    }

    /// Runs a task: expiry check, hooks, the job, retry.
    #[inline]
    fn run_task(self: &Arc<Self>, index: usize, task: Task) -> Option<Retry> {
        let meta = task.meta();
        if meta.enqueued_ns == 0 {
            self.run_attempt(index, task, None)
        } else {
            self.execute_timed(index, task, meta)
        }
    }

    #[cold]
    fn execute_timed(self: &Arc<Self>, index: usize, task: Task, meta: JobMeta) -> Option<Retry> {
        let lane = &self.lanes[index];
        let now = now_ns();
        let waited = Duration::from_nanos(now.saturating_sub(meta.enqueued_ns));
        if meta.deadline_ns != 0 && now > meta.deadline_ns {
            lane.counters.expired.fetch_add(1, Ordering::Relaxed);
            if let Some(hook) = &self.hooks.expired {
                let job = ExpiredJob {
                    priority: lane.priority,
                    waited,
                };
                let _ = catch_unwind(AssertUnwindSafe(|| hook(job)));
            }
            task.resolve(JobError::Expired);
            return None;
        }
        let info = JobInfo {
            priority: lane.priority,
            waited,
        };
        if let Some(hook) = &self.hooks.before {
            let _ = catch_unwind(AssertUnwindSafe(|| hook(&info)));
        }
        self.run_attempt(index, task, Some(&info))
    }

    #[inline]
    fn run_attempt(&self, index: usize, task: Task, info: Option<&JobInfo>) -> Option<Retry> {
        let lane = &self.lanes[index];
        let record = |outcome: JobOutcome| {
            let c = &lane.counters;
            let counter = match outcome {
                JobOutcome::Completed => &c.completed,
                JobOutcome::Panicked => &c.panicked,
                JobOutcome::Retrying => &c.retried,
                JobOutcome::DeadLettered => &c.dead_lettered,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            if let (Some(hook), Some(info)) = (&self.hooks.after, info) {
                let _ = catch_unwind(AssertUnwindSafe(|| hook(info, outcome)));
            }
        };
        let ctx = RunCtx {
            priority: lane.priority,
            record: &record,
            dead_letter: self.hooks.dead_letter.as_deref(),
        };
        let (task, delay, priority) = task.run(&ctx)?;
        let lane = priority.and_then(|p| self.lane_index(p)).unwrap_or(index);
        Some(Retry { lane, task, delay })
    }

    /// Re-queues a retry now, or after `delay` through the timer.
    #[cold]
    fn retry(self: &Arc<Self>, Retry { lane, task, delay }: Retry) {
        let task = if delay.is_zero() {
            task
        } else {
            let due = Instant::now()
                .checked_add(delay)
                .unwrap_or_else(Instant::now);
            match self.timer.schedule(due, lane, task) {
                Ok(false) => return,
                Ok(true) => {
                    self.start_timer();
                    return;
                }
                Err(task) => task,
            }
        };
        self.lanes[lane].push_retry(task);
        self.after_publish();
    }

    #[cold]
    fn start_timer(self: &Arc<Self>) {
        let owner = Arc::clone(self);
        let deliver = Arc::clone(self);
        let spawned = crate::timer::spawn(
            format!("{}-timer", self.name),
            move || owner.timer.next(),
            move |entries: Vec<Entry>| {
                let n = entries.len();
                for entry in entries {
                    deliver.lanes[entry.lane].push_retry(entry.task);
                    deliver.after_publish();
                }
                deliver.timer.delivered(n);
            },
        );
        match spawned {
            Ok(handle) => lock(&self.threads).push(handle),
            Err(_) => {
                // No timer thread: retries skip their backoff.
                for entry in self.timer.flush(true) {
                    self.lanes[entry.lane].push_retry(entry.task);
                    self.after_publish();
                }
            }
        }
    }

    /// Rule 5: closed, no producer in flight, nothing queued, no retry
    /// waiting out its backoff.
    fn drained(&self) -> bool {
        self.is_closed() && self.timer.pending() == 0 && !self.any_ready()
    }

    fn should_wake(&self) -> bool {
        self.is_stopped() || self.any_claimable() || self.is_closed()
    }

    /// An idle worker's search: spin a little, then sleep. Returns a job, or
    /// `None` when this worker should exit (its place already given up if it
    /// retired).
    fn find_work(&self, place: &mut Place) -> Option<(usize, Task)> {
        loop {
            if let Some(found) = self.next_task() {
                return Some(found);
            }
            if self.is_stopped() || self.drained() {
                return None;
            }
            let mut spun = false;
            for round in 0..SPIN_ROUNDS {
                if self.any_claimable() {
                    spun = true;
                    break;
                }
                if round * 2 < SPIN_ROUNDS {
                    spin_hint();
                } else {
                    yield_now();
                }
            }
            if spun {
                continue;
            }
            let may_time_out = self.config.allow_core_timeout
                || self.live.load(Ordering::Relaxed) > self.config.core;
            let keep_alive = may_time_out.then_some(self.config.keep_alive);
            match self.sleep.sleep(keep_alive, || self.should_wake()) {
                Wake::Recheck | Wake::Woken => {}
                Wake::TimedOut => {
                    if self.try_retire(place) {
                        return None;
                    }
                }
            }
        }
    }

    /// Rule 4: give up this worker's place if the pool may shrink, then
    /// re-check for work and take the place back if some appeared.
    fn try_retire(&self, place: &mut Place) -> bool {
        let floor = if self.config.allow_core_timeout {
            0
        } else {
            self.config.core
        };
        let mut live = self.live.load(Ordering::SeqCst);
        loop {
            if live <= floor {
                return false;
            }
            match self.live.compare_exchange_weak(
                live,
                live - 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => break,
                Err(actual) => live = actual,
            }
        }
        self.idle.fetch_sub(1, Ordering::SeqCst);
        // ORDERING: rule 4, the SeqCst decrements then the SeqCst re-check.
        dekker_fence();
        if self.any_ready() && !self.is_stopped() {
            let mut live = self.live.load(Ordering::SeqCst);
            while live < self.config.max {
                match self.live.compare_exchange_weak(
                    live,
                    live + 1,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    Ok(_) => {
                        self.idle.fetch_add(1, Ordering::SeqCst);
                        return false;
                    }
                    Err(actual) => live = actual,
                }
            }
            // The pool is full again: a worker alive will take the job.
        }
        *place = Place::Retired;
        if live == 1 {
            let _guard = lock(&self.exited);
            self.all_exited.notify_all();
        }
        true
    }

    // ===== shutdown =====

    /// Rule 5: stop accepting, wake blocked producers and every sleeper.
    /// Idempotent.
    pub(crate) fn close(self: &Arc<Self>) {
        self.state.store(CLOSED, Ordering::SeqCst);
        for lane in self.lanes.iter() {
            lane.close();
            lane.wake_producers();
        }
        self.sleep.wake_all();
        // Retries waiting out a backoff are re-queued now.
        for entry in self.timer.flush(false) {
            self.lanes[entry.lane].push_retry(entry.task);
        }
        // Jobs accepted while no worker was alive still need one.
        if self.any_ready() && self.live.load(Ordering::SeqCst) == 0 && !self.is_stopped() {
            self.spawn_worker();
        }
    }

    /// Stops workers from starting jobs and takes every unclaimed job,
    /// highest priority first.
    pub(crate) fn stop_now(self: &Arc<Self>) -> Vec<PendingJob> {
        self.stopped.store(1, Ordering::SeqCst);
        let delayed = self.timer.flush(true);
        self.close();
        let mut pending = Vec::new();
        for entry in delayed {
            let lane = &self.lanes[entry.lane];
            lane.counters.handed_back.fetch_add(1, Ordering::Relaxed);
            lane.counters
                .handed_back_delayed
                .fetch_add(1, Ordering::Relaxed);
            pending.push(PendingJob::new(lane.priority, entry.task));
        }
        for lane in self.lanes.iter() {
            while lane.try_claim() {
                if let Some(task) = lane.take_claimed() {
                    lane.counters.handed_back.fetch_add(1, Ordering::Relaxed);
                    pending.push(PendingJob::new(lane.priority, task));
                }
            }
        }
        pending
    }

    /// Waits until every worker has exited, or until `deadline`. Returns
    /// whether they all did. A worker thread calling this (a job dropping
    /// the last handle to its own executor) does not wait for itself.
    pub(crate) fn wait_exited(&self, deadline: Option<Instant>) -> bool {
        let own = usize::from(self.is_own_worker());
        let mut guard = lock(&self.exited);
        loop {
            if self.live.load(Ordering::SeqCst) <= own {
                return true;
            }
            guard = match deadline {
                None => match self.all_exited.wait(guard) {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                },
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return false;
                    }
                    match self.all_exited.wait_timeout(guard, deadline - now) {
                        Ok((g, _)) => g,
                        Err(p) => p.into_inner().0,
                    }
                }
            };
        }
    }

    /// Joins every worker thread that has been started (after
    /// [`Shared::wait_exited`], so none blocks for long).
    pub(crate) fn join_threads(&self) {
        let me = thread::current().id();
        let handles = std::mem::take(&mut *lock(&self.threads));
        for handle in handles {
            if handle.thread().id() != me {
                // A worker's panic is already counted; nothing to add here.
                let _ = handle.join();
            }
        }
    }

    fn is_own_worker(&self) -> bool {
        let me = thread::current().id();
        lock(&self.threads).iter().any(|h| h.thread().id() == me)
    }

    // ===== metrics =====

    pub(crate) fn thread_counts(&self) -> (usize, usize, usize) {
        let live = self.live.load(Ordering::Relaxed);
        let idle = self.idle.load(Ordering::Relaxed).min(live);
        (live, idle, self.peak.load(Ordering::Relaxed))
    }

    pub(crate) fn sleepers(&self) -> usize {
        self.sleep.sleepers()
    }
}

/// A failed attempt to be queued again.
struct Retry {
    lane: usize,
    task: Task,
    delay: Duration,
}

/// Where a worker stands in the thread counts, so its exit undoes exactly
/// what it holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Idle,
    Busy,
    Retired,
}

struct WorkerExit<'a> {
    shared: &'a Shared,
    place: Place,
}

impl Drop for WorkerExit<'_> {
    fn drop(&mut self) {
        match self.place {
            Place::Retired => {}
            Place::Idle => {
                self.shared.idle.fetch_sub(1, Ordering::SeqCst);
                self.shared.release_live();
            }
            Place::Busy => self.shared.release_live(),
        }
    }
}

fn worker_main(shared: Arc<Shared>) {
    let mut exit = WorkerExit {
        shared: &shared,
        place: Place::Idle,
    };
    while let Some((lane, task)) = shared.find_work(&mut exit.place) {
        shared.idle.fetch_sub(1, Ordering::SeqCst);
        exit.place = Place::Busy;
        shared.execute(lane, task);
        while let Some((lane, task)) = shared.next_task() {
            shared.execute(lane, task);
        }
        shared.idle.fetch_add(1, Ordering::SeqCst);
        exit.place = Place::Idle;
    }
}
