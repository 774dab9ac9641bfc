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
    /// waiting out its backoff: an idle worker may exit. Jobs queued in a
    /// lane whose cap on running jobs is reached are left to the workers
    /// running that lane's jobs, which take them as their jobs end: an
    /// idle worker beside them would find nothing to claim and spin (its
    /// sleep ends at once on a closed executor), and a job of that lane
    /// shutting its executor down would wait for it for ever.
    pub(super) fn drained(&self) -> bool {
        self.is_closed()
            && self.timer.pending() == 0
            && self
                .lanes
                .iter()
                .all(|lane| !lane.is_ready() || lane.waits_for_its_runners())
    }

    pub(super) fn should_wake(&self) -> bool {
        self.is_stopped() || self.any_claimable() || self.is_closed()
    }

    /// Rule 5: stop accepting, wake blocked producers and every sleeper.
    /// Idempotent.
    pub(crate) fn close(self: &Arc<Self>) {
        // Rule 9: every lane resumed before the executor reads as closed,
        // and no pause after: a closing executor runs (or `shutdown_now`
        // hands back) what its lanes hold.
        self.resume_all_for_close();
        self.state.store(CLOSED, Ordering::SeqCst);
        for lane in self.lanes.iter() {
            lane.close();
            lane.wake_producers();
        }
        self.sleep.wake_all();
        // Retries waiting out a backoff are re-queued now, by the timer
        // thread (there is one whenever one waits: the first schedule
        // starts it, and without it a retry is never scheduled).
        self.timer.flush();
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
        let delayed = self.timer.take_all();
        self.close();
        let mut pending = Vec::new();
        let landed = delayed.len();
        for entry in delayed {
            let lane = &self.lanes[entry.lane];
            lane.counters.handed_back.fetch_add(1, Ordering::Relaxed);
            lane.counters
                .handed_back_delayed
                .fetch_add(1, Ordering::Relaxed);
            self.instruments.handed_back(entry.lane);
            pending.push(PendingJob::new(lane.priority, entry.task));
        }
        self.retries_landed(landed);
        for (index, lane) in self.lanes.iter().enumerate() {
            while let Some(claim) = lane.try_claim() {
                if let Some(mut task) = lane.take_claimed(claim) {
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
        // The lanes are empty now; a worker that exited before the loop
        // above set the gauges from the lanes as they were.
        self.instruments.refresh_queued(&self.lanes);
        pending
    }

    /// Closed, every worker gone, and no accepted job left queued
    /// (tombstones of refused producers aside).
    pub(crate) fn is_terminated(&self) -> bool {
        self.is_closed()
            && self.live.load(Ordering::SeqCst) == 0
            && self.lanes.iter().all(|lane| lane.queued() == 0)
    }

    /// Graceful shutdown from any thread: close, wait until the workers
    /// have exited (or `deadline`), then join the threads. Returns whether
    /// the wait ended before the deadline. A worker calling this waits on
    /// the pool for the whole call (rule 8).
    pub(crate) fn shut_down(self: &Arc<Self>, deadline: Option<Instant>) -> bool {
        let _waiting = self.wait_on_pool();
        self.close();
        let exited = self.wait_exited(deadline);
        if exited {
            self.join_threads();
        }
        exited
    }

    /// Waits until every worker has exited, or until `deadline`. Returns
    /// whether they all did.
    ///
    /// Rule 8: a worker thread calling this (a job shutting down its own
    /// executor, or dropping the last `Executor`) waits only for the
    /// workers not themselves waiting on the pool; itself and every other
    /// such worker exit once their jobs return. A thread outside the pool
    /// waits for every worker.
    ///
    /// After a graceful close, a worker may exit having seen no work while
    /// a producer that opened its slot just before the close has not yet
    /// made its job visible to it, and `close` may have seen that worker
    /// still alive: the last exit then leaves an accepted job queued. So
    /// once the workers are gone this looks at the lanes again and starts a
    /// worker for what is there (rule 5); the wait ends with no worker and
    /// no accepted job left. (A worker's wait leaves that to the workers
    /// still waiting, its own among them: they drain before they exit.)
    pub(crate) fn wait_exited(self: &Arc<Self>, deadline: Option<Instant>) -> bool {
        let _waiting = self.wait_on_pool();
        let inside = self.is_own_worker();
        let mut waiting = lock(&self.exited);
        loop {
            // The workers waiting on the pool, counted under the lock they
            // are marked under; this thread among them if it is a worker.
            let excused = if inside { *waiting } else { 0 };
            // ORDERING: SeqCst, as every access to `live` (rules 3 to 5).
            if self.live.load(Ordering::SeqCst) <= excused {
                if !inside && self.is_closed() && !self.is_stopped() && self.any_ready() {
                    drop(waiting);
                    if !self.spawn_worker() {
                        // No thread to be had: what is queued stays queued.
                        return true;
                    }
                    waiting = lock(&self.exited);
                    continue;
                }
                if !inside && self.is_closed() {
                    // The pool has ended: no worker will poll a parked
                    // future again.
                    drop(waiting);
                    self.abandon_parked();
                }
                return true;
            }
            waiting = match wait_until(&self.worker_exited, waiting, deadline) {
                Ok(guard) => guard,
                Err(_) => return false,
            };
        }
    }

    /// Rule 8: if the calling thread is one of this pool's workers, marks
    /// it as waiting on the pool until the returned guard drops, and tells
    /// the other waiters (they need not wait for it any more). Nested
    /// waits keep the outer mark.
    pub(super) fn wait_on_pool(&self) -> PoolWait<'_> {
        let slot = if self.is_own_worker() {
            self.own_slot()
        } else {
            None
        };
        let Some(slot) = slot else {
            return PoolWait {
                shared: self,
                slot: None,
            };
        };
        {
            let mut waiting = lock(&self.exited);
            // ORDERING: only this thread writes its mark, and under this
            // lock; SeqCst for the idle checks that read it without it.
            if slot.waits_on_pool.load(Ordering::SeqCst) {
                return PoolWait {
                    shared: self,
                    slot: None,
                };
            }
            // ORDERING: SeqCst, read by idle checks (rule 7) outside this
            // lock; the notification below follows it.
            slot.waits_on_pool.store(true, Ordering::SeqCst);
            *waiting += 1;
            self.worker_exited.notify_all();
        }
        self.notify_idle();
        PoolWait {
            shared: self,
            slot: Some(slot),
        }
    }

    /// Joins the threads that have been started (after
    /// [`Shared::wait_exited`], so none blocks for long), except, rule 8,
    /// the calling thread and, called from a worker, the workers still
    /// registered (they wait on the pool): their handles stay for a later
    /// join. A thread outside the pool also waits for joins that other
    /// threads have begun, so when it returns every thread it could see
    /// has finished, thread-local destructors included.
    pub(crate) fn join_threads(&self) {
        let me = thread::current().id();
        let inside = self.is_own_worker();
        let alive: Vec<thread::ThreadId> = if inside {
            lock(&self.workers).iter().map(|w| w.thread).collect()
        } else {
            Vec::new()
        };
        let mine = self.take_threads(|h| {
            let id = h.thread().id();
            id != me && !alive.contains(&id)
        });
        self.join_counted(mine);
        if !inside {
            let mut joining = lock(&self.joining);
            while *joining > 0 {
                joining = match wait_until(&self.joined, joining, None) {
                    Ok(guard) | Err(guard) => guard,
                };
            }
        }
    }

    /// Takes the thread handles `which` selects out of `threads`, counted
    /// in `joining` (under the same lock, so a thread outside the pool
    /// that finds them gone finds them counted) until
    /// [`Shared::join_counted`] has joined them.
    pub(super) fn take_threads(
        &self,
        which: impl FnMut(&mut thread::JoinHandle<()>) -> bool,
    ) -> Vec<thread::JoinHandle<()>> {
        let mut threads = lock(&self.threads);
        let taken: Vec<_> = threads.extract_if(.., which).collect();
        if !taken.is_empty() {
            *lock(&self.joining) += taken.len();
        }
        taken
    }

    /// Joins handles from [`Shared::take_threads`] and uncounts them.
    pub(super) fn join_counted(&self, handles: Vec<thread::JoinHandle<()>>) {
        if handles.is_empty() {
            return;
        }
        let n = handles.len();
        for handle in handles {
            // A worker's panic is already counted; nothing to add here.
            let _ = handle.join();
        }
        *lock(&self.joining) -= n;
        self.joined.notify_all();
    }

    /// The calling thread's slot, if it is one of this pool's workers.
    pub(super) fn own_slot(&self) -> Option<Arc<WorkerSlot>> {
        let me = thread::current().id();
        lock(&self.workers).iter().find(|w| w.thread == me).cloned()
    }
}

/// A worker's wait on its own pool (rule 8), from
/// [`Shared::wait_on_pool`] until dropped.
pub(super) struct PoolWait<'a> {
    shared: &'a Shared,
    /// The slot this guard marked; `None` outside the pool or nested.
    slot: Option<Arc<WorkerSlot>>,
}

impl Drop for PoolWait<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let mut waiting = lock(&self.shared.exited);
            // ORDERING: SeqCst, as the store that set it.
            slot.waits_on_pool.store(false, Ordering::SeqCst);
            *waiting -= 1;
        }
    }
}
