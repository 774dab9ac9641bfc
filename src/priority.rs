//! Priorities and lane capacities: the two numbers that describe a lane.

use std::fmt;

/// The priority of a lane and of the jobs queued in it. Larger is more
/// important.
///
/// Unless a lane is given an explicit weight, its priority is also its weight
/// in the round robin: lanes of priority 10 and 1 are served ten to one, and
/// the lane of priority 1 is never starved.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
///
/// assert!(Priority(10) > Priority(1));
/// assert_eq!(Priority::from(7), Priority(7));
/// assert_eq!(Priority(10).to_string(), "10");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub u32);

impl From<u32> for Priority {
    fn from(value: u32) -> Self {
        Priority(value)
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// How many jobs a lane may hold while they wait for a worker.
///
/// A bounded lane gives backpressure: [`ExecutorHandle::enqueue`] blocks
/// while the lane is full, [`ExecutorHandle::try_enqueue`] hands the job
/// back.
///
/// [`ExecutorHandle::enqueue`]: crate::ExecutorHandle::enqueue
/// [`ExecutorHandle::try_enqueue`]: crate::ExecutorHandle::try_enqueue
///
/// # Examples
///
/// ```
/// use priority_executor::Capacity;
///
/// assert_eq!(Capacity::Bounded(100).limit(), Some(100));
/// assert_eq!(Capacity::Unbounded.limit(), None);
/// assert_eq!(Capacity::Bounded(100).to_string(), "100");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Capacity {
    /// At most this many queued jobs (at least 1).
    Bounded(usize),
    /// No limit but memory.
    #[default]
    Unbounded,
}

impl Capacity {
    /// The limit, or `None` for an unbounded lane.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Capacity;
    ///
    /// assert_eq!(Capacity::Bounded(3).limit(), Some(3));
    /// ```
    pub fn limit(self) -> Option<usize> {
        match self {
            Capacity::Bounded(n) => Some(n),
            Capacity::Unbounded => None,
        }
    }
}

impl fmt::Display for Capacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Capacity::Bounded(n) => write!(f, "{n}"),
            Capacity::Unbounded => f.write_str("unbounded"),
        }
    }
}
