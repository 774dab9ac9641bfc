//! [`ExecutorConfig`]: an executor's settings, read back.

use crate::lane::config::LaneConfig;
use crate::lane::picker::Picker;
use std::time::Duration;

/// The settings an executor runs with, as returned by
/// [`Executor::config`](crate::Executor::config): the builder's
/// values after defaults were filled in (the thread counts are the ones in
/// force).
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, LaneConfig, Picker, Priority};
/// use std::time::Duration;
///
/// let exec = Executor::builder()
///     .name("visa")
///     .core_threads(2)
///     .max_threads(8)
///     .keep_alive(Duration::from_secs(5))
///     .picker(Picker::Classic)
///     .lane(Priority(1), Capacity::Bounded(100))
///     .lane_config(LaneConfig::new(Priority(10)).weight(4))
///     .build()?;
/// let config = exec.config();
/// assert_eq!((config.core_threads, config.max_threads), (2, 8));
/// assert_eq!(config.keep_alive, Duration::from_secs(5));
/// assert!(!config.allow_core_timeout);
/// assert_eq!(config.picker, Picker::Classic);
/// // Lanes highest priority first, as the executor orders them.
/// assert_eq!(config.lanes[0], LaneConfig::new(Priority(10)).weight(4));
/// assert_eq!(config.lanes[1].capacity, Capacity::Bounded(100));
/// let priorities: Vec<Priority> = config.lanes.iter().map(|l| l.priority).collect();
/// assert_eq!(priorities, vec![Priority(10), Priority(1)]);
///
/// // Smooth is the default picker.
/// let plain = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
/// assert_eq!(plain.config().picker, Picker::Smooth);
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecutorConfig {
    /// The executor's name (threads are named after it).
    pub name: String,
    /// Threads kept alive while idle.
    pub core_threads: usize,
    /// The most threads the pool grows to.
    pub max_threads: usize,
    /// How long a thread above `core_threads` may stay idle.
    pub keep_alive: Duration,
    /// Whether core threads time out too.
    pub allow_core_timeout: bool,
    /// How the next lane is chosen.
    pub picker: Picker,
    /// Every lane, highest priority first.
    pub lanes: Vec<LaneConfig>,
    /// The worker threads' stack size, if set.
    pub stack_size: Option<usize>,
}
