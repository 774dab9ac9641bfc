//! Reloading an edited `executors.toml` into a running registry.
//!
//! [`Executors::reload`] takes `&mut self`: it swaps executors while no
//! message can be on its way in. It checks and builds everything first, so
//! a file with a mistake changes nothing. Then an executor whose settings
//! are unchanged keeps running untouched (its queue included); a new one
//! starts; a changed one is replaced by a fresh one, and the old one, like
//! a removed one, is *retired*: it takes no new messages, runs every job it
//! had accepted, and stops. Retired executors drain on a background thread,
//! so a caller holding the registry in a `RwLock` holds the write lock only
//! for the swap, and a sequence that enqueues into the same registry cannot
//! deadlock the reload. [`Reload::wait`] waits for the drain;
//! [`Executors::shutdown`] and dropping the registry wait for it too.
//!
//! Rule sets are replaced by the file's. Sequences (code) survive; hooks
//! and fault handlers stay with an executor that keeps its name and go with
//! one that is removed.

use super::{Entry, Executors};
use crate::ConfigError;
use crate::esb::config::{self, Plan};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;

impl Executors {
    /// Applies an edited file to the running registry: executors whose
    /// settings are unchanged keep running, new ones start, changed and
    /// removed ones are retired (they run what they had accepted, then
    /// stop; see [`Reload`]). Checks and builds everything first, so a file
    /// with a mistake changes nothing.
    ///
    /// It takes `&mut self`, so no message is on its way in during the
    /// swap; the retired executors drain on a background thread, so a
    /// caller holding the registry in a `RwLock` holds the write lock only
    /// for the swap. Rule sets are replaced by the file's; sequences
    /// survive; hooks and fault handlers stay with an executor that keeps
    /// its name.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] if the file cannot be read, has a mistake, or an
    /// executor cannot start; the registry is then unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Executors;
    ///
    /// let dir = std::env::temp_dir().join(format!("reload-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("executors.toml");
    /// std::fs::write(&path, "[executors.a]\nlanes = [{ priority = 1 }]\n")?;
    /// let mut executors = Executors::from_path(&path)?;
    ///
    /// std::fs::write(&path, "[executors.b]\nlanes = [{ priority = 1 }]\n")?;
    /// let reload = executors.reload(&path)?;
    /// assert_eq!(reload.added(), ["b"]);
    /// assert_eq!(reload.removed(), ["a"]);
    /// reload.wait(); // "a" has drained and stopped
    /// executors.shutdown();
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reload(&mut self, path: impl AsRef<Path>) -> Result<Reload, ConfigError> {
        let plan = config::read(path.as_ref())?;
        self.apply(plan)
    }

    /// As [`reload`](Executors::reload), from TOML text.
    ///
    /// # Errors
    ///
    /// As [`reload`](Executors::reload).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Executors;
    ///
    /// let mut executors = Executors::from_toml_str("[executors.a]\nlanes = [{ priority = 1 }]\n")?;
    /// let reload = executors.reload_toml_str(
    ///     "[executors.a]\nlanes = [{ priority = 1 }]\n[executors.b]\nlanes = [{ priority = 1 }]\n",
    /// )?;
    /// assert_eq!(reload.unchanged(), ["a"]);
    /// assert_eq!(reload.added(), ["b"]);
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    pub fn reload_toml_str(&mut self, toml: &str) -> Result<Reload, ConfigError> {
        let plan = config::parse(toml.to_owned(), None)?;
        self.apply(plan)
    }

    fn apply(&mut self, plan: Plan) -> Result<Reload, ConfigError> {
        // Build first: on error `fresh` drops (shutting down what it built)
        // and the registry is untouched.
        let mut fresh = BTreeMap::new();
        for executor in &plan.executors {
            let same = self
                .entries
                .get(&executor.name)
                .is_some_and(|e| e.spec == executor.spec);
            if !same {
                fresh.insert(executor.name.clone(), plan.build(executor)?);
            }
        }

        let mut old = std::mem::take(&mut self.entries);
        let mut report = Reload::default();
        let mut retired = Vec::new();
        for executor in plan.executors {
            let name = executor.name;
            let entry = match (old.remove(&name), fresh.remove(&name)) {
                (Some(mut kept), None) => {
                    kept.rules = executor.rules;
                    report.unchanged.push(name.clone());
                    kept
                }
                (Some(previous), Some(built)) => {
                    let mut entry = Entry::new(&name, built, executor.spec, executor.rules);
                    entry.hook = previous.hook;
                    entry.fault = previous.fault;
                    retired.push(previous.executor);
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
            self.entries.insert(name, entry);
        }
        for (name, entry) in old {
            report.removed.push(name);
            retired.push(entry.executor);
        }
        self.rules = plan.rules;

        self.retiring.retain(|h| !h.is_finished());
        report.drained = Drained::default();
        if !retired.is_empty() {
            let done = Arc::clone(&report.drained.0);
            let spawned = thread::Builder::new()
                .name("executors-retire".to_owned())
                .spawn(move || {
                    // Set even if a shutdown panics, so `wait` returns.
                    let _finish = FinishOnDrop(done);
                    for executor in retired {
                        executor.shutdown();
                    }
                });
            match spawned {
                Ok(handle) => self.retiring.push(handle),
                // The closure is gone: dropping it dropped the executors,
                // and dropping an executor drains it here, inline.
                Err(_) => Drained::finish(&report.drained.0),
            }
        } else {
            Drained::finish(&report.drained.0);
        }
        Ok(report)
    }
}

// ===== Reload report =====

/// What a [`reload`](Executors::reload) did, by executor name (each list
/// sorted), and a way to wait until the retired executors have drained.
///
/// # Examples
///
/// ```
/// use priority_executor::Executors;
///
/// let mut executors = Executors::from_toml_str(
///     "[executors.a]\nlanes = [{ priority = 1 }]\n[executors.b]\nlanes = [{ priority = 1 }]\n",
/// )?;
/// let reload = executors.reload_toml_str(
///     "[executors.a]\nmax_threads = 3\nlanes = [{ priority = 1 }]\n\
///      [executors.c]\nlanes = [{ priority = 1 }]\n",
/// )?;
/// assert_eq!(reload.replaced(), ["a"]);
/// assert_eq!(reload.removed(), ["b"]);
/// assert_eq!(reload.added(), ["c"]);
/// assert!(reload.unchanged().is_empty());
/// reload.wait();
/// assert!(reload.is_drained());
/// executors.shutdown();
/// # Ok::<(), priority_executor::ConfigError>(())
/// ```
#[derive(Debug, Default)]
pub struct Reload {
    added: Vec<String>,
    removed: Vec<String>,
    replaced: Vec<String>,
    unchanged: Vec<String>,
    drained: Drained,
}

impl Reload {
    /// Executors that are new in the file.
    ///
    /// # Examples
    ///
    /// See [`Reload`].
    pub fn added(&self) -> &[String] {
        &self.added
    }

    /// Executors no longer in the file: retired.
    ///
    /// # Examples
    ///
    /// See [`Reload`].
    pub fn removed(&self) -> &[String] {
        &self.removed
    }

    /// Executors whose settings changed: a fresh one took the name, the old
    /// one is retired.
    ///
    /// # Examples
    ///
    /// See [`Reload`].
    pub fn replaced(&self) -> &[String] {
        &self.replaced
    }

    /// Executors whose settings did not change: still running, queue and
    /// all (their rules may have changed).
    ///
    /// # Examples
    ///
    /// See [`Reload`].
    pub fn unchanged(&self) -> &[String] {
        &self.unchanged
    }

    /// Blocks until every executor this reload retired has run all the jobs
    /// it had accepted and stopped its threads.
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
