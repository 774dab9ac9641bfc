//! A request the executor refused, handed back whole.

use crate::Outcome;
use bytes::Bytes;
use http::Request;
use priority_executor::Priority;
use std::sync::Arc;

pub(crate) type RefusedFn = Arc<dyn Fn(Refused) + Send + Sync>;

/// A request the executor did not take, handed to
/// [`PriorityLayer::on_refused`](crate::PriorityLayer::on_refused) after
/// the client was answered: nothing of it ran.
#[derive(Debug)]
#[non_exhaustive]
pub struct Refused {
    /// The request as the handler would have received it, body included.
    pub request: Request<Bytes>,
    /// The priority it was given (`Priority(0)` if a reload had removed
    /// the registry's executor before one could be given).
    pub priority: Priority,
    /// Why: [`Outcome::Shed`] (lane full), [`Outcome::ShutDown`] or
    /// [`Outcome::Misrouted`] (no lane of that priority).
    pub outcome: Outcome,
}
