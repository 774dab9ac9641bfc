//! Queueing a message to run through a sequence on an executor: the
//! rules, then the before-enqueue hook, give its priority.

use super::Executors;
use crate::esb::sequence::{SequenceHandle, SequenceJob};
use crate::{EnqueueError, Message, Priority, SequenceError};
use std::sync::Arc;

/// Blocking or not, when the lane is full.
#[derive(Clone, Copy)]
enum Mode {
    Block,
    Try,
}

impl Executors {
    /// Queues `message` to run through `sequence` on `executor`, at the
    /// priority the executor's rules give it (see
    /// [`priority_for`](Executors::priority_for)), after the executor's
    /// before-enqueue hook. On a full lane, the lane's `when_full` policy
    /// applies: by default it blocks until there is room.
    ///
    /// # Errors
    ///
    /// A [`SequenceError`] carrying the message back: unknown executor,
    /// unknown sequence, a priority with no lane (set by the hook), a full
    /// lane whose policy is `when_full = "reject"`, or the executor shut
    /// down.
    ///
    /// # Examples
    ///
    /// See [`Executors`].
    pub fn enqueue_sequence(
        &self,
        executor: &str,
        sequence: &str,
        message: Message,
    ) -> Result<SequenceHandle, SequenceError> {
        self.submit(executor, sequence, message, None, Mode::Block)
    }

    /// Queues `message` at `priority`, bypassing the rules (the hook still
    /// runs and may change it), like Synapse's `<enqueue priority="10"/>`.
    ///
    /// # Errors
    ///
    /// As [`enqueue_sequence`](Executors::enqueue_sequence).
    ///
    /// # Examples
    ///
    /// See [`SequenceError`].
    pub fn enqueue_sequence_at(
        &self,
        executor: &str,
        sequence: &str,
        message: Message,
        priority: Priority,
    ) -> Result<SequenceHandle, SequenceError> {
        self.submit(executor, sequence, message, Some(priority), Mode::Block)
    }

    /// As [`enqueue_sequence`](Executors::enqueue_sequence), but a full
    /// lane refuses the message instead of blocking.
    ///
    /// # Errors
    ///
    /// As [`enqueue_sequence`](Executors::enqueue_sequence), and
    /// [`SequenceError::Full`].
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executors, Message};
    ///
    /// let executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// executors.register_sequence("s", |_m: Message| Ok::<(), std::io::Error>(()));
    /// let handle = executors.try_enqueue_sequence("e", "s", Message::new())?;
    /// assert!(handle.join()?.is_ok());
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn try_enqueue_sequence(
        &self,
        executor: &str,
        sequence: &str,
        message: Message,
    ) -> Result<SequenceHandle, SequenceError> {
        self.submit(executor, sequence, message, None, Mode::Try)
    }

    fn submit(
        &self,
        executor: &str,
        sequence: &str,
        mut message: Message,
        priority: Option<Priority>,
        mode: Mode,
    ) -> Result<SequenceHandle, SequenceError> {
        // Looked up in the table as it is now; a reload meanwhile does not
        // wait for this call, and the executor found stays open until the
        // last caller holding it lets go (see `running.rs`).
        let (entry, seq) = {
            let table = self.table();
            let Some(entry) = table.entries.get(executor) else {
                return Err(SequenceError::UnknownExecutor {
                    executor: executor.to_owned(),
                    known: table.entries.keys().cloned().collect(),
                    message,
                });
            };
            let Some(seq) = table.sequences.get(sequence) else {
                return Err(SequenceError::UnknownSequence {
                    sequence: sequence.to_owned(),
                    known: table.sequences.keys().cloned().collect(),
                    message,
                });
            };
            (Arc::clone(entry), Arc::clone(seq))
        };
        let mut priority = priority.unwrap_or_else(|| entry.priority_for(&message));
        if let Some(hook) = &entry.hook {
            hook(&mut message, &mut priority);
        }
        let job = SequenceJob {
            message,
            executor: Arc::clone(&entry.name),
            sequence: Arc::clone(&seq.name),
            priority,
            run: Arc::clone(&seq.run),
            fault: seq.fault.clone().or_else(|| entry.fault.clone()),
            counters: Arc::clone(&seq.counters),
        };
        // Counted before it can run, so `ran` never exceeds `enqueued`.
        seq.counters.accepted();
        let target = &entry.executor;
        let queued = match mode {
            Mode::Block => target.enqueue_value(priority, job, SequenceJob::run),
            Mode::Try => target.try_enqueue_value(priority, job, SequenceJob::run),
        };
        queued.map_err(|err| {
            seq.counters.refused();
            let executor = executor.to_owned();
            if matches!(err, EnqueueError::Full { .. }) {
                let message = err.into_inner().message;
                SequenceError::Full {
                    executor,
                    priority,
                    message,
                }
            } else if matches!(err, EnqueueError::UnknownPriority { .. }) {
                let message = err.into_inner().message;
                let lanes = target.priorities();
                SequenceError::UnknownPriority {
                    executor,
                    priority,
                    lanes,
                    message,
                }
            } else {
                let message = err.into_inner().message;
                SequenceError::ShutDown { executor, message }
            }
        })
    }
}
