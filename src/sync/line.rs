//! The line that futures wait in for a slot, first come first served:
//! the executor's lanes (`lane/space.rs`) and the mailbox lanes' space
//! signal (`actor/signal.rs`) keep one each, under their own lock.
//!
//! Each future takes a ticket as it first waits, and is served in ticket
//! order. A slot freed while futures wait is **granted**: the owner takes
//! it on behalf of the first future in line (the slot counts as taken,
//! so no producer, blocking or not, can take it) and wakes that future
//! with the grant; its next poll finds the slot its own. This is how
//! tokio's semaphore hands a permit to a waiter: a future woken and then
//! neither polled nor dropped keeps the slot it was woken for. A future
//! dropped with a grant gives the slot back as a dropped permit does
//! (whoever waits next gets it by the same rule); one dropped in line
//! just leaves it. A future polled while still in line takes a free slot
//! only if it is first (a slot that freed with nobody in line yet).
//!
//! Threads that block for a slot wait beside the line, on the owner's
//! condition variable. When both wait, freed slots alternate between the
//! first future and the threads ([`Line::futures_turn`]), so neither kind
//! starves the other. A waiter that leaves (with its slot, or on its
//! deadline) while a slot is free and futures wait grants that slot too
//! ([`Line::has_waiting`]): a slot freed while the line was passed over
//! (the threads' turn) is never left free with a future in line.
//!
//! A future is a *member* from its first look until it leaves (the owner
//! counts members in the count its notifiers read). When the lane closes,
//! every future in line is woken without a grant ([`Line::take_all`]); a
//! future with a grant that finds the lane closed gives the slot back.
//!
//! Wakers are user code: the owner clones one before it takes its lock,
//! and wakes or drops them after it lets the lock go ([`wake`],
//! [`drop_quietly`](crate::util::drop_quietly)), with a panic caught, so
//! none can poison the lock or unwind into the thread whose pop freed the
//! slot.

use crate::util::call_quietly;
use std::collections::BTreeMap;
use std::task::Waker;

/// The futures waiting for a slot, by ticket: the lowest is the longest
/// waiting.
#[derive(Default)]
pub(crate) struct Line {
    waiting: BTreeMap<u64, Waker>,
    next_ticket: u64,
    /// Futures taken out of line that have not looked again yet, with the
    /// token of the slot granted to each (`None`: woken as the lane
    /// closed).
    woken: BTreeMap<u64, Option<usize>>,
    /// Futures holding a ticket: in line, or woken and yet to look.
    members: usize,
    /// The last slot offered went to a future while threads waited too.
    futures_had_last: bool,
}

/// One future's place in a [`Line`].
#[derive(Debug, Default)]
pub(crate) struct Place {
    ticket: Option<u64>,
}

/// A future looking for a slot: its ticket and what it was woken with.
#[derive(Clone, Copy)]
pub(crate) struct Arrival {
    ticket: u64,
    /// The token of the slot granted to it while it was out of line.
    pub(crate) grant: Option<usize>,
    /// First look: the owner counts the new member before it checks for a
    /// slot (the Dekker pair of its notifiers).
    pub(crate) new: bool,
}

/// What a future dropped while it held a ticket leaves behind.
pub(crate) struct Cancelled {
    /// Its waker, to drop outside the lock.
    pub(crate) waker: Option<Waker>,
    /// The token of a slot granted to it and never used: the owner gives
    /// the slot back, as for a permit dropped unused.
    pub(crate) grant: Option<usize>,
}

impl Place {
    /// Has this future waited yet? A newcomer may take a free slot at
    /// once if nobody waits.
    pub(crate) fn is_new(&self) -> bool {
        self.ticket.is_none()
    }
}

impl Line {
    /// Futures holding a ticket (in line, or woken and yet to look): what
    /// the mailbox's space signal counts, and what the executor's lanes
    /// count in `space_waiters` beside their blocked threads.
    pub(crate) fn members(&self) -> usize {
        self.members
    }

    /// Does a future wait in line (not yet woken)?
    pub(crate) fn has_waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// A future looks for a slot: a newcomer takes a ticket and becomes a
    /// member; one woken has now looked again, and takes its grant.
    pub(crate) fn arrive(&mut self, place: &mut Place) -> Arrival {
        match place.ticket {
            Some(ticket) => Arrival {
                ticket,
                grant: self.woken.remove(&ticket).flatten(),
                new: false,
            },
            None => {
                let ticket = self.next_ticket;
                self.next_ticket += 1;
                self.members += 1;
                place.ticket = Some(ticket);
                Arrival {
                    ticket,
                    grant: None,
                    new: true,
                }
            }
        }
    }

    /// May the future of `arrival`, with no grant, take a free slot now?
    /// Only if it is first in line (or the line is empty): a slot freed
    /// with futures in line is granted to the first.
    pub(crate) fn may_take(&self, arrival: Arrival) -> bool {
        self.waiting
            .first_key_value()
            .is_none_or(|(&first, _)| first == arrival.ticket)
    }

    /// The future of `arrival` waits (again) in its place, to be woken by
    /// `waker`; returns the waker it gave before, to drop outside the lock.
    #[must_use]
    pub(crate) fn park(&mut self, arrival: Arrival, waker: Waker) -> Option<Waker> {
        self.waiting.insert(arrival.ticket, waker)
    }

    /// The future at `place` got its slot (or its answer) and leaves.
    /// Returns its waker, to drop outside the lock.
    #[must_use]
    pub(crate) fn leave(&mut self, place: &mut Place) -> Option<Waker> {
        let ticket = place.ticket.take()?;
        self.members -= 1;
        self.waiting.remove(&ticket)
    }

    /// Should a slot freed now be offered to the first future in line?
    /// Always, unless threads wait too and the last one offered went to a
    /// future: then this one is theirs (module docs).
    pub(crate) fn futures_turn(&mut self, threads_waiting: bool) -> bool {
        let turn = !threads_waiting || !self.futures_had_last;
        self.futures_had_last = threads_waiting && turn;
        turn
    }

    /// The owner took a slot (its `token`) for the first future in line:
    /// takes that future out of line with the grant. The caller wakes it
    /// with [`wake`] once its lock is let go. Call only with a future in
    /// line ([`has_waiting`](Line::has_waiting)).
    #[must_use]
    pub(crate) fn grant_first(&mut self, token: usize) -> Option<Waker> {
        let (ticket, waker) = self.waiting.pop_first()?;
        self.woken.insert(ticket, Some(token));
        Some(waker)
    }

    /// The future at `place` is dropped: it leaves. `None` if it never
    /// waited.
    #[must_use]
    pub(crate) fn cancel(&mut self, place: &mut Place) -> Option<Cancelled> {
        let ticket = place.ticket.take()?;
        self.members -= 1;
        Some(match self.waiting.remove(&ticket) {
            Some(own) => Cancelled {
                waker: Some(own),
                grant: None,
            },
            None => Cancelled {
                waker: None,
                grant: self.woken.remove(&ticket).flatten(),
            },
        })
    }

    /// Takes every future out of line, with no grant (the lane closes).
    #[must_use]
    pub(crate) fn take_all(&mut self) -> Vec<Waker> {
        std::iter::from_fn(|| {
            let (ticket, waker) = self.waiting.pop_first()?;
            self.woken.insert(ticket, None);
            Some(waker)
        })
        .collect()
    }
}

impl std::fmt::Debug for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Line")
            .field("waiting", &self.waiting.len())
            .field("woken", &self.woken.len())
            .finish()
    }
}

/// Wakes a future taken out of line, outside the lock: a waker is user
/// code, and one that panics must neither poison the lock nor unwind into
/// the thread that freed the slot.
pub(crate) fn wake(waker: Option<Waker>) {
    if let Some(waker) = waker {
        call_quietly(|| waker.wake());
    }
}
