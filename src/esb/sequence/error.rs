//! Why the registry refused a message, or a name.

use crate::util::List;
use crate::{Message, Priority};
use std::error::Error;
use std::fmt;

/// Why [`Executors::enqueue_sequence`](crate::Executors::enqueue_sequence)
/// refused a message; see [`SequenceError`].
///
/// # Examples
///
/// ```
/// use priority_executor::{Executors, Message, SequenceErrorKind};
///
/// let executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
/// let err = executors.enqueue_sequence("nope", "s", Message::new()).unwrap_err();
/// assert!(matches!(err.kind(), SequenceErrorKind::UnknownExecutor { .. }));
/// executors.shutdown();
/// # Ok::<(), priority_executor::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SequenceErrorKind {
    /// No executor has this name.
    UnknownExecutor {
        /// The name asked for.
        executor: String,
        /// The executors there are, sorted.
        known: Vec<String>,
    },
    /// No sequence is registered under this name.
    UnknownSequence {
        /// The name asked for.
        sequence: String,
        /// The sequences there are, sorted.
        known: Vec<String>,
    },
    /// The executor has no lane for the priority (given, or set by the
    /// before-enqueue hook).
    UnknownPriority {
        /// The executor.
        executor: String,
        /// The priority asked for.
        priority: Priority,
        /// The executor's lanes, highest first.
        lanes: Vec<Priority>,
    },
    /// The lane was full (only from
    /// [`try_enqueue_sequence`](crate::Executors::try_enqueue_sequence)).
    Full {
        /// The executor.
        executor: String,
        /// The full lane.
        priority: Priority,
    },
    /// The executor is shutting down.
    ShutDown {
        /// The executor.
        executor: String,
    },
}

impl fmt::Display for SequenceErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SequenceErrorKind::UnknownExecutor { executor, known } => {
                write!(
                    f,
                    "no executor named {executor:?} (executors: {})",
                    List(known)
                )
            }
            SequenceErrorKind::UnknownSequence { sequence, known } => {
                write!(
                    f,
                    "no sequence named {sequence:?} (sequences: {})",
                    List(known)
                )
            }
            SequenceErrorKind::UnknownPriority {
                executor,
                priority,
                lanes,
            } => {
                write!(
                    f,
                    "executor {executor:?} has no lane for priority {priority} (lanes: {})",
                    List(lanes)
                )
            }
            SequenceErrorKind::Full { executor, priority } => {
                write!(f, "executor {executor:?}: lane {priority} is full")
            }
            SequenceErrorKind::ShutDown { executor } => {
                write!(f, "executor {executor:?} is shut down")
            }
        }
    }
}

/// A message the registry did not queue, handed back with the reason: an
/// unknown executor, sequence or priority, a full lane, or an executor shut
/// down.
///
/// # Examples
///
/// ```
/// use priority_executor::{Executors, Message, Priority};
///
/// let mut executors = Executors::from_toml_str(
///     "[executors.visa]\nlanes = [{ priority = 10 }, { priority = 1 }]\n",
/// )?;
/// executors.register_sequence("submit", |_m: Message| Ok::<(), std::io::Error>(()));
/// let message = Message::builder().body("<visa/>").build();
/// let err = executors
///     .enqueue_sequence_with_priority("visa", "submit", Priority(5), message)
///     .unwrap_err();
/// assert_eq!(err.to_string(), "executor \"visa\" has no lane for priority 5 (lanes: 10, 1)");
/// assert_eq!(err.into_message().body(), b"<visa/>");
/// executors.shutdown();
/// # Ok::<(), priority_executor::ConfigError>(())
/// ```
#[derive(Debug)]
pub struct SequenceError {
    kind: SequenceErrorKind,
    message: Message,
}

impl SequenceError {
    pub(crate) fn new(kind: SequenceErrorKind, message: Message) -> Self {
        SequenceError { kind, message }
    }

    /// Why the message was refused.
    ///
    /// # Examples
    ///
    /// See [`SequenceErrorKind`].
    pub fn kind(&self) -> &SequenceErrorKind {
        &self.kind
    }

    /// The message, as it was when refused (a before-enqueue hook may have
    /// changed it).
    ///
    /// # Examples
    ///
    /// See [`SequenceError`].
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// Takes the message back.
    ///
    /// # Examples
    ///
    /// See [`SequenceError`].
    pub fn into_message(self) -> Message {
        self.message
    }
}

impl fmt::Display for SequenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.kind, f)
    }
}

impl Error for SequenceError {}

/// A name given to [`Executors`](crate::Executors) that names no executor
/// or no registered sequence.
///
/// # Examples
///
/// ```
/// use priority_executor::{Executors, Message, Priority};
///
/// let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
/// let err = executors
///     .set_before_enqueue("typo", |_m: &mut Message, _p: &mut Priority| {})
///     .unwrap_err();
/// assert_eq!(err.to_string(), "no executor named \"typo\" (executors: e)");
/// assert_eq!(err.name(), "typo");
/// executors.shutdown();
/// # Ok::<(), priority_executor::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    what: &'static str,
    name: String,
    known: Vec<String>,
}

impl UnknownName {
    pub(crate) fn new(what: &'static str, name: &str, known: Vec<String>) -> Self {
        UnknownName {
            what,
            name: name.to_owned(),
            known,
        }
    }

    /// The name that was not found.
    ///
    /// # Examples
    ///
    /// See [`UnknownName`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The names there are, sorted.
    ///
    /// # Examples
    ///
    /// ```
    /// # use priority_executor::{Executors, Message};
    /// # let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// let err = executors
    ///     .set_sequence_fault_handler("missing", |_m, _failure| {})
    ///     .unwrap_err();
    /// assert!(err.known().is_empty());
    /// # executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn known(&self) -> &[String] {
        &self.known
    }
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known = List(&self.known);
        write!(
            f,
            "no {} named {:?} ({}s: {known})",
            self.what, self.name, self.what
        )
    }
}

impl Error for UnknownName {}
