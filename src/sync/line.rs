//! The line that futures wait in for a slot, first come first served:
//! the executor's lanes (`lane/space.rs`) and the mailbox lanes' space
//! signal (`actor/signal.rs`) keep one each, under their own lock.
//!
//! Each future takes a ticket as it first waits, and is woken in ticket
//! order. A future woken that finds the slot taken waits again with its
//! first ticket, so it keeps its place. A future is taken out of the line
//! as it is woken, but stays a *member* (the owner counts members in the
//! count its notifiers read) until it has looked again, so no release
//! meanwhile goes unnoticed; and while any woken future has not looked
//! again, no future still in line takes a slot, so none passes one woken
//! before it. A future dropped in the line leaves it; one dropped after
//! being woken, before it looked again, hands its wake-up to the next in
//! line: no wake-up is lost with it. A future woken and then neither
//! polled nor dropped keeps the first claim on the slot it was woken for,
//! and the futures behind it wait: as a permit that tokio's semaphore has
//! handed to a waiter stays with that waiter until it is polled or
//! dropped. The futures' docs say so. A future that leaves with its slot
//! while no woken future is yet to look, and sees room left, wakes the
//! first still in line ([`Line::hand_on`]): slots freed while the line was
//! held up (their releases found nobody in line, or only futures barred
//! by the woken one) would otherwise wait for the next release, with a
//! future in line and the slot free. Only with room left, so that no
//! future is woken ahead of the slot it waits for (a woken future may take
//! a slot before one woken earlier, as it may when each was woken for a
//! slot of its own).
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
    /// Futures woken (taken out of line) that have not looked again yet.
    woken: usize,
    /// Futures holding a ticket: in line, or woken and yet to look.
    members: usize,
}

/// One future's place in a [`Line`].
#[derive(Debug, Default)]
pub(crate) struct Place {
    ticket: Option<u64>,
}

/// A future looking for a slot: its ticket and whether it was woken.
#[derive(Clone, Copy)]
pub(crate) struct Arrival {
    ticket: u64,
    woken: bool,
    /// First look: the owner counts the new member before it checks for a
    /// slot (the Dekker pair of its notifiers).
    pub(crate) new: bool,
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
    /// the mailbox's space signal counts (the executor's lanes count them
    /// in `space_waiters` themselves).
    #[cfg_attr(not(feature = "actor"), allow(dead_code))]
    pub(crate) fn members(&self) -> usize {
        self.members
    }

    /// A future looks for a slot: a newcomer takes a ticket and becomes a
    /// member; one woken has now looked again.
    pub(crate) fn arrive(&mut self, place: &mut Place) -> Arrival {
        match place.ticket {
            Some(ticket) => {
                let woken = !self.waiting.contains_key(&ticket);
                if woken {
                    self.woken -= 1;
                }
                Arrival {
                    ticket,
                    woken,
                    new: false,
                }
            }
            None => {
                let ticket = self.next_ticket;
                self.next_ticket += 1;
                self.members += 1;
                place.ticket = Some(ticket);
                Arrival {
                    ticket,
                    woken: false,
                    new: true,
                }
            }
        }
    }

    /// May the future of `arrival` take a free slot now? One woken may;
    /// one still in line only if it is first and no future woken before
    /// it is yet to look.
    pub(crate) fn may_take(&self, arrival: Arrival) -> bool {
        arrival.woken
            || (self.woken == 0
                && self
                    .waiting
                    .first_key_value()
                    .is_none_or(|(&first, _)| first == arrival.ticket))
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

    /// After a future left with its slot and saw room left: the first
    /// future still in line, taken out to look for a slot too, unless a
    /// woken one is yet to look (module docs). The caller wakes it with
    /// [`wake`] once its lock is let go.
    #[must_use]
    pub(crate) fn hand_on(&mut self) -> Option<Waker> {
        if self.woken == 0 {
            self.take_first()
        } else {
            None
        }
    }

    /// The future at `place` is dropped: it leaves, and if it had been
    /// woken and not yet looked again, the next in line is taken out in
    /// its place. Returns `(its own waker, the next to wake)`, for after
    /// the lock; `None` if it never waited.
    #[must_use]
    pub(crate) fn cancel(&mut self, place: &mut Place) -> Option<(Option<Waker>, Option<Waker>)> {
        let ticket = place.ticket.take()?;
        self.members -= 1;
        Some(match self.waiting.remove(&ticket) {
            Some(own) => (Some(own), None),
            None => {
                self.woken -= 1;
                (None, self.take_first())
            }
        })
    }

    /// Takes the first future in line out of it, counted as woken; the
    /// caller wakes it with [`wake`] once its lock is let go.
    #[must_use]
    pub(crate) fn take_first(&mut self) -> Option<Waker> {
        let (_, waker) = self.waiting.pop_first()?;
        self.woken += 1;
        Some(waker)
    }

    /// Takes every future out of line (the lane closes).
    #[must_use]
    pub(crate) fn take_all(&mut self) -> Vec<Waker> {
        std::iter::from_fn(|| self.take_first()).collect()
    }
}

impl std::fmt::Debug for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Line")
            .field("waiting", &self.waiting.len())
            .field("woken", &self.woken)
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
