//! A builder's refusal: [`BuildError`], the settings an executor cannot
//! run with.

use super::InvalidSetting;
use crate::priority::Priority;

/// A setting that makes [`ExecutorBuilder::build`](crate::ExecutorBuilder::build)
/// fail, naming the setting and the value.
///
/// # Examples
///
/// ```
/// use priority_executor::{BuildError, Executor, LaneConfig, Priority};
///
/// let err = Executor::builder()
///     .lane_config(LaneConfig::new(Priority(5)).weight(0))
///     .build()
///     .unwrap_err();
/// let BuildError::Invalid(invalid) = &err else { panic!("{err}") };
/// assert_eq!((invalid.lane, invalid.setting), (Some(Priority(5)), "weight"));
/// assert_eq!(
///     err.to_string(),
///     "lane 5: weight = 0 is not allowed (expected at least 1)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No lane was declared; an executor needs at least one.
    #[error("no lanes: declare at least one lane with .lane(priority, capacity)")]
    NoLanes,
    /// Two lanes share a priority.
    #[error("lane {priority} is declared twice: each priority has one lane")]
    DuplicateLane {
        /// The repeated priority.
        priority: Priority,
    },
    /// `core_threads` is larger than `max_threads`.
    #[error("core_threads ({core}) must not exceed max_threads ({max})")]
    CoreExceedsMax {
        /// The configured core thread count.
        core: usize,
        /// The configured maximum thread count.
        max: usize,
    },
    /// A setting has a value it does not allow: a weight, capacity or
    /// `max_running` of 0, a `max_running` share outside 1 to 100
    /// percent, a zero `promote_after`, `max_threads` of 0.
    #[error(transparent)]
    Invalid(#[from] InvalidSetting),
    /// The weights add up to more than the picker's cycle can hold.
    #[error(
        "lane weights add up to {sum}, more than the limit of {limit}; give the lanes explicit smaller weights with LaneConfig::weight"
    )]
    WeightsTooLarge {
        /// The sum of all lane weights.
        sum: u64,
        /// The largest sum accepted.
        limit: u64,
    },
    /// Two lanes have the same [name](crate::LaneConfig::name).
    #[error("lane name {name:?} is given to two lanes: a lane's name is unique in its executor")]
    DuplicateLaneName {
        /// The name given twice.
        name: String,
    },
    /// The name cannot name a thread: it contains a NUL byte.
    #[error("name {name:?} contains a NUL byte, which a thread name cannot hold")]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// `core_threads` is above 0 but the operating system refused to start
    /// a worker thread with these settings (most often a `stack_size` too
    /// large for it). `build` starts one such thread to find out, and
    /// joins it at once.
    #[error(
        "core_threads ({core}): a worker thread{} cannot start: {error}",
        stack_note(*.stack_size)
    )]
    CannotStartThread {
        /// The configured core thread count.
        core: usize,
        /// The configured `stack_size`, if any.
        stack_size: Option<usize>,
        /// The kind of the operating system's error.
        kind: std::io::ErrorKind,
        /// The operating system's error, as text.
        error: String,
    },
}

/// The thread counts' own checks, as [`build`](crate::ExecutorBuilder::build)
/// and [`set_threads`](crate::Executor::set_threads) make them.
pub(crate) fn check_threads(core: usize, max: usize) -> Result<(), BuildError> {
    if max == 0 {
        return Err(InvalidSetting::new("max_threads", 0, "at least 1").into());
    }
    if core > max {
        return Err(BuildError::CoreExceedsMax { core, max });
    }
    Ok(())
}

fn stack_note(stack_size: Option<usize>) -> String {
    stack_size.map_or_else(String::new, |bytes| {
        format!(" with stack_size {bytes} bytes")
    })
}
