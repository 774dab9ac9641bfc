//! The pipelines' part of the snapshot: each pipeline's stages in order,
//! with their mailbox lanes, counters, rates and the latest faults and
//! dead letters they keep. Every figure comes from a stage monitor
//! (`priority_executor::actor::StageMonitor`); the rates are differences
//! over the same sliding window as the executors' (`sampler.rs`).

use serde::Serialize;

/// One pipeline (a stage shown on its own is a pipeline of one).
///
/// # Examples
///
/// ```
/// # #[cfg(feature = "actor")] {
/// use priority_executor::actor::{Actor, ActorError, Outbox, Stage};
/// use priority_executor_dashboard::Dashboard;
///
/// struct Nop;
/// impl Actor for Nop {
///     type In = u8;
///     type Out = ();
///     fn perform(&mut self, _: u8, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
///         Ok(())
///     }
/// }
/// let stage = Stage::builder("orders", |_| Nop).instances(2).spawn().unwrap();
/// let snapshot = Dashboard::new().stage(&stage).snapshot();
/// let pipeline = &snapshot.pipelines[0];
/// assert_eq!(pipeline.name, "orders");
/// assert_eq!((pipeline.stages[0].name.as_str(), pipeline.stages[0].instances), ("orders", 2));
/// # }
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct PipelineSnapshot {
    /// The name it is shown and addressed by (`drain`).
    pub name: String,
    /// Has every stage ended?
    pub ended: bool,
    /// Its stages, first (the one it is sent to) first.
    pub stages: Vec<StageSnapshot>,
}

/// One stage of a pipeline.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct StageSnapshot {
    /// The stage's name.
    pub name: String,
    /// Instances configured.
    pub instances: usize,
    /// Why it ended (`drained`, `stopped`, `killed`, `idle`, …), `null`
    /// while it runs.
    pub finished: Option<String>,
    /// Entries queued now, every lane together.
    pub queued: usize,
    /// Letters dispatched and not yet done.
    pub running: usize,
    /// Sends offered: accepted plus handed back.
    pub offered: u64,
    /// Messages accepted into a lane.
    pub accepted: u64,
    /// Messages refused at once and returned to the sender.
    pub handed_back: u64,
    /// Performs that succeeded.
    pub performed: u64,
    /// Messages whose last attempt failed.
    pub faulted: u64,
    /// Accepted messages not performed.
    pub dead_lettered: u64,
    /// Times a strategy sent a letter back.
    pub sent_back: u64,
    /// Attempts retried.
    pub retried: u64,
    /// Successful performs per second over the window.
    pub performed_per_sec: f64,
    /// Messages accepted per second over the window.
    pub accepted_per_sec: f64,
    /// Its mailbox's lanes, highest priority first.
    pub lanes: Vec<MailboxLaneSnapshot>,
    /// The latest faults the stage keeps, oldest first (at most a few).
    /// Empty when the stage hands its faults to an `on_fault` callback, or
    /// once they were taken (`take_faults`): `faulted` still counts them.
    pub latest_faults: Vec<FaultSnapshot>,
    /// The latest dead letters the stage keeps, oldest first, kept and
    /// shown as `latest_faults` (`on_dead_letter`, `take_dead_letters`).
    pub latest_dead_letters: Vec<DeadLetterSnapshot>,
}

/// One lane of a stage's mailbox.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct MailboxLaneSnapshot {
    /// The lane's priority.
    pub priority: u32,
    /// Its weight (weighted pickers only).
    pub weight: u32,
    /// Its capacity, `null` when unbounded.
    pub capacity: Option<usize>,
    /// Entries queued in it now: its depth.
    pub queued: usize,
    /// Messages accepted into it.
    pub accepted: u64,
    /// Entries dispatched from it.
    pub dispatched: u64,
}

/// A fault a stage keeps, without its message.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct FaultSnapshot {
    /// The instance (from 0).
    pub instance: usize,
    /// Where it failed: `init`, `perform` or `destroy`.
    pub phase: String,
    /// The error, or `panicked: …` with the panic's message.
    pub error: String,
    /// Attempts made (0 outside `perform`).
    pub attempts: u32,
    /// The message's priority, for a failed perform.
    pub priority: Option<u32>,
}

/// A dead letter a stage keeps, without its message.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct DeadLetterSnapshot {
    /// The priority it was queued at.
    pub priority: u32,
    /// Why it was not performed: `stopped`, `killed`, `idle`, `expired`…
    pub reason: String,
    /// Times it had been sent back.
    pub sent_back: u32,
}
