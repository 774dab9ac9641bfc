//! The registry of named executors loaded from `executors.toml`, with the
//! sequences, fault handlers and before-enqueue hooks registered in code.
//!
//! Everything the registry knows is one immutable `Table`, behind an
//! `RwLock<Arc<Table>>` whose lock is held only to clone or replace the
//! pointer: a reader clones what it needs and lets go; a writer (a reload,
//! a registration) builds a new table from a copy and swaps it in. Writers
//! take turns on their own mutex, which readers never touch.
//!
//! Beside this file: queueing a message (`enqueue.rs`), registering
//! sequences, fault handlers and hooks (`handlers.rs`), reloading
//! (`reload.rs`), and how an executor a reload retires is shut down
//! whoever holds it (`running.rs`).

mod builder;
mod enqueue;
mod handlers;
mod reload;
mod running;

pub use builder::RegistryBuilder;
pub use reload::Reload;

use crate::esb::config::{self, ExecutorSpec, Plan};
use crate::esb::sequence::{Counters, FaultFn, Sequence};
use crate::{ConfigError, Executor, Message, Priority, Rules, SequenceMetrics, UnknownName};
use builder::Options;
use running::Retiring;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

type HookFn = Arc<dyn Fn(&mut Message, &mut Priority) + Send + Sync>;

/// Named executors declared in `executors.toml`, the sequences they run,
/// and the rules that give each message its priority.
///
/// Every method takes `&self`, reloading and registering included: share it
/// across threads as an `Arc<Registry>`, with no lock around it. Lookups
/// and enqueues read the current table of executors; a
/// [`reload`](Registry::reload) or a registration builds a new table and
/// swaps it in, so a reader is never blocked by one (see
/// [`Registry::reload`]).
///
/// # Examples
///
/// ```
/// use priority_executor::{Registry, Message, Priority};
///
/// let executors = Registry::from_toml_str(r#"
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
/// let message = Message::new().with_property("PRIORITYID", "ABC").with_body("<visa/>");
/// let handle = executors.enqueue_sequence("visa_priority_exec", "call-external", message)?;
/// assert!(handle.join()?.is_ok());
/// executors.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Registry {
    /// The current table. The lock is held only to clone or swap the `Arc`.
    table: RwLock<Arc<Table>>,
    /// Taken by whoever changes the table (reload, registration), for the
    /// whole read-copy-swap. It holds whether the registry has been shut
    /// down, set under it by `shutdown` and read under it by reloads.
    writer: Mutex<bool>,
    /// Executors retired by reloads, each reload's drained by a thread.
    retiring: Mutex<Vec<Retiring>>,
    /// What the code added to the file's executors, applied again by
    /// reloads.
    options: Options,
}

/// Everything the registry knows, as of one reload or registration.
#[derive(Clone, Default)]
struct Table {
    entries: BTreeMap<String, Arc<Entry>>,
    rules: BTreeMap<String, Arc<Rules>>,
    sequences: BTreeMap<String, Arc<Sequence>>,
    /// Counters by sequence name; kept when a sequence is registered again.
    counters: BTreeMap<String, Arc<Counters>>,
    /// The `[mailboxes.NAME]` sections of the file, replaced by a reload.
    mailboxes: BTreeMap<String, config::MailboxSpec>,
}

/// One executor of the table with what the file and the code attached to it.
#[derive(Clone)]
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

impl Registry {
    /// Loads `executors.toml` (or any file of its format) and starts every
    /// executor in it. To give them hooks, or to start only some, use
    /// [`Registry::builder`].
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the file, line, column, executor or rule,
    /// key and value, for the first mistake found; nothing is left running.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Registry;
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/executors.toml");
    /// let executors = Registry::from_path(path)?;
    /// assert!(executors.get("visa_priority_exec").is_ok());
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Self::start(config::read(path.as_ref())?, Options::default())
    }

    /// Loads executors from TOML text; errors give a line and column but no
    /// file name.
    ///
    /// # Errors
    ///
    /// As [`from_path`](Registry::from_path), without the file.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Registry;
    ///
    /// let executors = Registry::from_toml_str(
    ///     "[executors.a]\nlanes = [{ priority = 2 }, { priority = 1 }]\n",
    /// )?;
    /// assert_eq!(executors.names(), ["a"]);
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn from_toml_str(toml: &str) -> Result<Self, ConfigError> {
        Self::start(config::parse(toml.to_owned(), None)?, Options::default())
    }

    /// A builder that loads a file with what the code adds to it: hooks
    /// and other builder settings per executor, and which executors to
    /// start.
    ///
    /// # Examples
    ///
    /// See [`RegistryBuilder`].
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    fn start(mut plan: Plan, options: Options) -> Result<Self, ConfigError> {
        options.select(&mut plan)?;
        let mut entries = BTreeMap::new();
        for executor in &plan.executors {
            // On error, the executors already built drop, and dropping one
            // shuts it down.
            let built = plan.build(executor, |b| options.finish(&executor.name, b))?;
            let entry = Entry::new(
                &executor.name,
                built,
                executor.spec.clone(),
                executor.rules.clone(),
            );
            entries.insert(executor.name.clone(), Arc::new(entry));
        }
        let table = Table {
            entries,
            rules: plan.rules,
            mailboxes: plan.mailboxes,
            ..Table::default()
        };
        Ok(Registry {
            table: RwLock::new(Arc::new(table)),
            writer: Mutex::new(false),
            retiring: Mutex::new(Vec::new()),
            options,
        })
    }

    /// The `[mailboxes.NAME]` section of the file last loaded, if it has
    /// one (read by `Registry::mailbox`, with the actor layer).
    #[cfg_attr(any(not(feature = "actor"), loom), allow(dead_code))]
    pub(crate) fn mailbox_spec(&self, name: &str) -> Option<config::MailboxSpec> {
        self.table().mailboxes.get(name).copied()
    }

    /// The table as it is now.
    fn table(&self) -> Arc<Table> {
        Arc::clone(&self.table.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Holds off other writers for a read-copy-swap of the table; the
    /// guarded value tells whether the registry has been shut down.
    fn writer(&self) -> MutexGuard<'_, bool> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Swaps `next` in; returns the table it replaces, to be dropped by the
    /// caller once the lock is released.
    fn publish(&self, next: Table) -> Arc<Table> {
        let next = Arc::new(next);
        let mut current = self.table.write().unwrap_or_else(PoisonError::into_inner);
        std::mem::replace(&mut *current, next)
    }

    /// Changes a copy of the table with `change` and swaps it in.
    fn update<R>(&self, change: impl FnOnce(&mut Table) -> R) -> R {
        let _writer = self.writer();
        let mut next = Table::clone(&self.table());
        let result = change(&mut next);
        drop(self.publish(next));
        result
    }

    /// The executor named `name`: a clone. A reload that retires the
    /// executor shuts it down gracefully all the same (its accepted jobs
    /// run, then the clone refuses new ones with `ShutDown`; look the name
    /// up again for the executor in its place), as shutting the registry
    /// down does.
    ///
    /// # Errors
    ///
    /// [`UnknownName`] if the registry has no executor of that name; its
    /// message lists the names it has.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Priority};
    ///
    /// let executors = Registry::from_toml_str("[executors.a]\nlanes = [{ priority = 3 }]\n")?;
    /// let a = executors.get("a")?;
    /// let lanes = a.config().lanes;
    /// assert_eq!((lanes.len(), lanes[0].priority), (1, Priority(3)));
    /// let missing = executors.get("b").unwrap_err();
    /// assert_eq!(missing.to_string(), "no executor named \"b\" (executors: a)");
    /// drop(a);
    /// executors.shutdown();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get(&self, name: &str) -> Result<Executor, UnknownName> {
        let table = self.table();
        match table.entries.get(name) {
            Some(entry) => Ok(entry.executor.clone()),
            None => Err(UnknownName::new(
                "executor",
                name,
                table.entries.keys().cloned().collect(),
            )),
        }
    }

    /// The executors' names, sorted.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Registry;
    ///
    /// let executors = Registry::from_toml_str(
    ///     "[executors.b]\nlanes = [{ priority = 1 }]\n[executors.a]\nlanes = [{ priority = 1 }]\n",
    /// )?;
    /// assert_eq!(executors.names(), ["a", "b"]);
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.table().entries.keys().cloned().collect()
    }

    /// The rule set the executor `executor` names with `rules = "..."`.
    ///
    /// # Examples
    ///
    /// See [`Rules`].
    pub fn rules(&self, executor: &str) -> Option<Arc<Rules>> {
        self.table().entries.get(executor)?.rules.clone()
    }

    /// The priority `message` would get on `executor` from its rules
    /// (before any before-enqueue hook): the first matching `when`, else the
    /// rule set's `default_priority`, else the executor's lowest lane.
    /// `None` if there is no such executor.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message, Priority};
    ///
    /// let executors = Registry::from_toml_str(
    ///     "[executors.a]\nlanes = [{ priority = 10 }, { priority = 1 }]\n",
    /// )?;
    /// // No rules: the lowest lane.
    /// assert_eq!(executors.priority_for("a", &Message::new()), Some(Priority(1)));
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn priority_for(&self, executor: &str, message: &Message) -> Option<Priority> {
        let entry = Arc::clone(self.table().entries.get(executor)?);
        Some(entry.priority_for(message))
    }

    /// The counters of the sequence `name`, if it was ever registered.
    ///
    /// # Examples
    ///
    /// See [`SequenceMetrics`].
    pub fn sequence_metrics(&self, name: &str) -> Option<SequenceMetrics> {
        self.table().counters.get(name).map(|c| c.snapshot())
    }

    /// Shuts every executor down gracefully, in name order: each runs the
    /// jobs it had accepted and joins its threads; executors retired by a
    /// reload finish draining too, whether or not clones of them are still
    /// held. Dropping the registry does the same.
    ///
    /// It takes `&self`, so a registry shared as `Arc<Registry>` can be
    /// shut down by any holder; afterwards every executor refuses new jobs
    /// (`ShutDown`, the job handed back), and calling it again does
    /// nothing more. A [`reload`](Registry::reload) afterwards is refused
    /// ([`ConfigErrorKind::ShutDown`](crate::ConfigErrorKind::ShutDown))
    /// and starts nothing.
    ///
    /// Called from a job (a sequence, say), it waits for no thread that is
    /// waiting for that job, as [`Executor::shutdown`] from a job does: an
    /// executor's own worker is not waited for, and when the job runs on
    /// an executor a reload retired, that executor is shut down like the
    /// others but finishes draining on its background thread once the job
    /// has returned ([`Reload::wait`] waits for that), since the drain
    /// waits for the job. The same holds for dropping the last
    /// `Arc<Registry>` in a job.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Registry, Message};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let executors = Registry::from_toml_str("[executors.e]\nlanes = [{ priority = 1 }]\n")?;
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
    pub fn shutdown(&self) {
        // Marked under the writers' lock: a reload that took it first has
        // published its executors and handed over those it retired (both
        // shut down below), and one that takes it later is refused.
        *self.writer() = true;
        let table = self.table();
        for entry in table.entries.values() {
            entry.executor.shutdown();
        }
        drop(table);
        let retiring =
            std::mem::take(&mut *self.retiring.lock().unwrap_or_else(PoisonError::into_inner));
        for reload in retiring {
            reload.finish();
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        // Users' clones may outlive the registry: each executor is shut
        // down here, in name order, and refuses their jobs afterwards.
        self.shutdown();
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = self.table();
        let retiring = self
            .retiring
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|h| !h.is_finished())
            .count();
        f.debug_struct("Registry")
            .field("executors", &table.entries.keys().collect::<Vec<_>>())
            .field("rules", &table.rules.keys().collect::<Vec<_>>())
            .field("sequences", &table.sequences)
            .field("retiring", &retiring)
            .finish()
    }
}
