//! The worker threads: starting one, its loop, how an idle one searches and
//! sleeps, and how it leaves the pool (rules 3 and 4 of
//! `sleep/README.md`).

use super::Shared;
use crate::job::task::Task;
use crate::observe::facade::Recent;
use crate::sleep::Wake;
use crate::sync::atomic::Ordering;
use crate::sync::{
    Arc, decrement_above, dekker_fence, increment_below, lock, spin_hint, thread, thread_local,
    yield_now,
};
use std::cell::Cell;

/// Rounds an idle worker looks for work before it goes to sleep.
#[cfg(not(loom))]
const SPIN_ROUNDS: u32 = 32;
/// The spin is only a shortcut past the sleep protocol, which the models
/// check; under loom every round multiplies the interleavings to explore, so
/// one round keeps the spin path covered without drowning the protocol.
#[cfg(loom)]
const SPIN_ROUNDS: u32 = 1;

#[cfg(not(loom))]
thread_local! {
    /// The address of the pool whose worker this thread is, or 0.
    static WORKER_OF: Cell<usize> = const { Cell::new(0) };
}

// loom's macro takes no `const` block.
#[cfg(loom)]
thread_local! {
    static WORKER_OF: Cell<usize> = Cell::new(0);
}

impl Shared {
    /// Is the calling thread one of this pool's workers? (Set by the worker
    /// itself as it starts, so it holds before its first job.)
    pub(super) fn is_own_worker(&self) -> bool {
        WORKER_OF.with(|of| of.get() == self as *const Shared as usize)
    }

    /// Starts one worker if the pool is below `max`. Returns whether it did.
    #[cold]
    pub(crate) fn spawn_worker(self: &Arc<Self>) -> bool {
        let Some(live) = increment_below(&self.live, self.config.max) else {
            return false;
        };
        self.peak.fetch_max(live + 1, Ordering::Relaxed);
        // A new worker starts out idle: it is about to look for work, so
        // other producers need not start one more for the same job.
        self.idle.fetch_add(1, Ordering::SeqCst);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::clone(self);
        // The name was checked at build time (no NUL byte), so this cannot
        // panic; a failure to start is reported as `Err`.
        let spawned = thread::Builder::new()
            .name(format!("{}-{}", self.name, id))
            .spawn(move || worker_main(shared));
        match spawned {
            Ok(handle) => {
                let mut threads = lock(&self.threads);
                #[cfg(not(loom))]
                threads.retain(|h| !h.is_finished());
                threads.push(handle);
                true
            }
            Err(_) => {
                // Nothing to report to: the job stays queued for the
                // workers there are, and the next job tries again.
                self.idle.fetch_sub(1, Ordering::SeqCst);
                self.release_live();
                false
            }
        }
    }

    /// Starts threads until `core` are alive; returns how many it started.
    pub(crate) fn prestart_core(self: &Arc<Self>) -> usize {
        let mut started = 0;
        while self.live.load(Ordering::SeqCst) < self.config.core && !self.is_closed() {
            if !self.spawn_worker() {
                break;
            }
            started += 1;
        }
        started
    }

    /// Gives up a place in `live` and tells whoever waits for workers to
    /// exit (a worker waiting for the others counts itself, so every exit
    /// is announced, not only the last).
    fn release_live(&self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
        self.announce_exit();
    }

    fn announce_exit(&self) {
        let _guard = lock(&self.exited);
        self.worker_exited.notify_all();
    }

    /// An idle worker's search: spin a little, then sleep. Returns a job, or
    /// `None` when this worker should exit (its place already given up if it
    /// retired).
    fn find_work(&self, place: &mut Place) -> Option<(usize, Task)> {
        loop {
            if let Some(found) = self.next_task() {
                return Some(found);
            }
            if self.is_stopped() || self.drained() {
                return None;
            }
            let mut spun = false;
            for round in 0..SPIN_ROUNDS {
                if self.any_claimable() {
                    spun = true;
                    break;
                }
                if round * 2 < SPIN_ROUNDS {
                    spin_hint();
                } else {
                    yield_now();
                }
            }
            if spun {
                continue;
            }
            let may_time_out = self.config.allow_core_timeout
                || self.live.load(Ordering::Relaxed) > self.config.core;
            let keep_alive = may_time_out.then_some(self.config.keep_alive);
            match self.sleep.sleep(keep_alive, || self.should_wake()) {
                Wake::Recheck | Wake::Woken => {}
                Wake::TimedOut => {
                    if self.try_retire(place) {
                        return None;
                    }
                }
            }
        }
    }

    /// Rule 4: give up this worker's place if the pool may shrink, then
    /// re-check for work and take the place back if some appeared.
    fn try_retire(&self, place: &mut Place) -> bool {
        let floor = if self.config.allow_core_timeout {
            0
        } else {
            self.config.core
        };
        if decrement_above(&self.live, floor).is_none() {
            return false;
        }
        self.idle.fetch_sub(1, Ordering::SeqCst);
        // ORDERING: rule 4, the SeqCst decrements then the SeqCst re-check.
        dekker_fence();
        if self.any_ready()
            && !self.is_stopped()
            && increment_below(&self.live, self.config.max).is_some()
        {
            self.idle.fetch_add(1, Ordering::SeqCst);
            return false;
        }
        // Otherwise the pool is full again: a worker alive will take the job.
        *place = Place::Retired;
        self.announce_exit();
        true
    }
}

/// Where a worker stands in the thread counts, so its exit undoes exactly
/// what it holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Idle,
    Busy,
    Retired,
}

/// Gives the worker's place back however its loop ends.
struct WorkerExit<'a> {
    shared: &'a Shared,
    place: Place,
}

impl Drop for WorkerExit<'_> {
    fn drop(&mut self) {
        match self.place {
            Place::Retired => {}
            Place::Idle => {
                self.shared.idle.fetch_sub(1, Ordering::SeqCst);
                self.shared.release_live();
            }
            Place::Busy => self.shared.release_live(),
        }
    }
}

fn worker_main(shared: Arc<Shared>) {
    WORKER_OF.with(|of| of.set(Arc::as_ptr(&shared) as usize));
    let mut exit = WorkerExit {
        shared: &shared,
        place: Place::Idle,
    };
    shared.instruments.worker_started();
    while let Some((lane, task)) = shared.find_work(&mut exit.place) {
        shared.idle.fetch_sub(1, Ordering::SeqCst);
        exit.place = Place::Busy;
        shared.instruments.worker_busy();
        let recent = Recent::new();
        shared.execute(lane, task, &recent);
        while let Some((lane, task)) = shared.next_task() {
            shared.execute(lane, task, &recent);
        }
        shared.idle.fetch_add(1, Ordering::SeqCst);
        exit.place = Place::Idle;
        shared.instruments.worker_idle(&shared.lanes);
    }
    drop(exit);
    shared.instruments.worker_exited(&shared.lanes);
}
