//! The registry of named executors loaded from `executors.toml`, with the
//! sequences, fault handlers and before-enqueue hooks registered in code,
//! and reloading of an edited file (in `reload.rs`).

mod reload;

pub use reload::Reload;

use crate::esb::config::{self, ExecutorSpec, Plan};
use crate::esb::sequence::{
    self, Counters, FaultFn, Sequence, SequenceFailure, SequenceHandle, SequenceJob, UnknownName,
};
use crate::{ConfigError, Executor, Message, Priority, Rules, SequenceError, SequenceMetrics};
use std::collections::BTreeMap;
use std::error::Error;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

type HookFn = Arc<dyn Fn(&mut Message, &mut Priority) + Send + Sync>;

/// Named executors declared in `executors.toml`, the sequences they run,
/// and the rules that give each message its priority.
///
/// Share it across threads with an `Arc` (every enqueue takes `&self`), or
/// an `Arc<RwLock<_>>` to [`reload`](Executors::reload) it while it runs.
///
/// # Examples
///
/// ```
/// use priority_executor::{Executors, Message, Priority};
///
/// let mut executors = Executors::from_toml_str(r#"
///     [executors.visa_priority_exec]
///     core_threads = 2
///     rules = "visa"
///     [[executors.visa_priority_exec.lanes]]
///     priority = 10
///     [[executors.visa_priority_exec.lanes]]
///     priority = 1
///
///     [rules.visa]
///     default_priority = 1
///     [[rules.visa.when]]
///     priority = 10
///     header = "PRIORITYID"
///     equals = "ABC"
/// "#)?;
///
/// executors.register_sequence("call-external", |m: Message| {
///     assert!(!m.body().is_empty());
///     Ok::<(), std::io::Error>(())
/// });
/// let message = Message::builder().property("PRIORITYID", "ABC").body("<visa/>").build();
/// let handle = executors.enqueue_sequence("visa_priority_exec", "call-external", message)?;
/// assert!(handle.join()?.is_ok());
/// executors.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Executors {
    entries: BTreeMap<String, Entry>,
    rules: BTreeMap<String, Arc<Rules>>,
    sequences: BTreeMap<String, Sequence>,
    /// Counters by sequence name; kept when a sequence is registered again.
    counters: BTreeMap<String, Arc<Counters>>,
    retiring: Vec<JoinHandle<()>>,
}

struct Entry {
    executor: Executor,
    name: Arc<str>,
    spec: ExecutorSpec,
    rules: Option<Arc<Rules>>,
    /// The priority of a message no rule gives one.
    lowest: Priority,
    hook: Option<HookFn>,
    fault: Option<FaultFn>,
}

impl Entry {
    fn new(name: &str, executor: Executor, spec: ExecutorSpec, rules: Option<Arc<Rules>>) -> Self {
        let lowest = executor
            .priorities()
            .last()
            .copied()
            .expect("the builder refuses an executor without lanes");
        Entry {
            lowest,
            executor,
            name: Arc::from(name),
            spec,
            rules,
            hook: None,
            fault: None,
        }
    }

    fn priority_for(&self, message: &Message) -> Priority {
        self.rules
            .as_ref()
            .and_then(|rules| rules.priority_for(message))
            .unwrap_or(self.lowest)
    }
}

/// Blocking or not, when the lane is full.
#[derive(Clone, Copy)]
enum Mode {
    Block,
    Try,
}

impl Executors {
    /// Loads `executors.toml` (or any file of its format) and starts every
    /// executor in it.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the file, line, column, executor or rule,
    /// key and value, for the first mistake found; nothing is left running.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Executors;
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/executors.toml");
    /// let executors = Executors::from_path(path)?;
    /// assert!(executors.get("visa_priority_exec").is_some());
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Self::start(config::read(path.as_ref())?)
    }

    /// Loads executors from TOML text; errors give a line and column but no
    /// file name.
    ///
    /// # Errors
    ///
    /// As [`from_path`](Executors::from_path), without the file.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Executors;
    ///
    /// let executors = Executors::from_toml_str(
    ///     "[executors.a]\nlanes = [{ priority = 2 }, { priority = 1 }]\n",
    /// )?;
    /// assert_eq!(executors.names().collect::<Vec<_>>(), ["a"]);
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn from_toml_str(toml: &str) -> Result<Self, ConfigError> {
        Self::start(config::parse(toml.to_owned(), None)?)
    }

    fn start(plan: Plan) -> Result<Self, ConfigError> {
        let mut entries = BTreeMap::new();
        for executor in &plan.executors {
            // On error, the executors already built drop, and dropping one
            // shuts it down.
            let built = plan.build(executor)?;
            entries.insert(
                executor.name.clone(),
                Entry::new(
                    &executor.name,
                    built,
                    executor.spec.clone(),
                    executor.rules.clone(),
                ),
            );
        }
        Ok(Executors {
            entries,
            rules: plan.rules,
            sequences: BTreeMap::new(),
            counters: BTreeMap::new(),
            retiring: Vec::new(),
        })
    }

    /// The executor named `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executors, Priority};
    ///
    /// let executors = Executors::from_toml_str("[executors.a]\nlanes = [{ priority = 3 }]\n")?;
    /// let a = executors.get("a").expect("declared");
    /// assert_eq!(a.priorities(), [Priority(3)]);
    /// assert!(executors.get("b").is_none());
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn get(&self, name: &str) -> Option<&Executor> {
        self.entries.get(name).map(|e| &e.executor)
    }

    /// The executors' names, sorted.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Executors;
    ///
    /// let executors = Executors::from_toml_str(
    ///     "[executors.b]\nlanes = [{ priority = 1 }]\n[executors.a]\nlanes = [{ priority = 1 }]\n",
    /// )?;
    /// assert_eq!(executors.names().collect::<Vec<_>>(), ["a", "b"]);
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.entries.keys().map(String::as_str)
    }

    /// The rule set the executor `executor` names with `rules = "..."`.
    ///
    /// # Examples
    ///
    /// See [`Rules`].
    pub fn rules(&self, executor: &str) -> Option<&Rules> {
        self.entries.get(executor)?.rules.as_deref()
    }

    /// The priority `message` would get on `executor` from its rules
    /// (before any before-enqueue hook): the first matching `when`, else the
    /// rule set's `default_priority`, else the executor's lowest lane.
    /// `None` if there is no such executor.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executors, Message, Priority};
    ///
    /// let executors = Executors::from_toml_str(
    ///     "[executors.a]\nlanes = [{ priority = 10 }, { priority = 1 }]\n",
    /// )?;
    /// // No rules: the lowest lane.
    /// assert_eq!(executors.priority_for("a", &Message::new()), Some(Priority(1)));
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn priority_for(&self, executor: &str, message: &Message) -> Option<Priority> {
        Some(self.entries.get(executor)?.priority_for(message))
    }

    // ===== Sequences, fault handlers, hooks =====

    /// Registers the sequence `name`, replacing one of the same name (its
    /// counters and fault handler carry on).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executors, Message};
    ///
    /// let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// executors.register_sequence("log", |m: Message| {
    ///     println!("{} bytes", m.body().len());
    ///     Ok::<(), std::io::Error>(())
    /// });
    /// assert!(executors.sequence_metrics("log").is_some());
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn register_sequence<F, E>(&mut self, name: impl Into<String>, f: F)
    where
        F: Fn(Message) -> Result<(), E> + Send + Sync + 'static,
        E: Error + Send + Sync + 'static,
    {
        let name = name.into();
        let counters = Arc::clone(self.counters.entry(name.clone()).or_default());
        let fault = self.sequences.get(&name).and_then(|s| s.fault.clone());
        let run: sequence::SequenceFn = Arc::new(move |m| f(m).map_err(|e| Box::new(e) as _));
        self.sequences.insert(
            name.clone(),
            Sequence {
                name: Arc::from(name),
                run,
                fault,
                counters,
            },
        );
    }

    /// Sets the fault handler of the sequence `sequence` (Synapse's fault
    /// sequence): when a run fails, it receives the message as it was
    /// enqueued and the [`SequenceFailure`]. It takes precedence over the
    /// executor's. A handler that panics is caught: the run's handle still
    /// reports the sequence's own failure.
    ///
    /// # Errors
    ///
    /// [`UnknownName`] if no such sequence is registered.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executors, Message};
    /// use std::sync::mpsc;
    ///
    /// let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// executors.register_sequence("submit", |_m: Message| Err(std::fmt::Error));
    /// let (tx, rx) = mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// executors.set_sequence_fault_handler("submit", move |m, failure| {
    ///     let _ = tx.lock().unwrap().send((m.body().to_vec(), failure.sequence().to_owned()));
    /// })?;
    /// let message = Message::builder().body("form").build();
    /// executors.enqueue_sequence("e", "submit", message)?.join()?.unwrap_err();
    /// assert_eq!(rx.recv()?, (b"form".to_vec(), "submit".to_owned()));
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_sequence_fault_handler<F>(&mut self, sequence: &str, f: F) -> Result<(), UnknownName>
    where
        F: Fn(Message, &SequenceFailure) + Send + Sync + 'static,
    {
        match self.sequences.get_mut(sequence) {
            Some(found) => {
                found.fault = Some(Arc::new(f));
                Ok(())
            }
            None => {
                let known = self.sequences.keys().cloned().collect();
                Err(UnknownName::new("sequence", sequence, known))
            }
        }
    }

    /// Sets the fault handler of every sequence run on `executor` that has
    /// no fault handler of its own.
    ///
    /// # Errors
    ///
    /// [`UnknownName`] if there is no such executor.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executors, Message};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// executors.register_sequence("fail", |_m: Message| Err(std::fmt::Error));
    /// let faults = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&faults);
    /// executors.set_executor_fault_handler("e", move |_m, _failure| {
    ///     counter.fetch_add(1, Ordering::SeqCst);
    /// })?;
    /// executors.enqueue_sequence("e", "fail", Message::new())?.join()?.unwrap_err();
    /// assert_eq!(faults.load(Ordering::SeqCst), 1);
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_executor_fault_handler<F>(&mut self, executor: &str, f: F) -> Result<(), UnknownName>
    where
        F: Fn(Message, &SequenceFailure) + Send + Sync + 'static,
    {
        self.entry_mut(executor)?.fault = Some(Arc::new(f));
        Ok(())
    }

    /// Sets the before-enqueue hook of `executor` (Synapse's
    /// `BeforeExecuteHandler`). It runs on the enqueuing thread after the
    /// rules chose a priority, and may read and change the message and the
    /// priority. A priority with no lane is then refused with the message.
    /// The hook runs inside the enqueue call, so a panicking hook panics the
    /// caller.
    ///
    /// # Errors
    ///
    /// [`UnknownName`] if there is no such executor.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executors, Message, Priority};
    ///
    /// let mut executors = Executors::from_toml_str(
    ///     "[executors.e]\nlanes = [{ priority = 10 }, { priority = 1 }]\n",
    /// )?;
    /// executors.register_sequence("check", |m: Message| {
    ///     assert_eq!(m.property("stamped"), Some("yes"));
    ///     Ok::<(), std::io::Error>(())
    /// });
    /// executors.set_before_enqueue("e", |m: &mut Message, p: &mut Priority| {
    ///     m.set_property("stamped", "yes");
    ///     if m.property("vip").is_some() {
    ///         *p = Priority(10);
    ///     }
    /// })?;
    /// let vip = Message::builder().property("vip", "1").build();
    /// assert!(executors.enqueue_sequence("e", "check", vip)?.join()?.is_ok());
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_before_enqueue<F>(&mut self, executor: &str, f: F) -> Result<(), UnknownName>
    where
        F: Fn(&mut Message, &mut Priority) + Send + Sync + 'static,
    {
        self.entry_mut(executor)?.hook = Some(Arc::new(f));
        Ok(())
    }

    fn entry_mut(&mut self, executor: &str) -> Result<&mut Entry, UnknownName> {
        let known: Vec<String> = self.entries.keys().cloned().collect();
        self.entries
            .get_mut(executor)
            .ok_or_else(|| UnknownName::new("executor", executor, known))
    }

    /// The counters of the sequence `name`, if it was ever registered.
    ///
    /// # Examples
    ///
    /// See [`SequenceMetrics`].
    pub fn sequence_metrics(&self, name: &str) -> Option<SequenceMetrics> {
        self.counters.get(name).map(|c| c.snapshot())
    }

    // ===== Enqueueing =====

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
    /// let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
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
        let Some(entry) = self.entries.get(executor) else {
            let known = self.entries.keys().cloned().collect();
            return Err(SequenceError::UnknownExecutor {
                executor: executor.to_owned(),
                known,
                message,
            });
        };
        let Some(seq) = self.sequences.get(sequence) else {
            let known = self.sequences.keys().cloned().collect();
            return Err(SequenceError::UnknownSequence {
                sequence: sequence.to_owned(),
                known,
                message,
            });
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
        let queued = match mode {
            Mode::Block => entry
                .executor
                .enqueue_value(priority, job, SequenceJob::run),
            Mode::Try => entry
                .executor
                .try_enqueue_value(priority, job, SequenceJob::run),
        };
        queued.map_err(|err| {
            seq.counters.refused();
            let executor = executor.to_owned();
            if err.is_full() {
                let message = err.into_inner().message;
                SequenceError::Full {
                    executor,
                    priority,
                    message,
                }
            } else if err.is_unknown_priority() {
                let message = err.into_inner().message;
                let lanes = entry.executor.priorities();
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

    // ===== Shutdown =====

    /// Shuts every executor down gracefully: each runs the jobs it had
    /// accepted and joins its threads; executors retired by a reload finish
    /// draining too.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executors, Message};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let mut executors = Executors::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
    /// let ran = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&ran);
    /// executors.register_sequence("count", move |_m: Message| {
    ///     counter.fetch_add(1, Ordering::SeqCst);
    ///     Ok::<(), std::io::Error>(())
    /// });
    /// for _ in 0..100 {
    ///     executors.enqueue_sequence("e", "count", Message::new())?;
    /// }
    /// executors.shutdown();
    /// assert_eq!(ran.load(Ordering::SeqCst), 100);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shutdown(mut self) {
        for (_, entry) in std::mem::take(&mut self.entries) {
            entry.executor.shutdown();
        }
        self.join_retiring();
    }

    fn join_retiring(&mut self) {
        for handle in self.retiring.drain(..) {
            // A retire thread only calls `Executor::shutdown`; if that
            // panicked there is nothing left to drain.
            let _ = handle.join();
        }
    }
}

impl Drop for Executors {
    fn drop(&mut self) {
        // The entries drop after this, and each executor's drop drains it.
        self.join_retiring();
    }
}

impl fmt::Debug for Executors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executors")
            .field("executors", &self.entries.keys().collect::<Vec<_>>())
            .field("rules", &self.rules.keys().collect::<Vec<_>>())
            .field("sequences", &self.sequences)
            .field("retiring", &self.retiring.len())
            .finish()
    }
}
