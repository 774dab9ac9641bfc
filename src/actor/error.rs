//! Errors of the actor layer. A message the stage did not take is always
//! in the error, typed: it is handed back, never dropped.

use crate::error::InvalidSetting;
use crate::lane::picker::Picker;
use crate::priority::Priority;
use crate::util::List;
use std::fmt;

/// A message the stage refused, handed back with the reason.
///
/// `Debug` and `Display` do not need `M: Debug`; get the message back with
/// [`into_inner`](SendError::into_inner), and ask the reason with
/// [`is_full`](SendError::is_full) and
/// [`is_shut_down`](SendError::is_shut_down) as with a channel's
/// `TrySendError`.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, Outbox, SendError, Stage};
///
/// struct Echo;
/// impl Actor for Echo {
///     type In = String;
///     type Out = ();
///     fn perform(&mut self, _: String, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
///         Ok(())
///     }
/// }
///
/// let stage = Stage::builder("echo", |_| Echo).spawn()?;
/// let addr = stage.addr();
/// stage.drain();
/// let err = addr.send("late".to_owned()).unwrap_err();
/// assert!(matches!(err, SendError::ShutDown { .. }));
/// assert_eq!(err.to_string(), "stage \"echo\" is closed: message handed back");
/// assert_eq!(err.into_inner(), "late");
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
#[non_exhaustive]
pub enum SendError<M> {
    /// The stage no longer accepts messages (stopped, killed, draining,
    /// idle or gone).
    ShutDown {
        /// The stage's name.
        stage: String,
        /// The message, unperformed.
        message: M,
    },
    /// The message's lane was full (`send_with` and no wait, or its
    /// [`wait_at_most`](crate::SendOptions::wait_at_most) ran out of
    /// time).
    Full {
        /// The lane's priority.
        priority: Priority,
        /// The lane's capacity.
        capacity: usize,
        /// The message, unperformed.
        message: M,
    },
    /// No lane takes this priority (only under
    /// [`Unlisted::Refuse`](super::Unlisted::Refuse)).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{
    ///     Actor, ActorError, MailboxConfig, Outbox, SendError, Stage, Unlisted,
    /// };
    /// use priority_executor::{Capacity, Priority, SendOptions};
    ///
    /// struct Sink;
    /// impl Actor for Sink {
    ///     type In = u32;
    ///     type Out = ();
    ///     fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
    ///         Ok(())
    ///     }
    /// }
    /// let stage = Stage::builder("sink", |_| Sink)
    ///     .mailbox(
    ///         MailboxConfig::new()
    ///             .lane(Priority::HIGH, Capacity::Unbounded)
    ///             .lane(Priority::MEDIUM, Capacity::Unbounded)
    ///             .unlisted(Unlisted::Refuse),
    ///     )
    ///     .spawn()?;
    /// let err = stage.addr().send_with(7, SendOptions::new().priority(Priority(5))).unwrap_err();
    /// assert!(matches!(err, SendError::UnknownPriority { .. }));
    /// assert_eq!(err.to_string(), "no lane for priority 5 (lanes: 300, 200): message handed back");
    /// assert_eq!(err.into_inner(), 7);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    UnknownPriority {
        /// The priority the message was given.
        priority: Priority,
        /// The lanes that exist, highest first.
        lanes: Vec<Priority>,
        /// The message, unperformed.
        message: M,
    },
}

impl<M> SendError<M> {
    /// The message, unperformed.
    ///
    /// # Examples
    ///
    /// See [`SendError`].
    pub fn into_inner(self) -> M {
        match self {
            SendError::ShutDown { message, .. }
            | SendError::Full { message, .. }
            | SendError::UnknownPriority { message, .. } => message,
        }
    }

    /// Was the message refused because its lane was full: is this
    /// [`Full`](SendError::Full)? As crossbeam-channel's
    /// `TrySendError::is_full`. `false` for the other variants.
    ///
    /// # Examples
    ///
    /// See [`Addr::try_send`](super::Addr::try_send).
    pub fn is_full(&self) -> bool {
        matches!(self, SendError::Full { .. })
    }

    /// Was the message refused because the stage accepts nothing any more:
    /// is this [`ShutDown`](SendError::ShutDown)? As crossbeam-channel's
    /// `TrySendError::is_disconnected`. `false` for the other variants:
    /// [`UnknownPriority`](SendError::UnknownPriority) is neither full nor
    /// shut down, and answers `false` to [`is_full`](SendError::is_full)
    /// too.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Stage};
    ///
    /// struct Nop;
    /// impl Actor for Nop {
    ///     type In = u32;
    ///     type Out = ();
    ///     fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
    ///         Ok(())
    ///     }
    /// }
    /// let stage = Stage::builder("nop", |_| Nop).spawn()?;
    /// let addr = stage.addr();
    /// stage.drain();
    /// let err = addr.try_send(7).unwrap_err();
    /// assert!(err.is_shut_down() && !err.is_full());
    /// assert_eq!(err.into_inner(), 7);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn is_shut_down(&self) -> bool {
        matches!(self, SendError::ShutDown { .. })
    }

    fn kind(&self) -> &'static str {
        match self {
            SendError::ShutDown { .. } => "ShutDown",
            SendError::Full { .. } => "Full",
            SendError::UnknownPriority { .. } => "UnknownPriority",
        }
    }
}

impl<M> fmt::Debug for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct(self.kind());
        match self {
            SendError::ShutDown { stage, .. } => d.field("stage", stage),
            SendError::Full {
                priority, capacity, ..
            } => d.field("priority", priority).field("capacity", capacity),
            SendError::UnknownPriority {
                priority, lanes, ..
            } => d.field("priority", priority).field("lanes", lanes),
        };
        d.finish_non_exhaustive()
    }
}

impl<M> fmt::Display for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::ShutDown { stage, .. } => {
                write!(f, "stage {stage:?} is closed: message handed back")
            }
            SendError::Full {
                priority, capacity, ..
            } => write!(
                f,
                "lane {priority} is full (capacity {capacity}): message handed back"
            ),
            SendError::UnknownPriority {
                priority, lanes, ..
            } => write!(
                f,
                "no lane for priority {priority} (lanes: {}): message handed back",
                List(lanes)
            ),
        }
    }
}

impl<M> std::error::Error for SendError<M> {}

/// A `stop` or `kill` sent to a stage that no longer accepts messages.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::StageShutDown;
///
/// let err = StageShutDown { stage: "index".into() };
/// assert_eq!(err.to_string(), "stage \"index\" is shut down");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("stage {stage:?} is shut down")]
pub struct StageShutDown {
    /// The stage's name.
    pub stage: String,
}

/// Why [`Stage::resize`](super::Stage::resize) changed nothing.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, Outbox, ResizeError, Stage};
///
/// struct Nop;
/// impl Actor for Nop {
///     type In = ();
///     type Out = ();
///     fn perform(&mut self, _: (), _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
///         Ok(())
///     }
/// }
/// let stage = Stage::builder("nop", |_| Nop).spawn()?;
/// assert!(matches!(stage.resize(0), Err(ResizeError::Invalid(_))));
/// assert_eq!(
///     stage.resize(5000).unwrap_err().to_string(),
///     "instances = 5000 is not allowed (expected 1 to 1024)"
/// );
/// stage.addr().stop().unwrap();
/// while stage.finished().is_none() {
///     std::thread::yield_now();
/// }
/// assert_eq!(
///     stage.resize(2).unwrap_err().to_string(),
///     "stage \"nop\" is ending: its instances no longer change"
/// );
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResizeError {
    /// A size outside 1 to [`MAX_INSTANCES`](super::MAX_INSTANCES): a
    /// stage keeps at least one instance.
    #[error(transparent)]
    Invalid(#[from] InvalidSetting),
    /// The stage has ended, or is ending: its door is closed (`stop`,
    /// `kill`, a drain, idleness, or no instance survived `init`).
    #[error("stage {stage:?} is ending: its instances no longer change")]
    Ending {
        /// The stage's name.
        stage: String,
    },
    /// Called by the stage's factory, or by the `init` of an instance a
    /// resize of the same stage waits for (or its fault sink for that
    /// `init`): that resize would wait for this one, which waits for it.
    #[error(
        "stage {stage:?} is being resized by the caller: a resize from there would wait for itself"
    )]
    Reentrant {
        /// The stage's name.
        stage: String,
    },
}

/// A stage or pipeline setting that makes `spawn` fail.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, Outbox, SpawnError, Stage};
///
/// struct Nop;
/// impl Actor for Nop {
///     type In = ();
///     type Out = ();
///     fn perform(&mut self, _: (), _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
///         Ok(())
///     }
/// }
/// let err = Stage::builder("nop", |_| Nop).instances(0).spawn().unwrap_err();
/// assert!(matches!(&err, SpawnError::Invalid(invalid) if invalid.setting == "instances"));
/// assert_eq!(err.to_string(), "instances = 0 is not allowed (expected 1 to 1024)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// A setting has a value it does not allow: a number of instances
    /// outside 1 to [`MAX_INSTANCES`](super::MAX_INSTANCES), a lane's
    /// weight of 0, a capacity of 0 or above
    /// [`MAX_CAPACITY`](super::MAX_CAPACITY), a strategy's step of 0, a
    /// broker's batch, cycle or `end_after` out of range, a resizer's
    /// bounds; checked before anything is allocated.
    #[error(transparent)]
    Invalid(#[from] InvalidSetting),
    /// Two lanes share a priority.
    #[error("lane {priority} is declared twice: each priority has one lane")]
    DuplicateLane {
        /// The repeated priority.
        priority: Priority,
    },
    /// More lanes declared than a mailbox holds.
    #[error("{lanes} lanes declared; a mailbox holds at most {limit}")]
    TooManyLanes {
        /// Lanes declared.
        lanes: usize,
        /// The limit.
        limit: usize,
    },
    /// A weighted picker with lanes created on first use, or no lanes.
    #[error(
        "picker {picker} weighs declared lanes: declare them and set unlisted(Unlisted::Nearest) or unlisted(Unlisted::Refuse)"
    )]
    WeightedNeedsFixedLanes {
        /// The picker asked for.
        picker: Picker,
    },
    /// `Unlisted::Nearest` or `Unlisted::Refuse` with no lane declared:
    /// no message could be taken.
    #[error("unlisted({unlisted:?}) takes only declared lanes, and none is declared")]
    NoLanes {
        /// The rule asked for.
        unlisted: super::Unlisted,
    },
    /// The weights add up to more than the picker's cycle holds.
    #[error("lane weights add up to {sum}, more than the limit of {limit}")]
    WeightsTooLarge {
        /// The sum.
        sum: u64,
        /// The limit.
        limit: u64,
    },
    /// The instance factory panicked making instance `instance`. The
    /// instances made before it were started, initialised and destroyed
    /// (`Reason::FailedInit`); none took a letter.
    #[error("the factory panicked making instance {instance}: {message}")]
    FactoryPanicked {
        /// The instance the factory was making (from 0).
        instance: usize,
        /// The panic's message.
        message: String,
    },
    /// The stage's name cannot name a thread (it holds a NUL byte).
    #[error("name {name:?} contains a NUL byte, which a thread name cannot hold")]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// The operating system refused to start the stage's instance threads
    /// (a limit on threads or memory): the executor behind the stage
    /// could not be built. No instance was made.
    #[error("the stage's instance threads cannot start: {0}")]
    Threads(crate::BuildError),
}
