//! The worker threads: starting one, its loop, how an idle one searches and
//! sleeps, and how it leaves the pool (rules 3 and 4 of
//! `sleep/README.md`).

use super::Shared;
use super::tally::Tally;
use crate::job::task::Task;
use crate::observe::facade::Recent;
use crate::sleep::Wake;
use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::{
    Arc, decrement_above, dekker_fence, increment_below, lock, spin_hint, thread, thread_local,
    yield_now,
};
use crate::util::{call_quietly, drop_quietly};
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

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
    pub(crate) fn is_own_worker(&self) -> bool {
        WORKER_OF.with(|of| of.get() == self as *const Shared as usize)
    }

    /// Starts one worker if the pool is below `max`. Returns whether it did.
    #[cold]
    pub(crate) fn spawn_worker(self: &Arc<Self>) -> bool {
        self.try_spawn_worker().unwrap_or(false)
    }

    /// Starts one worker if the pool is below `max`: `Ok(true)` if it did,
    /// `Ok(false)` at `max`, and the operating system's error if the
    /// thread could not start (counted in the metrics; the place taken in
    /// `live` is given back).
    #[cold]
    pub(crate) fn try_spawn_worker(self: &Arc<Self>) -> std::io::Result<bool> {
        let Some(live) = increment_below(&self.live, self.limits.max()) else {
            return Ok(false);
        };
        self.peak.fetch_max(live + 1, Ordering::Relaxed);
        // A new worker starts out idle: it is about to look for work, so
        // other producers need not start one more for the same job.
        self.idle.fetch_add(1, Ordering::SeqCst);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::clone(self);
        // The name has no NUL byte (see `thread_name`), so this cannot
        // panic; a failure to start is reported as `Err`.
        let mut builder = thread::Builder::new().name(self.thread_name(id));
        if let Some(bytes) = self.thread_settings.stack_size {
            builder = builder.stack_size(bytes);
        }
        let spawned = builder.spawn(move || worker_main(shared));
        match spawned {
            Ok(handle) => {
                lock(&self.threads).push(handle);
                // Threads that exited by keep-alive are joined here rather
                // than kept for `shutdown`, so the list stays short. Not
                // detached: a thread whose main function has returned may
                // still be running its thread-local destructors, and
                // `shutdown` promises they are done; joining waits for
                // just that (and a shutdown meanwhile waits for this join).
                #[cfg(not(loom))]
                self.join_counted(self.take_threads(|h| h.is_finished()));
                Ok(true)
            }
            Err(error) => {
                // The job that asked for this thread stays queued for the
                // workers there are, and the next job tries again; with
                // none alive, `submit` hands its job back (rule 3).
                // ORDERING: a statistic; nothing is ordered by it.
                self.spawn_failures
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.idle.fetch_sub(1, Ordering::SeqCst);
                self.release_live();
                Err(error)
            }
        }
    }

    /// The name of worker `id`: the builder's name function's, unless it
    /// panics or returns a name with a NUL byte (which `spawn` would panic
    /// on); then the default `{executor}-{id}`, which the builder checked.
    #[cold]
    fn thread_name(&self, id: usize) -> String {
        if let Some(name_fn) = &self.thread_settings.name {
            match catch_unwind(AssertUnwindSafe(|| name_fn(id))) {
                Ok(name) if !name.contains('\0') => return name,
                Ok(_) => {}
                // Its payload is user code too: a drop that panics would
                // unwind with `live` and `idle` already raised.
                Err(payload) => drop_quietly(payload),
            }
        }
        format!("{}-{}", self.name, id)
    }

    /// Rule 3, the worker's half: having claimed a job it no longer counts
    /// as idle, so it looks again at what producers (or a resize raising
    /// `max`) decided while it still counted. If more jobs wait than
    /// workers are idle, it wakes a sleeper, or starts a thread below
    /// `max`. Once per batch, not per job.
    #[inline]
    fn after_claim(self: &Arc<Self>) {
        // ORDERING: SeqCst loads after the SeqCst decrement of `idle`: a
        // Dekker pair with a producer's publish-then-load of `idle`, and
        // with a resize's swap of `max` then load of `idle`; one of each
        // pair sees the other's write.
        if self.queued() <= self.idle.load(Ordering::SeqCst) || self.sleep.wake_one() {
            return;
        }
        if self.live.load(Ordering::SeqCst) < self.limits.max_seqcst() {
            self.spawn_worker();
        }
    }

    /// Starts threads until `core` are alive; returns how many it started.
    pub(crate) fn prestart_core(self: &Arc<Self>) -> usize {
        let mut started = 0;
        while self.live.load(Ordering::SeqCst) < self.limits.core() && !self.is_closed() {
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
    fn find_work(&self, place: &mut Place, slot: &WorkerSlot) -> Option<(usize, Task)> {
        loop {
            // Rule 7: busy before the claim; kept while spinning, so only
            // the way to sleep or out pays for clearing it.
            slot.set_busy(true);
            if let Some(found) = self.next_task(Some(&slot.tally)) {
                return Some(found);
            }
            if self.is_stopped() || self.drained() {
                self.stop_searching(slot);
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
            self.stop_searching(slot);
            // Read before the limits: a resize after it ends the sleep.
            let changes = self.limits.changes();
            let live = self.live.load(Ordering::Relaxed);
            if live > self.limits.max() {
                // `max_threads` was lowered below the threads alive: an
                // idle worker above it goes now, not after its keep-alive.
                if self.try_retire(place) {
                    return None;
                }
                continue;
            }
            let may_time_out = self.limits.allow_core_timeout() || live > self.limits.core();
            let keep_alive = may_time_out.then_some(self.limits.keep_alive());
            let woken = || self.should_wake() || self.limits.changes() != changes;
            match self.sleep.sleep(keep_alive, woken) {
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
        let floor = if self.limits.allow_core_timeout() {
            0
        } else {
            self.limits.core()
        };
        if decrement_above(&self.live, floor).is_none() {
            return false;
        }
        self.idle.fetch_sub(1, Ordering::SeqCst);
        // ORDERING: rule 4, the SeqCst decrements then the SeqCst re-check.
        dekker_fence();
        // A paused lane's jobs keep no worker: its resume wakes or starts
        // one (rule 9).
        if self.any_ready_unpaused()
            && !self.is_stopped()
            && increment_below(&self.live, self.limits.max()).is_some()
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

/// A worker as the pool sees it: registered by the worker thread itself
/// before it takes a job, removed when it exits.
pub(crate) struct WorkerSlot {
    pub(crate) thread: thread::ThreadId,
    /// Rule 7: set before each attempt to claim a job and kept through the
    /// batch that follows; cleared when the worker stops searching. Only
    /// this worker writes it, so it costs no shared read-modify-write.
    busy: CachePadded<AtomicBool>,
    /// Rule 8: the job this worker runs is itself waiting on the pool
    /// (`wait_idle`, `shutdown`, the last `Executor` dropped): other
    /// threads of the pool that wait on it do not wait for this worker.
    /// Written under `Shared::exited`.
    pub(crate) waits_on_pool: AtomicBool,
    /// The jobs this worker dispatched and completed, per lane.
    pub(crate) tally: Tally,
}

impl WorkerSlot {
    fn new(lanes: usize) -> WorkerSlot {
        WorkerSlot {
            thread: thread::current().id(),
            busy: CachePadded::new(AtomicBool::new(false)),
            waits_on_pool: AtomicBool::new(false),
            tally: Tally::new(lanes),
        }
    }

    /// ORDERING: rule 7. Setting needs no ordering of its own: the claim
    /// that follows is a release, which publishes the mark with it.
    /// Clearing is a release, so a reader that sees it clear (acquire)
    /// sees the batch done.
    #[inline]
    pub(crate) fn set_busy(&self, busy: bool) {
        let order = if busy {
            Ordering::Relaxed
        } else {
            Ordering::Release
        };
        self.busy.store(busy, order);
    }

    #[inline]
    pub(crate) fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
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
    slot: Arc<WorkerSlot>,
    place: Place,
}

impl Drop for WorkerExit<'_> {
    fn drop(&mut self) {
        // Before the place is given up (unless retiring gave it up already),
        // so that waiting for the workers to exit waits for this hook too.
        if let Some(hook) = &self.shared.thread_settings.on_stop {
            call_quietly(|| hook());
        }
        {
            // One lock for both, so a reader counts this worker's jobs
            // once: in its tally or in the shared counters.
            let mut workers = lock(&self.shared.workers);
            self.slot
                .tally
                .fold_into(&self.shared.lanes, &self.shared.waits);
            workers.retain(|w| !Arc::ptr_eq(w, &self.slot));
        }
        match self.place {
            Place::Retired => {}
            Place::Idle => {
                self.shared.idle.fetch_sub(1, Ordering::SeqCst);
                self.shared.release_live();
            }
            Place::Busy => self.shared.release_live(),
        }
        // Rule 7: a waiter may have counted this worker busy (it left while
        // running a job), or wait for the pool to terminate.
        self.shared.notify_idle();
    }
}

fn worker_main(shared: Arc<Shared>) {
    WORKER_OF.with(|of| of.set(Arc::as_ptr(&shared) as usize));
    // Registered before the start hook: a hook that waits on the pool
    // finds its own slot to mark (rule 8).
    let slot = Arc::new(WorkerSlot::new(shared.lanes.len()));
    lock(&shared.workers).push(Arc::clone(&slot));
    if let Some(hook) = &shared.thread_settings.on_start {
        call_quietly(|| hook());
    }
    let mut exit = WorkerExit {
        shared: &shared,
        slot,
        place: Place::Idle,
    };
    shared.instruments.worker_started();
    let slot = Arc::clone(&exit.slot);
    // Rule 7: from the claim in `find_work` to the end of this batch the
    // slot stays busy; nothing here marks or counts anything per job.
    while let Some((lane, task)) = shared.find_work(&mut exit.place, &slot) {
        shared.idle.fetch_sub(1, Ordering::SeqCst);
        shared.after_claim();
        exit.place = Place::Busy;
        shared.instruments.worker_busy();
        let recent = Recent::new();
        let tally = Some(&slot.tally);
        shared.execute(lane, task, &recent, tally);
        while let Some((lane, task)) = shared.next_task(tally) {
            shared.execute(lane, task, &recent, tally);
        }
        shared.idle.fetch_add(1, Ordering::SeqCst);
        exit.place = Place::Idle;
        shared.instruments.worker_idle(&shared.lanes);
    }
    drop(exit);
    shared.instruments.worker_exited(&shared.lanes);
}

/// Starts one thread with the workers' stack size and joins it at once:
/// core threads that could never start are a build error, not a pool
/// whose jobs wait for nobody. (Not under loom: a model's threads are its
/// own, and a probe would only add to what it explores.)
pub(crate) fn probe_thread(
    core: usize,
    stack_size: Option<usize>,
) -> Result<(), crate::error::BuildError> {
    if cfg!(loom) {
        return Ok(());
    }
    let mut builder = std::thread::Builder::new().name("priority-executor-probe".into());
    if let Some(bytes) = stack_size {
        builder = builder.stack_size(bytes);
    }
    match builder.spawn(|| {}) {
        Ok(probe) => {
            // An empty body cannot panic.
            let _ = probe.join();
            Ok(())
        }
        Err(error) => Err(crate::error::BuildError::CannotStartThread {
            core,
            stack_size,
            kind: error.kind(),
            error: error.to_string(),
        }),
    }
}
