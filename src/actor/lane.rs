//! One lane of a mailbox: the FIFO queue of one priority and its count,
//! whose top bit closes it (the door, see `mailbox.rs`).

use super::config::LaneSpec;
use super::mailbox::Letter;
use super::signal::Signal;
use crate::priority::{Capacity, Priority};
use crossbeam_queue::SegQueue;
use crossbeam_utils::{Backoff, CachePadded};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Set in a lane's `len` once the stage accepts no new message.
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

pub(crate) struct Lane<M> {
    pub(crate) priority: Priority,
    pub(crate) weight: u32,
    pub(crate) capacity: Capacity,
    pub(crate) queue: SegQueue<Entry<M>>,
    /// Entries queued or with a slot taken, and the `CLOSED` bit; bounded
    /// lanes keep the count below capacity.
    len: CachePadded<AtomicUsize>,
    /// Entries popped (dispatched or swept). Written under the take lock.
    dispatched: AtomicU64,
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
            len: CachePadded::new(AtomicUsize::new(0)),
            dispatched: AtomicU64::new(0),
            forced: AtomicU64::new(0),
            space: Signal::default(),
        }
    }

    /// Takes a slot: refused if the lane is closed or (bounded) full.
    #[inline]
    pub(crate) fn try_reserve(&self) -> Result<(), NoSlot> {
        let Capacity::Bounded(cap) = self.capacity else {
            // ORDERING: SeqCst: the idle instances' check and the closing
            // sweep read `len` (signal.rs, module docs).
            let before = self.len.fetch_add(1, Ordering::SeqCst);
            if before & CLOSED != 0 {
                self.len.fetch_sub(1, Ordering::SeqCst);
                return Err(NoSlot::Closed);
            }
            return Ok(());
        };
        let mut cur = self.len.load(Ordering::SeqCst);
        loop {
            if cur & CLOSED != 0 {
                return Err(NoSlot::Closed);
            }
            if cur >= cap {
                return Err(NoSlot::Full);
            }
            // ORDERING: SeqCst pairs with the space waiters' count (signal.rs).
            match self
                .len
                .compare_exchange_weak(cur, cur + 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return Ok(()),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Takes a slot whatever the capacity (control entries, send-backs);
    /// past a closed door only if `past_closed`.
    pub(crate) fn force_reserve(&self, past_closed: bool) -> bool {
        let before = self.len.fetch_add(1, Ordering::SeqCst);
        if before & CLOSED != 0 && !past_closed {
            self.len.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        self.forced.fetch_add(1, Ordering::Relaxed);
        true
    }

    pub(crate) fn unreserve(&self) {
        self.len.fetch_sub(1, Ordering::SeqCst);
        if self.capacity != Capacity::Unbounded {
            self.space.notify_one();
        }
    }

    /// Closes the lane to senders; wakes those blocked on it (refused).
    pub(crate) fn close(&self) {
        self.len.fetch_or(CLOSED, Ordering::SeqCst);
        self.space.notify_all();
    }

    /// Pops the head entry. Only under the take lock, so `dispatched`
    /// has one writer.
    #[inline]
    pub(crate) fn pop(&self) -> Option<Entry<M>> {
        let entry = self.queue.pop()?;
        let n = self.dispatched.load(Ordering::Relaxed);
        self.dispatched.store(n + 1, Ordering::Relaxed);
        self.unreserve();
        Some(entry)
    }

    /// Is an entry queued (a peek at the queue itself)?
    #[inline]
    pub(crate) fn has_entries(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Is an entry queued or about to be (a slot is reserved)? What an
    /// instance checks before sleeping: `len` is raised by a SeqCst
    /// read-modify-write before every push (signal.rs).
    #[inline]
    pub(crate) fn has_reserved(&self) -> bool {
        self.len.load(Ordering::SeqCst) & COUNT != 0
    }

    /// Entries queued (or with a slot taken).
    pub(crate) fn queued(&self) -> usize {
        self.len.load(Ordering::Relaxed) & COUNT
    }

    /// Letters accepted by a send: every entry popped or still queued,
    /// less those pushed past the door. Exact while the lane is quiet;
    /// costs the senders nothing.
    pub(crate) fn accepted(&self) -> u64 {
        (self.dispatched() + self.queued() as u64)
            .saturating_sub(self.forced.load(Ordering::Relaxed))
    }

    /// Pops every entry at the moment `len` says is there, waiting for
    /// pushes still under way.
    pub(crate) fn sweep_into(&self, mut each: impl FnMut(Entry<M>)) {
        let backoff = Backoff::new();
        while self.len.load(Ordering::SeqCst) & COUNT != 0 {
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
        self.dispatched.load(Ordering::Relaxed)
    }
}
