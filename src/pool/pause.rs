//! Pausing and resuming a lane of a running pool (rule 9 of
//! `sleep/README.md`).

use super::Shared;
use crate::sync::atomic::Ordering;
use crate::sync::{Arc, dekker_fence, lock};

/// In `pause_gate`: a lane was paused once.
const EVER_PAUSED: usize = 1;
/// In `pause_gate`: `close` has begun.
const CLOSING: usize = 2;

impl Shared {
    /// Pauses lane `index`: `false` if the executor is closing (a closing
    /// executor runs or hands back every job it holds, so it pauses
    /// nothing). Under the `pausing` lock, which `close` takes, to resume
    /// every lane before it marks the executor closed, whenever this came
    /// first: no worker ever sees the executor closed with a lane paused
    /// (rule 9), so none waits, or spins, beside jobs it may not take.
    pub(crate) fn pause_lane(&self, index: usize) -> bool {
        let _pausing = lock(&self.pausing);
        // ORDERING: SeqCst, though one location's read-modify-writes are
        // ordered anyway: this or `close`'s `fetch_or` comes first, and
        // the second sees the first's bit (rule 9). Seen `CLOSING`: no
        // pause. Not seen: `close` sees `EVER_PAUSED` and waits for this
        // lock, so it resumes the lane paused here.
        if self.pause_gate.fetch_or(EVER_PAUSED, Ordering::SeqCst) & CLOSING != 0 {
            return false;
        }
        self.lanes[index].pause();
        // Under the lock too: a `close` after it sets the gauge back.
        self.instruments.paused(index, true);
        self.instruments.refresh_queued(&self.lanes);
        true
    }

    /// `close`'s side of the gate: resumes every lane if one was ever
    /// paused, before the executor is marked closed (rule 9). One
    /// read-modify-write when no lane ever was.
    pub(super) fn resume_all_for_close(&self) {
        // ORDERING: SeqCst, the pair of `pause_lane`'s (above).
        if self.pause_gate.fetch_or(CLOSING, Ordering::SeqCst) & EVER_PAUSED == 0 {
            return;
        }
        let _pausing = lock(&self.pausing);
        for (index, lane) in self.lanes.iter().enumerate() {
            lane.resume();
            self.instruments.paused(index, false);
        }
    }

    /// Resumes lane `index` and wakes the workers for what waited in it:
    /// every sleeper (a resume is rare, and the lane may hold many jobs),
    /// then threads up to `max` while more jobs wait than workers are idle,
    /// as a burst of enqueues would have started (rule 3).
    pub(crate) fn resume_lane(self: &Arc<Self>, index: usize) {
        {
            // Under the lock a pause takes: the gauge ends as the lane does.
            let _pausing = lock(&self.pausing);
            self.lanes[index].resume();
            self.instruments.paused(index, false);
        }
        self.instruments.refresh_queued(&self.lanes);
        // Under the sleep mutex: a worker registering after it re-checks
        // the lanes after it, and sees the flag clear.
        self.sleep.wake_all();
        // ORDERING: the SeqCst clear of the flag, then the SeqCst loads of
        // `live` and `idle` in `grow_to`: a Dekker pair with a retiring
        // worker's SeqCst decrements then its re-check of the flag (rule
        // 4). One of the two sees the other: the worker stays, or this
        // starts one.
        dekker_fence();
        self.grow_to(self.limits.max());
    }

    /// Is lane `index` paused?
    pub(crate) fn is_lane_paused(&self, index: usize) -> bool {
        self.lanes[index].is_paused()
    }
}
