//! Stress: many producers, random lanes and capacities, a random mix of
//! submissions that never wait, wait at most a time, or block, panicking jobs,
//! jobs cancelled through their handles as the workers take them, lanes
//! paused and resumed at random, and a `shutdown_now` at a random moment.
//!
//! Every job carries its id. When its closure is called it records *who*
//! called it (a worker, the test running a handed-back job, or the test
//! calling a refused job it got back), so the ledger shows that each job ran
//! once, or was handed back once, or was refused with the job returned, and
//! never two of these. Each round also checks the metrics invariant per lane
//! and that every worker thread has exited once the executor is dropped.
//!
//! A watchdog turns a hang into a failure with a thread dump. Replay a
//! failing run with the seed it prints: `STRESS_SEED=<seed> cargo test
//! --release --test stress`; `STRESS_ROUNDS` sets the number of rounds.

#[path = "../common/mod.rs"]
mod common;
mod growth;
mod support;

#[cfg(all(feature = "actor", not(loom)))]
mod actors;

use common::quiet_panics;
use priority_executor::{
    Capacity, EnqueueError, Executor, JobError, JobHandle, JobOptions, Priority,
};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;
use support::{Rng, threads_named};

const PRODUCERS: usize = 4;
const JOBS_PER_PRODUCER: usize = 250;
const DEFAULT_ROUNDS: usize = 300;
const PANIC_MESSAGE: &str = "stress: deliberate panic";

/// Who called a job's closure.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Caller {
    Worker = 0,
    HandedBack = 1,
    Refused = 2,
}

thread_local! {
    /// Set by the test around the calls it makes itself; worker threads
    /// never set it.
    static CALLER: Cell<Caller> = const { Cell::new(Caller::Worker) };
}

fn call_as<R>(caller: Caller, f: impl FnOnce() -> R) -> R {
    CALLER.with(|c| c.set(caller));
    let out = catch_unwind(AssertUnwindSafe(f));
    CALLER.with(|c| c.set(Caller::Worker));
    match out {
        Ok(r) => r,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// Per job id, how often each caller called it.
struct Ledger {
    calls: Vec<[AtomicUsize; 3]>,
    /// Worker threads that ran a job of this round and have not exited.
    workers_alive: Arc<AtomicUsize>,
}

/// Held in a worker thread's thread-local storage from its first job on;
/// dropped by the thread's exit, which `shutdown` (joining the threads)
/// must wait for.
struct ExitGuard(Arc<AtomicUsize>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

thread_local! {
    static EXIT_GUARD: std::cell::RefCell<Option<ExitGuard>> = const { std::cell::RefCell::new(None) };
}

impl Ledger {
    fn new(jobs: usize) -> Arc<Ledger> {
        Arc::new(Ledger {
            calls: (0..jobs).map(|_| Default::default()).collect(),
            workers_alive: Arc::new(AtomicUsize::new(0)),
        })
    }

    fn job(self: &Arc<Self>, id: usize, panics: bool) -> impl FnOnce() -> usize + Send + 'static {
        let ledger = Arc::clone(self);
        move || {
            let caller = CALLER.with(Cell::get);
            ledger.calls[id][caller as usize].fetch_add(1, Ordering::Relaxed);
            if caller == Caller::Worker {
                EXIT_GUARD.with(|g| {
                    let mut g = g.borrow_mut();
                    if g.is_none() {
                        ledger.workers_alive.fetch_add(1, Ordering::SeqCst);
                        *g = Some(ExitGuard(Arc::clone(&ledger.workers_alive)));
                    }
                });
            }
            if panics {
                panic!("{PANIC_MESSAGE}");
            }
            id
        }
    }

    fn calls(&self, id: usize) -> [usize; 3] {
        let c = &self.calls[id];
        [0, 1, 2].map(|i| c[i].load(Ordering::Relaxed))
    }
}

/// What a producer saw for one job.
enum Submitted {
    /// The handle, the lane, and whether `cancel` (tried on some) said yes.
    Accepted(JobHandle<usize>, usize, bool),
    Refused {
        full: bool,
        lane: Option<usize>,
    },
}

struct Config {
    lanes: Vec<(Priority, Capacity)>,
    core: usize,
    max: usize,
    keep_alive: Duration,
    allow_core_timeout: bool,
}

fn random_config(rng: &mut Rng) -> Config {
    let lane_count = rng.range(1, 4);
    let mut priorities: Vec<u32> = Vec::new();
    while priorities.len() < lane_count {
        let p = rng.range(1, 12) as u32;
        if !priorities.contains(&p) {
            priorities.push(p);
        }
    }
    let lanes = priorities
        .into_iter()
        .map(|p| {
            let capacity = if rng.chance(1, 3) {
                Capacity::Unbounded
            } else {
                Capacity::Bounded(rng.range(1, 8))
            };
            (Priority(p), capacity)
        })
        .collect();
    let core = rng.range(0, 2);
    let max = rng.range(core.max(1), 4);
    let keep_alive = match rng.range(0, 2) {
        0 => Duration::ZERO,
        1 => Duration::from_micros(200),
        _ => Duration::from_secs(60),
    };
    Config {
        lanes,
        core,
        max,
        keep_alive,
        allow_core_timeout: rng.chance(1, 2),
    }
}

/// Totals over all rounds, printed so a run shows what it exercised.
#[derive(Default, Debug)]
struct Totals {
    ran: u64,
    panicked: u64,
    handed_back_run: u64,
    handed_back_dropped: u64,
    refused_full: u64,
    refused_shut_down: u64,
    refused_unknown: u64,
    cancelled: u64,
}

fn round(seed: u64, round_no: usize, totals: &mut Totals) {
    let mut rng = Rng::new(seed);
    let config = random_config(&mut rng);
    let name = format!("sx{round_no}");
    let mut builder = Executor::builder()
        .name(name.clone())
        .core_threads(config.core)
        .max_threads(config.max)
        .keep_alive(config.keep_alive)
        .allow_core_timeout(config.allow_core_timeout);
    for &(p, c) in &config.lanes {
        builder = builder.lane(p, c);
    }
    let exec = builder.build().expect("valid random config");
    let priorities: Vec<Priority> = exec
        .config()
        .lanes
        .iter()
        .map(|l| l.priority)
        .collect::<Vec<_>>();
    let total = PRODUCERS * JOBS_PER_PRODUCER;
    let ledger = Ledger::new(total);

    // The controller calls `shutdown_now` once `stop_after` submissions
    // have been attempted; the producer making that attempt tells it.
    let stop_after = rng.range(1, total);
    let attempts = Arc::new(AtomicUsize::new(0));
    let (stop_tx, stop_rx) = mpsc::channel::<()>();

    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let exec = exec.clone();
            let ledger = Arc::clone(&ledger);
            let attempts = Arc::clone(&attempts);
            let stop_tx = stop_tx.clone();
            let priorities = priorities.clone();
            let mut rng = Rng::new(rng.next_u64());
            thread::Builder::new()
                .name(format!("producer-{p}"))
                .spawn(move || {
                    let mut out = Vec::with_capacity(JOBS_PER_PRODUCER);
                    for j in 0..JOBS_PER_PRODUCER {
                        let id = p * JOBS_PER_PRODUCER + j;
                        let unknown = rng.chance(1, 50);
                        let priority = if unknown {
                            Priority(1000)
                        } else {
                            priorities[rng.range(0, priorities.len() - 1)]
                        };
                        let job = ledger.job(id, rng.chance(1, 10));
                        let result = match rng.range(0, 2) {
                            0 => exec.enqueue_with(
                                priority,
                                job,
                                JobOptions::new().wait_at_most(Duration::ZERO),
                            ),
                            1 => exec.enqueue_with(
                                priority,
                                job,
                                JobOptions::new()
                                    .wait_at_most(Duration::from_micros(rng.range(0, 500) as u64)),
                            ),
                            _ => exec.enqueue(priority, job),
                        };
                        if attempts.fetch_add(1, Ordering::SeqCst) + 1 == stop_after {
                            stop_tx.send(()).expect("controller waits");
                        }
                        let lane = priorities.iter().position(|&q| q == priority);
                        out.push(match result {
                            Ok(handle) => match lane {
                                Some(lane) => {
                                    let cancelled = rng.chance(1, 8) && handle.cancel();
                                    Submitted::Accepted(handle, lane, cancelled)
                                }
                                None => panic!("job {id} accepted at an unknown priority"),
                            },
                            Err(e) => {
                                let full = matches!(e, EnqueueError::Full { .. });
                                match &e {
                                    EnqueueError::UnknownPriority { .. } => assert!(unknown),
                                    EnqueueError::Full { .. } => assert!(lane.is_some()),
                                    EnqueueError::ShutDown { .. } => assert!(lane.is_some()),
                                    _ => unreachable!("new error kind: {e:?}"),
                                }
                                // The job came back: call it to prove it is
                                // the very job that was offered.
                                let job = e.into_inner();
                                let _ = catch_unwind(AssertUnwindSafe(|| {
                                    call_as(Caller::Refused, job)
                                }));
                                Submitted::Refused { full, lane }
                            }
                        });
                    }
                    out
                })
                .expect("spawn producer")
        })
        .collect();
    drop(stop_tx);

    // Lanes paused and resumed at random until the shutdown: a pause
    // changes when a job runs, never whether it ends exactly once. Each
    // pause is undone, so a producer blocked on a full paused lane goes on.
    let pausing = Arc::new(AtomicBool::new(true));
    let pauser = {
        let exec = exec.clone();
        let pausing = Arc::clone(&pausing);
        let priorities = priorities.clone();
        let mut rng = Rng::new(rng.next_u64());
        thread::Builder::new()
            .name("pauser".into())
            .spawn(move || {
                let idle = |rng: &mut Rng| (0..rng.range(1, 200)).for_each(|_| thread::yield_now());
                // ORDERING: SeqCst, as the test's other flags: a stop
                // flag, read once a turn; the join orders the rest.
                while pausing.load(Ordering::SeqCst) {
                    let priority = priorities[rng.range(0, priorities.len() - 1)];
                    let _ = exec.pause_lane(priority);
                    idle(&mut rng);
                    exec.resume_lane(priority).expect("a lane of the executor");
                    idle(&mut rng);
                }
            })
            .expect("spawn pauser")
    };

    stop_rx.recv().expect("a producer reaches stop_after");
    let pending = exec.shutdown_now();
    // ORDERING: SeqCst: see the pauser's loop.
    pausing.store(false, Ordering::SeqCst);
    pauser.join().expect("pauser panicked");
    assert!(
        priorities.iter().all(|&p| !exec.is_lane_paused(p)),
        "a lane left paused after shutdown_now"
    );
    assert!(exec.is_shut_down());
    let handed_back = pending.len();
    // Run some handed-back jobs, drop the others (their handles then say
    // Cancelled).
    let mut dropped_unrun = 0;
    let mut last = None;
    for job in pending {
        let priority = job.priority();
        if let Some(prev) = last {
            assert!(prev >= priority, "handed back out of priority order");
        }
        last = Some(priority);
        assert!(priorities.contains(&priority));
        if rng.chance(1, 2) {
            let _ = catch_unwind(AssertUnwindSafe(|| {
                call_as(Caller::HandedBack, || job.run())
            }));
        } else {
            drop(job);
            dropped_unrun += 1;
        }
    }

    let outcomes: Vec<Submitted> = producers
        .into_iter()
        .flat_map(|h| h.join().expect("producer panicked"))
        .collect();

    // After shutdown_now no worker starts a job and none is started again:
    // wait for the running ones to finish, then read the counters.
    while exec.metrics().threads.live > 0 {
        thread::yield_now();
    }
    // ORDERING: pairs with the SeqCst decrement of `live` by each exiting
    // worker, after its last counter update.
    fence(Ordering::Acquire);
    let m = exec.metrics();
    for lane in &m.lanes {
        assert_eq!(
            lane.submitted,
            lane.completed + lane.panicked + lane.handed_back + lane.cancelled,
            "lane {} lost jobs: {lane:?}",
            lane.priority
        );
        assert_eq!(lane.queued, 0, "lane {}: {lane:?}", lane.priority);
    }
    assert_eq!(
        m.lanes.iter().map(|l| l.handed_back).sum::<u64>(),
        handed_back as u64
    );

    let mut cancelled = 0;
    let mut cancelled_by_handle = 0;
    let mut accepted_per_lane = vec![0u64; priorities.len()];
    let mut full_per_lane = vec![0u64; priorities.len()];
    let mut ran = 0;
    let mut refused_shut_down = 0;
    let mut refused_unknown = 0;
    for (id, outcome) in outcomes.into_iter().enumerate() {
        let [by_worker, by_us, refused] = ledger.calls(id);
        match outcome {
            Submitted::Accepted(handle, lane, by_handle) => {
                accepted_per_lane[lane] += 1;
                let job_lane = match handle.join() {
                    Ok(v) => {
                        assert_eq!(v, id);
                        Some(())
                    }
                    Err(JobError::Panicked { message }) => {
                        assert_eq!(message, PANIC_MESSAGE);
                        Some(())
                    }
                    Err(JobError::Cancelled) => None,
                    Err(e) => panic!("job {id}: unexpected {e:?}"),
                };
                assert_eq!(refused, 0, "accepted job {id} was also refused");
                match job_lane {
                    Some(()) => {
                        assert_eq!(
                            by_worker + by_us,
                            1,
                            "job {id} ran {by_worker}+{by_us} times"
                        );
                        ran += by_worker;
                    }
                    None => {
                        assert_eq!(by_worker + by_us, 0, "cancelled job {id} ran");
                        if by_handle {
                            cancelled_by_handle += 1;
                        } else {
                            cancelled += 1;
                        }
                    }
                }
                if by_handle {
                    assert!(job_lane.is_none(), "job {id} ran after a successful cancel");
                }
            }
            Submitted::Refused { full, lane } => {
                assert_eq!(
                    (by_worker, by_us, refused),
                    (0, 0, 1),
                    "refused job {id} must be returned (and called by us) once"
                );
                match (full, lane) {
                    (true, Some(lane)) => full_per_lane[lane] += 1,
                    (false, Some(_)) => refused_shut_down += 1,
                    (_, None) => refused_unknown += 1,
                }
            }
        }
    }
    assert_eq!(cancelled, dropped_unrun, "handed-back jobs dropped unrun");
    assert_eq!(
        m.lanes.iter().map(|l| l.cancelled).sum::<u64>(),
        cancelled_by_handle,
        "jobs cancelled through their handles"
    );
    for (i, lane) in m.lanes.iter().enumerate() {
        assert_eq!(
            lane.rejected, full_per_lane[i],
            "lane {} rejected",
            lane.priority
        );
        assert_eq!(
            lane.submitted, accepted_per_lane[i],
            "lane {} submitted",
            lane.priority
        );
    }
    let worker_runs: u64 = m.lanes.iter().map(|l| l.completed + l.panicked).sum();
    assert_eq!(worker_runs, ran as u64, "jobs the workers ran");
    totals.ran += worker_runs;
    totals.panicked += m.lanes.iter().map(|l| l.panicked).sum::<u64>();
    totals.handed_back_run += (handed_back - dropped_unrun) as u64;
    totals.handed_back_dropped += dropped_unrun as u64;
    totals.refused_full += full_per_lane.iter().sum::<u64>();
    totals.refused_shut_down += refused_shut_down;
    totals.refused_unknown += refused_unknown;
    totals.cancelled += cancelled_by_handle;

    exec.shutdown();
    // Every worker that ran a job has exited: its thread-local guard was
    // dropped before `shutdown` joined it.
    assert_eq!(
        ledger.workers_alive.load(Ordering::SeqCst),
        0,
        "worker threads still alive after shutdown"
    );
    // And no thread of this executor is left at all (also those that never
    // ran a job). A joined thread may linger in /proc for the last steps of
    // its exit, so look until it is gone; one that never goes is a hang the
    // watchdog reports with the list of threads.
    while !threads_named(&format!("{name}-")).is_empty() {
        thread::yield_now();
    }
}

#[test]
fn exactly_once_under_random_load_and_shutdown_now() {
    quiet_panics(PANIC_MESSAGE);
    let mut totals = Totals::default();
    support::seeded_rounds(
        "stress",
        DEFAULT_ROUNDS,
        Duration::from_secs(60),
        |seed, r| {
            round(seed, r, &mut totals);
        },
    );
    println!("{totals:?}");
}
