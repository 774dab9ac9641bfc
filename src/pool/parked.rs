//! The futures of a pool that may be parked: returned `Pending` and wait
//! for a waker that, once the pool has ended, nothing may ever wake. The
//! pool keeps them weakly, and when its last worker has gone after a
//! shutdown it drops each one still parked and resolves its handle
//! `Cancelled` (as tokio and smol drop their tasks at shutdown), so no
//! `join` waits for ever and nothing the future holds is leaked.
//!
//! A future is listed when it is spawned; a finished one leaves a dead
//! entry, swept out whenever the list has doubled since the last sweep, so
//! the list stays within twice the futures alive.

use super::Shared;
use crate::sync::{Mutex, lock};
use std::sync::Weak;

/// A future the pool can drop at its end.
pub(crate) trait Abandon: Send + Sync {
    /// Drops the future if it is parked (neither queued, nor being
    /// polled, nor finished) and resolves its handle `Cancelled`. Returns
    /// its lane if it did, and whether the lane should count it cancelled
    /// (not if `shutdown_now` counted it handed back before).
    fn abandon(&self) -> Option<(usize, bool)>;
    /// Finished: its entry may be swept.
    fn is_done(&self) -> bool;
}

/// The pool's list of futures, each held weakly.
pub(crate) struct Parked {
    list: Mutex<List>,
}

struct List {
    entries: Vec<Weak<dyn Abandon>>,
    /// Sweep the dead entries once the list is this long.
    sweep_at: usize,
}

/// The list's length before its first sweep.
const FIRST_SWEEP: usize = 64;

impl Parked {
    pub(crate) fn new() -> Parked {
        Parked {
            list: Mutex::new(List {
                entries: Vec::new(),
                sweep_at: FIRST_SWEEP,
            }),
        }
    }

    /// Lists a future just spawned.
    pub(crate) fn register(&self, future: Weak<dyn Abandon>) {
        // The futures looked at, let go after the lock: the last owner of
        // one runs its destructors (user code).
        let mut looked_at = Vec::new();
        let mut list = lock(&self.list);
        if list.entries.len() >= list.sweep_at {
            list.entries.retain(|entry| {
                let Some(future) = entry.upgrade() else {
                    return false;
                };
                let live = !future.is_done();
                looked_at.push(future);
                live
            });
            list.sweep_at = (2 * list.entries.len()).max(FIRST_SWEEP);
        }
        list.entries.push(future);
        drop(list);
        drop(looked_at);
    }

    /// Drops every future still parked; calls `cancelled(lane)` for each
    /// one its lane should count. The futures' own code (their
    /// destructors, their handles' wakers) runs outside the list's lock.
    pub(crate) fn abandon_all(&self, mut cancelled: impl FnMut(usize)) {
        let entries = std::mem::take(&mut lock(&self.list).entries);
        for entry in entries {
            if let Some(future) = entry.upgrade()
                && let Some((lane, count)) = future.abandon()
                && count
            {
                cancelled(lane);
            }
        }
    }
}

impl Shared {
    /// The pool has ended (closed, and every worker gone): drops the
    /// futures still parked, each counted cancelled in its lane.
    pub(super) fn abandon_parked(&self) {
        self.parked
            .abandon_all(|lane| self.count_cancelled(lane, true));
    }
}

// Not under loom: a model's pool state may be dropped after the model's
// execution has ended, where loom's lock cannot be taken; the models see
// parked futures dropped at the pool's end through `abandon_parked`.
#[cfg(not(loom))]
impl Drop for Parked {
    /// The pool's state is going (its last owner was a job of its own,
    /// whose threads were left to finish on their own): nothing can queue
    /// a parked future again, so it is dropped now.
    fn drop(&mut self) {
        self.abandon_all(|_| {});
    }
}
