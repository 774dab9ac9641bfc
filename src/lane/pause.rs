//! Pausing a lane: it keeps accepting jobs up to its capacity, and workers
//! claim none of them until it is resumed (rule 9 of `sleep/README.md`).
//!
//! The state is one flag on the workers' cache line of the lane, beside
//! `claimed`. A claim to run reads it first with a relaxed load (the one
//! cost pausing adds to the pick path, on a line the claim reads anyway);
//! the checks of the sleep protocol read it with SeqCst. Enqueueing never
//! reads it.

use super::Lane;
use crate::sync::atomic::Ordering;

impl Lane {
    /// Pauses the lane. The caller holds the pool's `pausing` lock and
    /// has seen the executor open (`Shared::pause_lane`).
    pub(crate) fn pause(&self) {
        // ORDERING: SeqCst, as every write of the flag: the checks of the
        // sleep protocol read it with SeqCst (rule 9).
        self.claims.paused.store(true, Ordering::SeqCst);
    }

    /// Lets workers claim the lane's jobs again. The caller wakes workers
    /// (`Shared::resume_lane`).
    pub(crate) fn resume(&self) {
        // ORDERING: SeqCst, so the caller's SeqCst load of the sleepers
        // that follows cannot come before it (rule 9: a Dekker pair with a
        // worker's registration as a sleeper then its SeqCst re-check).
        self.claims.paused.store(false, Ordering::SeqCst);
    }

    /// Is the lane paused? For the metrics and the picker's claim.
    #[inline]
    pub(crate) fn is_paused(&self) -> bool {
        // ORDERING: Relaxed: a claim that reads a stale flag takes one job
        // more just after a pause, or none just after a resume; the resume
        // wakes the workers and they look again (rule 9).
        self.claims.paused.load(Ordering::Relaxed)
    }

    /// As [`Lane::is_paused`], ordered with the sleep protocol's re-check
    /// (rule 9).
    #[inline]
    pub(crate) fn is_paused_seqcst(&self) -> bool {
        // ORDERING: SeqCst: the re-check after registering as a sleeper
        // must see a resume that came before it in the SeqCst order.
        self.claims.paused.load(Ordering::SeqCst)
    }

    /// Does the lane hold a job a worker may claim once it is not paused,
    /// or at once? The test for retiring (rule 4) and for growing.
    #[inline]
    pub(crate) fn is_ready_unpaused(&self) -> bool {
        self.is_ready() && !self.is_paused_seqcst()
    }
}
