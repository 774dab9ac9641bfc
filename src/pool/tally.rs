//! The per-lane counts a worker keeps of the jobs it dispatched and
//! completed.
//!
//! Every job is dispatched once and, as a rule, completes: counting it in
//! the lane's shared counters is a read-modify-write per job on a cache
//! line every worker writes, which moves between the cores with each job
//! (two of the five such operations a worker made per job on two cores).
//! Each worker counts them in its own [`Tally`] instead, an
//! [`OwnedCount`] per lane and outcome on a cache line of its own (so two
//! workers' tallies never share one). A reader sums the lanes' shared
//! counters, which take the rare paths (a job run on the caller, a
//! producer helping while blocked on a full lane) and the tallies of
//! workers that exited, with the tallies of the workers alive, under the
//! `workers` lock; a worker folds its tally into the shared counters and
//! leaves the list under the same lock, so a read sees each job once.

use crate::lane::Lane;
use crate::sync::atomic::Ordering;
use crate::sync::owned::OwnedCount;
use crate::waits::{OwnedWaits, SharedWaits};
use crossbeam_utils::CachePadded;

/// One worker's counts, per lane.
pub(crate) struct Tally {
    lanes: Box<[CachePadded<LaneTally>]>,
}

struct LaneTally {
    dispatched: OwnedCount,
    completed: OwnedCount,
    /// The waits of the attempts this worker started (`waits.rs`).
    waits: OwnedWaits,
}

impl Tally {
    pub(crate) fn new(lanes: usize) -> Tally {
        Tally {
            lanes: (0..lanes)
                .map(|_| {
                    CachePadded::new(LaneTally {
                        dispatched: OwnedCount::default(),
                        completed: OwnedCount::default(),
                        waits: OwnedWaits::new(),
                    })
                })
                .collect(),
        }
    }

    /// Adds this worker's waits of `lane` to `into` (a snapshot's counts).
    pub(crate) fn add_waits(&self, lane: usize, into: &mut [u64]) {
        self.lanes[lane].waits.add_to(into);
    }

    /// Jobs of `lane` this worker dispatched and completed.
    pub(crate) fn of(&self, lane: usize) -> (u64, u64) {
        let t = &self.lanes[lane];
        (t.dispatched.get(), t.completed.get())
    }

    /// Moves the counts into the lanes' shared counters, as the worker
    /// exits (under the `workers` lock, as it leaves the list).
    pub(crate) fn fold_into(&self, lanes: &[Lane], waits: &[SharedWaits]) {
        for (t, shared) in self.lanes.iter().zip(waits) {
            t.waits.fold_into(shared);
        }
        for (lane, t) in lanes.iter().zip(self.lanes.iter()) {
            let c = &lane.counters;
            c.dispatched
                .fetch_add(t.dispatched.take(), Ordering::Relaxed);
            c.completed.fetch_add(t.completed.take(), Ordering::Relaxed);
        }
    }
}

/// What a tally counts of a lane's jobs.
#[derive(Clone, Copy)]
pub(crate) enum Count {
    Dispatched,
    Completed,
}

/// Counts a job of lane `index` as `what`: in the worker's `tally`, or,
/// run by no worker, in the lane's shared counter.
#[inline]
pub(crate) fn count(tally: Option<&Tally>, lanes: &[Lane], index: usize, what: Count) {
    match tally {
        Some(tally) => {
            let t = &tally.lanes[index];
            match what {
                Count::Dispatched => t.dispatched.add_one(),
                Count::Completed => t.completed.add_one(),
            }
        }
        None => {
            let c = &lanes[index].counters;
            let shared = match what {
                Count::Dispatched => &c.dispatched,
                Count::Completed => &c.completed,
            };
            shared.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Records a wait of `ns` of a job of lane `index`: in the worker's
/// `tally`, or, started by no worker, in the lane's shared histogram.
#[inline]
pub(crate) fn record_wait(tally: Option<&Tally>, waits: &[SharedWaits], index: usize, ns: u64) {
    match tally {
        Some(tally) => tally.lanes[index].waits.record(ns),
        None => waits[index].record(ns),
    }
}
