//! Executors a reload retired, and the thread that drains them.
//!
//! A reload swaps the table without waiting for anyone, then shuts each
//! retired executor down gracefully on a background thread: every job it
//! had accepted runs, then its threads stop. Retiring is a shutdown, so a
//! clone held anywhere (a caller between looking it up and queueing into
//! it, a clone from [`Registry::get`](crate::Registry::get), the RabbitMQ
//! bridge, the HTTP layer, a job or hook of its own) neither keeps it
//! running nor holds up [`Reload::wait`](crate::Reload::wait): from then
//! on it refuses jobs with `ShutDown`, as after
//! [`Executor::shutdown`](crate::Executor::shutdown). The registry's own
//! enqueues that meet a retired executor so look the name up again and
//! queue into the executor that took its place (`enqueue.rs`). Nobody shuts an
//! executor down inline on the way out of an enqueue, so a worker that
//! enqueues into the registry never ends up waiting for itself. Shutting
//! the registry down shuts the retired executors still draining down
//! itself too, then waits for the retiring thread, except when called from
//! a worker of one of them, which that thread may be waiting for.

use crate::Executor;
use crate::pool::Shared;
use std::fmt;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

/// The pools of `executors`, to be shut down by the retiring thread.
pub(crate) fn pools(executors: &[Executor]) -> Vec<Arc<Shared>> {
    executors
        .iter()
        .map(|executor| Arc::clone(executor.shared()))
        .collect()
}

/// The executors retired by one reload, and the thread that drains them.
pub(crate) struct Retiring {
    thread: JoinHandle<()>,
    pools: Vec<Weak<Shared>>,
}

impl Retiring {
    pub(crate) fn new(thread: JoinHandle<()>, pools: Vec<Weak<Shared>>) -> Self {
        Retiring { thread, pools }
    }

    /// The body of the retiring thread: shuts each pool down gracefully,
    /// whoever still holds a clone of it (module docs).
    pub(crate) fn drain(pools: Vec<Arc<Shared>>) {
        for pool in pools {
            pool.shut_down(None);
        }
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Shuts down the retired executors still open (their users keep
    /// clones that now refuse jobs), then waits for the retiring thread,
    /// unless the caller is a worker of one of them (a job calling
    /// `Registry::shutdown`, or dropping the last `Arc<Registry>`).
    ///
    /// Such a worker cannot wait for that thread: the thread may be
    /// shutting the worker's executor down, which waits for every one of
    /// its workers to exit, this one included, and it exits only once its
    /// job returns. So the caller does not join it: each retired executor
    /// is shut down here all the same (the caller's own as a job shuts its
    /// executor down, every other worker gone), and the thread ends on its
    /// own once the job has returned and the executor has drained.
    pub(crate) fn finish(self) {
        let mut inside = false;
        for pool in &self.pools {
            if let Some(shared) = pool.upgrade() {
                inside |= shared.is_own_worker();
                shared.shut_down(None);
            }
        }
        if inside {
            // Dropping the handle leaves the thread to finish by itself.
            return;
        }
        // The thread only shuts executors down; if that panicked there is
        // nothing left to drain.
        let _ = self.thread.join();
    }
}

impl fmt::Debug for Retiring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retiring")
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}
