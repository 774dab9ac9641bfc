//! A full bounded lane: its rejection policy applied to a producer (block
//! for room, reject, discard the oldest job; caller-runs is the
//! producer's path, in `submit.rs`).

use super::Shared;
use crate::job::JobError;
use crate::lane::config::RejectionPolicy;
use crate::lane::{Lane, NoSlot};
use crate::observe::facade::Recent;
use crate::sync::Wait;
use crate::sync::atomic::Ordering;
use crate::sync::{Arc, yield_now};
use std::time::{Duration, Instant};

/// Rounds a discard-oldest producer finds nothing queued to push out
/// before it waits for room as a blocking lane does: a producer between
/// its reserve and its push takes a moment; a held permit may take long.
const DISCARD_ROUNDS: u32 = 64;
/// The first of the naps a discard-oldest producer takes between looks
/// for a job to push out, doubling up to [`DISCARD_NAP_MAX`].
const DISCARD_NAP: Duration = Duration::from_millis(1);
const DISCARD_NAP_MAX: Duration = Duration::from_millis(50);
/// The first of the naps a worker waiting for room in its own executor's
/// lane takes when it finds nothing to run (the lane paused, its slots
/// held by permits or its jobs all running), doubling up to
/// [`HELP_NAP_MAX`]: a freed slot ends a nap at once, a job to run (a
/// resume) is found at the end of one.
const HELP_NAP: Duration = Duration::from_micros(50);
const HELP_NAP_MAX: Duration = Duration::from_millis(5);

impl Shared {
    /// The lane is full: apply its rejection policy. `Ok` means a slot was
    /// reserved after all.
    #[cold]
    pub(super) fn when_full(self: &Arc<Self>, index: usize, wait: Wait) -> Result<(), NoSlot> {
        let lane = &self.lanes[index];
        let deadline = match (wait, lane.when_full) {
            (Wait::No, _) | (_, RejectionPolicy::Reject | RejectionPolicy::CallerRuns) => {
                return Err(NoSlot::Full);
            }
            (Wait::Forever, RejectionPolicy::Block) => None,
            (Wait::Until(deadline), RejectionPolicy::Block) => Some(deadline),
            (Wait::Forever, RejectionPolicy::DiscardOldest) => {
                return self.discard_or_wait(index, None);
            }
            (Wait::Until(deadline), RejectionPolicy::DiscardOldest) => {
                return self.discard_or_wait(index, Some(deadline));
            }
        };
        self.wait_for_room(lane, deadline)
    }

    /// Waits for a free slot in `lane` until `deadline` (for ever without
    /// one), as a blocking lane does.
    fn wait_for_room(
        self: &Arc<Self>,
        lane: &Lane,
        deadline: Option<Instant>,
    ) -> Result<(), NoSlot> {
        if self.is_own_worker() {
            return self.reserve_helping(lane, deadline);
        }
        if let Some(outcome) = lane.reserve_spinning(deadline, || self.is_closed()) {
            return outcome;
        }
        lane.reserve_blocking(deadline, || self.is_closed())
    }

    /// Discard-oldest: pushes the lane's oldest queued job out. With
    /// nothing queued to push out (every slot reserved), waits for room in
    /// short naps, pushing out again after each (a job a permit queued
    /// meanwhile is the oldest then; a slot is only freed by a take, which
    /// a paused lane or busy workers may not make for long), until
    /// `deadline`.
    fn discard_or_wait(
        self: &Arc<Self>,
        index: usize,
        deadline: Option<Instant>,
    ) -> Result<(), NoSlot> {
        let lane = &self.lanes[index];
        let mut nap = DISCARD_NAP;
        loop {
            if self.discard_oldest(index)? {
                return Ok(());
            }
            let now = Instant::now();
            if deadline.is_some_and(|deadline| now >= deadline) {
                return Err(NoSlot::Full);
            }
            match self.wait_for_room(lane, nap_end(now, nap, deadline)) {
                Err(NoSlot::Full) => nap = (nap * 2).min(DISCARD_NAP_MAX),
                outcome => return outcome,
            }
        }
    }

    /// A job blocking on a full lane of its own executor could wait for
    /// itself: if every worker did so, nothing would ever free a slot. So a
    /// worker runs queued jobs (the picker's choice) while it waits, as
    /// rayon's `join` does, until a slot frees up. Finding nothing to run,
    /// it sleeps on the lane's space in naps (a freed slot wakes it, a job
    /// to run waits for the nap's end): it never spins, on a paused lane
    /// or on slots held by permits.
    #[cold]
    fn reserve_helping(
        self: &Arc<Self>,
        lane: &Lane,
        deadline: Option<Instant>,
    ) -> Result<(), NoSlot> {
        let mut nap = HELP_NAP;
        loop {
            if self.is_closed() {
                return Err(NoSlot::Closed);
            }
            if lane.try_reserve() {
                return Ok(());
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(NoSlot::Full);
            }
            match self.next_task(None) {
                Some((index, task)) => {
                    self.execute(index, task, &Recent::new(), None);
                    nap = HELP_NAP;
                }
                // Every queued job is running (or capped, or paused): a
                // take frees a slot, a dropped permit gives one back.
                None => {
                    let until = nap_end(Instant::now(), nap, deadline);
                    match lane.reserve_blocking(until, || self.is_closed()) {
                        Err(NoSlot::Full) => nap = (nap * 2).min(HELP_NAP_MAX),
                        outcome => return outcome,
                    }
                }
            }
        }
    }

    /// Pushes the lane's oldest queued job out (its handle resolves
    /// `Discarded`) until a slot is free: `Ok(true)` once one is reserved,
    /// `Ok(false)` if for a while nothing was queued to push out (every
    /// slot reserved, by producers about to push or by held
    /// [`Permit`](crate::Permit)s, which may keep theirs for long).
    fn discard_oldest(&self, index: usize) -> Result<bool, NoSlot> {
        let lane = &self.lanes[index];
        let mut empty = 0;
        loop {
            if self.is_closed() {
                return Err(NoSlot::Closed);
            }
            match lane.try_claim().map(|claim| lane.take_claimed(claim)) {
                Some(Some(mut oldest)) => {
                    empty = 0;
                    if oldest.cancelled() {
                        // Its slot is free now all the same.
                        self.count_cancelled(index, false);
                    } else {
                        lane.counters.discarded.fetch_add(1, Ordering::Relaxed);
                        self.instruments.discarded(index);
                        oldest.resolve(JobError::Discarded);
                    }
                }
                // A tombstone: a refused producer's place, freed.
                Some(None) => {}
                None => empty += 1,
            }
            if lane.try_reserve() {
                return Ok(true);
            }
            if empty > DISCARD_ROUNDS {
                return Ok(false);
            }
            // Slots held by producers between reserve and push.
            yield_now();
        }
    }
}

/// The end of a nap of `nap` from `now`, or `deadline` if that comes
/// first (`None`: no end).
fn nap_end(now: Instant, nap: Duration, deadline: Option<Instant>) -> Option<Instant> {
    now.checked_add(nap).map_or(deadline, |end| {
        Some(deadline.map_or(end, |deadline| deadline.min(end)))
    })
}
