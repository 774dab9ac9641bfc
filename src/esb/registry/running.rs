//! Executors a reload retired, draining once the last of their users lets
//! go: the registry's table, a caller between looking one up and queueing
//! into it, or a clone from [`Registry::get`](crate::Registry::get).
//!
//! A reload swaps the table without waiting for anyone: a producer that
//! looked an executor up just before may still be blocked on one of its
//! full lanes. Shutting the executor down then would refuse that producer's
//! message. Instead the reload tells each retired executor where to go
//! once its last `Executor` is dropped, and drops the table's: whoever
//! drops the last clone sends the pool over a channel to the thread that
//! retires it, which shuts it down gracefully (every accepted job runs).
//! Nobody ever shuts an executor down inline on the way out of an enqueue,
//! so a worker that enqueues into the registry never ends up waiting for
//! itself. Shutting the registry down does not wait for users to let go:
//! it shuts the retired executors still open down itself, and then waits
//! for the retiring thread, except when called from a worker of one of
//! them, which that thread may be waiting for.

use crate::Executor;
use crate::pool::{Released, Shared};
use std::fmt;
use std::sync::Weak;
use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;

/// Marks `executors` retired: the last clone of each sends its pool to
/// `to` rather than shutting it down itself.
pub(crate) fn retire_to(executors: &[Executor], to: &Sender<Released>) -> Vec<Weak<Shared>> {
    executors
        .iter()
        .map(|executor| {
            executor.shared().release_to(Some(to.clone()));
            std::sync::Arc::downgrade(executor.shared())
        })
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

    /// The body of the retiring thread: drains each pool it receives; ends
    /// once every retired executor has been drained (its sender gone).
    pub(crate) fn drain(pools: Receiver<Released>) {
        for released in pools {
            drop(released);
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
                // Its last clone shuts it down (again, at once) itself.
                shared.release_to(None);
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
