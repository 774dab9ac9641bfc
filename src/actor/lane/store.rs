//! Where a lane keeps its entries (the lane's module docs): a ring
//! addressed by the senders' tickets for bounded lanes of up to
//! [`RING_MAX`], with a side list for the entries pushed past the capacity;
//! a segmented queue for the others (`sync::queue`, a locked deque under
//! loom). Rules 5 and 6 of `README.md`.

use super::Entry;
use crate::priority::Capacity;
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::queue::Queue;
use crate::sync::ring::Ring;
use crate::sync::{Mutex, lock};

/// Bounded lanes of up to this many entries keep them in a ring allocated
/// with the lane (module docs); larger ones grow as they fill.
pub(crate) const RING_MAX: usize = 1 << 16;

/// A slot taken in a lane: its ticket, and whether it was taken past the
/// capacity. Handed back to [`Lane::push`](super::Lane::push), which
/// consumes it: not `Copy`, so a ticket is pushed once.
pub(crate) struct Ticket {
    n: usize,
    forced: bool,
}

/// Where a lane keeps its entries (module docs).
pub(super) enum Store<M> {
    Ring { ring: Ring<Entry<M>>, past: Past<M> },
    Queue(Queue<Entry<M>>),
}

/// A ring lane's entries pushed past the capacity, with their tickets, in
/// any order. Rare: control entries and send-backs.
pub(super) struct Past<M> {
    count: AtomicUsize,
    entries: Mutex<Vec<(usize, Entry<M>)>>,
}

impl<M> Past<M> {
    fn put(&self, ticket: usize, entry: Entry<M>) {
        lock(&self.entries).push((ticket, entry));
        // ORDERING: Release, so the reader that sees the count finds the
        // entry (it takes the lock anyway; this keeps the peek honest).
        self.count.fetch_add(1, Ordering::Release);
    }

    fn holds(&self, ticket: usize) -> bool {
        self.count.load(Ordering::Acquire) != 0
            && lock(&self.entries).iter().any(|(t, _)| *t == ticket)
    }

    fn take(&self, ticket: usize) -> Option<Entry<M>> {
        if self.count.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut entries = lock(&self.entries);
        let at = entries.iter().position(|(t, _)| *t == ticket)?;
        let (_, entry) = entries.swap_remove(at);
        self.count.fetch_sub(1, Ordering::Relaxed);
        Some(entry)
    }
}

impl Ticket {
    pub(super) fn new(n: usize, forced: bool) -> Ticket {
        Ticket { n, forced }
    }

    /// A sender's ticket as the token of a slot granted to a future in
    /// line (`sync/line.rs`): its number, as it is never forced.
    pub(super) fn into_grant(self) -> usize {
        debug_assert!(!self.forced, "a permit's slot is a sender's");
        self.n
    }

    /// The ticket of a slot granted with [`into_grant`](Ticket::into_grant).
    pub(super) fn from_grant(n: usize) -> Ticket {
        Ticket { n, forced: false }
    }

    /// The ticket's number: the models check the order of reads by it.
    #[cfg(all(test, loom))]
    pub(super) fn number(&self) -> usize {
        self.n
    }
}

impl<M> Store<M> {
    pub(super) fn new(capacity: Capacity) -> Store<M> {
        match capacity {
            Capacity::Bounded(cap) if cap <= RING_MAX => Store::Ring {
                ring: Ring::new(cap),
                past: Past {
                    count: AtomicUsize::new(0),
                    entries: Mutex::new(Vec::new()),
                },
            },
            _ => Store::Queue(Queue::new()),
        }
    }

    /// Puts an entry in the slot `ticket` took.
    ///
    /// # Safety
    ///
    /// As for [`Lane::push`](super::Lane::push): `ticket` is this store's,
    /// pushed once.
    #[inline]
    pub(super) unsafe fn push(&self, ticket: Ticket, entry: Entry<M>) {
        match self {
            Store::Ring { past, .. } if ticket.forced => past.put(ticket.n, entry),
            // SAFETY: the caller's: the ticket is this ring's and no other
            // writer has it.
            Store::Ring { ring, .. } => unsafe { ring.write(ticket.n, entry) },
            Store::Queue(queue) => queue.push(entry),
        }
    }

    /// Takes the entry of ticket `next` (a ring) or the head entry (a
    /// queue), if it is in.
    ///
    /// # Safety
    ///
    /// No other thread pops at the same time, and `next` is the first
    /// ticket not yet popped.
    #[inline]
    pub(super) unsafe fn pop(&self, next: usize) -> Option<Entry<M>> {
        match self {
            // SAFETY: the caller's; a ticket found on the side list was
            // never written to the ring, so the ring passes over it.
            Store::Ring { ring, past } => match unsafe { ring.read(next) } {
                Some(entry) => Some(entry),
                None => {
                    let entry = past.take(next)?;
                    // SAFETY: as above.
                    unsafe { ring.skip(next) };
                    Some(entry)
                }
            },
            Store::Queue(queue) => queue.pop(),
        }
    }

    /// Is the entry `pop(next)` would take in? A peek, by the one reader.
    #[inline]
    pub(super) fn holds(&self, next: usize) -> bool {
        match self {
            Store::Ring { ring, past } => ring.is_written(next) || past.holds(next),
            Store::Queue(queue) => !queue.is_empty(),
        }
    }
}
