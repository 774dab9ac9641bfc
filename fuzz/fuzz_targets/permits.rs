//! Drives an executor's permits, paused lanes and resizes with an
//! arbitrary script: `Executor::reserve` futures polled by hand (ready,
//! pending, polled again, dropped while waiting), permits used or dropped
//! unused, `pause_lane` / `resume_lane`, `set_threads` and
//! `set_keep_alive` from the script's own thread, among enqueues that
//! never wait, wait at most a time or block, jobs that panic or hold their
//! worker, waits for idle; then a graceful shutdown, `shutdown_now` or the
//! executor's drop, with the permits and the futures still waiting used,
//! polled or dropped after it.
//!
//! Checked for every job: it ran once, or was handed back once (then run
//! or dropped), or was refused with the job returned; its closure was
//! dropped once; its handle agrees. For permits: a bounded lane never
//! holds more queued jobs and permits than its capacity, a permit's slot
//! comes back when it is dropped, a waiting future is woken when a slot
//! frees or the executor shuts down, and resolves `ShutDown` then. Per
//! lane at the end: `submitted` is the jobs accepted and `submitted ==
//! settled()`, nothing queued, nothing paused.
#![no_main]

#[path = "common/mod.rs"]
mod common;
#[path = "permits/model.rs"]
mod model;

use arbitrary::Arbitrary;
use common::{Guard, PANIC_MESSAGE, step};
use libfuzzer_sys::fuzz_target;
use model::Model;
use priority_executor::{Capacity, Executor, JobOptions, LaneConfig, PauseError, Priority};
use std::sync::mpsc;
use std::time::Duration;

const MAX_OPS: usize = 64;

#[derive(Arbitrary, Debug)]
pub struct Script {
    /// (priority, weight, capacity: 0 = unbounded)
    lanes: Vec<(u8, u8, u8)>,
    core: u8,
    max: u8,
    allow_core_timeout: bool,
    ops: Vec<Op>,
    end: End,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum How {
    Try,
    Timeout,
    Blocking,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Op {
    /// `lane` indexes the lanes; past the end it is a priority no lane has.
    Reserve {
        lane: u8,
    },
    /// Polls a future still waiting for its permit.
    Poll {
        which: u8,
    },
    DropReserve {
        which: u8,
    },
    /// Queues a job with a permit held.
    Use {
        which: u8,
        panics: bool,
    },
    /// Gives a permit's slot back unused.
    DropPermit {
        which: u8,
    },
    Enqueue {
        lane: u8,
        how: How,
        panics: bool,
    },
    /// A job that keeps its worker until `Release`.
    Hold {
        lane: u8,
    },
    Release,
    Pause {
        lane: u8,
    },
    Resume {
        lane: u8,
    },
    /// `set_threads(core % 4, max % 5)`: invalid pairs too.
    SetThreads {
        core: u8,
        max: u8,
    },
    KeepAlive {
        zero: bool,
    },
    WaitIdle {
        timeout: bool,
    },
    Join {
        which: u8,
    },
    Metrics,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum End {
    /// Graceful: paused lanes resume and run. Bit i of `use_mask` says
    /// whether the i-th permit still held is used after the shutdown
    /// (refused: `ShutDown`) or dropped before it.
    Shutdown { use_mask: u16 },
    /// Bit i of `run_mask`: run the i-th job handed back, else drop it.
    ShutdownNow { run_mask: u64, use_mask: u16 },
    /// The last clone dropped: a graceful shutdown.
    Drop { use_mask: u16 },
}

fn build(s: &Script) -> Option<Executor> {
    let mut builder = Executor::builder()
        .name("fp")
        .core_threads(usize::from(s.core % 4))
        .max_threads(usize::from(s.max % 4) + 1)
        .allow_core_timeout(s.allow_core_timeout)
        .keep_alive(Duration::from_millis(20));
    for &(p, w, c) in s.lanes.iter().take(4) {
        let capacity = if c == 0 {
            Capacity::Unbounded
        } else {
            Capacity::Bounded(usize::from(c % 6) + 1)
        };
        builder = builder.lane_config(
            LaneConfig::new(Priority(u32::from(p)))
                .weight(u32::from(w % 4) + 1)
                .capacity(capacity),
        );
    }
    // Duplicate priorities, no lanes, a core above the max: refused, and
    // the `ops` target checks those refusals.
    builder.build().ok()
}

fn run(s: &Script) {
    step("build");
    let Some(exec) = build(s) else { return };
    let mut m = Model::new(&exec);
    let mut holds: Vec<mpsc::Sender<()>> = Vec::new();

    for op in s.ops.iter().take(MAX_OPS) {
        match *op {
            Op::Reserve { lane } => {
                step("reserve");
                m.reserve(lane);
            }
            Op::Poll { which } => {
                step("poll reserve");
                m.poll_one(which);
            }
            Op::DropReserve { which } => {
                step("drop reserve");
                m.drop_reserve(which);
            }
            Op::Use { which, panics } => {
                step("use permit");
                m.use_permit(which, panics, false);
            }
            Op::DropPermit { which } => {
                step("drop permit");
                m.drop_permit(which);
            }
            Op::Enqueue { lane, how, panics } => {
                step("enqueue");
                let (guard, record) = Guard::new();
                let job = move || {
                    guard.called();
                    if panics {
                        panic!("{PANIC_MESSAGE}");
                    }
                };
                let index = m.index(lane);
                let priority = m.priority(index);
                // A blocking call waits for room only where nothing of
                // this script keeps the lane full: no permit or waiting
                // future of its own, no held worker, no pause.
                let how = match how {
                    How::Blocking if !m.may_block(index, !holds.is_empty()) => How::Timeout,
                    how => how,
                };
                let result = match how {
                    How::Try => exec.enqueue_with(
                        priority,
                        job,
                        JobOptions::new().wait_at_most(Duration::ZERO),
                    ),
                    How::Timeout => exec.enqueue_with(
                        priority,
                        job,
                        JobOptions::new().wait_at_most(Duration::from_micros(100)),
                    ),
                    How::Blocking => exec.enqueue(priority, job),
                };
                m.enqueued(
                    index,
                    record,
                    result,
                    matches!(how, How::Blocking),
                    false,
                    panics,
                );
            }
            Op::Hold { lane } => {
                if holds.len() >= 2 {
                    continue;
                }
                step("hold");
                let index = m.index(lane);
                let (tx, rx) = mpsc::channel::<()>();
                let (guard, record) = Guard::new();
                let job = move || {
                    guard.called();
                    let _ = rx.recv();
                };
                let result = exec.enqueue_with(
                    m.priority(index),
                    job,
                    JobOptions::new().wait_at_most(Duration::ZERO),
                );
                if m.enqueued(index, record, result, false, true, false) {
                    holds.push(tx);
                }
            }
            Op::Release => {
                holds.pop();
            }
            Op::Pause { lane } => {
                step("pause");
                let index = m.index(lane);
                let priority = m.priority(index);
                match exec.pause_lane(priority) {
                    Ok(()) => m.paused[index] = true,
                    Err(PauseError::UnknownPriority { priority: p }) => {
                        assert_eq!(p, priority);
                        assert_eq!(index, m.lanes(), "a lane's priority said unknown");
                    }
                    Err(e) => panic!("pause before any shutdown: {e:?}"),
                }
                assert_eq!(exec.is_lane_paused(priority), m.is_paused(index));
            }
            Op::Resume { lane } => {
                step("resume");
                let index = m.index(lane);
                let priority = m.priority(index);
                match exec.resume_lane(priority) {
                    Ok(()) => m.paused[index] = false,
                    Err(PauseError::UnknownPriority { .. }) => {
                        assert_eq!(index, m.lanes(), "a lane's priority said unknown");
                    }
                    Err(e) => panic!("resume before any shutdown: {e:?}"),
                }
                assert!(!exec.is_lane_paused(priority));
                // A permit waiting on this lane may have its slot now.
            }
            Op::SetThreads { core, max } => {
                step("set_threads");
                m.set_threads(usize::from(core % 4), usize::from(max % 5));
            }
            Op::KeepAlive { zero } => {
                step("set_keep_alive");
                let keep_alive = if zero {
                    Duration::ZERO
                } else {
                    Duration::from_millis(20)
                };
                exec.set_keep_alive(keep_alive);
                assert_eq!(exec.config().keep_alive, keep_alive);
            }
            Op::WaitIdle { timeout } => {
                let paused = m.paused.iter().any(|&p| p);
                if holds.is_empty() && !paused && !timeout {
                    step("wait_idle");
                    exec.wait_idle();
                    m.check_idle();
                } else {
                    step("wait_idle_timeout");
                    let idle = exec.wait_idle_timeout(Duration::from_millis(1)).is_ok();
                    assert!(holds.is_empty() || !idle, "idle with a job held");
                    assert!(
                        !idle || !m.paused_work(),
                        "idle with a paused lane's job queued"
                    );
                    if idle {
                        m.check_idle();
                    }
                }
            }
            Op::Join { which } => {
                if holds.is_empty() && !m.paused.iter().any(|&p| p) {
                    step("join");
                    m.join_one(which);
                }
            }
            Op::Metrics => {
                step("metrics");
                m.check_metrics();
            }
        }
        m.check_gauges(op);
    }

    m.end(exec, s.end, move || drop(holds));
}

fuzz_target!(|script: Script| {
    common::setup();
    let _running = common::Running::start();
    run(&script);
});
