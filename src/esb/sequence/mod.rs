//! Named sequences: the code a message runs through once its executor
//! picks it, with Synapse's fault handler and per-sequence counters.
//!
//! A sequence is `Fn(Message) -> Result<(), E>`. When it fails (returns an
//! error or panics) its fault handler, if any, receives a copy of the
//! message and a [`SequenceFailure`]. The copy is taken before the sequence
//! runs and only when a fault handler applies, so sequences without one pay
//! nothing for it.
//!
//! Here: a registered sequence and one run of it. Beside it: the failure a
//! run reports (`failure.rs`), the per-sequence counters (`metrics.rs`),
//! and the errors of enqueueing a message and of naming what is not there
//! (`error.rs`).

mod error;
mod failure;
mod metrics;

pub use error::SequenceError;
pub use failure::SequenceFailure;
pub use metrics::SequenceMetrics;

pub(crate) use metrics::Counters;

use crate::util::{call_quietly, panic_message};
use crate::{JobHandle, Message, Priority};
use failure::Panicked;
use std::error::Error;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

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
/// use priority_executor::{Registry, Message, SequenceHandle};
///
/// let mut executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
/// executors.register_sequence("noop", |_m: Message| Ok::<(), std::io::Error>(()));
/// let handle: SequenceHandle = executors.enqueue_sequence("e", "noop", Message::new())?;
/// assert!(handle.join().expect("no panic").is_ok());
/// executors.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type SequenceHandle = JobHandle<Result<(), SequenceFailure>>;

// ===== A registered sequence =====

/// A sequence as registered: its code, its own fault handler, its counters
/// (which outlive re-registration under the same name).
#[derive(Clone)]
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

/// One run of a sequence: the message and everything the run needs. It is
/// the value the registry queues with
/// [`Executor::enqueue_value`](crate::Executor::enqueue_value), so a job
/// the executor refuses hands the message straight back.
pub(crate) struct SequenceJob {
    pub(crate) message: Message,
    pub(crate) executor: Arc<str>,
    pub(crate) sequence: Arc<str>,
    pub(crate) priority: Priority,
    pub(crate) run: SequenceFn,
    pub(crate) fault: Option<FaultFn>,
    pub(crate) counters: Arc<Counters>,
}

impl SequenceJob {
    /// Runs the sequence on the message, counting the outcome and calling
    /// the fault handler on failure. A panic is reported to the fault
    /// handler and then resumed, so the executor's handle and metrics see
    /// it as a panic too. A fault handler that panics is caught (the panic
    /// hook has printed it): the run's own outcome stands.
    pub(crate) fn run(self) -> Result<(), SequenceFailure> {
        let SequenceJob {
            message,
            executor,
            sequence,
            priority,
            run,
            fault,
            counters,
        } = self;
        crate::observe::span::record_sequence(&sequence);
        let copy = fault.as_ref().map(|_| message.clone());
        let outcome = catch_unwind(AssertUnwindSafe(|| run(message)));
        counters.record_run();
        let failure = |error: BoxError| {
            SequenceFailure::new(
                Arc::clone(&executor),
                Arc::clone(&sequence),
                priority,
                error,
            )
        };
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => {
                counters.record_failure();
                let failure = failure(error);
                if let (Some(fault), Some(copy)) = (&fault, copy) {
                    call_quietly(|| fault(copy, &failure));
                }
                Err(failure)
            }
            Err(payload) => {
                counters.record_panic();
                if let (Some(fault), Some(copy)) = (&fault, copy) {
                    let panicked = failure(Box::new(Panicked(panic_message(&*payload))));
                    call_quietly(|| fault(copy, &panicked));
                }
                resume_unwind(payload)
            }
        }
    }
}
