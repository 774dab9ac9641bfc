//! The snapshot: what the JSON endpoint returns and each server-sent event
//! carries. Every executor's figure comes from [`Executor::metrics`] (the
//! pipelines' part is in `stage_snapshot.rs`, the bridges' in
//! `bridge_snapshot.rs`); the rates and
//! shares are differences of its counters over a sliding window
//! (`sampler.rs`).
//!
//! [`Executor::metrics`]: priority_executor::Executor::metrics

use crate::bridge_snapshot::BridgeSnapshot;
use crate::log::ActionRecord;
use crate::stage_snapshot::PipelineSnapshot;
use serde::Serialize;

/// The version of the snapshot's JSON shape, raised when a field changes
/// meaning or goes away (fields may be added without a change).
///
/// 2: a strict executor's `weight_share` is the share it gives when every
/// lane is busy (1 for the highest lane, 0 for the others), no longer
/// weight over total; `window_secs` may exceed 5 when looks come further
/// apart than that.
pub const SCHEMA_VERSION: u32 = 2;

/// Everything the page shows, at one moment.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
/// use priority_executor_dashboard::Dashboard;
///
/// let exec = Executor::builder()
///     .name("visa")
///     .lane(Priority(10), Capacity::Unbounded)
///     .build()
///     .unwrap();
/// let dashboard = Dashboard::new().executor(&exec);
/// let snapshot = dashboard.snapshot();
/// assert_eq!(snapshot.executors[0].name, "visa");
/// assert_eq!(snapshot.executors[0].lanes[0].priority, 10);
/// let json = serde_json::to_value(&snapshot).unwrap();
/// assert_eq!(json["executors"][0]["lanes"][0]["paused"], false);
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Snapshot {
    /// [`SCHEMA_VERSION`].
    pub version: u32,
    /// When it was taken, in milliseconds since the Unix epoch.
    pub taken_at_ms: u64,
    /// The span the rates and shares are measured over, in seconds (0
    /// until a second sample exists): the last 5 s, or since the look
    /// before when looks come further apart.
    pub window_secs: f64,
    /// How often the event stream sends a snapshot, in milliseconds
    /// ([`Dashboard::period`](crate::Dashboard::period)): while its event
    /// stream is down, the page polls this snapshot as often.
    pub period_ms: u64,
    /// Whether the actions (pause, resume, drain) are enabled at all.
    pub actions_enabled: bool,
    /// The executors, in the order they were added.
    pub executors: Vec<ExecutorSnapshot>,
    /// The pipelines and stages (feature `actor`), in the order they were
    /// added; empty without the feature.
    pub pipelines: Vec<PipelineSnapshot>,
    /// The RabbitMQ bridges (feature `amqp`), in the order they were
    /// added; empty without the feature.
    pub bridges: Vec<BridgeSnapshot>,
    /// The latest actions asked for, oldest first, refused ones included.
    pub actions: Vec<ActionRecord>,
}

/// One executor.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ExecutorSnapshot {
    /// The name it is shown and addressed by.
    pub name: String,
    /// The picker: `smooth`, `classic` or `strict`.
    pub picker: String,
    /// Has shutdown begun?
    pub shut_down: bool,
    /// Its worker threads.
    pub threads: ThreadSnapshot,
    /// Its lanes, highest priority first.
    pub lanes: Vec<LaneSnapshot>,
}

/// An executor's worker threads.
#[derive(Clone, Copy, Debug, Serialize)]
#[non_exhaustive]
pub struct ThreadSnapshot {
    /// Threads alive.
    pub live: usize,
    /// Threads running a job.
    pub busy: usize,
    /// Threads alive and not running a job.
    pub idle: usize,
    /// Of the idle threads, those asleep.
    pub sleeping: usize,
    /// The most threads alive at once so far.
    pub peak: usize,
}

/// One lane of an executor.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct LaneSnapshot {
    /// The lane's priority.
    pub priority: u32,
    /// Its weight in the picker's cycle.
    pub weight: u32,
    /// Its capacity, `null` when unbounded.
    pub capacity: Option<usize>,
    /// Paused: accepting jobs, starting none.
    pub paused: bool,
    /// Jobs waiting in the lane.
    pub queued: usize,
    /// Jobs of the lane running now (lanes with a running cap only).
    pub running: Option<usize>,
    /// The lane's cap on running jobs, if any.
    pub max_running: Option<usize>,
    /// Jobs accepted so far.
    pub submitted: u64,
    /// Jobs started so far.
    pub dispatched: u64,
    /// Jobs that returned.
    pub completed: u64,
    /// Jobs that panicked (caught).
    pub panicked: u64,
    /// Jobs refused because the lane was full.
    pub rejected: u64,
    /// Jobs not started because their deadline had passed.
    pub expired: u64,
    /// Jobs pushed out of the full lane by newer ones.
    pub discarded: u64,
    /// Failed attempts queued again.
    pub retried: u64,
    /// Retrying jobs whose last attempt failed.
    pub dead_lettered: u64,
    /// Jobs cancelled through their handles.
    pub cancelled: u64,
    /// Jobs handed back unrun by `shutdown_now`.
    pub handed_back: u64,
    /// Jobs started per second over the window.
    pub dispatched_per_sec: f64,
    /// Jobs completed per second over the window.
    pub completed_per_sec: f64,
    /// This lane's part of the executor's dispatches over the window
    /// (0 to 1), `null` when nothing was dispatched.
    pub share: Option<f64>,
    /// The part of the executor's dispatches its picker gives it when
    /// every lane has jobs (0 to 1): its weight over the lanes' total for
    /// the weighted pickers (`smooth`, `classic`); for `strict`, which
    /// ignores weights, 1 for the highest lane and 0 for the others (they
    /// starve while it has jobs).
    pub weight_share: f64,
    /// Median wait in the lane before a job started, in milliseconds,
    /// since the executor started; `null` unless the executor records
    /// waits (`record_waits(true)`) and some job has started.
    pub wait_p50_ms: Option<f64>,
    /// 99th percentile of the same waits.
    pub wait_p99_ms: Option<f64>,
    /// Median wait of the jobs started in the window (the waits recorded
    /// since the oldest sample the dashboard keeps, at most a few seconds
    /// back), in milliseconds; `null` unless the executor records waits
    /// and some job started in the window, and on a first look, which has
    /// no earlier sample.
    pub wait_p50_ms_window: Option<f64>,
    /// 99th percentile of the same waits in the window.
    pub wait_p99_ms_window: Option<f64>,
}
