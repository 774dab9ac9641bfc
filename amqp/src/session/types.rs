//! The session's own types: how it ended, what one attempt of a job came
//! to, the messages of its loop, a delivery in hand and how one is settled.

use crate::delivery::{Failure, Received};
use lapin::{Acker, BasicProperties};
use priority_executor::JobError;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a session ended.
pub(super) enum End {
    Stopped,
    ExecutorShutDown,
    /// The handler no longer takes deliveries: those it was given went
    /// back to the queue.
    Refused(String),
    Lost {
        error: String,
        in_hand: usize,
    },
}

/// What one attempt of a job came to, as seen by its closure.
pub(super) enum Attempt {
    Done,
    Failed(Failure),
    Expired(Duration),
    /// The session that delivered it is gone: not run (the broker delivers
    /// the message again).
    Stale,
}

/// Messages to the session loop.
pub(super) enum Msg {
    Finished {
        tag: u64,
        result: Result<Attempt, JobError>,
    },
    RetryDue {
        tag: u64,
    },
    /// The broker confirmed (or not) the copy sent to the retry queue.
    Retried {
        tag: u64,
        delay: Duration,
        result: Result<(), String>,
    },
    DeadLettered {
        tag: u64,
        result: Result<(), String>,
    },
    /// A delivery whose dead letter failed is given back to the broker now.
    RequeueDue {
        tag: u64,
    },
}

/// A delivery in hand: not yet acked, nacked or dead-lettered.
pub(super) struct InHand {
    pub(super) received: Arc<Received>,
    pub(super) properties: BasicProperties,
    pub(super) acker: Acker,
    pub(super) attempts: u32,
    /// When it arrived, or when its retry fell due.
    pub(super) since: Instant,
    pub(super) arrived: Instant,
}

/// How a delivery in hand is settled with the broker.
pub(super) enum Settle {
    Ack,
    DeadLettered,
    /// Its copy waits in a retry queue.
    Retried,
    Reject,
    Requeue,
}
