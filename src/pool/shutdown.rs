//! Shutdown (rule 5 of `sleep/README.md`): closing the lanes, handing
//! back what never started, and waiting for the workers to exit.

use super::worker::WorkerSlot;
use super::{CLOSED, Shared};
use crate::job::PendingJob;
use crate::sync::atomic::Ordering;
use crate::sync::{Arc, lock, thread, wait_until};
use std::time::Instant;

impl Shared {
    /// Rule 5: closed, no producer in flight, nothing queued, no retry
    /// waiting out its backoff.
    pub(super) fn drained(&self) -> bool {
        self.is_closed() && self.timer.pending() == 0 && !self.any_ready()
    }

    pub(super) fn should_wake(&self) -> bool {
        self.is_stopped() || self.any_claimable() || self.is_closed()
    }

    /// Rule 5: stop accepting, wake blocked producers and every sleeper.
    /// Idempotent.
    pub(crate) fn close(self: &Arc<Self>) {
        self.state.store(CLOSED, Ordering::SeqCst);
        for lane in self.lanes.iter() {
            lane.close();
            lane.wake_producers();
        }
        self.sleep.wake_all();
        // Retries waiting out a backoff are re-queued now.
        for entry in self.timer.flush(false) {
            self.lanes[entry.lane].push_retry(entry.task);
        }
        // Jobs accepted while no worker was alive still need one.
        if self.any_ready() && self.live.load(Ordering::SeqCst) == 0 && !self.is_stopped() {
            self.spawn_worker();
        }
    }

    /// Stops workers from starting jobs and takes every unclaimed job,
    /// highest priority first.
    pub(crate) fn stop_now(self: &Arc<Self>) -> Vec<PendingJob> {
        // Under the re-queue lock: a retry being queued now lands in a lane
        // before the loop below empties it; one queued later sees `stopped`.
        {
            let _gate = lock(&self.requeue);
            self.stopped.store(1, Ordering::SeqCst);
        }
        let delayed = self.timer.flush(true);
        self.close();
        let mut pending = Vec::new();
        for entry in delayed {
            let lane = &self.lanes[entry.lane];
            lane.counters.handed_back.fetch_add(1, Ordering::Relaxed);
            lane.counters
                .handed_back_delayed
                .fetch_add(1, Ordering::Relaxed);
            self.instruments.handed_back(entry.lane);
            pending.push(PendingJob::new(lane.priority, entry.task));
        }
        for (index, lane) in self.lanes.iter().enumerate() {
            while lane.try_claim() {
                if let Some(mut task) = lane.take_claimed() {
                    if task.cancelled() {
                        self.count_cancelled(index, false);
                        continue;
                    }
                    lane.counters.handed_back.fetch_add(1, Ordering::Relaxed);
                    self.instruments.handed_back(index);
                    pending.push(PendingJob::new(lane.priority, task));
                }
            }
        }
        // Rule 7: nothing queued will run now; waiters look again.
        self.notify_idle();
        pending
    }

    /// Closed, every worker gone, and no accepted job left queued
    /// (tombstones of refused producers aside).
    pub(crate) fn is_terminated(&self) -> bool {
        self.is_closed()
            && self.live.load(Ordering::SeqCst) == 0
            && self.lanes.iter().all(|lane| lane.queued() == 0)
    }

    /// Waits until every worker has exited, or until `deadline`. Returns
    /// whether they all did. A worker thread calling this (a job dropping
    /// the last handle to its own executor, or shutting it down) does not
    /// wait for itself.
    ///
    /// After a graceful close, a worker may exit having seen no work while
    /// a producer that opened its slot just before the close has not yet
    /// made its job visible to it, and `close` may have seen that worker
    /// still alive: the last exit then leaves an accepted job queued. So
    /// once the workers are gone this looks at the lanes again and starts a
    /// worker for what is there (rule 5); the wait ends with no worker and
    /// no accepted job left.
    pub(crate) fn wait_exited(self: &Arc<Self>, deadline: Option<Instant>) -> bool {
        let own = usize::from(self.is_own_worker());
        let mut guard = lock(&self.exited);
        loop {
            if self.live.load(Ordering::SeqCst) <= own {
                if own == 0 && self.is_closed() && !self.is_stopped() && self.any_ready() {
                    drop(guard);
                    if !self.spawn_worker() {
                        // No thread to be had: what is queued stays queued.
                        return true;
                    }
                    guard = lock(&self.exited);
                    continue;
                }
                if own == 0 && self.is_closed() {
                    drop(guard);
                    self.abandon_parked();
                }
                return true;
            }
            guard = match wait_until(&self.worker_exited, guard, deadline) {
                Ok(guard) => guard,
                Err(_) => return false,
            };
        }
    }

    /// Joins every worker thread that has been started (after
    /// [`Shared::wait_exited`], so none blocks for long).
    pub(crate) fn join_threads(&self) {
        let me = thread::current().id();
        let handles = std::mem::take(&mut *lock(&self.threads));
        for handle in handles {
            if handle.thread().id() != me {
                // A worker's panic is already counted; nothing to add here.
                let _ = handle.join();
            }
        }
    }

    /// The calling thread's slot, if it is one of this pool's workers.
    pub(super) fn own_slot(&self) -> Option<Arc<WorkerSlot>> {
        let me = thread::current().id();
        lock(&self.workers).iter().find(|w| w.thread == me).cloned()
    }
}
