//! Pausing and resuming a lane of a running pool (rule 9 of
//! `sleep/README.md`).

use super::Shared;
use crate::sync::{Arc, dekker_fence, lock};

impl Shared {
    /// Pauses lane `index`: `false` if the executor is closed (a closing
    /// executor runs or hands back every job it holds, so it pauses
    /// nothing). Under the `pausing` lock, which `close` holds while it
    /// resumes every lane and then closes: no worker ever sees the
    /// executor closed with a lane paused (rule 9), so none waits, or
    /// spins, beside jobs it may not take.
    pub(crate) fn pause_lane(&self, index: usize) -> bool {
        let _pausing = lock(&self.pausing);
        if self.is_closed() {
            return false;
        }
        self.lanes[index].pause();
        true
    }

    /// Resumes lane `index` and wakes the workers for what waited in it:
    /// every sleeper (a resume is rare, and the lane may hold many jobs),
    /// then threads up to `max` while more jobs wait than workers are idle,
    /// as a burst of enqueues would have started (rule 3).
    pub(crate) fn resume_lane(self: &Arc<Self>, index: usize) {
        self.lanes[index].resume();
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
