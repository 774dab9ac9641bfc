//! Why the registry refused a message, or a name.

use crate::util::List;
use crate::{Message, Priority};
use std::error::Error;
use std::fmt;

/// A message the registry did not queue, handed back with the reason: an
/// unknown executor, sequence or priority, a full lane, or an executor shut
/// down.
///
/// Get the message back with [`into_inner`](SequenceError::into_inner).
///
/// # Examples
///
/// ```
/// use priority_executor::{Registry, Message, Priority, SendOptions, SequenceError};
///
/// let mut executors = Registry::from_toml_str(
///     "[executors.visa]\nlanes = [{ priority = 10 }, { priority = 1 }]\n",
/// )?;
/// executors.register_sequence("submit", |_m: Message| Ok::<(), std::io::Error>(()));
/// let message = Message::new().with_body("<visa/>");
/// let err = executors
///     .enqueue_sequence_with("visa", "submit", message, SendOptions::new().priority(Priority(5)))
///     .unwrap_err();
/// assert!(matches!(err, SequenceError::UnknownPriority { priority: Priority(5), .. }));
/// assert_eq!(err.to_string(), "executor \"visa\" has no lane for priority 5 (lanes: 10, 1)");
/// assert_eq!(err.into_inner().body(), b"<visa/>");
/// executors.shutdown();
/// # Ok::<(), priority_executor::ConfigError>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum SequenceError {
    /// No executor has this name.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message, SequenceError};
    ///
    /// let executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// let err = executors.enqueue_sequence("nope", "s", Message::new()).unwrap_err();
    /// assert!(matches!(err, SequenceError::UnknownExecutor { .. }));
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    UnknownExecutor {
        /// The name asked for.
        executor: String,
        /// The executors there are, sorted.
        known: Vec<String>,
        /// The message, unqueued.
        message: Message,
    },
    /// No sequence is registered under this name.
    UnknownSequence {
        /// The name asked for.
        sequence: String,
        /// The sequences there are, sorted.
        known: Vec<String>,
        /// The message, unqueued.
        message: Message,
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
        /// The message, unqueued.
        message: Message,
    },
    /// The lane was full: from
    /// [`enqueue_sequence_with`](crate::Registry::enqueue_sequence_with)
    /// with a wait that ran out, or
    /// a lane whose `when_full` policy is `"reject"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message, SendOptions, SequenceError};
    /// use std::sync::{mpsc, Mutex};
    /// use std::time::Duration;
    ///
    /// let mut executors = Registry::from_toml_str(
    ///     "[executors.e]\ncore_threads = 1\nmax_threads = 1\nlanes = [{ priority = 1, capacity = 1 }]\n",
    /// )?;
    /// let (started, worker_busy) = mpsc::channel();
    /// let (release, gate) = mpsc::channel::<()>();
    /// let (started, gate) = (Mutex::new(started), Mutex::new(gate));
    /// executors.register_sequence("hold", move |_m: Message| {
    ///     started.lock().unwrap().send(()).unwrap();
    ///     gate.lock().unwrap().recv().ok();
    ///     Ok::<(), std::io::Error>(())
    /// });
    /// let held = executors.enqueue_sequence("e", "hold", Message::new())?;
    /// worker_busy.recv()?; // the worker is busy, the lane empty
    /// let no_wait = SendOptions::new().wait_at_most(Duration::ZERO);
    /// let queued = executors.enqueue_sequence_with("e", "hold", Message::new(), no_wait)?; // fills it
    /// let err = executors.enqueue_sequence_with("e", "hold", Message::new(), no_wait).unwrap_err();
    /// assert!(matches!(err, SequenceError::Full { .. }));
    /// assert_eq!(err.to_string(), "executor \"e\": lane 1 is full");
    /// drop((release, held, queued)); // the gate opens
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    Full {
        /// The executor.
        executor: String,
        /// The full lane.
        priority: Priority,
        /// The message, unqueued.
        message: Message,
    },
    /// The executor is shutting down.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message, SequenceError};
    ///
    /// let mut executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// executors.register_sequence("s", |_m: Message| Ok::<(), std::io::Error>(()));
    /// let _pending = executors.get("e").expect("declared").shutdown_now();
    /// let err = executors.enqueue_sequence("e", "s", Message::new()).unwrap_err();
    /// assert!(matches!(err, SequenceError::ShutDown { .. }));
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    ShutDown {
        /// The executor.
        executor: String,
        /// The message, unqueued.
        message: Message,
    },
}

impl SequenceError {
    /// The message, as it was when refused (a before-enqueue hook may have
    /// changed it).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message, SequenceError};
    ///
    /// let executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// let message = Message::new().with_property("id", "7");
    /// let err = executors.enqueue_sequence("e", "missing", message).unwrap_err();
    /// assert!(matches!(err, SequenceError::UnknownSequence { .. }));
    /// assert_eq!(err.message().property("id"), Some("7"));
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn message(&self) -> &Message {
        match self {
            SequenceError::UnknownExecutor { message, .. }
            | SequenceError::UnknownSequence { message, .. }
            | SequenceError::UnknownPriority { message, .. }
            | SequenceError::Full { message, .. }
            | SequenceError::ShutDown { message, .. } => message,
        }
    }

    /// Takes the message back.
    ///
    /// # Examples
    ///
    /// See [`SequenceError`].
    pub fn into_inner(self) -> Message {
        match self {
            SequenceError::UnknownExecutor { message, .. }
            | SequenceError::UnknownSequence { message, .. }
            | SequenceError::UnknownPriority { message, .. }
            | SequenceError::Full { message, .. }
            | SequenceError::ShutDown { message, .. } => message,
        }
    }
}

impl fmt::Display for SequenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SequenceError::UnknownExecutor {
                executor, known, ..
            } => {
                write!(
                    f,
                    "no executor named {executor:?} (executors: {})",
                    List(known)
                )
            }
            SequenceError::UnknownSequence {
                sequence, known, ..
            } => {
                write!(
                    f,
                    "no sequence named {sequence:?} (sequences: {})",
                    List(known)
                )
            }
            SequenceError::UnknownPriority {
                executor,
                priority,
                lanes,
                ..
            } => {
                write!(
                    f,
                    "executor {executor:?} has no lane for priority {priority} (lanes: {})",
                    List(lanes)
                )
            }
            SequenceError::Full {
                executor, priority, ..
            } => {
                write!(f, "executor {executor:?}: lane {priority} is full")
            }
            SequenceError::ShutDown { executor, .. } => {
                write!(f, "executor {executor:?} is shut down")
            }
        }
    }
}

impl Error for SequenceError {}
