//! The weighted round-robin picker: which lane the next free worker serves.
//!
//! # How a pick works
//!
//! [`Picker::Smooth`] and [`Picker::Classic`] are both written out once, at
//! build time, as a *cycle*: a table of `sum(weights)` lane indices in which
//! each lane appears exactly `weight` times. A shared cursor hands out
//! tickets (`fetch_add`), and ticket `t` belongs to lane `table[t % len]`.
//! The cursor is the caller's: the pool keeps it on the claim line of the
//! lane the table visits most, so that a pick and the claim that usually
//! follows move one cache line between workers, not two.
//! There is no lock: workers take tickets concurrently and each ticket
//! dispatches one job of its lane.
//!
//! Exactness follows from the table: any `sum(weights)` consecutive tickets
//! cover the table once, so while every lane stays non-empty each run of
//! `sum(weights)` dispatches (in ticket order) gives every lane exactly its
//! weight, however many workers take tickets.
//!
//! When the lane owning a ticket is empty, the turn passes at once to the
//! next position of the table whose lane has work, and the cursor jumps past
//! it (`fetch_max`), so the table is walked as if the empty lanes were not in
//! it. Empty lanes' turns are not banked. Finding that position costs one
//! binary search per non-empty lane (each lane keeps the sorted list of its
//! positions in the table).
//!
//! A paused lane (`Executor::pause_lane`) looks empty to the picker: its
//! claims fail and its turns pass on in the same way, so the other lanes
//! keep their weights' proportions among themselves.
//!
//! Looking at a lane (metrics, `len`) never takes a ticket, so it never
//! consumes a turn.

use crate::sync::atomic::{AtomicUsize, Ordering};
use std::fmt;
use std::str::FromStr;

/// The largest `sum(weights)` an executor accepts: the cycle table holds one
/// entry per unit of weight.
pub(crate) const MAX_CYCLE: u64 = 1 << 16;

/// How the next lane is chosen when several hold jobs.
///
/// All three are work-conserving: an empty lane's turn passes at once to the
/// next lane with work, and unused turns are not saved up.
///
/// # Examples
///
/// ```
/// use priority_executor::{Capacity, Executor, Picker, Priority};
///
/// assert_eq!("classic".parse::<Picker>().unwrap(), Picker::Classic);
/// let exec = Executor::builder()
///     .picker(Picker::Classic)
///     .lane(Priority(1), Capacity::Unbounded)
///     .build()
///     .unwrap();
/// assert_eq!(exec.config().picker, Picker::Classic);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Picker {
    /// Smooth weighted round robin (as in nginx): each lane's turns are
    /// spread as evenly as the weights allow. 10:1 gives `HHHHHLHHHHH`.
    /// While a lane is backlogged its dispatches stay within two jobs of its
    /// exact share over any prefix of the cycle (within one for two lanes;
    /// with more lanes the smooth order can lag slightly past one, e.g.
    /// 1.05 jobs for weights 61:2:61:5:57:20:12).
    #[default]
    Smooth,
    /// Classic weighted round robin, as Synapse's PRR: a lane is served up
    /// to `weight` times in a row, then the next lane. 10:1 gives
    /// `HHHHHHHHHHL`. A backlogged lane stays within its weight of its
    /// exact share.
    Classic,
    /// The highest non-empty lane always first. Weights are ignored and a
    /// busy high lane **starves every lane below it**; use it only where
    /// that is the intent.
    Strict,
}

impl Picker {
    /// One full cycle of lane indices for lanes of the given weights (lane
    /// `i` has weight `weights[i]`; list lanes highest priority first).
    /// Each lane appears exactly `weight` times. [`Picker::Strict`] has no
    /// cycle (it always serves the highest non-empty lane); for it this
    /// returns the classic cycle, for display only.
    ///
    /// Not part of the API: public for the crate's tests and benches.
    #[doc(hidden)]
    pub fn cycle(self, weights: &[u32]) -> Vec<usize> {
        match self {
            Picker::Smooth => smooth_cycle(weights),
            Picker::Classic | Picker::Strict => classic_cycle(weights),
        }
    }

    /// The name used in configuration files.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Picker;
    ///
    /// assert_eq!(Picker::Strict.as_str(), "strict");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Picker::Smooth => "smooth",
            Picker::Classic => "classic",
            Picker::Strict => "strict",
        }
    }
}

impl fmt::Display for Picker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A picker name that is not `smooth`, `classic` or `strict`.
///
/// # Examples
///
/// ```
/// use priority_executor::Picker;
///
/// let err = "fastest".parse::<Picker>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unknown picker \"fastest\" (expected one of: smooth, classic, strict)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown picker {0:?} (expected one of: smooth, classic, strict)")]
pub struct UnknownPicker(pub String);

impl FromStr for Picker {
    type Err = UnknownPicker;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "smooth" => Ok(Picker::Smooth),
            "classic" => Ok(Picker::Classic),
            "strict" => Ok(Picker::Strict),
            other => Err(UnknownPicker(other.to_owned())),
        }
    }
}

fn smooth_cycle(weights: &[u32]) -> Vec<usize> {
    let total: i64 = weights.iter().map(|&w| i64::from(w)).sum();
    let mut current = vec![0i64; weights.len()];
    let mut out = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    for _ in 0..total {
        let mut best = 0;
        for (i, &w) in weights.iter().enumerate() {
            current[i] += i64::from(w);
            // Ties go to the earlier (higher-priority) lane.
            if current[i] > current[best] {
                best = i;
            }
        }
        current[best] -= total;
        out.push(best);
    }
    out
}

fn classic_cycle(weights: &[u32]) -> Vec<usize> {
    weights
        .iter()
        .enumerate()
        .flat_map(|(i, &w)| std::iter::repeat_n(i, w as usize))
        .collect()
}

// ===== Schedule: the picker as the pool runs it =====

/// The picker's run-time state: the cycle table. The cursor that walks it
/// is passed to each [`pick`](Schedule::pick).
pub(crate) struct Schedule {
    kind: Picker,
    /// `table[i]` is the lane owning position `i` of the cycle.
    table: Box<[u32]>,
    /// For each lane, its positions in `table`, ascending.
    positions: Box<[Box<[u32]>]>,
}

impl Schedule {
    /// `weights` in lane order (highest priority first); the caller has
    /// checked that each is at least 1 and the sum is at most [`MAX_CYCLE`].
    pub(crate) fn new(kind: Picker, weights: &[u32]) -> Schedule {
        let (table, positions) = if kind == Picker::Strict || weights.len() == 1 {
            (Box::default(), Box::default())
        } else {
            let cycle = kind.cycle(weights);
            let mut positions = vec![Vec::new(); weights.len()];
            for (pos, &lane) in cycle.iter().enumerate() {
                positions[lane].push(pos as u32);
            }
            (
                cycle.iter().map(|&l| l as u32).collect(),
                positions.into_iter().map(Vec::into_boxed_slice).collect(),
            )
        };
        Schedule {
            kind,
            table,
            positions,
        }
    }

    /// The lane the cycle visits most, the first of equals (0 without a
    /// cycle): where the pool keeps the cursor.
    pub(crate) fn most_visited(&self) -> usize {
        let mut best = 0;
        for (lane, positions) in self.positions.iter().enumerate() {
            if positions.len() > self.positions[best].len() {
                best = lane;
            }
        }
        best
    }

    /// Chooses a lane and claims one job from it, taking the turn from
    /// `cursor` (one cursor per set of lanes, always the same).
    ///
    /// `ready(lane)` says whether a lane looks non-empty (a peek, no side
    /// effect); `claim(lane)` tries to take ownership of one job of that
    /// lane and returns what it took, if it did. Returns the lane claimed
    /// from with what `claim` took, or `None` when every lane looked empty.
    #[inline]
    pub(crate) fn pick<C>(
        &self,
        cursor: &AtomicUsize,
        lanes: usize,
        ready: impl Fn(usize) -> bool,
        mut claim: impl FnMut(usize) -> Option<C>,
    ) -> Option<(usize, C)> {
        let mut claim_in = |lane: usize| claim(lane).map(|took| (lane, took));
        if self.table.is_empty() {
            // Strict, or a single lane: highest non-empty lane first.
            return (0..lanes).find_map(claim_in);
        }
        let len = self.table.len();
        // ORDERING: the cursor only orders tickets among workers; the jobs
        // themselves are published through each lane's `ready` counter.
        let mut ticket = cursor.fetch_add(1, Ordering::Relaxed);
        for _ in 0..=lanes {
            let pos = ticket % len;
            let lane = self.table[pos] as usize;
            if let Some(found) = claim_in(lane) {
                return Some(found);
            }
            // The ticket's lane is empty: pass the turn to the next position
            // whose lane has work, and move the cursor past it.
            let (distance, next) = self.next_ready_after(pos, &ready)?;
            let taken = ticket.wrapping_add(distance);
            cursor.fetch_max(taken.wrapping_add(1), Ordering::Relaxed);
            if let Some(found) = claim_in(next) {
                return Some(found);
            }
            // Another worker emptied it first; take a fresh ticket.
            ticket = cursor.fetch_add(1, Ordering::Relaxed);
        }
        // Heavy contention on nearly empty lanes: do not spin on tickets,
        // take any job there is, highest lane first.
        (0..lanes).find_map(claim_in)
    }

    /// The nearest position after `pos` (cyclically) whose lane is ready:
    /// its distance from `pos` and its lane.
    fn next_ready_after(
        &self,
        pos: usize,
        ready: &impl Fn(usize) -> bool,
    ) -> Option<(usize, usize)> {
        let len = self.table.len();
        let mut best: Option<(usize, usize)> = None;
        for (lane, positions) in self.positions.iter().enumerate() {
            if !ready(lane) {
                continue;
            }
            let after = positions.partition_point(|&p| p as usize <= pos);
            let next = match positions.get(after) {
                Some(&p) => p as usize,
                None => positions[0] as usize + len,
            };
            let distance = next - pos;
            if best.is_none_or(|(d, _)| distance < d) {
                best = Some((distance, lane));
            }
        }
        best
    }

    pub(crate) fn kind(&self) -> Picker {
        self.kind
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
