//! A failed sequence run, as its handle and its fault handler see it.

use crate::Priority;
use std::error::Error;
use std::fmt;
use std::sync::Arc;

use super::BoxError;

/// A sequence run that failed: which sequence, on which executor, at which
/// priority, and the error it returned (or the panic's message).
///
/// # Examples
///
/// ```
/// use priority_executor::{Message, Priority, Registry};
/// use std::io;
///
/// let mut executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
/// executors.register_sequence("reject", |_m: Message| {
///     Err(io::Error::new(io::ErrorKind::InvalidData, "bad visa form"))
/// });
/// let failure = executors
///     .enqueue_sequence("e", "reject", Message::new())?
///     .join()
///     .expect("no panic")
///     .unwrap_err();
/// assert_eq!(&*failure.sequence, "reject");
/// assert_eq!(&*failure.executor, "e");
/// assert_eq!(failure.priority, Priority(1));
/// assert_eq!(failure.error.to_string(), "bad visa form");
/// assert_eq!(
///     failure.to_string(),
///     "sequence \"reject\" on executor \"e\" (priority 1) failed: bad visa form"
/// );
///
/// // The error downcasts to the sequence's own type.
/// let failure = executors
///     .enqueue_sequence("e", "reject", Message::new())?
///     .join()
///     .expect("no panic")
///     .unwrap_err();
/// assert!(failure.error.downcast::<io::Error>().is_ok());
/// executors.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct SequenceFailure {
    /// The executor the sequence ran on.
    pub executor: Arc<str>,
    /// The sequence that failed.
    pub sequence: Arc<str>,
    /// The priority the message ran at.
    pub priority: Priority,
    /// The error the sequence returned; for a panic, an error whose
    /// `Display` is the panic's message. Being a `Box<dyn Error>`, it
    /// downcasts to the sequence's own error type.
    pub error: Box<dyn Error + Send + Sync + 'static>,
}

impl SequenceFailure {
    pub(crate) fn new(
        executor: Arc<str>,
        sequence: Arc<str>,
        priority: Priority,
        error: BoxError,
    ) -> Self {
        SequenceFailure {
            executor,
            sequence,
            priority,
            error,
        }
    }
}

impl fmt::Display for SequenceFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sequence {:?} on executor {:?} (priority {}) failed: {}",
            &*self.sequence, &*self.executor, self.priority, self.error
        )
    }
}

impl Error for SequenceFailure {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.error)
    }
}

/// What a fault handler is told about a panic.
#[derive(Debug)]
pub(crate) struct Panicked(pub(crate) String);

impl fmt::Display for Panicked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "panicked: {}", self.0)
    }
}

impl Error for Panicked {}
