//! Shutdown (rule 5 of `sleep/README.md`): closing the lanes, handing
//! back what never started, and waiting for the workers to exit.

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
                if let Some(task) = lane.take_claimed() {
                    lane.counters.handed_back.fetch_add(1, Ordering::Relaxed);
                    self.instruments.handed_back(index);
                    pending.push(PendingJob::new(lane.priority, task));
                }
            }
        }
        pending
    }

    /// Waits until every worker has exited, or until `deadline`. Returns
    /// whether they all did. A worker thread calling this (a job dropping
    /// the last handle to its own executor) does not wait for itself.
    pub(crate) fn wait_exited(&self, deadline: Option<Instant>) -> bool {
        let own = usize::from(self.is_own_worker());
        let mut guard = lock(&self.exited);
        loop {
            if self.live.load(Ordering::SeqCst) <= own {
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
}
