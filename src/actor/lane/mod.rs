//! One lane of a mailbox: the FIFO queue of one priority and its two
//! counts, split by writer as the executor's lanes are (`src/lane/mod.rs`):
//!
//! - `opened` counts the slots senders took, plus the `CLOSED` bit (the
//!   door, see `mailbox.rs`); only senders (and `close`) write it. Taking a
//!   slot is one read-modify-write of `opened` that also sees whether the
//!   lane is closed, so a letter is accepted if and only if its slot was
//!   taken before the door closed. On an unbounded lane the operation is
//!   an increment, and a sender refused at a closed door takes it back; on
//!   a bounded lane it is a compare-exchange, and a refused sender takes
//!   nothing.
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
//!
//! Where the entries are kept:
//!
//! - A bounded lane of up to [`RING_MAX`](store::RING_MAX) entries keeps them in a ring
//!   addressed by the slot count (`sync/ring.rs`): the sender's slot *is*
//!   its ticket, the `opened` it counted, and the instance holding the take
//!   lock reads ticket `taken` next. A letter costs the sender the one
//!   compare-exchange of `opened` and a store; the queue adds no
//!   read-modify-write of its own on either side and allocates nothing.
//!   Entries pushed past the capacity (control entries, send-backs) go to
//!   a side list with their tickets, and the reader takes ticket `taken`
//!   from there when the ring does not have it. A slot is taken by a
//!   compare-exchange, or by an increment that is never refused (a letter
//!   sent back): none is ever given back, so no ticket is lost or handed
//!   out twice. A lost ticket would stop the lane at that ticket for good;
//!   the ring is allocated whole with the lane (the capacity's slots, each
//!   8 bytes more than an entry).
//! - Unbounded lanes and larger bounded ones keep a segmented queue that
//!   grows as needed; there a refused sender takes its increment back.
//!
//! A sender that finds a bounded lane full spins for a moment before it
//! sleeps (`mailbox.rs`). While it spins it waits for a *run* of free
//! slots, a quarter of the capacity (at least one), not for the first one:
//! resuming at the first free slot makes the sender and the instance take
//! turns letter by letter, each turn a full lane, a spin, and the lane's
//! lines moving between the cores. In a pipeline of four threads on two
//! cores that turn-taking came once every 3 to 7 letters, and cost a third
//! of the run's CPU time. Once asleep, a sender is woken by the first pop
//! and takes the first free slot, so a wait is longer than before by at
//! most the spin.

use crate::actor::config::LaneSpec;
use crate::actor::mailbox::Letter;
use crate::actor::signal::Signal;
use store::Store;

pub(crate) use store::Ticket;

mod store;
use crate::priority::{Capacity, Priority};
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
    store: Store<M>,
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
            store: Store::new(spec.capacity),
            opened: CachePadded::new(Opened::default()),
            taken: CachePadded::new(AtomicUsize::new(0)),
            forced: AtomicU64::new(0),
            space: Signal::default(),
        }
    }

    /// Takes a slot: refused if the lane is closed or (bounded) full.
    #[inline]
    pub(crate) fn try_reserve(&self) -> Result<Ticket, NoSlot> {
        let Capacity::Bounded(cap) = self.capacity else {
            // ORDERING: SeqCst: the idle instances' check and the closing
            // sweep read `opened` (signal.rs, module docs).
            let before = self.opened.count.fetch_add(1, Ordering::SeqCst);
            if before & CLOSED != 0 {
                // An unbounded lane's tickets address nothing: giving the
                // increment back loses no slot.
                self.opened.count.fetch_sub(1, Ordering::SeqCst);
                return Err(NoSlot::Closed);
            }
            return Ok(Ticket::new(before & COUNT, false));
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
                Ok(_) => return Ok(Ticket::new(cur & COUNT, false)),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Takes a slot whatever the capacity, for a control entry: refused
    /// once the door is closed. A compare-exchange, so a refusal takes no
    /// ticket (module docs).
    pub(crate) fn force_reserve(&self) -> Option<Ticket> {
        // ORDERING: SeqCst, as in `try_reserve`.
        let before = self
            .opened
            .count
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |cur| {
                (cur & CLOSED == 0).then_some(cur + 1)
            })
            .ok()?;
        self.forced.fetch_add(1, Ordering::Relaxed);
        Some(Ticket::new(before & COUNT, true))
    }

    /// Takes a slot whatever the capacity and the door, for a letter sent
    /// back: it was accepted long ago. Never refused, so one increment.
    pub(crate) fn reserve_past_door(&self) -> Ticket {
        // ORDERING: SeqCst, as in `try_reserve`.
        let before = self.opened.count.fetch_add(1, Ordering::SeqCst);
        self.forced.fetch_add(1, Ordering::Relaxed);
        Ticket::new(before & COUNT, true)
    }

    /// Puts an entry in the slot `ticket` took.
    ///
    /// # Safety
    ///
    /// `ticket` was taken from this lane (a ring lane's tickets are its
    /// slots: another lane's would race that lane's own writer). It is
    /// pushed once, which `Ticket` not being `Copy` sees to.
    #[inline]
    pub(crate) unsafe fn push(&self, ticket: Ticket, entry: Entry<M>) {
        // SAFETY: the caller's.
        unsafe { self.store.push(ticket, entry) };
    }

    /// Is a run of slots free (module docs), or the lane closed? What a
    /// sender that found the lane full waits for while it spins.
    pub(crate) fn has_room_for_a_run(&self) -> bool {
        self.opened.count.load(Ordering::Relaxed) & CLOSED != 0
            || self.capacity.has_room_for_a_run(self.length())
    }

    /// Closes the lane to senders; wakes those blocked on it (refused).
    pub(crate) fn close(&self) {
        self.opened.count.fetch_or(CLOSED, Ordering::SeqCst);
        self.space.notify_all();
    }

    /// Pops the head entry.
    ///
    /// # Safety
    ///
    /// The caller holds its mailbox's take lock (the `&mut Take` that
    /// `pick` and `sweep` in `dispatch.rs` are given): a ring lane has one
    /// reader at a time, and `taken`, which only the reader writes, is the
    /// first ticket not yet read.
    #[inline]
    pub(crate) unsafe fn pop(&self) -> Option<Entry<M>> {
        let n = self.taken.load(Ordering::Relaxed);
        // SAFETY: the caller's (above): one reader, and `n`, the count of
        // entries popped, is the first ticket not yet read.
        let entry = unsafe { self.store.pop(n) }?;
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

    /// Is an entry queued, ready to pop (a peek at the store itself)?
    /// Under the take lock, as `pop`.
    #[inline]
    pub(crate) fn has_entries(&self) -> bool {
        self.store.holds(self.taken.load(Ordering::Relaxed))
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
    ///
    /// # Safety
    ///
    /// As for [`Lane::pop`].
    pub(crate) unsafe fn sweep_into(&self, mut each: impl FnMut(Entry<M>)) {
        let backoff = Backoff::new();
        while self.length() != 0 {
            // SAFETY: the caller's.
            match unsafe { self.pop() } {
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
mod tests;
