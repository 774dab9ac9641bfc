//! What the code adds to a file's executors before they start: a
//! configure function per executor (the builder's hooks, which a file
//! cannot hold) and the names to start, when not all.

use super::Registry;
use crate::esb::config::{self, Plan};
use crate::{ConfigError, ExecutorBuilder};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// A function that finishes an executor's builder, after the file's
/// settings are on it.
pub(crate) type ConfigureFn = Arc<dyn Fn(ExecutorBuilder) -> ExecutorBuilder + Send + Sync>;

/// Loads `executors.toml` with what the code adds: [`configure`] hands
/// a file entry's [`ExecutorBuilder`] to code before the executor starts
/// (for hooks such as `before_execute`, `on_dead_letter`, `thread_name`),
/// and [`only`] starts just the executors named. Made by
/// [`Registry::builder`]; [`Registry::from_path`] is this with
/// nothing added.
///
/// What it adds holds for the registry's life: a
/// [`reload`](Registry::reload) that replaces an executor calls its
/// configure function again, and starts only the executors named; one
/// that changes only an executor's thread settings (`core_threads`,
/// `max_threads`, `keep_alive`) calls it too, and the running executor
/// takes the thread settings the function leaves on the builder, so a
/// thread count the function sets stays as it set it.
///
/// [`configure`]: RegistryBuilder::configure
/// [`only`]: RegistryBuilder::only
///
/// # Examples
///
/// ```
/// use priority_executor::{Registry, Priority};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let toml = "
///     [executors.thumbs]
///     lanes = [{ priority = 10 }, { priority = 1 }]
///     [executors.reports]
///     lanes = [{ priority = 1 }]
/// ";
/// let started = Arc::new(AtomicUsize::new(0));
/// let count = Arc::clone(&started);
/// let executors = Registry::builder()
///     .configure("thumbs", move |builder| {
///         let count = Arc::clone(&count);
///         builder.before_execute(move |_| {
///             count.fetch_add(1, Ordering::Relaxed);
///         })
///     })
///     .only(["thumbs"])
///     .load_toml_str(toml)?;
/// assert_eq!(executors.names(), ["thumbs"]);
/// executors.get("thumbs")?.enqueue(Priority(10), || ())?.join()?;
/// assert_eq!(started.load(Ordering::Relaxed), 1);
/// executors.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
#[must_use = "a builder does nothing until it loads a file"]
pub struct RegistryBuilder {
    pub(super) options: Options,
}

/// What an [`RegistryBuilder`] gathered, kept by the registry for reloads.
#[derive(Clone, Default)]
pub(super) struct Options {
    configure: BTreeMap<String, ConfigureFn>,
    only: Option<BTreeSet<String>>,
    /// Lane names the code needs, by executor.
    lanes: BTreeMap<String, Vec<String>>,
}

impl RegistryBuilder {
    /// Gives the executor `name` of the file to `configure` before it
    /// starts: the builder carries the file's settings (name, threads,
    /// lanes, picker), and what `configure` sets on it wins. Called again
    /// for the same name, the last function is kept.
    ///
    /// # Panics
    ///
    /// A panic in `configure` reaches the caller of the load (or of the
    /// reload); what was started by then shuts down, and a reload leaves
    /// the registry as it was.
    ///
    /// # Examples
    ///
    /// See [`RegistryBuilder`].
    pub fn configure<F>(mut self, name: impl Into<String>, configure: F) -> Self
    where
        F: Fn(ExecutorBuilder) -> ExecutorBuilder + Send + Sync + 'static,
    {
        self.options
            .configure
            .insert(name.into(), Arc::new(configure));
        self
    }

    /// Starts only the executors named here (by default, every executor of
    /// the file). Called again, the names add up.
    ///
    /// # Examples
    ///
    /// See [`RegistryBuilder`].
    pub fn only<I>(mut self, names: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.options
            .only
            .get_or_insert_with(BTreeSet::new)
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Declares the lanes the code needs in the executor `name`, by
    /// [name](crate::LaneConfig::name): the load (and every reload) fails
    /// if the file does not name them, pointing at the executor's lanes,
    /// instead of the first enqueue failing at run time. Called again, the
    /// names add up.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Registry;
    ///
    /// let file = r#"
    /// [executors.thumbs]
    /// lanes = [{ priority = 10, name = "interactive" }, { priority = 1, name = "bulk" }]
    /// "#;
    /// let executors = Registry::builder()
    ///     .require_lanes("thumbs", ["interactive", "bulk"])
    ///     .load_toml_str(file)?;
    /// let interactive = executors.get("thumbs")?.lane_priority("interactive")?;
    /// # let _ = interactive;
    /// executors.shutdown();
    ///
    /// let err = Registry::builder()
    ///     .require_lanes("thumbs", ["batch"])
    ///     .load_toml_str(file)
    ///     .unwrap_err();
    /// assert_eq!(err.line(), Some(3));
    /// assert!(err.to_string().contains("no lane named \"batch\", which the code needs"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn require_lanes<I>(mut self, name: impl Into<String>, lanes: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.options
            .lanes
            .entry(name.into())
            .or_default()
            .extend(lanes.into_iter().map(Into::into));
        self
    }

    /// Loads the file at `path` with what was added.
    ///
    /// # Errors
    ///
    /// As [`Registry::from_path`]; and a name given to
    /// [`configure`](Self::configure) or [`only`](Self::only) that the file
    /// has no `[executors.NAME]` for is an error of kind
    /// [`MissingKey`](crate::ConfigErrorKind::MissingKey) that lists the
    /// executors the file has.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Registry;
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/executors.toml");
    /// let err = Registry::builder().only(["thumbs"]).load(path).unwrap_err();
    /// assert!(err.to_string().contains("no [executors.thumbs] section"));
    /// ```
    pub fn load(self, path: impl AsRef<Path>) -> Result<Registry, ConfigError> {
        Registry::start(config::read(path.as_ref())?, self.options)
    }

    /// Loads executors from TOML text with what was added.
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load), without the file.
    ///
    /// # Examples
    ///
    /// See [`RegistryBuilder`].
    pub fn load_toml_str(self, toml: &str) -> Result<Registry, ConfigError> {
        Registry::start(config::parse(toml.to_owned(), None)?, self.options)
    }
}

impl Options {
    /// Keeps in `plan` only the executors to start, after checking that
    /// every name the code gave is in the file.
    pub(super) fn select(&self, plan: &mut Plan) -> Result<(), ConfigError> {
        let named = self.configure.keys().chain(self.only.iter().flatten());
        for name in named {
            plan.executor_named(name)?;
        }
        for (name, lanes) in &self.lanes {
            plan.check_lanes(name, lanes)?;
        }
        if let Some(only) = &self.only {
            plan.executors.retain(|e| only.contains(&e.name));
        }
        Ok(())
    }

    /// The file's builder for `name`, finished by its configure function.
    pub(super) fn finish(&self, name: &str, builder: ExecutorBuilder) -> ExecutorBuilder {
        match self.configure.get(name) {
            Some(configure) => configure(builder),
            None => builder,
        }
    }
}

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryBuilder")
            .field("configure", &self.options.configure.keys())
            .field("only", &self.options.only)
            .field("lanes", &self.options.lanes)
            .finish()
    }
}
