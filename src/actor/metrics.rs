//! A stage's counters, for accounting (README rule 18) and monitoring.

use crate::priority::{Capacity, Priority};

/// One mailbox lane's figures.
///
/// # Examples
///
/// See [`StageMetrics`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MailboxLaneMetrics {
    /// The lane's priority.
    pub priority: Priority,
    /// Its weight (used by weighted pickers only).
    pub weight: u32,
    /// Its capacity.
    pub capacity: Capacity,
    /// Entries queued now (letters, sent-back letters, `stop`, `kill`).
    pub queued: usize,
    /// Messages accepted into it by a send (send-backs excluded).
    pub accepted: u64,
    /// Entries dispatched from it (swept ones included).
    pub dispatched: u64,
}

/// A snapshot of a stage's counters. Relaxed loads: exact once the stage
/// is quiet (nothing queued or running).
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, Outbox, Stage};
///
/// struct Nop;
/// impl Actor for Nop {
///     type In = u8;
///     type Out = ();
///     fn perform(&mut self, _: u8, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
///         Ok(())
///     }
/// }
/// let stage = Stage::builder("nop", |_| Nop).spawn()?;
/// let addr = stage.addr();
/// for n in 0..10 {
///     addr.send(n).unwrap();
/// }
/// let m = stage.drain().metrics;
/// assert_eq!((m.offered, m.accepted, m.performed), (10, 10, 10));
/// assert!(m.is_balanced()); // offered = performed + faulted + dead-lettered + handed back
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StageMetrics {
    /// The stage's name.
    pub name: String,
    /// The stage's size: instances configured, less those whose `init`
    /// failed, as [`Stage::resize`](super::Stage::resize) last set it
    /// (rule 26 of `src/actor/README.md`). For a broker, the consumers
    /// registered.
    pub instances: usize,
    /// Sends: `accepted + handed_back`. A message refused, handed back
    /// and sent again counts each time it is offered; the messages that
    /// entered the stage are `accepted`.
    pub offered: u64,
    /// Messages accepted into a lane: each message once.
    pub accepted: u64,
    /// Messages refused at once and returned to the sender.
    pub handed_back: u64,
    /// Performs that succeeded.
    pub performed: u64,
    /// Messages whose last attempt failed (reported to the fault sink).
    pub faulted: u64,
    /// Accepted messages not performed (stop, kill, idle, strategies).
    pub dead_lettered: u64,
    /// Times a strategy sent a letter back (not new messages).
    pub sent_back: u64,
    /// Attempts retried under the retry policy.
    pub retried: u64,
    /// Entries queued now.
    pub queued: usize,
    /// Letters dispatched and not yet done.
    pub running: usize,
    /// Per lane, highest priority first.
    pub lanes: Vec<MailboxLaneMetrics>,
}

impl StageMetrics {
    /// `performed + faulted + dead_lettered + handed_back`.
    ///
    /// # Examples
    ///
    /// See [`StageMetrics`].
    pub fn settled(&self) -> u64 {
        self.performed + self.faulted + self.dead_lettered + self.handed_back
    }

    /// Is every send accounted for (`offered == settled()`, that is,
    /// every accepted message performed, faulted or dead-lettered)? True
    /// whenever the stage is quiet.
    ///
    /// # Examples
    ///
    /// See [`StageMetrics`].
    pub fn is_balanced(&self) -> bool {
        self.offered == self.settled()
    }
}
