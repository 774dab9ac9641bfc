//! Waiting for a free slot in a full bounded lane: producers that block
//! (`enqueue`), and futures that wait ([`SpaceWaiter`], behind the
//! executor's `reserve`).
//!
//! Both kinds wait under the lane's `space` lock and count themselves in
//! `space_waiters` (SeqCst) before they look at `occupied` again; a worker
//! frees a slot (SeqCst) and then loads `space_waiters`, and only if
//! someone waits takes the lock to wake one. In the single order of SeqCst
//! operations one of the two sees the other: the waiter sees the free
//! slot, or the worker sees the waiter. (The same Dekker pair as rule 1 of
//! `sleep/README.md`.)
//!
//! Each freed slot wakes one blocked producer (the condition variable) and
//! the first waiting future. The futures wait in line: each takes a
//! ticket as it first waits, and they are woken in ticket order. A future
//! woken that finds the slot taken by the other kind waits again with its
//! first ticket, so it keeps its place. A future is taken out of the line
//! as it is woken, but stays counted in `space_waiters` until it has
//! looked again, so no release meanwhile goes unnoticed. A future dropped
//! in the line leaves it; one dropped after being woken, before it looked
//! again, hands its wake-up to the next in line: no wake-up is lost with
//! it. (tokio's semaphore does the same for its permits.) Wakers are user
//! code: they are cloned before the lock is taken, and woken or dropped
//! after it is let go, with a panic caught, so none can poison the lock or
//! unwind into the worker whose pop freed the slot.

use super::{Lane, NoSlot};
use crate::sync::atomic::Ordering;
use crate::sync::{dekker_fence, lock, wait_until};
use crate::util::{call_quietly, drop_quietly};
use std::collections::BTreeMap;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// The futures waiting for a slot of one lane, by ticket: the lowest is
/// the longest waiting.
#[derive(Default)]
pub(crate) struct AsyncWaiters {
    waiting: BTreeMap<u64, Waker>,
    next_ticket: u64,
    /// Futures woken (taken out of line) that have not looked again yet:
    /// while there are any, no future still in line takes a slot, so none
    /// passes one woken before it.
    woken: usize,
}

impl AsyncWaiters {
    /// Takes the first future in line out of it, counted as woken; the
    /// caller wakes it with [`wake`] once the lock is let go.
    fn take_first(&mut self) -> Option<Waker> {
        let (_, waker) = self.waiting.pop_first()?;
        self.woken += 1;
        Some(waker)
    }

    /// May the future of `ticket` take a free slot now? One woken may; one
    /// still in line only if it is first and none woken before it is yet
    /// to look; a newcomer only if nobody waits.
    fn may_take(&self, ticket: u64, woken: bool) -> bool {
        woken
            || (self.woken == 0
                && self
                    .waiting
                    .first_key_value()
                    .is_none_or(|(&first, _)| first == ticket))
    }
}

/// Wakes a future taken out of line, outside the lock: a waker is user
/// code, and one that panics must neither poison the lock nor unwind into
/// the worker that freed the slot.
fn wake(waker: Option<Waker>) {
    if let Some(waker) = waker {
        call_quietly(|| waker.wake());
    }
}

/// One future's place while it waits for a slot.
#[derive(Debug, Default)]
pub(crate) struct SpaceWaiter {
    /// The future's ticket, once it has waited: it counts in
    /// `space_waiters` from then until it leaves.
    ticket: Option<u64>,
}

impl Lane {
    /// Before [`reserve_blocking`](Lane::reserve_blocking) sleeps: spins a
    /// moment for a run of free slots ([`Capacity::has_room_for_a_run`]),
    /// and takes one then. `None`: the spin ended (or the deadline passed)
    /// without a run free. Not under loom, whose models check the sleep protocol (the
    /// spin only calls `try_reserve`, as a producer's first attempt does).
    #[cold]
    pub(crate) fn reserve_spinning(
        &self,
        deadline: Option<Instant>,
        closed: impl Fn() -> bool,
    ) -> Option<Result<(), NoSlot>> {
        if cfg!(loom) {
            return None;
        }
        let backoff = crossbeam_utils::Backoff::new();
        while !backoff.is_completed() {
            if closed() {
                return Some(Err(NoSlot::Closed));
            }
            if self
                .capacity
                .has_room_for_a_run(self.occupied.load(Ordering::Relaxed))
                && self.try_reserve()
            {
                return Some(Ok(()));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                // `reserve_blocking` takes any free slot before it gives up.
                return None;
            }
            backoff.snooze();
        }
        None
    }

    /// Takes a slot, waiting while the lane is full until `deadline` (or for
    /// ever when `None`) or until `closed()` turns true.
    #[cold]
    pub(crate) fn reserve_blocking(
        &self,
        deadline: Option<Instant>,
        closed: impl Fn() -> bool,
    ) -> Result<(), NoSlot> {
        let mut guard = lock(&self.space);
        // ORDERING: register as a waiter *before* re-checking for space. A
        // worker frees a slot and then loads `space_waiters`, both SeqCst:
        // either it sees this waiter and notifies under the lock, or this
        // re-check sees the freed slot.
        self.space_waiters.fetch_add(1, Ordering::SeqCst);
        dekker_fence();
        let outcome = loop {
            if closed() {
                break Err(NoSlot::Closed);
            }
            // ORDERING: SeqCst reads. A relaxed read after the SeqCst
            // increment of `space_waiters` may return the count from before
            // a worker's release (nothing orders it after that increment),
            // while that worker's SeqCst load of `space_waiters` still saw
            // no waiter: both would miss, and this producer would wait for
            // ever with a free slot. (`dekker_fence` hides this under loom,
            // so the models cannot show it.)
            if self.reserve_seeing(Ordering::SeqCst) {
                break Ok(());
            }
            guard = match wait_until(&self.space_freed, guard, deadline) {
                Ok(g) => g,
                Err(g) => {
                    guard = g;
                    break Err(NoSlot::Full);
                }
            };
        };
        self.space_waiters.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
        outcome
    }

    /// Takes a slot for the future `waiter`, or puts it in line to be woken
    /// when a slot frees (or the lane's executor closes, `closed()`).
    pub(crate) fn poll_space(
        &self,
        waiter: &mut SpaceWaiter,
        cx: &mut Context<'_>,
        closed: impl Fn() -> bool,
    ) -> Poll<Result<(), NoSlot>> {
        // A newcomer takes a free slot at once only if no future waits.
        if waiter.ticket.is_none()
            && self.space_waiters.load(Ordering::Relaxed) == 0
            && self.try_reserve()
        {
            return Poll::Ready(Ok(()));
        }
        // Cloned before the lock: a waker is user code.
        let waker = cx.waker().clone();
        let mut line = lock(&self.space);
        let (ticket, woken) = match waiter.ticket {
            Some(ticket) => {
                let woken = !line.waiting.contains_key(&ticket);
                if woken {
                    line.woken -= 1;
                }
                (ticket, woken)
            }
            None => {
                // ORDERING: counted before the re-check, as in
                // `reserve_blocking`.
                self.space_waiters.fetch_add(1, Ordering::SeqCst);
                dekker_fence();
                let ticket = line.next_ticket;
                line.next_ticket += 1;
                waiter.ticket = Some(ticket);
                (ticket, false)
            }
        };
        let outcome = if closed() {
            Err(NoSlot::Closed)
        } else if line.may_take(ticket, woken) && self.reserve_seeing(Ordering::SeqCst) {
            // ORDERING: SeqCst, as in `reserve_blocking`.
            Ok(())
        } else {
            // In line (again, with its own ticket, if it was woken): the
            // waker given last is the one woken.
            let replaced = line.waiting.insert(ticket, waker);
            drop(line);
            drop_quietly(replaced);
            return Poll::Pending;
        };
        let left = line.waiting.remove(&ticket);
        waiter.ticket = None;
        self.space_waiters.fetch_sub(1, Ordering::SeqCst);
        drop(line);
        drop_quietly((left, waker));
        Poll::Ready(outcome)
    }

    /// The future `waiter` is dropped: it leaves the line, and if it had
    /// been woken and not yet looked again, the next in line is woken in
    /// its place.
    pub(crate) fn cancel_space(&self, waiter: &mut SpaceWaiter) {
        let Some(ticket) = waiter.ticket.take() else {
            return;
        };
        let mut line = lock(&self.space);
        let (left, next) = match line.waiting.remove(&ticket) {
            Some(own) => (Some(own), None),
            None => {
                line.woken -= 1;
                (None, line.take_first())
            }
        };
        self.space_waiters.fetch_sub(1, Ordering::SeqCst);
        drop(line);
        drop_quietly(left);
        wake(next);
    }

    /// Gives back a slot taken and never used (a permit dropped unused).
    pub(crate) fn unreserve(&self) {
        if self.capacity.limit().is_some() {
            self.release_slot();
        }
    }

    /// Wakes every producer and future waiting on this lane (at shutdown).
    pub(crate) fn wake_producers(&self) {
        let mut line = lock(&self.space);
        self.space_freed.notify_all();
        let woken: Vec<Waker> = std::iter::from_fn(|| line.take_first()).collect();
        drop(line);
        for waker in woken {
            wake(Some(waker));
        }
    }

    #[inline]
    pub(super) fn release_slot(&self) {
        // ORDERING: see `reserve_blocking`.
        self.occupied.fetch_sub(1, Ordering::SeqCst);
        dekker_fence();
        if self.space_waiters.load(Ordering::SeqCst) > 0 {
            self.notify_space();
        }
    }

    #[cold]
    fn notify_space(&self) {
        let mut line = lock(&self.space);
        self.space_freed.notify_one();
        let first = line.take_first();
        drop(line);
        wake(first);
    }
}
