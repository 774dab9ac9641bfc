//! A pipeline as the dashboard holds it (feature `actor`): a stage
//! monitor per stage, never the stage itself, and the part of the
//! snapshot it makes.

use crate::sampler::{LaneCounts, Sampler, observe_shared};
use crate::stage_snapshot::{
    DeadLetterSnapshot, FaultSnapshot, MailboxLaneSnapshot, PipelineSnapshot, StageSnapshot,
};
use priority_executor::actor::{Phase, StageMonitor};
use std::sync::Mutex;
use std::time::Instant;

/// How many of a stage's latest faults and dead letters a snapshot shows.
pub(crate) const LATEST: usize = 5;

/// A pipeline as the dashboard holds it.
pub(crate) struct WatchedPipeline {
    pub(crate) name: String,
    /// First stage first.
    pub(crate) stages: Vec<StageMonitor>,
    /// Per stage: performed, accepted.
    sampler: Mutex<Sampler>,
}

impl WatchedPipeline {
    /// A pipeline of these stages, first stage first, under `name`.
    pub(crate) fn new(name: String, stages: Vec<StageMonitor>) -> WatchedPipeline {
        WatchedPipeline {
            name,
            stages,
            sampler: Mutex::default(),
        }
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
        let (secs, rates) = observe_shared(&self.sampler, now, counts);
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
                        sent_back: d.info.sent_back,
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
