//! What one queue's consumer is given: its settings, executor, handler and
//! callbacks, shared by its sessions.

use crate::config::ConsumerConfig;
use crate::delivery::{Failure, Incoming};
use crate::drain::Marker;
use crate::metrics::{Counters, Event};
use priority_executor::{Executor, Priority};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub(crate) type HandlerFn = Arc<dyn Fn(&Incoming) -> Result<(), Failure> + Send + Sync>;
pub(crate) type EventFn = Arc<dyn Fn(&Event) + Send + Sync>;
/// Told the drain marker once everything before it is settled, or why the
/// consumer ended without one.
pub(crate) type DrainFn = Arc<dyn Fn(Result<Marker, String>) + Send + Sync>;

/// Everything one queue's consumer needs, shared by its sessions.
pub(crate) struct Ctx {
    pub(crate) uri: String,
    pub(crate) queue: Arc<str>,
    pub(crate) unmapped: Priority,
    pub(crate) config: ConsumerConfig,
    pub(crate) executor: Executor,
    pub(crate) handler: HandlerFn,
    pub(crate) counters: Arc<Counters>,
    pub(crate) events: Option<EventFn>,
    pub(crate) backoff: (Duration, Duration),
    pub(crate) name: String,
    /// Set for a stage's inbox: drain markers are recognised, and the
    /// first one ends the consumer once everything before it is settled.
    pub(crate) drain: Option<DrainFn>,
    /// When the consumer was made: a drain marker sent before it is not
    /// for it.
    pub(crate) started: SystemTime,
}

impl Ctx {
    /// Tells the callback; a panicking callback is ignored, so it cannot
    /// take the consumer down.
    pub(super) fn event(&self, event: Event) {
        if let Some(f) = &self.events {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&event)));
        }
    }
}
