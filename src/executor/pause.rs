//! Pausing and resuming a lane.

use super::Executor;
use crate::priority::Priority;

/// Why a lane could not be paused or resumed.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, PauseError, Priority};
///
/// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
/// assert_eq!(
///     exec.pause_lane(Priority(7)),
///     Err(PauseError::UnknownPriority { priority: Priority(7) })
/// );
/// exec.shutdown();
/// assert_eq!(exec.pause_lane(Priority(1)), Err(PauseError::ShutDown));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PauseError {
    /// No lane has this priority.
    #[error("no lane for priority {}", priority.0)]
    UnknownPriority {
        /// The priority asked for.
        priority: Priority,
    },
    /// The executor is shutting down or shut down: its lanes are drained
    /// (or handed back), never paused.
    #[error("the executor is shut down")]
    ShutDown,
}

impl Executor {
    /// Pauses the lane of `priority`: it keeps accepting jobs up to its
    /// capacity (a full paused lane refuses, blocks or discards as its
    /// [`RejectionPolicy`](crate::RejectionPolicy) says), and the picker
    /// skips it, its turns passing to the other lanes as an empty lane's
    /// do. Jobs already running finish. Pausing a paused lane does
    /// nothing.
    ///
    /// While paused, the lane's jobs count as queued: [`wait_idle`]
    /// waits for them (until [`resume_lane`]), [`shutdown`] resumes the
    /// lane and runs them (a graceful shutdown runs every accepted job),
    /// and [`shutdown_now`] hands them back with the others. An idle
    /// worker does not spin on a paused lane: it sleeps, and the resume
    /// wakes it.
    ///
    /// Costs nothing on `enqueue`; a worker's claim reads one more flag
    /// (a relaxed load, on a cache line the claim reads anyway).
    ///
    /// [`wait_idle`]: Executor::wait_idle
    /// [`resume_lane`]: Executor::resume_lane
    /// [`shutdown`]: Executor::shutdown
    /// [`shutdown_now`]: Executor::shutdown_now
    ///
    /// # Errors
    ///
    /// [`PauseError::UnknownPriority`] if no lane has this priority,
    /// [`PauseError::ShutDown`] once shutdown has begun.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder()
    ///     .lane(Priority(10), Capacity::Unbounded)
    ///     .lane(Priority(1), Capacity::Bounded(2))
    ///     .build()
    ///     .unwrap();
    /// exec.pause_lane(Priority(1)).unwrap();
    /// assert!(exec.is_lane_paused(Priority(1)));
    /// let low = exec.enqueue(Priority(1), || "low").unwrap();
    /// let high = exec.enqueue(Priority(10), || "high").unwrap();
    /// assert_eq!(high.join(), Ok("high")); // the other lane runs on
    /// assert!(!low.is_finished());
    /// assert_eq!(exec.metrics().lane(Priority(1)).unwrap().queued, 1);
    ///
    /// exec.resume_lane(Priority(1)).unwrap();
    /// assert_eq!(low.join(), Ok("low"));
    /// ```
    pub fn pause_lane(&self, priority: Priority) -> Result<(), PauseError> {
        let index = self.lane_of(priority)?;
        if self.shared.pause_lane(index) {
            Ok(())
        } else {
            Err(PauseError::ShutDown)
        }
    }

    /// Resumes a lane paused with [`pause_lane`](Executor::pause_lane):
    /// the picker serves it again at its weight, and sleeping workers wake
    /// for the jobs that waited. Resuming a lane that is not paused does
    /// nothing, also after shutdown.
    ///
    /// # Errors
    ///
    /// [`PauseError::UnknownPriority`] if no lane has this priority.
    ///
    /// # Examples
    ///
    /// See [`pause_lane`](Executor::pause_lane).
    pub fn resume_lane(&self, priority: Priority) -> Result<(), PauseError> {
        let index = self.lane_of(priority)?;
        self.shared.resume_lane(index);
        Ok(())
    }

    /// Is the lane of `priority` paused? `false` for an unknown priority.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// assert!(!exec.is_lane_paused(Priority(1)));
    /// exec.pause_lane(Priority(1)).unwrap();
    /// assert!(exec.is_lane_paused(Priority(1)));
    /// assert!(!exec.is_lane_paused(Priority(9)));
    /// ```
    pub fn is_lane_paused(&self, priority: Priority) -> bool {
        self.shared
            .lane_index(priority)
            .is_some_and(|index| self.shared.is_lane_paused(index))
    }

    fn lane_of(&self, priority: Priority) -> Result<usize, PauseError> {
        self.shared
            .lane_index(priority)
            .ok_or(PauseError::UnknownPriority { priority })
    }
}
