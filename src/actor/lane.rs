//! One lane of a mailbox: the FIFO queue of one priority and its two
//! counts, split by writer as the executor's lanes are (`src/lane/mod.rs`):
//!
//! - `opened` counts the slots senders took, plus the `CLOSED` bit (the
//!   door, see `mailbox.rs`); only senders (and `close`) write it. Taking a
//!   slot is one read-modify-write of `opened` that also sees whether the
//!   lane is closed, so a letter is accepted if and only if its slot was
//!   taken before the door closed. A sender refused at a closed door takes
//!   its increment back.
//! - `taken` counts the entries popped (dispatched or swept); only the
//!   holder of the take lock writes it, so a load and a store suffice.
//! - `opened - taken` is the lane's length: entries queued or with a slot
//!   taken and not pushed yet. The counts sit on separate cache lines, so a
//!   sender's slot does not wait for the line a pop just wrote (with one
//!   shared count every letter moved that line from sender to instance and
//!   back). A reader loads `taken` first, then `opened`: an entry is popped
//!   only after its slot was taken and kept, so `taken` never passes the
//!   kept slots, and the difference is never negative.
//! - A bounded lane's senders keep `taken_seen`, the last `taken` one of
//!   them read, on their own line: it is never above `taken` (which only
//!   grows), so `opened - taken_seen` is never below the length, and a
//!   sender reads the instances' line only when that view says full.

use super::config::LaneSpec;
use super::mailbox::Letter;
use super::signal::Signal;
use crate::priority::{Capacity, Priority};
use crossbeam_queue::SegQueue;
use crossbeam_utils::{Backoff, CachePadded};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Set in a lane's `opened` once the stage accepts no new message.
pub(crate) const CLOSED: usize = 1 << (usize::BITS - 1);
pub(crate) const COUNT: usize = !CLOSED;

/// Why a slot could not be taken.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoSlot {
    Full,
    Closed,
}

/// What a lane holds.
pub(crate) enum Entry<M> {
    Letter(Letter<M>),
    Stop,
    Kill,
}

/// The senders' line.
#[derive(Default)]
struct Opened {
    /// Slots taken (kept or about to be taken back), and `CLOSED`.
    count: AtomicUsize,
    /// The last `taken` a sender read (bounded lanes).
    taken_seen: AtomicUsize,
}

pub(crate) struct Lane<M> {
    pub(crate) priority: Priority,
    pub(crate) weight: u32,
    pub(crate) capacity: Capacity,
    pub(crate) queue: SegQueue<Entry<M>>,
    /// Written by senders only (module docs).
    opened: CachePadded<Opened>,
    /// Entries popped (dispatched or swept). Written under the take lock
    /// only (module docs).
    taken: CachePadded<AtomicUsize>,
    /// Entries pushed past the door: control entries and send-backs.
    forced: AtomicU64,
    pub(crate) space: Signal,
}

impl<M> Lane<M> {
    pub(crate) fn new(spec: LaneSpec) -> Lane<M> {
        Lane {
            priority: spec.priority,
            weight: spec.weight,
            capacity: spec.capacity,
            queue: SegQueue::new(),
            opened: CachePadded::new(Opened::default()),
            taken: CachePadded::new(AtomicUsize::new(0)),
            forced: AtomicU64::new(0),
            space: Signal::default(),
        }
    }

    /// Takes a slot: refused if the lane is closed or (bounded) full.
    #[inline]
    pub(crate) fn try_reserve(&self) -> Result<(), NoSlot> {
        let Capacity::Bounded(cap) = self.capacity else {
            // ORDERING: SeqCst: the idle instances' check and the closing
            // sweep read `opened` (signal.rs, module docs).
            let before = self.opened.count.fetch_add(1, Ordering::SeqCst);
            if before & CLOSED != 0 {
                self.opened.count.fetch_sub(1, Ordering::SeqCst);
                return Err(NoSlot::Closed);
            }
            return Ok(());
        };
        // ORDERING: SeqCst, so that a sender waiting for space, which arms
        // `space` before it calls this, sees a `close` or a pop whose
        // notifier did not see it armed (signal.rs). `taken_seen` is only
        // a hint: Relaxed.
        let mut cur = self.opened.count.load(Ordering::SeqCst);
        let mut seen = self.opened.taken_seen.load(Ordering::Relaxed);
        loop {
            if cur & CLOSED != 0 {
                return Err(NoSlot::Closed);
            }
            // Where the exchange below succeeds, `cur` is the count then and
            // `seen <= taken <= cur`: the view is never below the length.
            if (cur & COUNT).saturating_sub(seen) >= cap {
                seen = self.taken.load(Ordering::SeqCst);
                self.opened.taken_seen.store(seen, Ordering::Relaxed);
                if (cur & COUNT).saturating_sub(seen) >= cap {
                    return Err(NoSlot::Full);
                }
            }
            // ORDERING: SeqCst, the notifier's side of the ready signal's
            // Dekker pair (signal.rs).
            match self.opened.count.compare_exchange_weak(
                cur,
                cur + 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return Ok(()),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Takes a slot whatever the capacity (control entries, send-backs);
    /// past a closed door only if `past_closed`.
    pub(crate) fn force_reserve(&self, past_closed: bool) -> bool {
        // ORDERING: SeqCst, as in `try_reserve`.
        let before = self.opened.count.fetch_add(1, Ordering::SeqCst);
        if before & CLOSED != 0 && !past_closed {
            self.opened.count.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        self.forced.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Closes the lane to senders; wakes those blocked on it (refused).
    pub(crate) fn close(&self) {
        self.opened.count.fetch_or(CLOSED, Ordering::SeqCst);
        self.space.notify_all();
    }

    /// Pops the head entry. Only under the take lock, so `taken` has one
    /// writer.
    #[inline]
    pub(crate) fn pop(&self) -> Option<Entry<M>> {
        let entry = self.queue.pop()?;
        let n = self.taken.load(Ordering::Relaxed);
        if self.capacity == Capacity::Unbounded {
            // ORDERING: Release: a reader that sees this count (Acquire or
            // stronger) then sees the slot of the entry popped in `opened`,
            // so the length it derives is never negative.
            self.taken.store(n + 1, Ordering::Release);
        } else {
            // ORDERING: SeqCst: the freed slot is what a sender waiting for
            // space checks; this store, then the waiters' count, is the
            // notifier's side of their Dekker pair (signal.rs).
            self.taken.store(n + 1, Ordering::SeqCst);
            self.space.notify_one();
        }
        Some(entry)
    }

    /// Entries queued or with a slot taken: `taken` first (module docs).
    /// SeqCst loads, for the checks of the Dekker pairs (signal.rs).
    #[inline]
    fn length(&self) -> usize {
        let taken = self.taken.load(Ordering::SeqCst);
        (self.opened.count.load(Ordering::SeqCst) & COUNT).saturating_sub(taken)
    }

    /// Is an entry queued (a peek at the queue itself)?
    #[inline]
    pub(crate) fn has_entries(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Is an entry queued or about to be (a slot is reserved)? What an
    /// instance checks before sleeping: `opened` is raised by a SeqCst
    /// read-modify-write before every push (signal.rs).
    #[inline]
    pub(crate) fn has_reserved(&self) -> bool {
        self.length() != 0
    }

    /// Entries queued (or with a slot taken).
    pub(crate) fn queued(&self) -> usize {
        self.length()
    }

    /// Letters accepted by a send: every slot taken and kept, less those
    /// pushed past the door. Exact while the lane is quiet; costs the
    /// senders nothing.
    pub(crate) fn accepted(&self) -> u64 {
        let opened = self.opened.count.load(Ordering::SeqCst) & COUNT;
        (opened as u64).saturating_sub(self.forced.load(Ordering::Relaxed))
    }

    /// Pops every entry at the moment the counts say is there, waiting for
    /// pushes still under way.
    pub(crate) fn sweep_into(&self, mut each: impl FnMut(Entry<M>)) {
        let backoff = Backoff::new();
        while self.length() != 0 {
            match self.pop() {
                Some(entry) => {
                    each(entry);
                    backoff.reset();
                }
                // A sender took its slot and has not pushed yet (or undoes
                // a refused slot).
                None => backoff.snooze(),
            }
        }
    }

    pub(crate) fn dispatched(&self) -> u64 {
        self.taken.load(Ordering::Relaxed) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane(capacity: Capacity) -> Lane<u32> {
        Lane::new(LaneSpec {
            priority: Priority::MEDIUM,
            weight: 1,
            capacity,
        })
    }

    fn push(lane: &Lane<u32>, msg: u32) {
        lane.queue.push(Entry::Letter(Letter {
            msg,
            priority: Priority::MEDIUM,
            sent_back: 0,
            ttl: None,
        }));
    }

    fn popped(lane: &Lane<u32>) -> Option<u32> {
        match lane.pop()? {
            Entry::Letter(l) => Some(l.msg),
            Entry::Stop | Entry::Kill => None,
        }
    }

    #[test]
    fn a_bounded_lane_refuses_past_capacity_until_a_pop_frees_a_slot() {
        let lane = lane(Capacity::Bounded(2));
        for n in 0..2 {
            assert!(lane.try_reserve().is_ok());
            push(&lane, n);
        }
        // The senders' view of `taken` is stale (0): it says full, the
        // re-read of `taken` agrees.
        assert!(lane.try_reserve() == Err(NoSlot::Full));
        assert_eq!(popped(&lane), Some(0));
        // The view says full again; the re-read finds the freed slot.
        assert!(lane.try_reserve().is_ok());
        push(&lane, 2);
        assert!(lane.try_reserve() == Err(NoSlot::Full));
        assert_eq!(
            (lane.queued(), lane.dispatched(), lane.accepted()),
            (2, 1, 3)
        );
    }

    #[test]
    fn a_closed_lane_refuses_senders_but_not_send_backs_and_sweeps_to_empty() {
        let lane = lane(Capacity::Unbounded);
        assert!(lane.try_reserve().is_ok());
        push(&lane, 0);
        lane.close();
        assert!(lane.try_reserve() == Err(NoSlot::Closed));
        assert!(!lane.force_reserve(false));
        // A refused sender took its increment back: the length is exact.
        assert_eq!(lane.queued(), 1);
        assert!(lane.force_reserve(true));
        push(&lane, 1);
        let mut swept = Vec::new();
        lane.sweep_into(|e| {
            if let Entry::Letter(l) = e {
                swept.push(l.msg);
            }
        });
        assert_eq!(swept, vec![0, 1]);
        assert!(!lane.has_reserved());
        // The send-back is not a new acceptance.
        assert_eq!((lane.dispatched(), lane.accepted()), (2, 1));
    }
}
