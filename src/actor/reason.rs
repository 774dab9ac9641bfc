//! Why a stage ends ([`Reason`]): at the bottom of the actor layer, read
//! by the dispatch, the instances and the handles alike.

use std::fmt;

/// Why a stage's instances are destroyed.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::Reason;
///
/// assert_eq!(Reason::Drained.to_string(), "drained");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// A graceful `stop` was dispatched (Akka's `PoisonPill`).
    Stopped,
    /// A `kill` was dispatched (Akka's `Kill`).
    Killed,
    /// The drain marker reached the stage and everything before it ran
    /// (Kabuki's shutdown message).
    Drained,
    /// Nothing arrived for the stage's idle period.
    Idle,
    /// `init` failed: this instance's own, or every instance's (then the
    /// whole stage ends with this reason); or the stage's `spawn` failed
    /// after this instance was started (the factory panicked for a later
    /// instance, [`SpawnError::FactoryPanicked`](super::SpawnError::FactoryPanicked)).
    FailedInit,
    /// A [`Broker`](super::Broker) had no consumer registered for its
    /// number of cycles, or was asked to end while it had none.
    NoConsumers,
    /// A consumer was unregistered from its [`Broker`](super::Broker).
    Unregistered,
    /// This instance was removed by [`Stage::resize`](super::Stage::resize);
    /// the stage serves on with the others. Only an instance's `destroy`
    /// sees it: a stage never ends with it.
    Removed,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::Stopped => "stopped",
            Reason::Killed => "killed",
            Reason::Drained => "drained",
            Reason::Idle => "idle",
            Reason::FailedInit => "failed init",
            Reason::NoConsumers => "no consumers",
            Reason::Unregistered => "unregistered",
            Reason::Removed => "removed",
        })
    }
}
