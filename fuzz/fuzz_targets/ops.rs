//! Drives executors with an arbitrary script: executors built from random
//! lanes, capacities and thread settings (invalid ones too), then a
//! sequence of enqueue / try_enqueue / enqueue_timeout at random
//! priorities (unknown ones included), jobs that panic, jobs that hold a
//! worker until released (so lanes fill up), and one of the shutdowns.
//!
//! Checked for every job: it ran once, or was handed back once (then run or
//! dropped), or was refused with the job returned; its closure was dropped
//! exactly once; its handle agrees. Checked for every executor: per lane
//! `submitted == completed + panicked + handed_back` after `shutdown_now`,
//! never more queued than the capacity, never more threads than `max`.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use priority_executor::{
    BuildError, Capacity, EnqueueError, Executor, JobError, JobHandle, LaneConfig, Priority,
};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering, fence};
use std::sync::{Arc, Once, mpsc};
use std::time::Duration;

const PANIC_MESSAGE: &str = "fuzz: deliberate panic";
const MAX_OPS: usize = 48;

#[derive(Arbitrary, Debug)]
struct Script {
    executors: Vec<Session>,
}

#[derive(Arbitrary, Debug)]
struct Session {
    /// (priority, weight, capacity: 0 = unbounded)
    lanes: Vec<(u8, u8, u8)>,
    core: u8,
    max: u8,
    allow_core_timeout: bool,
    keep_alive_zero: bool,
    prestart: bool,
    ops: Vec<Op>,
    end: End,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum How {
    Try,
    Timeout,
    Blocking,
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// `priority` indexes the lanes; past the end it is an unknown one.
    Enqueue {
        priority: u8,
        how: How,
        panics: bool,
    },
    /// A job that keeps its worker until `Release`.
    Hold {
        priority: u8,
    },
    Release,
    /// Wait for one earlier job's result.
    Join {
        which: u8,
    },
    Metrics,
}

#[derive(Arbitrary, Debug)]
enum End {
    Shutdown,
    /// `shutdown_now`; bit i of the mask says whether to run the i-th job
    /// handed back (else drop it).
    ShutdownNow {
        run_mask: u64,
    },
}

/// Per job id: calls and drops of its closure.
#[derive(Default)]
struct Record {
    calls: AtomicUsize,
    drops: AtomicUsize,
}

struct Guard(Arc<Record>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.drops.fetch_add(1, Ordering::SeqCst);
    }
}

enum Fate {
    Accepted(JobHandle<()>),
    Joined(Result<(), JobError>),
    Refused,
}

struct Job {
    record: Arc<Record>,
    fate: Fate,
    panics: bool,
}

fn quiet_deliberate_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // libfuzzer-sys aborts on any panic; the jobs' deliberate panics are
        // caught by the executor and are not findings.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let text = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            if text != Some(PANIC_MESSAGE) {
                previous(info);
            }
        }));
    });
}

fn run_session(s: &Session) {
    let mut builder = Executor::builder()
        .name("fz")
        .core_threads(usize::from(s.core % 4))
        .max_threads(usize::from(s.max % 5))
        .allow_core_timeout(s.allow_core_timeout)
        .keep_alive(if s.keep_alive_zero {
            Duration::ZERO
        } else {
            Duration::from_millis(50)
        });
    for &(p, w, c) in s.lanes.iter().take(5) {
        let capacity = if c == 0 {
            Capacity::Unbounded
        } else {
            Capacity::Bounded(usize::from(c % 8))
        };
        builder = builder.lane_config(
            LaneConfig::new(Priority(u32::from(p)))
                .weight(u32::from(w % 8))
                .capacity(capacity),
        );
    }
    let exec = match builder.build() {
        Ok(exec) => exec,
        Err(e) => {
            // Every refusal names a real problem of the settings.
            let lanes: Vec<_> = s.lanes.iter().take(5).collect();
            match e {
                BuildError::NoLanes => assert!(lanes.is_empty()),
                BuildError::DuplicatePriority { priority } => assert!(
                    lanes
                        .iter()
                        .filter(|l| u32::from(l.0) == priority.0)
                        .count()
                        > 1
                ),
                BuildError::ZeroWeight { priority } => assert!(lanes.iter().any(|l| u32::from(
                    l.0
                )
                    == priority.0
                    && l.1 % 8 == 0)),
                BuildError::ZeroCapacity { priority } => assert!(lanes.iter().any(|l| u32::from(
                    l.0
                )
                    == priority.0
                    && l.2 != 0
                    && l.2 % 8 == 0)),
                BuildError::ZeroMaxThreads => assert_eq!(s.max % 5, 0),
                BuildError::CoreExceedsMax { core, max } => assert!(core > max),
                other => panic!("unexpected build error {other:?}"),
            }
            return;
        }
    };
    let priorities = exec.priorities();
    let max_threads = usize::from(s.max % 5);
    if s.prestart {
        exec.prestart_core_threads();
    }
    let mut jobs: Vec<Job> = Vec::new();
    let mut holds: Vec<mpsc::Sender<()>> = Vec::new();
    let lane_of = |p: u8| -> Priority {
        match priorities.get(usize::from(p)) {
            Some(&priority) => priority,
            // No lane has 1000: the lanes' priorities are u8.
            None => Priority(1000),
        }
    };

    for op in s.ops.iter().take(MAX_OPS) {
        match *op {
            Op::Enqueue {
                priority,
                how,
                panics,
            } => {
                let record = Arc::new(Record::default());
                let guard = Guard(Arc::clone(&record));
                let job = move || {
                    let guard = guard;
                    guard.0.calls.fetch_add(1, Ordering::SeqCst);
                    if panics {
                        panic!("{PANIC_MESSAGE}");
                    }
                };
                let priority = lane_of(priority);
                // With a worker held, a blocking enqueue on a full lane
                // could wait for ever on this very thread.
                let how = match (how, holds.is_empty()) {
                    (How::Blocking, false) => How::Timeout,
                    (how, _) => how,
                };
                let result = match how {
                    How::Try => exec.try_enqueue(priority, job),
                    How::Timeout => exec.enqueue_timeout(priority, job, Duration::from_micros(100)),
                    How::Blocking => exec.enqueue(priority, job),
                };
                let fate = match result {
                    Ok(handle) => {
                        assert!(priorities.contains(&priority));
                        Fate::Accepted(handle)
                    }
                    Err(e) => {
                        match &e {
                            EnqueueError::UnknownPriority { .. } => {
                                assert!(!priorities.contains(&priority))
                            }
                            EnqueueError::Full { .. } => {
                                assert!(!matches!(how, How::Blocking), "blocking enqueue said Full")
                            }
                            EnqueueError::ShutDown { .. } => panic!("refused before shutdown"),
                            _ => panic!("unexpected error {e:?}"),
                        }
                        let job = e.into_inner();
                        let _ = catch_unwind(AssertUnwindSafe(job));
                        Fate::Refused
                    }
                };
                jobs.push(Job {
                    record,
                    fate,
                    panics,
                });
            }
            Op::Hold { priority } => {
                if holds.len() >= 2 {
                    continue;
                }
                let (tx, rx) = mpsc::channel::<()>();
                let record = Arc::new(Record::default());
                let guard = Guard(Arc::clone(&record));
                let job = move || {
                    let guard = guard;
                    guard.0.calls.fetch_add(1, Ordering::SeqCst);
                    let _ = rx.recv();
                };
                match exec.try_enqueue(lane_of(priority), job) {
                    Ok(handle) => {
                        holds.push(tx);
                        jobs.push(Job {
                            record,
                            fate: Fate::Accepted(handle),
                            panics: false,
                        });
                    }
                    Err(e) => {
                        drop(e.into_inner());
                        assert_eq!(record.drops.load(Ordering::SeqCst), 1);
                    }
                }
            }
            Op::Release => {
                holds.pop();
            }
            Op::Join { which } => {
                if holds.is_empty() && !jobs.is_empty() {
                    let i = usize::from(which) % jobs.len();
                    if let Fate::Accepted(_) = jobs[i].fate {
                        let Fate::Accepted(handle) =
                            std::mem::replace(&mut jobs[i].fate, Fate::Refused)
                        else {
                            unreachable!()
                        };
                        jobs[i].fate = Fate::Joined(handle.join());
                    }
                }
            }
            Op::Metrics => {
                let m = exec.metrics();
                assert!(m.threads.live <= max_threads, "{m:?}");
                assert!(m.threads.peak <= max_threads, "{m:?}");
                for lane in &m.lanes {
                    if let Capacity::Bounded(cap) = lane.capacity {
                        assert!(lane.queued <= cap, "{lane:?}");
                    }
                }
            }
        }
    }

    let mut handed_back_dropped = 0;
    match s.end {
        End::Shutdown => {
            holds.clear();
            exec.shutdown();
        }
        End::ShutdownNow { run_mask } => {
            let pending = exec.shutdown_now();
            // Released first: a held job handed back is run on this thread.
            holds.clear();
            let m = exec.metrics();
            assert_eq!(
                m.lanes.iter().map(|l| l.handed_back).sum::<u64>(),
                pending.len() as u64
            );
            for (i, job) in pending.into_iter().enumerate() {
                if run_mask >> (i % 64) & 1 == 1 {
                    let _ = catch_unwind(AssertUnwindSafe(|| job.run()));
                } else {
                    drop(job);
                    handed_back_dropped += 1;
                }
            }
            // No worker starts a job after shutdown_now, and none is started:
            // once `live` is 0 the counters are final.
            while exec.metrics().threads.live > 0 {
                std::thread::yield_now();
            }
            // ORDERING: pairs with each worker's SeqCst decrement of `live`.
            fence(Ordering::Acquire);
            for lane in exec.metrics().lanes {
                assert_eq!(
                    lane.submitted,
                    lane.completed + lane.panicked + lane.handed_back,
                    "{lane:?}"
                );
                assert_eq!(lane.queued, 0, "{lane:?}");
            }
            // Refusals after shutdown leave nothing behind: no phantom
            // queued job, no slot kept, no rejection counted.
            let rejected: Vec<u64> = exec.metrics().lanes.iter().map(|l| l.rejected).collect();
            for &p in &priorities {
                assert!(exec.enqueue(p, || ()).unwrap_err().is_shut_down());
                assert!(exec.try_enqueue(p, || ()).unwrap_err().is_shut_down());
            }
            for (lane, before) in exec.metrics().lanes.iter().zip(rejected) {
                assert_eq!(lane.queued, 0, "{lane:?}");
                assert_eq!(lane.rejected, before, "{lane:?}");
            }
            drop(exec);
        }
    }

    let mut cancelled = 0;
    for (id, job) in jobs.into_iter().enumerate() {
        let result = match job.fate {
            Fate::Accepted(handle) => Some(handle.join()),
            Fate::Joined(result) => Some(result),
            Fate::Refused => None,
        };
        let calls = job.record.calls.load(Ordering::SeqCst);
        let drops = job.record.drops.load(Ordering::SeqCst);
        assert_eq!(drops, 1, "job {id}: closure dropped {drops} times");
        match result {
            // Refused: returned to us and called by us, once.
            None => assert_eq!(calls, 1, "refused job {id}"),
            Some(Ok(())) => {
                assert!(!job.panics);
                assert_eq!(calls, 1, "job {id}");
            }
            Some(Err(JobError::Panicked { message })) => {
                assert!(job.panics);
                assert_eq!(message, PANIC_MESSAGE);
                assert_eq!(calls, 1, "job {id}");
            }
            Some(Err(JobError::Cancelled)) => {
                assert_eq!(calls, 0, "cancelled job {id} ran");
                cancelled += 1;
            }
            Some(Err(e)) => panic!("job {id}: {e:?}"),
        }
    }
    assert_eq!(cancelled, handed_back_dropped);
}

fuzz_target!(|script: Script| {
    quiet_deliberate_panics();
    for session in script.executors.iter().take(3) {
        run_session(session);
    }
});
