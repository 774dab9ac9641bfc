//! Reading an executor's settings back and changing them on a live pool.

use super::Executor;
use super::ExecutorConfig;
use crate::error::{BuildError, UnknownName};
use crate::priority::Priority;
use std::time::Duration;

impl Executor {
    /// The settings the executor runs with: thread counts, keep-alive,
    /// picker and every lane's configuration.
    ///
    /// # Examples
    ///
    /// See [`ExecutorConfig`].
    pub fn config(&self) -> ExecutorConfig {
        let shared = &self.shared;
        let limits = shared.limits.snapshot();
        ExecutorConfig {
            name: shared.name.clone(),
            core_threads: limits.core,
            max_threads: limits.max,
            keep_alive: limits.keep_alive,
            allow_core_timeout: limits.allow_core_timeout,
            picker: shared.picker(),
            lanes: shared.lane_configs.to_vec(),
            stack_size: shared.thread_settings.stack_size,
        }
    }

    /// The priority of the lane [named](crate::LaneConfig::name) `name`
    /// (in code, or in `executors.toml`), to pass where a priority goes.
    ///
    /// # Errors
    ///
    /// [`UnknownName`], listing the names there are, if no lane has this
    /// name.
    ///
    /// # Examples
    ///
    /// See [`LaneConfig::name`](crate::LaneConfig::name).
    pub fn lane_priority(&self, name: &str) -> Result<Priority, UnknownName> {
        let lanes = &self.shared.lane_configs;
        lanes
            .iter()
            .find(|l| l.name.as_deref() == Some(name))
            .map(|l| l.priority)
            .ok_or_else(|| {
                let known = lanes.iter().filter_map(|l| l.name.clone()).collect();
                UnknownName::new("lane", name, known)
            })
    }

    /// Changes `core_threads` and `max_threads` of the running executor
    /// (Java's `setCorePoolSize` and `setMaximumPoolSize`), checked as a
    /// pair, so that no order of two changes is needed to move both past
    /// each other; to change one alone, against the other's value at the
    /// time, see [`set_core_threads`](Executor::set_core_threads) and
    /// [`set_max_threads`](Executor::set_max_threads). This is
    /// what a reload of `executors.toml` that changes only thread settings
    /// applies.
    ///
    /// Growing the core starts threads at once for jobs that wait, up to the
    /// new core; growing the max starts threads at once while more jobs wait
    /// than workers are idle. Shrinking the core lets the workers now above
    /// it exit once idle for the keep-alive; shrinking the max lets the
    /// workers above it exit as soon as they are idle (a running job is
    /// never interrupted). No job is lost or moved either way: jobs stay in
    /// their lanes and the workers alive take them. A lane's `max_running`
    /// given as [`MaxRunning::Percent`](crate::MaxRunning::Percent) is
    /// resolved again against the new `max_threads`, as a fresh build with
    /// these settings would resolve it (a reload alike); one given in
    /// threads stays.
    ///
    /// # Errors
    ///
    /// [`BuildError::Invalid`](crate::BuildError::Invalid) for a max of
    /// 0, [`BuildError::CoreExceedsMax`](crate::BuildError::CoreExceedsMax)
    /// if `core > max`; nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{BuildError, Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(4)
    ///     .max_threads(8)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// // Both at once: lowering the max alone to 2 would be below the core.
    /// exec.set_threads(1, 2).unwrap();
    /// let config = exec.config();
    /// assert_eq!((config.core_threads, config.max_threads), (1, 2));
    /// assert_eq!(
    ///     exec.set_threads(3, 2),
    ///     Err(BuildError::CoreExceedsMax { core: 3, max: 2 })
    /// );
    /// ```
    ///
    /// The core alone:
    ///
    /// ```
    /// use priority_executor::{BuildError, Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(1)
    ///     .max_threads(4)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// exec.set_threads(3, 4).unwrap();
    /// assert_eq!(exec.prestart_core_threads(), 3);
    /// assert_eq!(exec.config().core_threads, 3);
    /// assert_eq!(
    ///     exec.set_threads(5, 4),
    ///     Err(BuildError::CoreExceedsMax { core: 5, max: 4 })
    /// );
    /// ```
    ///
    /// The max alone:
    ///
    /// ```
    /// use priority_executor::{BuildError, Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(2)
    ///     .max_threads(2)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()
    ///     .unwrap();
    /// exec.set_threads(2, 8).unwrap();
    /// assert_eq!(exec.config().max_threads, 8);
    /// assert!(matches!(exec.set_threads(2, 0), Err(BuildError::Invalid(_))));
    /// assert_eq!(
    ///     exec.set_threads(2, 1),
    ///     Err(BuildError::CoreExceedsMax { core: 2, max: 1 })
    /// );
    /// ```
    pub fn set_threads(&self, core: usize, max: usize) -> Result<(), BuildError> {
        self.shared.set_threads(core, max)
    }

    /// Changes `core_threads` alone (Java's `setCorePoolSize`):
    /// `set_threads(core, max)` with `max` the `max_threads` at the time,
    /// read and checked under the lock every change of the thread settings
    /// takes, so a concurrent [`set_max_threads`](Executor::set_max_threads)
    /// or `set_threads` is never overwritten with a value read before it
    /// (as `set_threads(core, exec.config().max_threads)` could). Growing
    /// and shrinking act as [`set_threads`](Executor::set_threads) says.
    ///
    /// # Errors
    ///
    /// [`BuildError::CoreExceedsMax`](crate::BuildError::CoreExceedsMax)
    /// if `core` is above the current `max_threads`; nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{BuildError, Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(1)
    ///     .max_threads(4)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()?;
    /// exec.set_core_threads(3)?;
    /// assert_eq!(exec.prestart_core_threads(), 3);
    /// assert_eq!(
    ///     exec.set_core_threads(5),
    ///     Err(BuildError::CoreExceedsMax { core: 5, max: 4 })
    /// );
    /// let config = exec.config();
    /// assert_eq!((config.core_threads, config.max_threads), (3, 4));
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn set_core_threads(&self, core: usize) -> Result<(), BuildError> {
        self.shared.set_core_threads(core)
    }

    /// Changes `max_threads` alone (Java's `setMaximumPoolSize`):
    /// `set_threads(core, max)` with `core` the `core_threads` at the time,
    /// read and checked under the same lock as
    /// [`set_core_threads`](Executor::set_core_threads) reads the max, so
    /// neither undoes a concurrent change of the other. Growing and
    /// shrinking act as [`set_threads`](Executor::set_threads) says,
    /// a lane's share-of-threads cap included.
    ///
    /// # Errors
    ///
    /// [`BuildError::Invalid`](crate::BuildError::Invalid) for a max of
    /// 0, [`BuildError::CoreExceedsMax`](crate::BuildError::CoreExceedsMax)
    /// if `max` is below the current `core_threads`; nothing changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{BuildError, Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .core_threads(2)
    ///     .max_threads(2)
    ///     .lane(Priority(1), Capacity::Unbounded)
    ///     .build()?;
    /// exec.set_max_threads(8)?;
    /// assert!(matches!(exec.set_max_threads(0), Err(BuildError::Invalid(_))));
    /// assert_eq!(
    ///     exec.set_max_threads(1),
    ///     Err(BuildError::CoreExceedsMax { core: 2, max: 1 })
    /// );
    /// let config = exec.config();
    /// assert_eq!((config.core_threads, config.max_threads), (2, 8));
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn set_max_threads(&self, max: usize) -> Result<(), BuildError> {
        self.shared.set_max_threads(max)
    }

    /// Changes how long a thread above `core_threads` (or any thread, with
    /// `allow_core_timeout`) may stay idle before it exits (Java's
    /// `setKeepAliveTime`). Sleeping workers wake to sleep again with the
    /// new value.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// exec.set_keep_alive(Duration::from_secs(5));
    /// assert_eq!(exec.config().keep_alive, Duration::from_secs(5));
    /// ```
    pub fn set_keep_alive(&self, keep_alive: Duration) {
        self.shared.set_keep_alive(keep_alive);
    }

    /// Starts the core threads now instead of on demand; returns how many
    /// were started.
    ///
    /// # Examples
    ///
    /// See [`ThreadMetrics`](crate::ThreadMetrics).
    pub fn prestart_core_threads(&self) -> usize {
        self.shared.prestart_core()
    }
}
