//! Named sequences: the code a message runs through once its executor
//! picks it, with Synapse's fault handler and per-sequence counters.
//!
//! A sequence is `Fn(Message) -> Result<(), E>`. When it fails (returns an
//! error or panics) its fault handler, if any, receives a copy of the
//! message and a [`SequenceFailure`]. The copy is taken before the sequence
//! runs and only when a fault handler applies, so sequences without one pay
//! nothing for it.

use crate::util::List;
use crate::{JobHandle, Message, Priority};
use std::error::Error;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

pub(crate) type BoxError = Box<dyn Error + Send + Sync + 'static>;
pub(crate) type SequenceFn = Arc<dyn Fn(Message) -> Result<(), BoxError> + Send + Sync>;
pub(crate) type FaultFn = Arc<dyn Fn(Message, &SequenceFailure) + Send + Sync>;

/// The handle of a queued sequence run: `join` gives `Ok(Ok(()))` when the
/// sequence succeeded, `Ok(Err(failure))` when it returned an error, and
/// `Err(JobError::Panicked { .. })` when it panicked.
///
/// # Examples
///
/// ```
/// use priority_executor::{Executors, Message, SequenceHandle};
///
/// let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
/// executors.register_sequence("noop", |_m: Message| Ok::<(), std::io::Error>(()));
/// let handle: SequenceHandle = executors.enqueue_sequence("e", "noop", Message::new())?;
/// assert!(handle.join().expect("no panic").is_ok());
/// executors.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type SequenceHandle = JobHandle<Result<(), SequenceFailure>>;

/// A sequence run that failed: which sequence, on which executor, at which
/// priority, and the error it returned (or the panic's message).
///
/// # Examples
///
/// ```
/// use priority_executor::{Executors, Message};
/// use std::io;
///
/// let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
/// executors.register_sequence("reject", |_m: Message| {
///     Err(io::Error::new(io::ErrorKind::InvalidData, "bad visa form"))
/// });
/// let failure = executors
///     .enqueue_sequence("e", "reject", Message::new())?
///     .join()
///     .expect("no panic")
///     .unwrap_err();
/// assert_eq!(failure.sequence(), "reject");
/// assert_eq!(failure.executor(), "e");
/// assert_eq!(failure.error().to_string(), "bad visa form");
/// assert_eq!(
///     failure.to_string(),
///     "sequence \"reject\" on executor \"e\" (priority 1) failed: bad visa form"
/// );
/// executors.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SequenceFailure {
    executor: Arc<str>,
    sequence: Arc<str>,
    priority: Priority,
    error: BoxError,
}

impl SequenceFailure {
    /// The executor the sequence ran on.
    ///
    /// # Examples
    ///
    /// See [`SequenceFailure`].
    pub fn executor(&self) -> &str {
        &self.executor
    }

    /// The sequence that failed.
    ///
    /// # Examples
    ///
    /// See [`SequenceFailure`].
    pub fn sequence(&self) -> &str {
        &self.sequence
    }

    /// The priority the message ran at.
    ///
    /// # Examples
    ///
    /// ```
    /// # use priority_executor::{Executors, Message, Priority};
    /// # let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 3 }]\n")?;
    /// # executors.register_sequence("fail", |_m: Message| Err(std::fmt::Error));
    /// let failure = executors.enqueue_sequence("e", "fail", Message::new())?.join()?.unwrap_err();
    /// assert_eq!(failure.priority(), Priority(3));
    /// # executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn priority(&self) -> Priority {
        self.priority
    }

    /// The error the sequence returned; for a panic, an error whose
    /// `Display` is the panic's message.
    ///
    /// # Examples
    ///
    /// See [`SequenceFailure`].
    pub fn error(&self) -> &(dyn Error + Send + Sync + 'static) {
        &*self.error
    }

    /// Takes the error out, for example to downcast it to the sequence's
    /// own error type.
    ///
    /// # Examples
    ///
    /// ```
    /// # use priority_executor::{Executors, Message};
    /// # let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// executors.register_sequence("fail", |_m: Message| Err(std::fmt::Error));
    /// let failure = executors.enqueue_sequence("e", "fail", Message::new())?.join()?.unwrap_err();
    /// assert!(failure.into_error().downcast::<std::fmt::Error>().is_ok());
    /// # executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_error(self) -> Box<dyn Error + Send + Sync + 'static> {
        self.error
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
struct Panicked(String);

impl fmt::Display for Panicked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "panicked: {}", self.0)
    }
}

impl Error for Panicked {}

// ===== Counters =====

/// Counters of one sequence, over every executor it ran on.
///
/// `ran` counts finished runs, failed or not; `failed` counts runs that
/// returned an error or panicked; `panicked` the panics among them. Once
/// every handle has been joined, `ran == enqueued`, unless
/// [`ExecutorHandle::shutdown_now`](crate::ExecutorHandle::shutdown_now) handed jobs
/// back unrun or a `when_full = "discard-oldest"` lane pushed some out.
///
/// # Examples
///
/// ```
/// use priority_executor::{Executors, Message};
///
/// let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
/// executors.register_sequence("odd", |m: Message| {
///     if m.body().len() % 2 == 1 { Err(std::fmt::Error) } else { Ok(()) }
/// });
/// for body in ["a", "bb", "ccc"] {
///     let message = Message::builder().body(body).build();
///     executors.enqueue_sequence("e", "odd", message)?.join()?.ok();
/// }
/// let metrics = executors.sequence_metrics("odd").expect("registered");
/// assert_eq!((metrics.enqueued, metrics.ran, metrics.failed, metrics.panicked), (3, 3, 2, 0));
/// executors.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SequenceMetrics {
    /// Runs accepted by an executor.
    pub enqueued: u64,
    /// Runs finished, failed or not.
    pub ran: u64,
    /// Runs that returned an error or panicked.
    pub failed: u64,
    /// Runs that panicked (also counted in `failed`).
    pub panicked: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    enqueued: AtomicU64,
    ran: AtomicU64,
    failed: AtomicU64,
    panicked: AtomicU64,
}

impl Counters {
    // ORDERING: the counters are independent tallies; a reader that joined
    // the handles already synchronised with the runs through the handles.
    pub(crate) fn snapshot(&self) -> SequenceMetrics {
        SequenceMetrics {
            enqueued: self.enqueued.load(Ordering::Relaxed),
            ran: self.ran.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            panicked: self.panicked.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn accepted(&self) {
        self.enqueued.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes back an [`accepted`](Counters::accepted) the executor refused.
    pub(crate) fn refused(&self) {
        self.enqueued.fetch_sub(1, Ordering::Relaxed);
    }
}

// ===== A registered sequence =====

/// A sequence as registered: its code, its own fault handler, its counters
/// (which outlive re-registration under the same name).
pub(crate) struct Sequence {
    pub(crate) name: Arc<str>,
    pub(crate) run: SequenceFn,
    pub(crate) fault: Option<FaultFn>,
    pub(crate) counters: Arc<Counters>,
}

impl fmt::Debug for Sequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sequence")
            .field("has_fault_handler", &self.fault.is_some())
            .field("metrics", &self.counters.snapshot())
            .finish_non_exhaustive()
    }
}

/// The message of a job, shared with the enqueuing thread so that a job
/// the executor refuses gives its message back (the refused closure itself
/// is opaque).
pub(crate) type Slot = Arc<Mutex<Option<Message>>>;

pub(crate) fn take(slot: &Slot) -> Option<Message> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// Everything one run needs, moved into the executor's job.
pub(crate) struct Run {
    pub(crate) executor: Arc<str>,
    pub(crate) sequence: Arc<str>,
    pub(crate) priority: Priority,
    pub(crate) run: SequenceFn,
    pub(crate) fault: Option<FaultFn>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) slot: Slot,
}

impl Run {
    /// Runs the sequence on the message in the slot, counting the outcome
    /// and calling the fault handler on failure. A panic is reported to the
    /// fault handler and then resumed, so the executor's handle and
    /// metrics see it as a panic too.
    pub(crate) fn execute(self) -> Result<(), SequenceFailure> {
        // The slot is only emptied here or by a refused enqueue, which never
        // runs the job: an accepted job always finds its message.
        let Some(message) = take(&self.slot) else {
            return Ok(());
        };
        let copy = self.fault.as_ref().map(|_| message.clone());
        let outcome = catch_unwind(AssertUnwindSafe(|| (self.run)(message)));
        self.counters.ran.fetch_add(1, Ordering::Relaxed);
        let failure = |error: BoxError| SequenceFailure {
            executor: Arc::clone(&self.executor),
            sequence: Arc::clone(&self.sequence),
            priority: self.priority,
            error,
        };
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => {
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
                let failure = failure(error);
                if let (Some(fault), Some(copy)) = (&self.fault, copy) {
                    fault(copy, &failure);
                }
                Err(failure)
            }
            Err(payload) => {
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
                self.counters.panicked.fetch_add(1, Ordering::Relaxed);
                if let (Some(fault), Some(copy)) = (&self.fault, copy) {
                    let text = payload
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "a non-string panic payload".to_owned());
                    fault(copy, &failure(Box::new(Panicked(text))));
                }
                resume_unwind(payload)
            }
        }
    }
}

// ===== Errors of enqueueing a sequence =====

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
