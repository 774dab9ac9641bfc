//! The executor: one type, `Clone`, with every method inherent. The pool
//! stays open while any clone lives (`pool/owners.rs`); the methods are
//! split by concern: enqueueing (`enqueue.rs`), awaiting room
//! (`reserve.rs`), settings (`settings.rs`, `config.rs`), and identity,
//! metrics, waiting and shutdown (`lifecycle.rs`).

mod config;
mod end_async;
mod enqueue;
mod lifecycle;
mod pause;
mod reserve;
mod settings;

pub use config::ExecutorConfig;
pub use pause::PauseError;
pub use reserve::{Permit, Reserve};

use crate::pool::Shared;
use crate::sync::Arc;
use std::fmt;

/// A thread pool that runs jobs from one FIFO lane per priority, choosing
/// between lanes by weighted round robin.
///
/// Build one with [`Executor::builder`]. An `Executor` is cheap to clone
/// (one reference count, as crossbeam's `Sender` or tokio's `Handle`),
/// `Send` and `Sync`: give each thread or job that enqueues its own clone.
/// Every clone is the same executor, with the enqueue family, the metrics,
/// [`wait_idle`](Executor::wait_idle) and the shutdown methods.
///
/// # Lifetime
///
/// The pool runs until the last clone is dropped, which is a graceful
/// [`shutdown`](Executor::shutdown): every accepted job runs, then the
/// worker threads exit and are joined. Any clone may shut it down earlier
/// through `&self` ([`shutdown`](Executor::shutdown),
/// [`shutdown_now`](Executor::shutdown_now),
/// [`shutdown_timeout`](Executor::shutdown_timeout)); the other clones then
/// get their jobs back as [`EnqueueError::ShutDown`](crate::EnqueueError::ShutDown).
///
/// The pool's own threads, queued jobs and timers do not keep it open. A
/// job that captures a clone does, until the job has run or been dropped:
/// a job that re-enqueues itself through its clone forever keeps the pool
/// running forever. Call [`shutdown`](Executor::shutdown) explicitly when
/// such jobs may be queued. Dropping the last clone inside one of the
/// executor's own jobs is allowed: it shuts down as `shutdown` called from
/// a job does, without waiting for its own thread.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Priority};
///
/// let exec = Executor::builder()
///     .name("visa")
///     .lane(Priority(10), Capacity::Bounded(1000))
///     .lane(Priority(1), Capacity::Bounded(1000))
///     .build()?;
///
/// let urgent = exec.enqueue(Priority(10), || "priority visa").unwrap();
/// let normal = exec.enqueue(Priority(1), || "standard visa").unwrap();
/// assert_eq!(urgent.join(), Ok("priority visa"));
/// assert_eq!(normal.join(), Ok("standard visa"));
/// exec.shutdown();
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
///
/// Clones shared with jobs and threads:
///
/// ```
/// use priority_executor::{Capacity, EnqueueError, Executor, Priority};
///
/// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
///
/// // A job enqueues a follow-up job through its own clone.
/// let inner = exec.clone();
/// let outer = exec
///     .enqueue(Priority(1), move || inner.enqueue(Priority(1), || 21 * 2).unwrap())
///     .unwrap();
/// assert_eq!(outer.join().unwrap().join(), Ok(42));
///
/// // Another thread shuts the executor down through `&self`.
/// let other = exec.clone();
/// std::thread::spawn(move || other.shutdown()).join().unwrap();
/// assert!(exec.is_terminated());
/// assert!(matches!(exec.enqueue(Priority(1), || ()).unwrap_err(), EnqueueError::ShutDown { .. }));
/// # Ok::<(), priority_executor::BuildError>(())
/// ```
pub struct Executor {
    shared: Arc<Shared>,
}

impl Executor {
    /// The first `Executor` of a pool just built.
    pub(crate) fn from_shared(shared: Arc<Shared>) -> Executor {
        shared.acquire();
        Executor { shared }
    }
}

impl Clone for Executor {
    /// Another owner of the same executor: one reference count.
    #[inline]
    fn clone(&self) -> Executor {
        self.shared.acquire();
        Executor {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// The last clone shuts the executor down gracefully (see
/// [Lifetime](Executor#lifetime)).
impl Drop for Executor {
    fn drop(&mut self) {
        self.shared.release();
    }
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = &self.shared;
        let limits = shared.limits.snapshot();
        f.debug_struct("Executor")
            .field("name", &shared.name)
            .field("picker", &shared.picker())
            .field("priorities", &self.priorities())
            .field("core_threads", &limits.core)
            .field("max_threads", &limits.max)
            .field("keep_alive", &limits.keep_alive)
            .field("shut_down", &self.is_shut_down())
            .finish_non_exhaustive()
    }
}
