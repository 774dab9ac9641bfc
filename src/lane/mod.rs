//! One lane: the FIFO sub-queue of one priority, its capacity and counters.
//!
//! # Counters
//!
//! - `opened` counts jobs accepted into the lane, plus a `CLOSED` bit; only
//!   producers (and `close`) write it. A producer *opens a slot* by
//!   incrementing it, then pushes; the increment is the moment a job is
//!   accepted, and it returns the `CLOSED` bit as it was, so a job is
//!   accepted if and only if it counted itself before the lane closed (rule
//!   5 of `sleep/README.md`). A producer that finds the lane closed pushes
//!   an empty *tombstone* instead (so every increment still has its push)
//!   and gets its job back.
//! - `claimed` counts the jobs workers claimed; only workers (and
//!   `shutdown_now`) write it. A worker claims a job by incrementing it
//!   while it is below `opened`. The count a producer opened is its job's
//!   *ticket* and the count a worker claimed its *claim*: the lane's queue
//!   keeps job `t` in the slot of ticket `t`, and a claim takes the job of
//!   the same number (`sync/tickets.rs`), waiting a moment if the producer
//!   is between its increment and its push. Beside it, `seen` keeps the last value of `opened` a worker
//!   read: while `claimed` is below it, a claim needs no read of `opened`,
//!   so during a backlog the producers' line is not pulled to the workers'
//!   cores for every job.
//! - `opened - claimed` is the lane's *ready* count: the `queued` figure of
//!   the metrics and what the sleep protocol re-checks. The two counts sit
//!   on separate cache lines, so a producer's increment does not wait for
//!   the line a worker's claim just took (with one shared count, every job
//!   moved that line from producer to worker and back). A reader loads
//!   `claimed` first, then `opened`: as `claimed` never passes `opened`,
//!   the difference is never negative, and it is at least the ready count
//!   of any moment between the two loads (never a job too few).
//! - `occupied` (bounded lanes only) counts slots in use: a producer
//!   reserves one before it pushes, a worker frees it after its take. A
//!   producer that finds the lane full spins a moment for a *run* of free
//!   slots (a quarter of the capacity) before it sleeps; blocked producers
//!   wait on `space`; a worker takes that lock only when `space_waiters`
//!   says someone waits.
//! - `paused` (beside `claimed`, on the workers' line) says the lane is
//!   paused: producers fill it as ever, workers claim nothing from it
//!   (`lane/pause.rs`, rule 9 of `sleep/README.md`).
//! - `cursor` (beside `claimed` too) is the weighted picker's cursor, kept
//!   in the lane its cycle visits most and unused in the others
//!   (`picker.rs`): a pick's `fetch_add` brings the line most claims
//!   take next.

pub(crate) mod config;
mod pause;
pub(crate) mod picker;
mod space;

pub(crate) use space::SpaceWaiter;

use crate::clock::{dur_ns, now_ns};
use crate::job::task::Task;
use crate::priority::{Capacity, Priority};
use crate::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use crate::sync::tickets::LaneQueue;
use crate::sync::{Condvar, Mutex};
use config::{LaneConfig, RejectionPolicy};
use crossbeam_utils::CachePadded;

/// A lane's worker side: the jobs claimed, and the count of `opened` a
/// worker last read. A claim below that count needs no read of `opened`:
/// a count once read stays reached, as `opened` only grows.
struct Claims {
    claimed: AtomicUsize,
    seen: AtomicUsize,
    /// The lane is paused: workers claim nothing from it. On this line
    /// because every claim reads it with `claimed`, and it is written only
    /// by `pause`, `resume` and `close`, rarely.
    paused: AtomicBool,
    /// The picker's cursor, in the lane its cycle visits most
    /// (`Shared::cursor_lane`; unused in the others): a pick's `fetch_add`
    /// then takes the line that most claims take next, so the two move
    /// one line between workers, not two.
    cursor: AtomicUsize,
}

/// Why a producer could not get a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoSlot {
    Full,
    Closed,
}

/// A job's place in the lane's queue, from [`Lane::open_slot`]; pushed
/// once (not `Copy`).
#[must_use]
pub(crate) struct Ticket(usize);

/// A worker's claim on one queued job, from [`Lane::try_claim`]; taken
/// once (not `Copy`).
#[must_use]
pub(crate) struct Claim(usize);

/// Set in `opened` once the lane accepts no new job.
const CLOSED: usize = 1 << (usize::BITS - 1);
const COUNT: usize = !CLOSED;

pub(crate) struct Lane {
    pub(crate) priority: Priority,
    pub(crate) weight: u32,
    pub(crate) capacity: Capacity,
    pub(crate) when_full: RejectionPolicy,
    /// Most jobs of this lane running at once (`usize::MAX`: no cap),
    /// resolved from `max_running_setting` against the pool's
    /// `max_threads` (`Lane::resolve_max_running`). A std atomic even
    /// under loom, as the pool's limits are (`pool/resize.rs`): a worker
    /// that reads an old cap makes one claim decision by it, as if it had
    /// claimed just before the change.
    max_running: std::sync::atomic::AtomicUsize,
    /// The cap as configured: a share of `max_threads` is resolved again
    /// whenever the thread settings change.
    max_running_setting: Option<config::MaxRunning>,
    running: AtomicUsize,
    /// Aging threshold in ns (0: no aging) and when the current head job
    /// became the head (crate clock).
    promote_after_ns: u64,
    head_since_ns: AtomicU64,
    /// The queued jobs, addressed by ticket and claim (`sync/tickets.rs`).
    jobs: LaneQueue<Task>,
    opened: CachePadded<AtomicUsize>,
    claims: CachePadded<Claims>,
    occupied: CachePadded<AtomicUsize>,
    space_waiters: AtomicUsize,
    space: Mutex<crate::sync::line::Line>,
    space_freed: Condvar,
    pub(crate) counters: LaneCounters,
}

/// Metric counters, split by the side that writes them so producers and
/// workers do not share a cache line.
#[derive(Default)]
pub(crate) struct LaneCounters {
    pub(crate) rejected: CachePadded<AtomicU64>,
    /// Retries pushed into this lane, and tombstones pushed and not yet
    /// claimed: neither is a submission (see [`Lane::submitted`]).
    pub(crate) requeued: AtomicU64,
    tombstones: AtomicU64,
    pub(crate) dispatched: CachePadded<AtomicU64>,
    pub(crate) completed: AtomicU64,
    pub(crate) panicked: AtomicU64,
    pub(crate) handed_back: AtomicU64,
    /// Of `handed_back`, those taken from the retry timer, not the queue.
    pub(crate) handed_back_delayed: AtomicU64,
    pub(crate) expired: AtomicU64,
    pub(crate) discarded: AtomicU64,
    pub(crate) retried: AtomicU64,
    pub(crate) dead_lettered: AtomicU64,
    pub(crate) caller_ran: AtomicU64,
    pub(crate) promoted: AtomicU64,
    /// Jobs cancelled through their handles and met in the lane, and
    /// parked futures woken after `shutdown_now`: dropped unrun.
    pub(crate) cancelled: AtomicU64,
    /// Of `cancelled`, those taken out of the lane other than by a
    /// dispatch (by `shutdown_now` or discard-oldest).
    pub(crate) cancelled_undispatched: AtomicU64,
}

impl Lane {
    pub(crate) fn new(config: &LaneConfig, max_threads: usize) -> Lane {
        Lane {
            priority: config.priority,
            weight: config.weight,
            capacity: config.capacity,
            when_full: config.when_full,
            max_running: std::sync::atomic::AtomicUsize::new(
                config
                    .max_running
                    .map_or(usize::MAX, |m| m.resolve(max_threads)),
            ),
            max_running_setting: config.max_running,
            running: AtomicUsize::new(0),
            promote_after_ns: config.promote_after.map_or(0, |d| dur_ns(d).max(1)),
            head_since_ns: AtomicU64::new(0),
            jobs: LaneQueue::new(),
            opened: CachePadded::new(AtomicUsize::new(0)),
            claims: CachePadded::new(Claims {
                claimed: AtomicUsize::new(0),
                seen: AtomicUsize::new(0),
                paused: AtomicBool::new(false),
                cursor: AtomicUsize::new(0),
            }),
            occupied: CachePadded::new(AtomicUsize::new(0)),
            space_waiters: AtomicUsize::new(0),
            space: Mutex::new(crate::sync::line::Line::default()),
            space_freed: Condvar::new(),
            counters: LaneCounters::default(),
        }
    }

    // ===== producer side =====

    /// Takes a slot if one is free; never blocks.
    #[inline]
    pub(crate) fn try_reserve(&self) -> bool {
        // A stale read here only sends the producer to the slow path, which
        // looks again.
        self.reserve_seeing(Ordering::Relaxed)
    }

    /// Takes a slot if one is free, reading `occupied` with `read`.
    #[inline]
    fn reserve_seeing(&self, read: Ordering) -> bool {
        let Capacity::Bounded(cap) = self.capacity else {
            return true;
        };
        let mut cur = self.occupied.load(read);
        loop {
            if cur >= cap {
                return false;
            }
            // ORDERING: SeqCst pairs with the load of `space_waiters` in
            // `release_slot` (a Dekker pair, see `reserve_blocking`).
            match self
                .occupied
                .compare_exchange_weak(cur, cur + 1, Ordering::SeqCst, read)
            {
                Ok(_) => return true,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Accepts one job into the lane unless it is closed: the caller must
    /// then [`push`](Lane::push) the job with the ticket, or on `Err`
    /// (closed) a [`tombstone`](Lane::push_tombstone).
    #[inline]
    pub(crate) fn open_slot(&self) -> Result<Ticket, Ticket> {
        // ORDERING: SeqCst so the sleep protocol's check of `sleepers` that
        // follows cannot be ordered before this increment (Dekker pair with
        // a worker's registration then re-check, see sleep/README.md).
        let before = self.opened.fetch_add(1, Ordering::SeqCst);
        if self.ages() && before & COUNT == self.claims.claimed.load(Ordering::Relaxed) {
            self.head_since_ns.store(now_ns(), Ordering::Relaxed);
        }
        let ticket = Ticket(before & COUNT);
        if before & CLOSED == 0 {
            Ok(ticket)
        } else {
            Err(ticket)
        }
    }

    /// Pushes the job for a slot opened with [`Lane::open_slot`].
    #[inline]
    pub(crate) fn push(&self, ticket: Ticket, task: Task) {
        // SAFETY: a `Ticket` comes only from `open_slot`, one per count of
        // `opened` (which counts from 0 without a gap), and is consumed
        // here (a tombstone too): each ticket is pushed once, right after
        // its slot opened.
        unsafe { self.jobs.push(ticket.0, task) };
    }

    /// Fills a slot that [`Lane::open_slot`] found closed.
    #[cold]
    pub(crate) fn push_tombstone(&self, ticket: Ticket) {
        self.counters.tombstones.fetch_add(1, Ordering::Relaxed);
        self.push(ticket, Task::tombstone());
    }

    /// Publishes a retry: it was accepted long ago, so it goes in even if
    /// the lane is full or closed (the producers it crowds out just wait).
    pub(crate) fn push_retry(&self, task: Task) {
        task.requeued();
        if self.capacity.limit().is_some() {
            self.occupied.fetch_add(1, Ordering::SeqCst);
        }
        self.counters.requeued.fetch_add(1, Ordering::Relaxed);
        // Accepted even if the lane closed since: its ticket either way.
        let (Ok(ticket) | Err(ticket)) = self.open_slot();
        self.push(ticket, task);
    }

    /// Stops accepting jobs; what was accepted stays claimable.
    pub(crate) fn close(&self) {
        self.opened.fetch_or(CLOSED, Ordering::SeqCst);
    }

    /// Jobs accepted into the lane so far, derived from the worker-side
    /// counters so that `enqueue` pays for no counter of its own: every
    /// push is dispatched, handed back, discarded or still queued, and
    /// retries and tombstones are pushes but not submissions. Exact while
    /// the lane is quiet; may be off by the jobs in motion while it is not.
    /// `dispatched` is the lane's total, its shared counter and the
    /// workers' own counts together (`pool/tally.rs`).
    pub(crate) fn submitted(&self, dispatched: u64) -> u64 {
        let c = &self.counters;
        // Counts tombstones too; they are taken off below.
        let queued = self.ready(Ordering::Relaxed) as u64;
        // `shutdown_now` counts a delayed hand-back in `handed_back`, then
        // in `handed_back_delayed`; this reads them in that order, so with
        // both counts moving in between it may see the second grown and
        // the first not: hence the saturation.
        let pushed_out = (dispatched
            + c.cancelled_undispatched.load(Ordering::Relaxed)
            + c.discarded.load(Ordering::Relaxed)
            + c.handed_back.load(Ordering::Relaxed))
        .saturating_sub(c.handed_back_delayed.load(Ordering::Relaxed));
        (pushed_out + queued)
            .saturating_sub(c.requeued.load(Ordering::Relaxed))
            .saturating_sub(c.tombstones.load(Ordering::Relaxed))
    }

    // ===== worker side =====

    /// Does the lane hold an unclaimed job? A peek: it claims nothing.
    #[inline]
    pub(crate) fn is_ready(&self) -> bool {
        self.ready(Ordering::SeqCst) > 0
    }

    /// Jobs opened and not yet claimed (tombstones included), read with
    /// `order`: `claimed` first, so the difference is never negative.
    #[inline]
    fn ready(&self, order: Ordering) -> usize {
        let claimed = self.claims.claimed.load(order);
        (self.opened.load(order) & COUNT).wrapping_sub(claimed) & COUNT
    }

    /// Unclaimed jobs in the lane.
    pub(crate) fn queued(&self) -> usize {
        // Tombstones hold a count but no job.
        let tombstones = self.counters.tombstones.load(Ordering::Relaxed);
        self.ready(Ordering::Relaxed)
            .saturating_sub(usize::try_from(tombstones).unwrap_or(usize::MAX))
    }

    /// As [`Lane::queued`], ordered with the thread counts (rule 3).
    #[inline]
    pub(crate) fn queued_seqcst(&self) -> usize {
        self.ready(Ordering::SeqCst)
    }

    /// The picker's cursor kept on this lane's claim line (see `Claims`).
    #[inline]
    pub(crate) fn pick_cursor(&self) -> &AtomicUsize {
        &self.claims.cursor
    }

    /// Could a worker start one of this lane's jobs now (queued, and the
    /// lane below its cap on running jobs)?
    #[inline]
    pub(crate) fn is_claimable(&self) -> bool {
        self.is_ready()
            && !self.is_paused_seqcst()
            && (self.max_running_setting.is_none()
                || self.running.load(Ordering::SeqCst) < self.max_running())
    }

    /// Are the lane's queued jobs (if any) beyond reach of an idle worker
    /// until a job of the lane ends, its cap on running jobs reached? Each
    /// job that ends frees a place its own worker then takes (it looks for
    /// work again), so these jobs need no other worker.
    #[inline]
    pub(crate) fn waits_for_its_runners(&self) -> bool {
        self.max_running_setting.is_some()
            && self.running.load(Ordering::SeqCst) >= self.max_running()
    }

    /// Claims a job to run it: as [`Lane::try_claim`], but also takes a
    /// running slot on a capped lane (released by [`Lane::finished_running`]).
    #[inline]
    pub(crate) fn try_claim_to_run(&self) -> Option<Claim> {
        if self.is_paused() {
            return None;
        }
        if self.max_running_setting.is_none() {
            return self.try_claim();
        }
        let cap = self.max_running();
        let mut cur = self.running.load(Ordering::SeqCst);
        loop {
            if cur >= cap {
                return None;
            }
            match self.running.compare_exchange_weak(
                cur,
                cur + 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        let claim = self.try_claim();
        if claim.is_none() {
            self.running.fetch_sub(1, Ordering::SeqCst);
        }
        claim
    }

    /// A job claimed with [`Lane::try_claim_to_run`] is done (or was not
    /// run after all). Returns whether the lane has a job this frees a
    /// place for.
    #[inline]
    pub(crate) fn finished_running(&self) -> bool {
        if self.max_running_setting.is_none() {
            return false;
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.is_ready()
    }

    /// Jobs of this lane running now (tracked for capped lanes only).
    pub(crate) fn running(&self) -> Option<usize> {
        self.max_running_setting
            .map(|_| self.running.load(Ordering::Relaxed))
    }

    /// The cap on this lane's running jobs now (`usize::MAX`: none).
    #[inline]
    pub(crate) fn max_running(&self) -> usize {
        // ORDERING: Relaxed: a limit, as the pool's `max_threads` (field).
        self.max_running.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Resolves a share-of-threads cap again for a new `max_threads`;
    /// returns whether the cap rose (queued jobs it held back may be
    /// claimable now).
    pub(crate) fn resolve_max_running(&self, max_threads: usize) -> bool {
        let Some(setting) = self.max_running_setting else {
            return false;
        };
        let cap = setting.resolve(max_threads);
        // ORDERING: Relaxed, as in `max_running`; the caller wakes the
        // sleepers after it if the cap rose.
        let old = self
            .max_running
            .swap(cap, std::sync::atomic::Ordering::Relaxed);
        cap > old
    }

    /// Does this lane age its jobs?
    #[inline]
    pub(crate) fn ages(&self) -> bool {
        self.promote_after_ns != 0
    }

    /// Has the head job waited at the head past the aging threshold?
    #[inline]
    pub(crate) fn head_overdue(&self, now: u64) -> bool {
        now.saturating_sub(self.head_since_ns.load(Ordering::Relaxed)) >= self.promote_after_ns
    }

    /// A job left the head of the lane: the next one is the head from now.
    #[inline]
    pub(crate) fn new_head(&self, now: u64) {
        self.head_since_ns.store(now, Ordering::Relaxed);
    }

    /// Claims one job of the lane if there is one: the caller must then
    /// [`take`](Lane::take_claimed) it.
    #[inline]
    pub(crate) fn try_claim(&self) -> Option<Claim> {
        let claims = &*self.claims;
        // ORDERING: Acquire on the counts, as on the one shared count they
        // replace. The claim itself is a release (rule 7: it heads the
        // release sequence of `claimed`, whose every change is a
        // read-modify-write, so an idle check that reads the count after
        // this claim sees the worker's busy mark).
        let mut claimed = claims.claimed.load(Ordering::Acquire);
        // ORDERING: Relaxed: `seen` is only a hint of how far `opened` had
        // come; a claim is decided by the compare-exchange on `claimed`.
        let mut opened = claims.seen.load(Ordering::Relaxed);
        loop {
            // `claimed` never passes `opened`: at or past the last count
            // seen, the view is used up and `opened` is read again (its
            // line is the producers'; reading it only then keeps it in
            // their cache while a backlog lasts).
            if opened <= claimed {
                opened = self.opened.load(Ordering::Acquire) & COUNT;
                if opened == claimed {
                    return None;
                }
                // Another worker may store an older count over this one:
                // that only sends the next claim here again.
                claims.seen.store(opened, Ordering::Relaxed);
            }
            match claims.claimed.compare_exchange_weak(
                claimed,
                claimed + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(Claim(claimed)),
                Err(actual) => claimed = actual,
            }
        }
    }

    /// Takes the job a [`Lane::try_claim`] claimed and frees its slot.
    /// `None` is a tombstone: a refused producer's place, nothing to run.
    #[inline]
    pub(crate) fn take_claimed(&self, claim: Claim) -> Option<Task> {
        // A claim is below `opened`, so its job is pushed or about to be
        // (the producer is between its `open_slot` and its `push`): the
        // take waits for it.
        // SAFETY: a `Claim` comes only from `try_claim`, one per count of
        // `claimed`, which stays below `opened` (so its ticket was handed
        // out), and is consumed here: each claim is taken once.
        let task = unsafe { self.jobs.take(claim.0) };
        if self.capacity.limit().is_some() {
            self.release_slot();
        }
        if task.is_tombstone() {
            self.counters.tombstones.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(task)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn submitted_never_underflows_while_hand_backs_are_counted() {
        let lane = Lane::new(&LaneConfig::new(Priority(1)), 1);
        // What a read racing `shutdown_now` may see: the delayed count of
        // a hand-back, not yet the hand-back itself.
        lane.counters
            .handed_back_delayed
            .store(1, Ordering::Relaxed);
        assert_eq!(lane.submitted(0), 0);
    }
}
