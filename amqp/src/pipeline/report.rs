//! What a stage process did, once drained.

use crate::metrics::ConsumerMetrics;
use priority_executor::actor::Exit;
use std::fmt;

/// What a stage process did, once drained.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DrainReport {
    /// The stage's name.
    pub stage: String,
    /// The local stage's end (reason and counters).
    pub exit: Exit,
    /// The inbox consumer's counters (none for a source).
    pub inbox: Option<ConsumerMetrics>,
    /// The marker this process took: (index, count); a source's own is
    /// (0, 1).
    pub marker: (u32, u32),
    /// Markers sent downstream (0 unless this process held marker 0 and
    /// has an outbox).
    pub forwarded: u32,
    /// Failures of perform, init or publishing outputs, in order: every
    /// failed attempt (an inbox message retried fails once per attempt),
    /// each also counted in `exit.metrics.faulted`.
    pub faults: Vec<String>,
}

impl fmt::Display for DrainReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.exit.metrics;
        write!(
            f,
            "stage {} {}: performed {}, faulted {}, marker {}/{}",
            self.stage, self.exit.reason, m.performed, m.faulted, self.marker.0, self.marker.1
        )?;
        if let Some(i) = &self.inbox {
            write!(
                f,
                ", inbox acked {} dead-lettered {} requeued {}",
                i.acked, i.dead_lettered, i.requeued
            )?;
        }
        if self.forwarded > 0 {
            write!(f, ", {} markers sent downstream", self.forwarded)?;
        }
        Ok(())
    }
}
