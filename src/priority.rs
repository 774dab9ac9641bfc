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

/// The seed's four levels, spaced by 100 so that levels in between need no
/// change elsewhere. **Larger is more important** here; Akka's
/// `PriorityGenerator` is lower-first, so the order of the numbers is
/// reversed from the seed's (`URGENT = 100` there, `400` here).
impl Priority {
    /// The lowest named level (Akka seed: `LOW = 400`).
    pub const LOW: Priority = Priority(100);
    /// The default priority of a message that carries none (Akka seed:
    /// `MEDIUM = 300`).
    pub const MEDIUM: Priority = Priority(200);
    /// The default priority of `stop` and `kill` (Akka seed: `HIGH = 200`).
    pub const HIGH: Priority = Priority(300);
    /// The highest named level (Akka seed: `URGENT = 100`).
    pub const URGENT: Priority = Priority(400);

    /// The named level spelt `name` (`"urgent"`, `"high"`, `"medium"`,
    /// `"low"`, in any case), as `executors.toml` may write a priority.
    #[cfg_attr(not(feature = "esb"), allow(dead_code))]
    pub(crate) fn from_level_name(name: &str) -> Option<Priority> {
        [
            ("urgent", Priority::URGENT),
            ("high", Priority::HIGH),
            ("medium", Priority::MEDIUM),
            ("low", Priority::LOW),
        ]
        .into_iter()
        .find(|(level, _)| level.eq_ignore_ascii_case(name))
        .map(|(_, p)| p)
    }
}

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
/// A bounded lane gives backpressure: [`Executor::enqueue`] blocks
/// while the lane is full; [`Executor::enqueue_with`] with
/// [`JobOptions::wait_at_most`] waits at most a time, then hands the job
/// back.
///
/// [`Executor::enqueue`]: crate::Executor::enqueue
/// [`Executor::enqueue_with`]: crate::Executor::enqueue_with
/// [`JobOptions::wait_at_most`]: crate::JobOptions::wait_at_most
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
    /// No limit but memory. A pool lane keeps the memory of its longest
    /// backlog for reuse until the pool drops (24 bytes a queued job, in
    /// blocks of 64 jobs): a burst of a million jobs leaves 24 MB with
    /// the lane. A mailbox lane gives its blocks back as it drains.
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

    /// With `used` slots taken, is a *run* of slots free: a quarter of the
    /// capacity, at least one? What a sender that found a bounded lane full
    /// waits for while it spins, before it sleeps (the executor's lanes and
    /// the mailboxes' alike). Resuming at the first free slot makes the
    /// sender and the consumer take turns job by job, each turn a full lane
    /// and a wait, the lane's cache lines moving between the cores every
    /// time; waiting for a run lets the sender fill it in one go.
    pub(crate) fn has_room_for_a_run(self, used: usize) -> bool {
        match self {
            Capacity::Bounded(cap) => used.saturating_add((cap / 4).max(1)) <= cap,
            Capacity::Unbounded => true,
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

#[cfg(test)]
mod tests {
    use super::Capacity;

    #[test]
    fn a_run_is_a_quarter_of_the_capacity_and_at_least_one_slot() {
        let room = |cap: usize, used: usize| Capacity::Bounded(cap).has_room_for_a_run(used);
        // 1024: a run is 256 slots.
        assert!(room(1024, 768));
        assert!(!room(1024, 769));
        // 3: a run is one slot, as for 1.
        assert!(room(3, 2));
        assert!(!room(3, 3));
        assert!(room(1, 0));
        assert!(!room(1, 1));
        // Never an overflow, and an unbounded lane always has room.
        assert!(!room(8, usize::MAX));
        assert!(Capacity::Unbounded.has_room_for_a_run(usize::MAX));
    }
}
