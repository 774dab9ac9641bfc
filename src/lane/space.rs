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
//! The futures wait in a `Line`, first come first served (its rules are
//! in `sync/line.rs`); every future holding a ticket counts in
//! `space_waiters`. A slot freed while futures wait is granted to the
//! first of them (taken on its behalf, so a producer that comes by before
//! it polls cannot take it), or, when threads wait too and the last slot
//! went to a future, offered to one blocked producer (the condition
//! variable): the two kinds take turns.

use super::{Lane, NoSlot};
use crate::sync::atomic::Ordering;
use crate::sync::line::{Line, Place, wake};
use crate::sync::{dekker_fence, lock, wait_until};
use crate::util::drop_quietly;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// One future's place while it waits for a slot.
pub(crate) type SpaceWaiter = Place;

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
                    // A slot freed as the deadline passed is taken, not
                    // left free with its notify spent on this producer.
                    if self.reserve_seeing(Ordering::SeqCst) {
                        break Ok(());
                    }
                    break Err(NoSlot::Full);
                }
            };
        };
        self.space_waiters.fetch_sub(1, Ordering::SeqCst);
        let next = self.grant_if_room(&mut guard);
        drop(guard);
        wake(next);
        outcome
    }

    /// Takes a slot for the future `waiter`, or puts it in line to be
    /// granted one when a slot frees (or woken when the lane's executor
    /// closes, `closed()`).
    pub(crate) fn poll_space(
        &self,
        waiter: &mut SpaceWaiter,
        cx: &mut Context<'_>,
        closed: impl Fn() -> bool,
    ) -> Poll<Result<(), NoSlot>> {
        // A newcomer takes a free slot at once only if no future waits.
        if waiter.is_new() && self.space_waiters.load(Ordering::Relaxed) == 0 && self.try_reserve()
        {
            return Poll::Ready(Ok(()));
        }
        // Cloned before the lock: a waker is user code.
        let waker = cx.waker().clone();
        let mut line = lock(&self.space);
        let arrival = line.arrive(waiter);
        if arrival.new {
            // ORDERING: counted before the re-check, as in
            // `reserve_blocking`.
            self.space_waiters.fetch_add(1, Ordering::SeqCst);
            dekker_fence();
        }
        let mut give_back = false;
        let outcome = if closed() {
            // A slot granted before the close goes back.
            give_back = arrival.grant.is_some();
            Err(NoSlot::Closed)
        } else if arrival.grant.is_some()
            || (line.may_take(arrival) && self.reserve_seeing(Ordering::SeqCst))
        {
            // Its granted slot, or (first in line) a free one. ORDERING:
            // SeqCst, as in `reserve_blocking`.
            Ok(())
        } else {
            // In line (again, with its own ticket): the waker given last
            // is the one woken.
            let replaced = line.park(arrival, waker);
            drop(line);
            drop_quietly(replaced);
            return Poll::Pending;
        };
        let left = line.leave(waiter);
        self.space_waiters.fetch_sub(1, Ordering::SeqCst);
        let next = self.grant_if_room(&mut line);
        drop(line);
        drop_quietly((left, waker));
        wake(next);
        if give_back {
            self.release_slot();
        }
        Poll::Ready(outcome)
    }

    /// A waiter leaves: if a slot is free and a future waits in line, the
    /// slot is granted to it (`sync/line.rs`). Returns the waker to wake
    /// once the lock is let go.
    fn grant_if_room(&self, line: &mut Line) -> Option<Waker> {
        // ORDERING: SeqCst, as in `reserve_blocking`.
        if line.has_waiting() && self.reserve_seeing(Ordering::SeqCst) {
            line.grant_first(0)
        } else {
            None
        }
    }

    /// The future `waiter` is dropped: it leaves the line, and a slot
    /// granted to it and not yet taken is given back (to the next waiter,
    /// by the usual rule).
    pub(crate) fn cancel_space(&self, waiter: &mut SpaceWaiter) {
        if waiter.is_new() {
            return;
        }
        let mut line = lock(&self.space);
        let Some(cancelled) = line.cancel(waiter) else {
            return;
        };
        self.space_waiters.fetch_sub(1, Ordering::SeqCst);
        drop(line);
        drop_quietly(cancelled.waker);
        if cancelled.grant.is_some() {
            self.release_slot();
        }
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
        let woken = line.take_all();
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
        // Under the lock, every waiter counted in `space_waiters` is a
        // blocked producer or a future holding a ticket.
        let threads = self.space_waiters.load(Ordering::SeqCst) > line.members();
        let mut granted = None;
        if line.has_waiting() && line.futures_turn(threads) {
            granted = self.grant_if_room(&mut line);
        }
        if granted.is_none() && threads {
            self.space_freed.notify_one();
        }
        drop(line);
        wake(granted);
    }
}
