//! The executor: the owner of a pool. Its methods live on the
//! [`ExecutorHandle`] it dereferences to (`handle.rs`), as tokio's runtime
//! exposes its handle; what only the owner may do stays here: build it,
//! hand out handles, shut down with a time limit, and the graceful `Drop`.

mod config;
mod enqueue;
mod handle;
mod reserve;
mod settings;

pub use config::ExecutorConfig;
pub use handle::ExecutorHandle;
pub use reserve::{Permit, Reserve};

use crate::error::TimedOut;
use crate::pool::Shared;
use crate::sync::{Arc, deadline_after};
use std::fmt;
use std::ops::Deref;
use std::time::Duration;

/// A thread pool that runs jobs from one FIFO lane per priority, choosing
/// between lanes by weighted round robin.
///
/// Build one with [`Executor::builder`]. The `Executor` is the owner of the
/// pool; it dereferences to an [`ExecutorHandle`], where the enqueue family,
/// the metrics and the shutdown methods are documented. Share it between
/// threads by reference, in an `Arc`, or through clones of
/// [`handle`](Executor::handle). Dropping it is a graceful
/// [`shutdown`](ExecutorHandle::shutdown): every queued job runs, then the
/// threads are joined (outstanding handles do not keep it running).
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
pub struct Executor {
    handle: ExecutorHandle,
    /// Set when `shutdown_timeout` gave up waiting: `Drop` must not wait.
    detached: bool,
}

impl Executor {
    pub(crate) fn from_shared(shared: Arc<Shared>) -> Executor {
        Executor {
            handle: ExecutorHandle { shared },
            detached: false,
        }
    }

    /// A cheap, clonable handle to this executor (one reference count), for
    /// jobs and other threads to enqueue, read metrics and shut down
    /// through. It does not keep the executor running: see
    /// [`ExecutorHandle`].
    ///
    /// # Examples
    ///
    /// See [`ExecutorHandle`].
    pub fn handle(&self) -> ExecutorHandle {
        self.handle.clone()
    }

    /// Like [`shutdown`](ExecutorHandle::shutdown), but waits at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`TimedOut`] with the jobs still queued and running when the
    /// time ran out. The threads go on draining in the background: nothing
    /// queued is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use std::time::Duration;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let _detached = exec.enqueue(Priority(1), || ());
    /// assert!(exec.shutdown_timeout(Duration::from_secs(10)).is_ok());
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Result<(), TimedOut> {
        if self.handle.shared.shut_down(deadline_after(timeout)) {
            Ok(())
        } else {
            self.detached = true;
            let m = self.metrics();
            Err(TimedOut {
                queued: m.queued(),
                running: m.threads.busy,
            })
        }
    }
}

impl Deref for Executor {
    type Target = ExecutorHandle;

    #[inline]
    fn deref(&self) -> &ExecutorHandle {
        &self.handle
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        if self.detached {
            return;
        }
        self.handle.shutdown();
    }
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = &self.handle.shared;
        let limits = shared.limits.snapshot();
        f.debug_struct("Executor")
            .field("name", &shared.name)
            .field("picker", &shared.picker())
            .field("priorities", &self.priorities())
            .field("core_threads", &limits.core)
            .field("max_threads", &limits.max)
            .field("keep_alive", &limits.keep_alive)
            .finish_non_exhaustive()
    }
}
