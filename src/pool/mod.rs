//! The pool behind an [`Executor`](crate::Executor): its shared state here,
//! and by role the producer's path ([`submit`]), running a claimed job
//! ([`run`]), the worker threads ([`worker`]), shutdown ([`shutdown`]) and
//! the retry timer ([`timer`]), and the count of `Executor` values that
//! keeps it open ([`owners`]).
//!
//! The sleep/wake and shutdown rules these files implement are written down
//! in `sleep/README.md`; the numbers in the comments refer to them.

mod full;
mod future;
mod idle;
mod owners;
mod parked;
mod pause;
mod resize;
mod run;
mod shutdown;
mod submit;
mod tally;
mod timer;
mod worker;

use crate::hooks::{Hooks, ThreadSettings};
use crate::lane::Lane;
use crate::lane::config::LaneConfig;
use crate::lane::picker::{Picker, Schedule};
use crate::observe::facade::{self, Instruments};
use crate::priority::Priority;
use crate::sleep::Sleep;
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::{Arc, Condvar, Mutex, lock, thread};
use crate::waits::{SharedWaits, WaitTimes};
use crossbeam_utils::CachePadded;
use std::time::Duration;
use timer::Timer;

pub(crate) use future::NewFuture;
pub(crate) use worker::probe_thread;

/// `Shared::state` once the executor stops accepting jobs. The lanes'
/// own closed bits decide which jobs were accepted (rule 5); this flag
/// wakes blocked producers and tells idle workers to drain and exit.
const CLOSED: usize = 1;

#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolConfig {
    pub(crate) core: usize,
    pub(crate) max: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) allow_core_timeout: bool,
}

pub(crate) struct Shared {
    pub(crate) name: String,
    pub(crate) limits: resize::Limits,
    pub(crate) lanes: Box<[Lane]>,
    /// The lanes as configured, in the same order (read back by `config`).
    pub(crate) lane_configs: Box<[LaneConfig]>,
    schedule: Schedule,
    /// The lane whose claim line holds the picker's cursor: the one the
    /// cycle visits most (`Lane::pick_cursor`).
    cursor_lane: usize,
    pub(crate) hooks: Hooks,
    pub(crate) thread_settings: ThreadSettings,
    /// The `metrics` facade's handles (feature `metrics`; nothing without).
    pub(crate) instruments: Instruments,
    /// Stamp every job with its enqueue time (the wait histograms, hooks
    /// and metrics report waits).
    stamp_jobs: bool,
    /// Per lane, the waits recorded off the workers and those of workers
    /// that exited (`waits.rs`; each worker keeps its own in its tally).
    pub(crate) waits: Box<[SharedWaits]>,
    /// Fill `waits` (the builder's `record_waits`).
    record_waits: bool,
    /// Some lane ages its jobs: check for overdue heads before each pick.
    aging: bool,
    timer: Timer,
    /// 0, or `CLOSED` once shutdown began.
    state: CachePadded<AtomicUsize>,
    /// Held while a retry is re-queued, and by `shutdown_now` while it sets
    /// `stopped`: a retry is either queued before the lanes are emptied
    /// (and handed back) or sees `stopped` and is dead-lettered.
    requeue: Mutex<()>,
    /// Held by `pause_lane`, and by `close` while it resumes every lane
    /// if a lane was ever paused: a closed executor has no paused lane
    /// (rule 9).
    pausing: Mutex<()>,
    /// `EVER_PAUSED` once `pause_lane` ran, `CLOSING` once `close` began:
    /// each sets its bit with one read-modify-write and sees whether the
    /// other's came first (rule 9), so `close` takes `pausing` only in an
    /// executor where a lane was ever paused.
    pause_gate: AtomicUsize,
    /// Non-zero once `shutdown_now` ran: workers start nothing more.
    stopped: AtomicUsize,
    sleep: Sleep,
    live: CachePadded<AtomicUsize>,
    idle: AtomicUsize,
    peak: AtomicUsize,
    /// Worker threads the operating system refused to start (metrics).
    spawn_failures: std::sync::atomic::AtomicU64,
    next_id: AtomicUsize,
    threads: Mutex<Vec<thread::JoinHandle<()>>>,
    /// Threads taken out of `threads` and being joined right now; a thread
    /// outside the pool waits for those joins too (rule 8).
    joining: Mutex<usize>,
    /// Notified each time `joining` goes down.
    joined: Condvar,
    /// The workers alive, each registered by its own thread.
    workers: Mutex<Vec<Arc<worker::WorkerSlot>>>,
    /// Workers whose job waits on this pool right now (rule 8): a worker
    /// marks its slot and counts itself here, under this lock.
    exited: Mutex<usize>,
    /// Notified each time a worker gives up its place in `live`, or starts
    /// waiting on the pool.
    worker_exited: Condvar,
    /// Threads in `wait_idle` (rule 7), and where they wait.
    idle_waiters: AtomicUsize,
    /// Under it, the idle generations (rule 7): every idle moment seen
    /// moves them on, and lets out every waiter of that moment.
    idle_lock: Mutex<idle::IdleGenerations>,
    became_idle: Condvar,
    /// Futures that may be parked, dropped once the pool has ended.
    parked: parked::Parked,
    /// The `Executor` values that keep the pool open.
    owners: owners::Owners,
}

impl Shared {
    pub(crate) fn new(
        name: String,
        config: PoolConfig,
        picker: Picker,
        lanes: &[LaneConfig],
        hooks: Hooks,
        thread_settings: ThreadSettings,
        record_waits: bool,
    ) -> Arc<Shared> {
        let weights: Vec<u32> = lanes.iter().map(|l| l.weight).collect();
        let configs = lanes;
        let lanes: Box<[Lane]> = lanes.iter().map(|l| Lane::new(l, config.max)).collect();
        let instruments = Instruments::register(&name, lanes.iter().map(|l| l.priority));
        let waits = lanes.iter().map(|_| SharedWaits::new()).collect();
        // Loom models leave the histograms out: hundreds of counters per
        // lane and worker, none of them part of a protocol.
        let record_waits = record_waits && !cfg!(loom);
        let schedule = Schedule::new(picker, &weights);
        Arc::new(Shared {
            name,
            limits: resize::Limits::new(config),
            aging: lanes.iter().any(Lane::ages),
            lanes,
            lane_configs: configs.into(),
            cursor_lane: schedule.most_visited(),
            schedule,
            stamp_jobs: record_waits || hooks.need_clock() || facade::STAMPS_JOBS,
            record_waits,
            waits,
            hooks,
            thread_settings,
            instruments,
            timer: Timer::default(),
            state: CachePadded::new(AtomicUsize::new(0)),
            requeue: Mutex::new(()),
            pausing: Mutex::new(()),
            pause_gate: AtomicUsize::new(0),
            stopped: AtomicUsize::new(0),
            sleep: Sleep::new(),
            live: CachePadded::new(AtomicUsize::new(0)),
            idle: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            spawn_failures: std::sync::atomic::AtomicU64::new(0),
            next_id: AtomicUsize::new(1),
            threads: Mutex::new(Vec::new()),
            joining: Mutex::new(0),
            joined: Condvar::new(),
            workers: Mutex::new(Vec::new()),
            exited: Mutex::new(0),
            worker_exited: Condvar::new(),
            idle_waiters: AtomicUsize::new(0),
            idle_lock: Mutex::new(idle::IdleGenerations::default()),
            became_idle: Condvar::new(),
            parked: parked::Parked::new(),
            owners: owners::Owners::default(),
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

    pub(crate) fn is_closed(&self) -> bool {
        self.state.load(Ordering::SeqCst) & CLOSED != 0
    }

    fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst) != 0
    }

    /// Unclaimed jobs in the lanes not paused: the jobs a woken or new
    /// worker could take (rule 3; rule 9 for paused lanes).
    fn queued(&self) -> usize {
        self.lanes
            .iter()
            .filter(|l| !l.is_paused_seqcst())
            .map(|l| l.queued_seqcst())
            .sum()
    }

    /// Does a lane not paused hold a job? (Rule 4's re-check.)
    #[inline]
    fn any_ready_unpaused(&self) -> bool {
        self.lanes.iter().any(Lane::is_ready_unpaused)
    }

    #[inline]
    fn any_ready(&self) -> bool {
        self.lanes.iter().any(Lane::is_ready)
    }

    #[inline]
    fn any_claimable(&self) -> bool {
        self.lanes.iter().any(Lane::is_claimable)
    }

    /// Jobs dispatched and completed per lane: the lanes' shared counters
    /// and the tallies of the workers alive, read under the `workers` lock
    /// that a worker folds its tally under as it exits (`pool/tally.rs`).
    pub(crate) fn dispatched_completed(&self) -> Vec<(u64, u64)> {
        let workers = lock(&self.workers);
        self.lanes
            .iter()
            .enumerate()
            .map(|(index, lane)| {
                let c = &lane.counters;
                let shared = (
                    c.dispatched.load(Ordering::Relaxed),
                    c.completed.load(Ordering::Relaxed),
                );
                workers.iter().fold(shared, |(d, k), w| {
                    let (wd, wk) = w.tally.of(index);
                    (d + wd, k + wk)
                })
            })
            .collect()
    }

    /// Per lane, the waits recorded: the shared histogram and those of
    /// the workers alive, under the `workers` lock as `dispatched_completed`.
    pub(crate) fn waits(&self) -> Vec<WaitTimes> {
        let workers = lock(&self.workers);
        self.waits
            .iter()
            .enumerate()
            .map(|(index, shared)| {
                let mut counts = shared.snapshot();
                for w in workers.iter() {
                    w.tally.add_waits(index, &mut counts);
                }
                WaitTimes::from_counts(counts)
            })
            .collect()
    }

    /// Worker threads the operating system refused to start.
    pub(crate) fn spawn_failures(&self) -> u64 {
        // ORDERING: a statistic; nothing is ordered by it.
        self.spawn_failures
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Live, idle, peak and sleeping threads, for the metrics.
    pub(crate) fn thread_counts(&self) -> (usize, usize, usize, usize) {
        let live = self.live.load(Ordering::Relaxed);
        let idle = self.idle.load(Ordering::Relaxed).min(live);
        let sleeping = self.sleep.sleepers().min(idle);
        (live, idle, self.peak.load(Ordering::Relaxed), sleeping)
    }
}
