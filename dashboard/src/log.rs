//! The action log: every action asked for, granted or refused, with who
//! asked, from where and when. The latest are kept for the page; each is
//! also handed to the application's hook (by default a line on stderr).

use serde::Serialize;
use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

/// How many actions the log keeps for the page.
pub(crate) const KEPT: usize = 50;

/// One action asked for through the dashboard.
///
/// # Examples
///
/// ```
/// use priority_executor_dashboard::{Actions, Dashboard};
/// use std::sync::{Arc, Mutex};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// let dashboard = Dashboard::new()
///     .actions(Actions::with_token("ops", "s3cret"))
///     .on_action(move |record| log.lock().unwrap().push(record.to_string()));
/// # drop(dashboard);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ActionRecord {
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The name of the token that authorised it, or `anonymous`.
    pub who: String,
    /// The peer's address, when the server knows it.
    pub from: Option<String>,
    /// `pause`, `resume` or `drain`.
    pub action: String,
    /// The executor it was aimed at; empty for an action on a pipeline
    /// (`drain`). A name that is not UTF-8 once decoded is kept as sent
    /// (percent-encoded).
    pub executor: String,
    /// The lane's priority; 0 for an action on a pipeline, and for a path
    /// whose priority is not a number from 0 to `u32::MAX` (refused).
    pub priority: u32,
    /// The pipeline it was aimed at (`drain`), kept as the executor's name
    /// is; `null` for a lane's action.
    pub pipeline: Option<String>,
    /// `ok`, or why it was refused.
    pub outcome: String,
}

impl std::fmt::Display for ActionRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.pipeline {
            Some(pipeline) => write!(
                f,
                "dashboard action at {} ms: {} pipeline {:?} by {}",
                self.at_ms, self.action, pipeline, self.who
            )?,
            None => write!(
                f,
                "dashboard action at {} ms: {} lane {} of executor {:?} by {}",
                self.at_ms, self.action, self.priority, self.executor, self.who
            )?,
        }
        if let Some(from) = &self.from {
            write!(f, " from {from}")?;
        }
        write!(f, ": {}", self.outcome)
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The latest actions, oldest first.
#[derive(Default)]
pub(crate) struct ActionLog {
    records: VecDeque<ActionRecord>,
}

impl ActionLog {
    pub(crate) fn push(&mut self, record: ActionRecord) {
        if self.records.len() == KEPT {
            self.records.pop_front();
        }
        self.records.push_back(record);
    }

    pub(crate) fn latest(&self) -> Vec<ActionRecord> {
        self.records.iter().cloned().collect()
    }
}
