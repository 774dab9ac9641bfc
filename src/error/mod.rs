//! Errors of building an executor, of queueing a job, of a wait and of a
//! lookup by name.
//!
//! An [`EnqueueError`] always carries the job back: a job the executor did
//! not accept is never dropped behind the caller's back.

mod build;
mod enqueue;
mod lookup;
mod setting;

pub use build::BuildError;
pub(crate) use build::check_threads;
pub use enqueue::{BatchError, EnqueueError};
pub use lookup::{TimedOut, UnknownName};
pub use setting::InvalidSetting;
pub(crate) use setting::check_capacity;
