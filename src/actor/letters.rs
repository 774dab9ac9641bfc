//! What a stage hands out besides its outputs: dead letters (accepted
//! messages that were not performed) and faults (failures of `init`,
//! `perform` or `destroy`).

use super::info::LetterInfo;
use crate::priority::Priority;

/// Why an accepted message was not performed.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::DeadReason;
///
/// assert_eq!(DeadReason::Killed.as_str(), "killed");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeadReason {
    /// Queued at or below a graceful `stop` when it was dispatched.
    Stopped,
    /// Still queued when a `kill` was dispatched.
    Killed,
    /// Accepted as the stage closed for idleness.
    Idle,
    /// Every instance failed `init`.
    FailedInit,
    /// The TTL strategy found its TTL below the range.
    Expired,
    /// Sent back more often than the strategy's hop limit.
    HopLimit,
    /// Still queued when a broker ended for want of consumers.
    NoConsumers,
}

impl DeadReason {
    /// Why a letter still queued once a stage (or broker) ended with
    /// `reason` was not performed.
    pub(crate) fn after(reason: super::Reason) -> DeadReason {
        use super::Reason;
        match reason {
            Reason::Killed => DeadReason::Killed,
            Reason::Idle => DeadReason::Idle,
            Reason::FailedInit => DeadReason::FailedInit,
            Reason::NoConsumers => DeadReason::NoConsumers,
            Reason::Stopped | Reason::Drained | Reason::Unregistered | Reason::Removed => {
                DeadReason::Stopped
            }
        }
    }

    /// A short lower-case name.
    ///
    /// # Examples
    ///
    /// See [`DeadReason`].
    pub fn as_str(self) -> &'static str {
        match self {
            DeadReason::Stopped => "stopped",
            DeadReason::Killed => "killed",
            DeadReason::Idle => "idle",
            DeadReason::FailedInit => "failed init",
            DeadReason::Expired => "expired",
            DeadReason::HopLimit => "hop limit",
            DeadReason::NoConsumers => "no consumers",
        }
    }
}

/// An accepted message that was not performed, handed back.
///
/// # Examples
///
/// See `Stage::take_dead_letters`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeadLetter<M> {
    /// The message, unperformed.
    pub message: M,
    /// The priority it was queued at (the one it was last sent back at,
    /// never one a strategy would have re-queued it at).
    pub priority: Priority,
    /// Why it was not performed.
    pub reason: DeadReason,
    /// Its control information when it was turned away (its priority is
    /// [`priority`](DeadLetter::priority)).
    pub info: LetterInfo,
}

impl<M> DeadLetter<M> {
    /// The same dead letter without its message (what a
    /// [`StageMonitor`](super::StageMonitor) shows).
    pub(crate) fn without_message(&self) -> DeadLetter<()> {
        DeadLetter {
            message: (),
            priority: self.priority,
            reason: self.reason,
            info: self.info,
        }
    }
}

/// Where a fault happened.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::Phase;
///
/// assert_ne!(Phase::Init, Phase::Destroy);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Phase {
    /// `init` returned an error or panicked.
    Init,
    /// `perform` returned an error or panicked, on its last attempt.
    Perform,
    /// `destroy` panicked.
    Destroy,
}

/// A failure reported to the stage's fault sink. The instance lives on
/// (after a failed `init` it takes no message; see `Reason::FailedInit`).
///
/// # Examples
///
/// See `StageBuilder::on_fault`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fault<M> {
    /// The stage's name.
    pub stage: String,
    /// The instance (0-based).
    pub instance: usize,
    /// Where it failed.
    pub phase: Phase,
    /// The error, or `panicked: ...` with the panic message.
    pub error: String,
    /// Attempts made (0 outside `perform`).
    pub attempts: u32,
    /// The priority of the message, for a failed perform.
    pub priority: Option<Priority>,
    /// A copy of the message, when the stage keeps one (it does under a
    /// `RetryPolicy`, which needs `In: Clone`).
    pub message: Option<M>,
}

impl<M> Fault<M> {
    /// The same fault without its message (`Some(())` where a copy was
    /// kept): what a [`StageMonitor`](super::StageMonitor) shows.
    pub(crate) fn without_message(&self) -> Fault<()> {
        Fault {
            stage: self.stage.clone(),
            instance: self.instance,
            phase: self.phase,
            error: self.error.clone(),
            attempts: self.attempts,
            priority: self.priority,
            message: self.message.as_ref().map(|_| ()),
        }
    }
}
