//! A job from `enqueue` to its handle: what runs ([`body`]), the one
//! allocation it lives in while queued ([`cell`]), how the lanes and workers
//! hold it ([`task`]), what the caller holds ([`handle`]), why it produced
//! no value ([`error`]) and its per-job settings ([`options`]).

pub(crate) mod body;
pub(crate) mod cell;
mod error;
mod handle;
mod options;
pub(crate) mod task;

pub use error::JobError;
pub use handle::{JobHandle, PendingJob};
#[cfg(any(feature = "actor", feature = "esb"))]
pub use options::SendOptions;
pub use options::{Attempt, JobOptions, RetryPolicy};
