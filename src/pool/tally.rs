//! The per-lane counts a worker keeps of the jobs it dispatched and
//! completed.
//!
//! Every job is dispatched once and, as a rule, completes: counting it in
//! the lane's shared counters is a read-modify-write per job on a cache
//! line every worker writes, which moves between the cores with each job
//! (two of the five such operations a worker made per job on two cores).
//! Each worker counts them in its own [`Tally`] instead: only that worker
//! writes it, with a load and a store (no locked instruction, no line
//! taken from another core). A reader sums the lanes' shared counters,
//! which take the rare paths (a job run on the caller, a worker helping
//! while blocked on a full lane) and the tallies of workers that exited,
//! with the tallies of the workers alive, under the `workers` lock; a
//! worker folds its tally into the shared counters and leaves the list
//! under the same lock, so a read sees each job once.

use crate::lane::Lane;
use crate::sync::atomic::{AtomicU64, Ordering};

/// One worker's counts, per lane.
pub(crate) struct Tally {
    lanes: Box<[LaneTally]>,
}

#[derive(Default)]
struct LaneTally {
    dispatched: AtomicU64,
    completed: AtomicU64,
}

/// Adds one to a count only its owner writes.
#[inline]
fn bump(count: &AtomicU64) {
    // ORDERING: Relaxed, and a load then a store rather than a
    // read-modify-write: the owning worker is the only writer, so no
    // increment can be lost; readers want a count, not an order with
    // anything else (as the shared counters' relaxed `fetch_add`).
    count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

impl Tally {
    pub(crate) fn new(lanes: usize) -> Tally {
        Tally {
            lanes: (0..lanes).map(|_| LaneTally::default()).collect(),
        }
    }

    #[inline]
    pub(crate) fn dispatched(&self, lane: usize) {
        bump(&self.lanes[lane].dispatched);
    }

    #[inline]
    pub(crate) fn completed(&self, lane: usize) {
        bump(&self.lanes[lane].completed);
    }

    /// Jobs of `lane` this worker dispatched and completed.
    pub(crate) fn of(&self, lane: usize) -> (u64, u64) {
        let t = &self.lanes[lane];
        (
            t.dispatched.load(Ordering::Relaxed),
            t.completed.load(Ordering::Relaxed),
        )
    }

    /// Moves the counts into the lanes' shared counters, as the worker
    /// exits (under the `workers` lock, as it leaves the list).
    pub(crate) fn fold_into(&self, lanes: &[Lane]) {
        for (lane, t) in lanes.iter().zip(self.lanes.iter()) {
            let dispatched = t.dispatched.swap(0, Ordering::Relaxed);
            let completed = t.completed.swap(0, Ordering::Relaxed);
            lane.counters
                .dispatched
                .fetch_add(dispatched, Ordering::Relaxed);
            lane.counters
                .completed
                .fetch_add(completed, Ordering::Relaxed);
        }
    }
}
