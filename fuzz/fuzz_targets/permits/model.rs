//! What the `permits` script expects: its jobs, permits and waiting
//! futures, the lanes it paused and the thread limits it set; and the
//! end, where everything is accounted for.

use crate::End;
use crate::common::{self, PANIC_MESSAGE, Record, step};
use priority_executor::{
    BuildError, EnqueueError, Executor, JobError, JobHandle, PauseError, Permit, Priority, Reserve,
};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

pub enum Fate {
    Accepted(JobHandle<()>),
    Joined(Result<(), JobError>),
    /// Refused, the job handed back to the script and called there.
    Refused,
}

pub struct Job {
    pub record: Arc<Record>,
    pub lane: usize,
    pub fate: Fate,
    pub panics: bool,
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A `reserve` future that returned `Pending`.
struct Waiting {
    reserve: Reserve,
    lane: usize,
    count: Arc<Count>,
    waker: Waker,
    /// Wakes seen when it last returned `Pending`.
    at_pending: usize,
}

impl Waiting {
    fn woken(&self) -> bool {
        self.count.0.load(Ordering::SeqCst) > self.at_pending
    }
}

struct Held {
    permit: Permit,
    lane: usize,
}

pub struct Model {
    exec: Option<Executor>,
    priorities: Vec<Priority>,
    /// A priority no lane has.
    unknown: Priority,
    capacities: Vec<Option<usize>>,
    pub paused: Vec<bool>,
    jobs: Vec<Job>,
    waiting: Vec<Waiting>,
    permits: Vec<Held>,
    /// The largest `max_threads` ever set.
    max_ever: usize,
    /// Jobs accepted per lane.
    accepted: Vec<u64>,
}

impl Model {
    pub fn new(exec: &Executor) -> Model {
        let config = exec.config();
        let priorities: Vec<Priority> = config.lanes.iter().map(|l| l.priority).collect();
        let unknown = Priority((0..).find(|p| !priorities.contains(&Priority(*p))).unwrap());
        let n = priorities.len();
        Model {
            exec: Some(exec.clone()),
            capacities: config.lanes.iter().map(|l| l.capacity.limit()).collect(),
            paused: vec![false; n],
            unknown,
            priorities,
            jobs: Vec::new(),
            waiting: Vec::new(),
            permits: Vec::new(),
            max_ever: config.max_threads,
            accepted: vec![0; n],
        }
    }

    fn exec(&self) -> &Executor {
        self.exec.as_ref().expect("the script's clone")
    }

    pub fn lanes(&self) -> usize {
        self.priorities.len()
    }

    /// A lane's index; `lanes()` stands for a priority no lane has.
    pub fn index(&self, lane: u8) -> usize {
        usize::from(lane) % (self.lanes() + 1)
    }

    /// The index of a lane of the metrics (listed in their own order).
    fn at(&self, priority: Priority) -> usize {
        self.priorities
            .iter()
            .position(|&p| p == priority)
            .expect("a lane of the metrics")
    }

    pub fn priority(&self, index: usize) -> Priority {
        self.priorities.get(index).copied().unwrap_or(self.unknown)
    }

    pub fn is_paused(&self, index: usize) -> bool {
        self.paused.get(index).copied().unwrap_or(false)
    }

    /// Can a blocking enqueue to this lane wait for room without waiting
    /// on the script itself?
    pub fn may_block(&self, index: usize, held: bool) -> bool {
        match self.capacities.get(index) {
            None | Some(None) => true,
            Some(Some(_)) => {
                !held
                    && !self.paused[index]
                    && !self.permits.iter().any(|p| p.lane == index)
                    && !self.waiting.iter().any(|w| w.lane == index)
            }
        }
    }

    /// A paused lane holds a job not yet finished.
    pub fn paused_work(&self) -> bool {
        self.jobs.iter().any(|j| {
            self.paused[j.lane] && matches!(&j.fate, Fate::Accepted(h) if !h.is_finished())
        })
    }

    fn check_refusal<F>(&self, e: &EnqueueError<F>, index: usize, blocking: bool) {
        match e {
            EnqueueError::UnknownPriority { priority, .. } => {
                assert_eq!(index, self.lanes(), "{priority:?} has a lane");
            }
            EnqueueError::Full { .. } => {
                assert!(!blocking, "a blocking enqueue said Full");
                assert!(
                    self.capacities[index].is_some(),
                    "an unbounded lane said Full"
                );
            }
            other => panic!("refused before any shutdown: {other:?}"),
        }
    }

    /// Records an enqueue's result; returns whether it was accepted.
    pub fn enqueued<F: FnOnce()>(
        &mut self,
        index: usize,
        record: Arc<Record>,
        result: Result<JobHandle<()>, EnqueueError<F>>,
        blocking: bool,
        hold: bool,
        panics: bool,
    ) -> bool {
        let fate = match result {
            Ok(handle) => {
                assert!(index < self.lanes());
                self.accepted[index] += 1;
                Fate::Accepted(handle)
            }
            Err(e) => {
                self.check_refusal(&e, index, blocking);
                let job = e.into_inner();
                if hold {
                    drop(job);
                    assert_eq!((record.calls(), record.drops()), (0, 1), "a refused hold");
                    return false;
                }
                let _ = catch_unwind(AssertUnwindSafe(job));
                Fate::Refused
            }
        };
        let accepted = matches!(fate, Fate::Accepted(_));
        self.jobs.push(Job {
            record,
            lane: index.min(self.lanes().saturating_sub(1)),
            fate,
            panics,
        });
        accepted
    }

    pub fn reserve(&mut self, lane: u8) {
        let index = self.index(lane);
        let reserve = self.exec().reserve(self.priority(index));
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let waiting = Waiting {
            reserve,
            lane: index,
            count,
            waker,
            at_pending: 0,
        };
        if let Some(w) = self.poll(waiting, false) {
            assert!(
                self.capacities[index].is_some(),
                "a future waits on an unbounded lane"
            );
            self.waiting.push(w);
        }
    }

    /// Polls a waiting future; gives it back if it still waits.
    fn poll(&mut self, mut w: Waiting, closed: bool) -> Option<Waiting> {
        let seen = w.count.0.load(Ordering::SeqCst);
        let poll = {
            let mut cx = Context::from_waker(&w.waker);
            w.reserve.poll_reserve(&mut cx)
        };
        match poll {
            Poll::Pending => {
                assert!(!closed, "a future still waits after shutdown");
                w.at_pending = seen;
                return Some(w);
            }
            Poll::Ready(Ok(permit)) => {
                assert!(!closed, "a permit after shutdown");
                assert_eq!(permit.priority(), self.priority(w.lane));
                self.permits.push(Held {
                    permit,
                    lane: w.lane,
                });
            }
            Poll::Ready(Err(EnqueueError::UnknownPriority { priority, .. })) => {
                assert_eq!(w.lane, self.lanes(), "{priority:?} has a lane");
            }
            Poll::Ready(Err(EnqueueError::ShutDown { .. })) => {
                assert!(closed, "a permit refused as ShutDown before any shutdown");
            }
            Poll::Ready(Err(e)) => panic!("reserve: {e:?}"),
        }
        None
    }

    pub fn poll_one(&mut self, which: u8) {
        if self.waiting.is_empty() {
            return;
        }
        let i = usize::from(which) % self.waiting.len();
        let w = self.waiting.remove(i);
        if let Some(again) = self.poll(w, false) {
            self.waiting.insert(i, again);
        }
    }

    pub fn drop_reserve(&mut self, which: u8) {
        if !self.waiting.is_empty() {
            let i = usize::from(which) % self.waiting.len();
            drop(self.waiting.remove(i));
        }
    }

    pub fn drop_permit(&mut self, which: u8) {
        if !self.permits.is_empty() {
            let i = usize::from(which) % self.permits.len();
            drop(self.permits.remove(i));
        }
    }

    /// Queues a job with a permit; after a shutdown it is refused.
    pub fn use_permit(&mut self, which: u8, panics: bool, closed: bool) {
        if self.permits.is_empty() {
            return;
        }
        let i = usize::from(which) % self.permits.len();
        let Held { permit, lane } = self.permits.remove(i);
        let (guard, record) = common::Guard::new();
        let job = move || {
            guard.called();
            if panics {
                panic!("{PANIC_MESSAGE}");
            }
        };
        let fate = match permit.enqueue(job) {
            Ok(handle) => {
                assert!(!closed, "a permit used after shutdown was accepted");
                self.accepted[lane] += 1;
                Fate::Accepted(handle)
            }
            Err(EnqueueError::ShutDown { job, .. }) => {
                assert!(closed, "a permit refused as ShutDown before any shutdown");
                let _ = catch_unwind(AssertUnwindSafe(job));
                Fate::Refused
            }
            Err(e) => panic!("a permit's enqueue: {e:?}"),
        };
        self.jobs.push(Job {
            record,
            lane,
            fate,
            panics,
        });
    }

    pub fn set_threads(&mut self, core: usize, max: usize) {
        let exec = self.exec();
        let before = exec.config();
        match exec.set_threads(core, max) {
            Ok(()) => {
                assert!(
                    max > 0 && core <= max,
                    "set_threads({core}, {max}) accepted"
                );
                let config = exec.config();
                assert_eq!((config.core_threads, config.max_threads), (core, max));
                self.max_ever = self.max_ever.max(max);
            }
            Err(e) => {
                match e {
                    BuildError::Invalid(_) => assert_eq!(max, 0, "{e}"),
                    BuildError::CoreExceedsMax { core: c, max: m } => {
                        assert!(c > m && (c, m) == (core, max), "{e}")
                    }
                    other => panic!("set_threads({core}, {max}): {other:?}"),
                }
                let config = exec.config();
                assert_eq!(
                    (config.core_threads, config.max_threads),
                    (before.core_threads, before.max_threads),
                    "a refused resize changed the limits"
                );
            }
        }
    }

    pub fn join_one(&mut self, which: u8) {
        if self.jobs.is_empty() {
            return;
        }
        let i = usize::from(which) % self.jobs.len();
        if matches!(self.jobs[i].fate, Fate::Accepted(_)) {
            let Fate::Accepted(handle) = std::mem::replace(&mut self.jobs[i].fate, Fate::Refused)
            else {
                unreachable!()
            };
            self.jobs[i].fate = Fate::Joined(handle.join());
        }
    }

    /// After a wait for idle: every job accepted before it is finished.
    pub fn check_idle(&self) {
        for (id, job) in self.jobs.iter().enumerate() {
            if let Fate::Accepted(handle) = &job.fate {
                assert!(handle.is_finished(), "job {id} unfinished after wait_idle");
            }
        }
    }

    pub fn check_metrics(&self) {
        let m = self.exec().metrics();
        assert_eq!(m.lanes.len(), self.lanes());
        for lane in &m.lanes {
            let i = self.at(lane.priority);
            assert_eq!(lane.paused, self.paused[i], "{lane:?}");
            // Only this thread submits, but the count is exact only while
            // the lane is quiet: a job a worker is taking is in neither
            // `queued` nor `dispatched` for a moment (exact at the end).
            assert!(lane.submitted <= self.accepted[i], "{lane:?}");
        }
    }

    /// At any time: a bounded lane holds no more queued jobs and permits
    /// than its capacity; no more threads than the largest max set; and
    /// a lane with room, and no future woken there yet to poll again,
    /// wakes a future that waits on it (within a grace period: a worker
    /// frees a slot just after it takes the job).
    pub fn check_gauges(&self, after: &dyn std::fmt::Debug) {
        let exec = self.exec();
        let start = Instant::now();
        loop {
            let m = exec.metrics();
            assert!(
                m.threads.live <= self.max_ever,
                "{} threads alive, max {}",
                m.threads.live,
                self.max_ever
            );
            let mut lost_wake = None;
            for lane in &m.lanes {
                let i = self.at(lane.priority);
                let Some(cap) = self.capacities[i] else {
                    continue;
                };
                let permits = self.permits.iter().filter(|p| p.lane == i).count();
                assert!(
                    lane.queued + permits <= cap,
                    "{} queued and {permits} permits in a lane of {cap}: {lane:?}",
                    lane.queued
                );
                let (woken, unwoken) =
                    self.waiting
                        .iter()
                        .filter(|w| w.lane == i)
                        .fold(
                            (0, 0),
                            |(a, b), w| if w.woken() { (a + 1, b) } else { (a, b + 1) },
                        );
                // A future woken and not polled again keeps the slot it
                // was woken for, and those behind it wait too (`reserve`'s
                // docs): only a line with none woken must move.
                if unwoken > 0 && woken == 0 && lane.queued + permits < cap {
                    lost_wake = Some((i, lane.queued, permits, woken, unwoken, cap));
                }
            }
            let Some(lost) = lost_wake else { return };
            assert!(
                start.elapsed() < Duration::from_secs(2),
                "lane {} has room and a future waiting unwoken after {after:?}: \
                 (queued, permits, woken, unwoken, capacity) = {lost:?}; {:?}",
                lost.0,
                m.lanes.iter().find(|l| self.at(l.priority) == lost.0)
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    pub fn end(mut self, exec: Executor, end: End, release_holds: impl FnOnce()) {
        let use_mask = match end {
            End::Shutdown { use_mask }
            | End::ShutdownNow { use_mask, .. }
            | End::Drop { use_mask } => use_mask,
        };
        // The permits not kept for after the shutdown give their slots back.
        let mut kept = Vec::new();
        for (i, held) in std::mem::take(&mut self.permits).into_iter().enumerate() {
            if use_mask >> (i % 16) & 1 == 1 {
                kept.push(held);
            }
        }
        self.permits = kept;
        let mut dropped_back = 0usize;
        let mut stopped = false;
        let mut gone = false;
        match end {
            End::Shutdown { .. } => {
                release_holds();
                step("shutdown");
                exec.shutdown();
            }
            End::Drop { .. } => {
                release_holds();
                step("drop");
                self.exec = None;
                drop(exec);
                gone = true;
            }
            End::ShutdownNow { run_mask, .. } => {
                step("shutdown_now");
                stopped = true;
                let pending = exec.shutdown_now();
                release_holds();
                let m = exec.metrics();
                assert_eq!(
                    m.lanes.iter().map(|l| l.handed_back).sum::<u64>(),
                    pending.len() as u64,
                    "{m:?}"
                );
                for (i, job) in pending.into_iter().enumerate() {
                    if run_mask >> (i % 64) & 1 == 1 {
                        let _ = catch_unwind(AssertUnwindSafe(|| job.run()));
                    } else {
                        drop(job);
                        dropped_back += 1;
                    }
                }
                step("await_termination");
                assert!(
                    exec.await_termination(Duration::from_secs(20)).is_ok(),
                    "workers still alive after shutdown_now"
                );
                drop(exec);
            }
        }

        // Futures waiting for a slot resolve `ShutDown`, and were woken
        // to see it.
        step("waiting futures");
        for (i, w) in std::mem::take(&mut self.waiting).into_iter().enumerate() {
            assert!(
                w.woken(),
                "future {i} waiting on lane {} not woken by the shutdown",
                w.lane
            );
            assert!(self.poll(w, true).is_none());
        }
        // Permits kept: refused with their job.
        step("permits after shutdown");
        while !self.permits.is_empty() {
            self.use_permit(0, false, true);
        }

        if let Some(exec) = self.exec.take() {
            step("check lanes");
            for (i, &p) in self.priorities.iter().enumerate() {
                assert_eq!(exec.pause_lane(p), Err(PauseError::ShutDown));
                if !stopped {
                    assert!(
                        !exec.is_lane_paused(p),
                        "lane {i} still paused after shutdown"
                    );
                }
                let mut reserve = exec.reserve(p);
                let mut cx = Context::from_waker(Waker::noop());
                assert!(
                    matches!(
                        reserve.poll_reserve(&mut cx),
                        Poll::Ready(Err(EnqueueError::ShutDown { .. }))
                    ),
                    "a new reserve after shutdown"
                );
            }
            let m = exec.metrics();
            for lane in &m.lanes {
                let i = self.at(lane.priority);
                assert_eq!(lane.submitted, self.accepted[i], "{lane:?}");
                assert_eq!(lane.submitted, lane.settled(), "{lane:?}");
                assert_eq!(lane.queued, 0, "{lane:?}");
                if !stopped {
                    assert_eq!(lane.handed_back, 0, "{lane:?}");
                    assert_eq!(lane.cancelled, 0, "{lane:?}");
                }
            }
            assert!(exec.is_terminated());
            assert_eq!(exec.metrics().threads.live, 0);
        }

        step("check jobs");
        let mut cancelled = 0usize;
        let mut ran = vec![(0u64, 0u64); self.lanes()];
        for (id, job) in std::mem::take(&mut self.jobs).into_iter().enumerate() {
            let result = match job.fate {
                Fate::Accepted(handle) => Some(handle.join()),
                Fate::Joined(result) => Some(result),
                Fate::Refused => None,
            };
            let (calls, drops) = (job.record.calls(), job.record.drops());
            assert_eq!(drops, 1, "job {id}: closure dropped {drops} times");
            match result {
                None => assert_eq!(calls, 1, "refused job {id}"),
                Some(Ok(())) => {
                    assert!(!job.panics, "job {id}");
                    assert_eq!(calls, 1, "job {id}");
                    ran[job.lane].0 += 1;
                }
                Some(Err(JobError::Panicked { message })) => {
                    assert!(job.panics, "job {id}: {message}");
                    assert!(message.starts_with(PANIC_MESSAGE));
                    assert_eq!(calls, 1, "job {id}");
                    ran[job.lane].1 += 1;
                }
                Some(Err(JobError::Cancelled)) => {
                    assert_eq!(calls, 0, "cancelled job {id} ran");
                    assert!(stopped, "job {id} cancelled without shutdown_now");
                    cancelled += 1;
                }
                Some(Err(e)) => panic!("job {id}: {e:?}"),
            }
        }
        assert_eq!(
            cancelled, dropped_back,
            "handed back and dropped, cancelled"
        );
        if !stopped && !gone {
            // Every accepted job ran on the pool: none handed back.
            let total: u64 = self.accepted.iter().sum();
            let done: u64 = ran.iter().map(|(ok, p)| ok + p).sum();
            assert_eq!(total, done);
        }
        step("threads exit");
        let outlived = common::wait_threads_gone("fp-");
        assert!(
            outlived.is_empty(),
            "workers {outlived:?} outlived the executor"
        );
    }
}
