//! Queueing a message to run through a sequence on an executor: the
//! rules, then the before-enqueue hook, give its priority.

use super::Registry;
use crate::esb::sequence::{SequenceHandle, SequenceJob};
use crate::{EnqueueError, Executor, JobOptions, Message, SendOptions, SequenceError};
use std::sync::Arc;

impl Registry {
    /// Queues `message` to run through `sequence` on `executor`, at the
    /// priority the executor's rules give it (see
    /// [`priority_for`](Registry::priority_for)), after the executor's
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
    /// See [`Registry`].
    pub fn enqueue_sequence(
        &self,
        executor: &str,
        sequence: &str,
        message: Message,
    ) -> Result<SequenceHandle, SequenceError> {
        self.submit(executor, sequence, message, SendOptions::new())
    }

    /// Like [`enqueue_sequence`](Registry::enqueue_sequence), with
    /// options: a priority in place of the rules' one (the hook still runs
    /// and may change it), like Synapse's `<enqueue priority="10"/>`, and
    /// how long to wait for room in a full lane (zero never blocks).
    ///
    /// # Errors
    ///
    /// As [`enqueue_sequence`](Registry::enqueue_sequence), and
    /// [`SequenceError::Full`] when the lane is still full once the
    /// options' wait is over.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message, Priority, SendOptions};
    /// use std::time::Duration;
    ///
    /// let toml = "[executors.e]\nlanes = [{ priority = 1 }, { priority = 10 }]\n";
    /// let executors = Registry::from_toml_str(toml)?;
    /// executors.register_sequence("s", |_m: Message| Ok::<(), std::io::Error>(()));
    /// let urgent = SendOptions::new().priority(Priority(10)).wait_at_most(Duration::ZERO);
    /// let handle = executors.enqueue_sequence_with("e", "s", Message::new(), urgent)?;
    /// assert!(handle.join()?.is_ok());
    /// let metrics = executors.get("e")?.metrics();
    /// assert_eq!(metrics.lane(Priority(10)).map(|lane| lane.completed), Some(1));
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn enqueue_sequence_with(
        &self,
        executor: &str,
        sequence: &str,
        message: Message,
        options: SendOptions,
    ) -> Result<SequenceHandle, SequenceError> {
        self.submit(executor, sequence, message, options)
    }

    fn submit(
        &self,
        executor: &str,
        sequence: &str,
        message: Message,
        options: SendOptions,
    ) -> Result<SequenceHandle, SequenceError> {
        let mut message = message;
        loop {
            match self.submit_once(executor, sequence, message, &options) {
                // The executor found was retired by a reload meanwhile (it
                // refuses, and another took its name): the message goes to
                // the one in its place (`running.rs`).
                Err(Retired(again)) => message = again,
                Ok(outcome) => return outcome,
            }
        }
    }

    fn submit_once(
        &self,
        executor: &str,
        sequence: &str,
        mut message: Message,
        options: &SendOptions,
    ) -> Result<Result<SequenceHandle, SequenceError>, Retired> {
        // Looked up in the table as it is now; a reload meanwhile does not
        // wait for this call, and shuts the executor found down if it
        // retires it (see `running.rs`).
        let (entry, seq) = {
            let table = self.table();
            let Some(entry) = table.entries.get(executor) else {
                return Ok(Err(SequenceError::UnknownExecutor {
                    executor: executor.to_owned(),
                    known: table.entries.keys().cloned().collect(),
                    message,
                }));
            };
            let Some(seq) = table.sequences.get(sequence) else {
                return Ok(Err(SequenceError::UnknownSequence {
                    sequence: sequence.to_owned(),
                    known: table.sequences.keys().cloned().collect(),
                    message,
                }));
            };
            (Arc::clone(entry), Arc::clone(seq))
        };
        let mut priority = options
            .priority
            .unwrap_or_else(|| entry.priority_for(&message));
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
        let job_options = JobOptions::from_send(options);
        let queued = target.enqueue_value(priority, job, SequenceJob::run, job_options);
        let queued = match queued {
            Err(refused @ EnqueueError::ShutDown { .. }) if self.replaced(executor, target) => {
                seq.counters.refused();
                return Err(Retired(refused.into_inner().message));
            }
            queued => queued,
        };
        Ok(queued.map_err(|err| {
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
        }))
    }

    /// Has a reload put another executor in `target`'s place under `name`?
    fn replaced(&self, name: &str, target: &Executor) -> bool {
        self.table()
            .entries
            .get(name)
            .is_some_and(|entry| !entry.executor.same_pool(target))
    }
}

/// A message refused by an executor a reload retired, to be queued again.
struct Retired(Message);
