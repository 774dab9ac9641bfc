//! Why a job produced no value.

/// Why a job produced no value.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, JobError, Priority};
///
/// let exec = Executor::builder()
///     .core_threads(1)
///     .max_threads(1)
///     .lane(Priority(1), Capacity::Unbounded)
///     .build()
///     .unwrap();
/// let handle = exec.enqueue(Priority(1), || panic!("boom")).unwrap();
/// assert_eq!(
///     handle.join(),
///     Err(JobError::Panicked { message: "boom".into() })
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// The job panicked; the panic was caught and the worker lives on.
    #[error("job panicked: {message}")]
    Panicked {
        /// The panic message (or a note that the payload was not a string).
        message: String,
    },
    /// The job never ran: it was cancelled through its handle
    /// ([`JobHandle::cancel`](crate::JobHandle::cancel)), or handed back by
    /// [`Executor::shutdown_now`](crate::Executor::shutdown_now) and then
    /// dropped; or its result was already taken.
    #[error("job was cancelled before it ran")]
    Cancelled,
    /// The job's deadline passed before a worker started it; it never ran.
    #[error("job expired before it started")]
    Expired,
    /// The job was pushed out of its full lane by a newer one
    /// ([`RejectionPolicy::DiscardOldest`](crate::RejectionPolicy::DiscardOldest)); it never ran.
    #[error("job was discarded from its full lane to make room for a newer one")]
    Discarded,
    /// Every attempt of a retrying job failed; it went to the dead letters.
    #[error("job failed after {attempts} attempts: {message}")]
    Failed {
        /// How many times it ran.
        attempts: u32,
        /// The last attempt's error.
        message: String,
    },
}
