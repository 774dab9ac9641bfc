//! The global recorder and a view of one executor's series.

use metrics_util::MetricKind;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The recorder's snapshotter, installed on first use. Hold the returned
/// guard for the whole test: tests take turns.
pub fn recorder() -> (MutexGuard<'static, ()>, &'static Snapshotter) {
    static TURN: Mutex<()> = Mutex::new(());
    static SNAPSHOTTER: OnceLock<Snapshotter> = OnceLock::new();
    let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let snapshotter = SNAPSHOTTER.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder
            .install()
            .expect("the only recorder of this binary");
        snapshotter
    });
    (turn, snapshotter)
}

/// One executor's series: (kind, name, priority label or "") to value,
/// with each name's unit and help text.
pub struct Series {
    values: HashMap<(MetricKind, String, String), DebugValue>,
    pub described: HashMap<String, (Option<metrics::Unit>, String)>,
}

impl Series {
    /// Drains the recorder and keeps the series labelled `executor`.
    pub fn of(snapshotter: &Snapshotter, executor: &str) -> Series {
        let mut values = HashMap::new();
        let mut described = HashMap::new();
        for (key, unit, help, value) in snapshotter.snapshot().into_vec() {
            let (kind, key) = key.into_parts();
            let label = |name: &str| {
                key.labels()
                    .find(|l| l.key() == name)
                    .map(|l| l.value().to_owned())
            };
            if label("executor").as_deref() != Some(executor) {
                continue;
            }
            let names: Vec<&str> = key.labels().map(|l| l.key()).collect();
            assert!(
                names == ["executor", "priority"] || names == ["executor"],
                "labels of {}: {names:?}",
                key.name()
            );
            let name = key.name().to_owned();
            if let Some(help) = help {
                described.insert(name.clone(), (unit, help.to_string()));
            }
            let priority = label("priority").unwrap_or_default();
            values.insert((kind, name, priority), value);
        }
        Series { values, described }
    }

    fn get(&self, kind: MetricKind, name: &str, priority: Option<u32>) -> &DebugValue {
        let priority = priority.map(|p| p.to_string()).unwrap_or_default();
        self.values
            .get(&(kind, name.to_owned(), priority.clone()))
            .unwrap_or_else(|| panic!("no {kind:?} {name} for priority {priority:?}"))
    }

    pub fn counter(&self, name: &str, priority: u32) -> u64 {
        match self.get(MetricKind::Counter, name, Some(priority)) {
            DebugValue::Counter(n) => *n,
            other => panic!("{name}: {other:?}"),
        }
    }

    pub fn gauge(&self, name: &str, priority: Option<u32>) -> f64 {
        match self.get(MetricKind::Gauge, name, priority) {
            DebugValue::Gauge(v) => v.into_inner(),
            other => panic!("{name}: {other:?}"),
        }
    }

    pub fn histogram(&self, name: &str, priority: u32) -> Vec<f64> {
        match self.get(MetricKind::Histogram, name, Some(priority)) {
            DebugValue::Histogram(v) => v.iter().map(|x| x.into_inner()).collect(),
            other => panic!("{name}: {other:?}"),
        }
    }

    /// How many series of this executor there are.
    pub fn len(&self) -> usize {
        self.values.len()
    }
}

pub const SUBMITTED: &str = "priority_executor_jobs_submitted_total";
pub const COMPLETED: &str = "priority_executor_jobs_completed_total";
pub const PANICKED: &str = "priority_executor_jobs_panicked_total";
pub const REJECTED: &str = "priority_executor_jobs_rejected_total";
pub const EXPIRED: &str = "priority_executor_jobs_expired_total";
pub const DISCARDED: &str = "priority_executor_jobs_discarded_total";
pub const RETRIED: &str = "priority_executor_jobs_retried_total";
pub const DEAD_LETTERED: &str = "priority_executor_jobs_dead_lettered_total";
pub const HANDED_BACK: &str = "priority_executor_jobs_handed_back_total";
pub const CANCELLED: &str = "priority_executor_jobs_cancelled_total";
pub const WAIT: &str = "priority_executor_job_wait_seconds";
pub const RUN: &str = "priority_executor_job_run_seconds";
pub const QUEUED: &str = "priority_executor_jobs_queued";
pub const PAUSED: &str = "priority_executor_lane_paused";
pub const RUNNING: &str = "priority_executor_jobs_running";
pub const LIVE: &str = "priority_executor_threads_live";
pub const IDLE: &str = "priority_executor_threads_idle";

/// Every per-lane counter.
pub const COUNTERS: [&str; 10] = [
    SUBMITTED,
    COMPLETED,
    PANICKED,
    REJECTED,
    EXPIRED,
    DISCARDED,
    RETRIED,
    DEAD_LETTERED,
    HANDED_BACK,
    CANCELLED,
];
