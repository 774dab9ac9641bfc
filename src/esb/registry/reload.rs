//! Reloading an edited `executors.toml` into a running registry.
//!
//! [`Registry::reload`] takes `&self` and never waits for a reader. It
//! checks and builds everything first, so a file with a mistake changes
//! nothing. Then an executor whose settings are unchanged keeps running
//! untouched (its queue included); one whose only changes are
//! `core_threads`, `max_threads` or `keep_alive` keeps running too and
//! takes them in place, as `set_threads` and `set_keep_alive` would; a new
//! one starts; another changed one is replaced by a fresh one, and the old
//! one, like a removed one, is
//! *retired*: new lookups no longer find it, and it is shut down
//! gracefully on a background thread (it runs every job it had accepted
//! and stops), whoever still holds a clone of it; the registry's own
//! enqueues that meet it queue into the executor in its place
//! (`running.rs`).
//! The new table is swapped in atomically; a sequence that enqueues into
//! the same registry, or a producer blocked on a full lane, is never
//! waited for by the reload, and never waits for it. [`Reload::wait`]
//! waits for the drain; [`Registry::shutdown`] and dropping the registry
//! shut the retired executors still held down themselves, and wait for
//! that (but for the drain of the retired executor whose job calls them,
//! which waits for that job).
//!
//! Rule sets are replaced by the file's. Sequences (code) survive; hooks
//! and fault handlers stay with an executor that keeps its name and go with
//! one that is removed.

use super::running::{self, Retiring};
use super::{Entry, Registry, Table};
use crate::ConfigError;
use crate::esb::config::{self, Plan};
use crate::pool::Shared;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::thread;

impl Registry {
    /// Applies an edited file to the running registry: executors whose
    /// settings are unchanged keep running, those whose only changes are
    /// thread settings (`core_threads`, `max_threads`, `keep_alive`) keep
    /// running and take them in place, new ones start, other changed and
    /// removed ones are retired (they run what they had accepted, then
    /// stop; see [`Reload`]). Checks and builds everything first, so a file
    /// with a mistake changes nothing.
    ///
    /// It takes `&self`: share the registry as an `Arc<Registry>`, with no
    /// lock around it. Enqueues and lookups on other threads go on during
    /// the reload and see either the old executors or the new ones; a
    /// retired executor is shut down gracefully on a background thread
    /// (its accepted jobs run), whoever holds a clone of it, and a sequence
    /// message that meets it is queued into the executor in its place. Reloads (and
    /// registrations) take turns. Rule sets are replaced by the file's;
    /// sequences survive; hooks and fault handlers stay with an executor
    /// that keeps its name.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] if the file cannot be read, has a mistake, or an
    /// executor cannot start, or of kind
    /// [`ShutDown`](crate::ConfigErrorKind::ShutDown) once the registry
    /// has been [shut down](Registry::shutdown); the registry is then
    /// unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Registry;
    /// use std::sync::Arc;
    ///
    /// let dir = std::env::temp_dir().join(format!("reload-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("executors.toml");
    /// std::fs::write(&path, "[executors.a]\nlanes = [{ priority = 1 }]\n")?;
    /// let executors = Arc::new(Registry::from_path(&path)?);
    ///
    /// std::fs::write(&path, "[executors.b]\nlanes = [{ priority = 1 }]\n")?;
    /// let reloader = Arc::clone(&executors);
    /// let reload = std::thread::spawn(move || reloader.reload(&path)).join().unwrap()?;
    /// assert_eq!(reload.added, ["b"]);
    /// assert_eq!(reload.removed, ["a"]);
    /// reload.wait(); // "a" has drained and stopped
    /// assert_eq!(executors.names(), ["b"]);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reload(&self, path: impl AsRef<Path>) -> Result<Reload, ConfigError> {
        let plan = config::read(path.as_ref())?;
        self.apply(plan)
    }

    /// As [`reload`](Registry::reload), from TOML text.
    ///
    /// # Errors
    ///
    /// As [`reload`](Registry::reload).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Registry;
    ///
    /// let executors = Registry::from_toml_str("[executors.a]\nlanes = [{ priority = 1 }]\n")?;
    /// let reload = executors.reload_toml_str(
    ///     "[executors.a]\nlanes = [{ priority = 1 }]\n[executors.b]\nlanes = [{ priority = 1 }]\n",
    /// )?;
    /// assert_eq!(reload.unchanged, ["a"]);
    /// assert_eq!(reload.added, ["b"]);
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn reload_toml_str(&self, toml: &str) -> Result<Reload, ConfigError> {
        let plan = config::parse(toml.to_owned(), None)?;
        self.apply(plan)
    }

    fn apply(&self, mut plan: Plan) -> Result<Reload, ConfigError> {
        self.options.select(&mut plan)?;
        let writer = self.writer();
        if *writer {
            return Err(ConfigError::shut_down());
        }
        let current = self.table();
        // Build first: on error `fresh` drops (shutting down what it built)
        // and the registry is untouched.
        let mut fresh = BTreeMap::new();
        let mut resized = BTreeMap::new();
        for executor in &plan.executors {
            match current.entries.get(&executor.name) {
                Some(e) if e.spec == executor.spec => {}
                Some(e) if e.spec.differs_only_in_threads(&executor.spec) => {
                    // The configure function's settings win here too, as
                    // they did when the executor was built.
                    let threads =
                        plan.threads(executor, |b| self.options.finish(&executor.name, b))?;
                    resized.insert(executor.name.clone(), (e.executor.clone(), threads));
                }
                _ => {
                    let built = plan.build(executor, |b| self.options.finish(&executor.name, b))?;
                    fresh.insert(executor.name.clone(), built);
                }
            }
        }
        // Everything checked and built: the thread settings go in now.
        for executor in &plan.executors {
            if let Some((running, threads)) = resized.get(&executor.name) {
                plan.resize(executor, running, threads)?;
            }
        }

        let mut old = current.entries.clone();
        let mut next = Table {
            entries: BTreeMap::new(),
            rules: plan.rules,
            sequences: current.sequences.clone(),
            counters: current.counters.clone(),
            mailboxes: plan.mailboxes,
        };
        let mut report = Reload::default();
        let mut retired = Vec::new();
        for executor in plan.executors {
            let name = executor.name;
            let entry = match (old.remove(&name), fresh.remove(&name)) {
                (Some(kept), None) => {
                    let mut kept = Entry::clone(&kept);
                    kept.rules = executor.rules;
                    if resized.contains_key(&name) {
                        kept.spec = executor.spec;
                        report.resized.push(name.clone());
                    } else {
                        report.unchanged.push(name.clone());
                    }
                    kept
                }
                (Some(previous), Some(built)) => {
                    let mut entry = Entry::new(&name, built, executor.spec, executor.rules);
                    entry.hook = previous.hook.clone();
                    entry.fault = previous.fault.clone();
                    retired.push(previous.executor.clone());
                    report.replaced.push(name.clone());
                    entry
                }
                (None, Some(built)) => {
                    report.added.push(name.clone());
                    Entry::new(&name, built, executor.spec, executor.rules)
                }
                // Every name of the plan is either running or was built.
                (None, None) => continue,
            };
            next.entries.insert(name, Arc::new(entry));
        }
        for (name, entry) in old {
            report.removed.push(name);
            retired.push(entry.executor.clone());
        }

        // Shut down once the new table is in, so a lookup from now on
        // finds the executors that took their places; detached first:
        // whoever drops the last clone (this thread, as it drops the old
        // table, or a worker of another executor on its way out of an
        // enqueue) does not wait for the drain, the retiring thread does.
        let pools = running::pools(&retired);
        for pool in &pools {
            pool.detach();
        }
        drop(retired);
        let replaced = self.publish(next);
        drop((replaced, current));
        self.retire(pools, &report.drained);
        drop(writer);
        Ok(report)
    }

    /// Shuts `pools` down gracefully (every accepted job runs) on a
    /// background thread, then marks `drained`.
    fn retire(&self, pools: Vec<Arc<Shared>>, drained: &Drained) {
        let mut retiring = self.retiring.lock().unwrap_or_else(PoisonError::into_inner);
        retiring.retain(|h| !h.is_finished());
        if pools.is_empty() {
            Drained::finish(&drained.0);
            return;
        }
        let done = Arc::clone(&drained.0);
        let weak: Vec<Weak<Shared>> = pools.iter().map(Arc::downgrade).collect();
        // Closed at once, here: from now on every clone refuses new jobs,
        // and the thread only waits for the accepted ones to run.
        for pool in &pools {
            pool.close();
        }
        let spawned = thread::Builder::new()
            .name("executors-retire".to_owned())
            .spawn(move || {
                // Set even if a shutdown panics, so `wait` returns.
                let _finish = FinishOnDrop(done);
                Retiring::drain(pools);
            });
        match spawned {
            Ok(handle) => retiring.push(Retiring::new(handle, weak)),
            // The pools went with the closure: each retired executor,
            // closed, drains as its workers finish its jobs, and `wait`
            // does not wait for it.
            Err(_) => Drained::finish(&drained.0),
        }
    }
}

// ===== Reload report =====

/// What a [`reload`](Registry::reload) did, by executor name (each list
/// sorted), and a way to wait until the retired executors have drained.
///
/// # Examples
///
/// ```
/// use priority_executor::Registry;
///
/// let executors = Registry::from_toml_str(
///     "[executors.a]\nlanes = [{ priority = 1 }]\n[executors.b]\nlanes = [{ priority = 1 }]\n",
/// )?;
/// let reload = executors.reload_toml_str(
///     "[executors.a]\nlanes = [{ priority = 1, weight = 3 }]\n\
///      [executors.c]\nlanes = [{ priority = 1 }]\n",
/// )?;
/// assert_eq!(reload.replaced, ["a"]);
/// assert_eq!(reload.removed, ["b"]);
/// assert_eq!(reload.added, ["c"]);
/// assert!(reload.unchanged.is_empty());
/// reload.wait();
/// assert!(reload.is_drained());
/// executors.shutdown();
/// # Ok::<(), priority_executor::ConfigError>(())
/// ```
#[derive(Debug, Default)]
pub struct Reload {
    /// Executors that are new in the file.
    pub added: Vec<String>,
    /// Executors no longer in the file: retired.
    pub removed: Vec<String>,
    /// Executors whose settings changed: a fresh one took the name, the old
    /// one is retired.
    pub replaced: Vec<String>,
    /// Executors whose only changes were thread settings
    /// (`core_threads`, `max_threads`, `keep_alive`): still running, queue
    /// and all, with the new settings applied in place (their rules may
    /// have changed too).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Registry;
    ///
    /// let executors = Registry::from_toml_str(
    ///     "[executors.a]\ncore_threads = 1\nmax_threads = 2\nlanes = [{ priority = 1 }]\n",
    /// )?;
    /// let before = executors.get("a").unwrap();
    /// let reload = executors.reload_toml_str(
    ///     "[executors.a]\ncore_threads = 3\nmax_threads = 6\nlanes = [{ priority = 1 }]\n",
    /// )?;
    /// assert_eq!(reload.resized, ["a"]);
    /// assert!(reload.replaced.is_empty());
    /// // The same executor, with its queue, now with the new settings.
    /// assert_eq!(before.config().max_threads, 6);
    /// drop(before);
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub resized: Vec<String>,
    /// Executors whose settings did not change: still running, queue and
    /// all (their rules may have changed).
    pub unchanged: Vec<String>,
    drained: Drained,
}

impl Reload {
    /// Blocks until every executor this reload retired has run all the jobs
    /// it had accepted and stopped its threads. Clones held elsewhere (from
    /// [`Registry::get`], the bridge's, a job's own) do not hold it up: a
    /// retired executor is shut down whoever holds it. Not from a job of a
    /// retired executor, which the drain waits for.
    ///
    /// # Examples
    ///
    /// See [`Reload`].
    pub fn wait(&self) {
        let (done, changed) = &*self.drained.0;
        let mut done = done.lock().unwrap_or_else(PoisonError::into_inner);
        while !*done {
            done = changed.wait(done).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Whether the retired executors have all drained and stopped.
    ///
    /// # Examples
    ///
    /// See [`Reload`].
    pub fn is_drained(&self) -> bool {
        *self
            .drained
            .0
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Set once the executors retired by one reload have drained.
#[derive(Debug, Default)]
struct Drained(Arc<(Mutex<bool>, Condvar)>);

impl Drained {
    fn finish(latch: &(Mutex<bool>, Condvar)) {
        *latch.0.lock().unwrap_or_else(PoisonError::into_inner) = true;
        latch.1.notify_all();
    }
}

struct FinishOnDrop(Arc<(Mutex<bool>, Condvar)>);

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        Drained::finish(&self.0);
    }
}
