//! Pipelines and stages on the dashboard (feature `actor`): what it holds
//! of each (a stage monitor per stage, never the stage itself), the part
//! of the snapshot they make, and the drain an action begins.

use crate::board::{Dashboard, unique_name};
use crate::sampler::{LaneCounts, Sampler};
use crate::stage_snapshot::{
    DeadLetterSnapshot, FaultSnapshot, MailboxLaneSnapshot, PipelineSnapshot, StageSnapshot,
};
use axum::http::StatusCode;
use priority_executor::actor::{Actor, Phase, Pipeline, Stage, StageMonitor};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// How many of a stage's latest faults and dead letters a snapshot shows.
pub(crate) const LATEST: usize = 5;

/// A pipeline as the dashboard holds it.
pub(crate) struct WatchedPipeline {
    pub(crate) name: String,
    /// First stage first.
    stages: Vec<StageMonitor>,
    /// Per stage: performed, accepted.
    sampler: Mutex<Sampler>,
}

impl Dashboard {
    /// Shows a stage, under its own name, as a pipeline of one. The
    /// dashboard keeps a [`StageMonitor`], not the stage: the stage's owner
    /// still drains, joins or drops it; the dashboard then shows how it
    /// ended. A drain action drains it.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    ///
    /// # Examples
    ///
    /// See [`PipelineSnapshot`](crate::PipelineSnapshot).
    pub fn stage<A: Actor>(self, stage: &Stage<A>) -> Dashboard {
        let name = stage.name().to_owned();
        self.monitors_named(name, vec![stage.monitor()])
    }

    /// Shows a pipeline, named after its first stage; its stages in
    /// order. As for [`stage`](Dashboard::stage), the dashboard keeps
    /// monitors, not the pipeline; a drain action drains the pipeline
    /// from its first stage.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Stage};
    /// use priority_executor_dashboard::Dashboard;
    ///
    /// struct Pass;
    /// impl Actor for Pass {
    ///     type In = u8;
    ///     type Out = u8;
    ///     fn perform(&mut self, n: u8, out: &mut Outbox<'_, u8>) -> Result<(), ActorError> {
    ///         let _ = out.send(n);
    ///         Ok(())
    ///     }
    /// }
    /// let pipeline = Pipeline::builder(Stage::builder("parse", |_| Pass))
    ///     .then(Stage::builder("store", |_| Pass))
    ///     .spawn()
    ///     .unwrap();
    /// let dashboard = Dashboard::new().pipeline(&pipeline);
    /// let stages: Vec<String> = dashboard.snapshot().pipelines[0]
    ///     .stages
    ///     .iter()
    ///     .map(|s| s.name.clone())
    ///     .collect();
    /// assert_eq!(stages, ["parse", "store"]);
    /// ```
    pub fn pipeline<I>(self, pipeline: &Pipeline<I>) -> Dashboard {
        let monitors = pipeline.monitors();
        let name = monitors
            .first()
            .map_or_else(String::new, |m| m.name().to_owned());
        self.monitors_named(name, monitors)
    }

    /// Shows a pipeline under `name`. Names are how the drain action
    /// addresses a pipeline; a name already taken by another pipeline gets
    /// `#2`, `#3`… appended.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    pub fn pipeline_named<I>(self, name: impl Into<String>, pipeline: &Pipeline<I>) -> Dashboard {
        self.monitors_named(name.into(), pipeline.monitors())
    }

    fn monitors_named(self, wanted: String, stages: Vec<StageMonitor>) -> Dashboard {
        self.with(move |inner| {
            let name = unique_name(&wanted, |n| inner.pipelines.iter().any(|p| p.name == n));
            inner.pipelines.push(WatchedPipeline {
                name,
                stages,
                sampler: Mutex::default(),
            });
        })
    }

    /// Begins the drain of the pipeline named `name`: the answer to a
    /// granted drain action.
    pub(crate) fn drain_pipeline(&self, name: &str) -> (StatusCode, String) {
        let Some(pipeline) = self.inner.pipelines.iter().find(|p| p.name == name) else {
            return (
                StatusCode::NOT_FOUND,
                "refused: no such pipeline".to_owned(),
            );
        };
        let Some(first) = pipeline.stages.first() else {
            return (StatusCode::CONFLICT, "refused: no stage".to_owned());
        };
        if let Some(reason) = first.finished() {
            return (
                StatusCode::CONFLICT,
                format!("refused: the pipeline has ended ({reason})"),
            );
        }
        first.drain();
        (StatusCode::OK, "ok".to_owned())
    }
}

impl WatchedPipeline {
    /// The pipeline's snapshot, and the span its rates cover in seconds.
    pub(crate) fn snapshot(&self, now: Instant) -> (PipelineSnapshot, f64) {
        let metrics: Vec<_> = self.stages.iter().map(StageMonitor::metrics).collect();
        let counts: Vec<LaneCounts> = metrics
            .iter()
            .map(|m| LaneCounts::without_waits(m.performed, m.accepted))
            .collect();
        let (secs, rates) = self
            .sampler
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .observe(now, counts);
        let stages: Vec<StageSnapshot> = self
            .stages
            .iter()
            .zip(metrics)
            .zip(rates)
            .map(|((monitor, m), rate)| StageSnapshot {
                finished: monitor.finished().map(|r| r.to_string()),
                instances: m.instances,
                queued: m.queued,
                running: m.running,
                offered: m.offered,
                accepted: m.accepted,
                handed_back: m.handed_back,
                performed: m.performed,
                faulted: m.faulted,
                dead_lettered: m.dead_lettered,
                sent_back: m.sent_back,
                retried: m.retried,
                // The sampler's first count is `performed`, its second
                // `accepted`.
                performed_per_sec: rate.dispatched_per_sec,
                accepted_per_sec: rate.completed_per_sec,
                lanes: m
                    .lanes
                    .iter()
                    .map(|l| MailboxLaneSnapshot {
                        priority: l.priority.0,
                        weight: l.weight,
                        capacity: l.capacity.limit(),
                        queued: l.queued,
                        accepted: l.accepted,
                        dispatched: l.dispatched,
                    })
                    .collect(),
                latest_faults: monitor
                    .latest_faults(LATEST)
                    .into_iter()
                    .map(|f| FaultSnapshot {
                        instance: f.instance,
                        phase: phase(f.phase).to_owned(),
                        error: f.error,
                        attempts: f.attempts,
                        priority: f.priority.map(|p| p.0),
                    })
                    .collect(),
                latest_dead_letters: monitor
                    .latest_dead_letters(LATEST)
                    .into_iter()
                    .map(|d| DeadLetterSnapshot {
                        priority: d.priority.0,
                        reason: d.reason.as_str().to_owned(),
                        sent_back: d.info.sent_back(),
                    })
                    .collect(),
                name: m.name,
            })
            .collect();
        let snapshot = PipelineSnapshot {
            name: self.name.clone(),
            ended: stages.iter().all(|s| s.finished.is_some()),
            stages,
        };
        (snapshot, secs)
    }
}

fn phase(phase: Phase) -> &'static str {
    match phase {
        Phase::Init => "init",
        Phase::Perform => "perform",
        Phase::Destroy => "destroy",
        _ => "other",
    }
}
