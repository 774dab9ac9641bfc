//! A wait that ran out of time ([`TimedOut`]) and a name that names
//! nothing ([`UnknownName`]).

use crate::util::List;
use std::fmt;

/// A wait with a timeout ran out of time:
/// [`Executor::shutdown_timeout`](crate::Executor::shutdown_timeout) (the
/// workers go on draining in the background; nothing is dropped),
/// [`Executor::await_termination`](crate::Executor::await_termination) or
/// [`Executor::wait_idle_timeout`](crate::Executor::wait_idle_timeout).
///
/// # Examples
///
/// ```
/// use priority_executor::TimedOut;
///
/// let t = TimedOut { queued: 3, running: 1 };
/// assert_eq!(t.to_string(), "timed out with 3 jobs queued and 1 running");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("timed out with {queued} jobs queued and {running} running")]
pub struct TimedOut {
    /// Jobs still queued when the time ran out.
    pub queued: usize,
    /// Jobs running when the time ran out.
    pub running: usize,
}

/// A name that names nothing: no lane of an executor
/// ([`Executor::lane_priority`](crate::Executor::lane_priority)), no
/// executor or no registered sequence of a registry. Its message lists the
/// names there are.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, LaneConfig, Priority};
///
/// let exec = Executor::builder()
///     .lane_config(LaneConfig::new(Priority(10)).name("interactive"))
///     .lane_config(LaneConfig::new(Priority(1)).name("batch"))
///     .lane(Priority(0), Capacity::Unbounded)
///     .build()?;
/// let err = exec.lane_priority("bulk").unwrap_err();
/// assert_eq!(err.to_string(), "no lane named \"bulk\" (lanes: interactive, batch)");
/// assert_eq!(err.name, "bulk");
/// assert_eq!(err.known, ["interactive", "batch"]);
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownName {
    /// The name that was not found.
    pub name: String,
    /// The names there are: executors and sequences sorted, lanes highest
    /// priority first (unnamed lanes are not listed).
    pub known: Vec<String>,
    /// What was named: `lane`, `executor`, `sequence`.
    what: &'static str,
}

impl UnknownName {
    pub(crate) fn new(what: &'static str, name: &str, known: Vec<String>) -> Self {
        UnknownName {
            what,
            name: name.to_owned(),
            known,
        }
    }
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known = List(&self.known);
        write!(
            f,
            "no {} named {:?} ({}s: {known})",
            self.what, self.name, self.what
        )
    }
}

impl std::error::Error for UnknownName {}
