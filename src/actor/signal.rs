//! A condition threads wait on, with a count of waiters not yet woken, so
//! that the side making the condition true takes the lock only when
//! someone waits and has not been woken already (crossbeam-channel's
//! `SyncWaker`, which removes the waiter it wakes).
//!
//! The protocol is a Dekker pair, as the pool's (`src/sleep/README.md`):
//! a waiter arms the signal (a SeqCst store of the count), then checks its
//! condition under the lock; a notifier makes the condition true, then
//! reads the count (SeqCst). Both sides' accesses are in the single total
//! order of SeqCst operations, so at least one of them sees the other, and
//! a notifier that sees a waiter takes the lock, so it cannot notify
//! between the waiter's check and its wait.
//!
//! That needs the condition itself to be made true by a SeqCst write (a
//! read-modify-write or a store) and read with SeqCst loads: every
//! caller's is (a lane's `opened`, `taken` and `filled` counts, the door,
//! the generation count), but for one peek at a head entry that a nap
//! backs (lane rule 13). No fence is needed, so the hot path pays for none.
//! (Under loom, which models SeqCst accesses as acquire/release only,
//! `dekker_fence` states the same order with a SeqCst fence on both sides:
//! after the waiter's store of the count, and before the notifier's load.
//! Outside loom it is nothing.)
//!
//! A notify takes a *pending* wake-up: the count drops by one, so while a
//! producer outruns a sleeping consumer only its first push pays for the
//! lock and the wake-up; each waiter gives one pending wake-up back when it
//! wakes (spurious or not), which re-arms the count if it sleeps again.
//!
//! Futures wait on a signal too (a mailbox lane's `space`, behind
//! `Addr::reserve`): in a [`Line`], first come first served, each counted
//! in `armed` from its first look until it leaves (`sync/line.rs`). A
//! future arms, then checks, under the lock, as a thread does. A notify
//! that can grant ([`Signal::notify_one_granting`]) takes the freed slot
//! for the first future in line and wakes it with the grant, or, on the
//! threads' turn, wakes one thread; `notify_all` wakes every one, futures
//! without a grant.

use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::line::{Line, Place, wake};
use crate::sync::{Condvar, Mutex, MutexGuard, dekker_fence, lock, wait_until};
use crate::util::drop_quietly;
use std::task::{Context, Poll};
use std::time::Instant;

#[derive(Default)]
struct Counts {
    waiting: usize,
    /// Wake-ups sent and not yet taken by a waiter.
    pending: usize,
    /// Futures waiting (`Addr::reserve`).
    line: Line,
}

#[derive(Default)]
pub(crate) struct Signal {
    /// `waiting - pending`, plus the futures holding a place in line:
    /// waiters a notify would reach.
    armed: AtomicUsize,
    counts: Mutex<Counts>,
    cond: Condvar,
}

impl Signal {
    fn rearm(&self, c: &Counts) {
        // ORDERING: SeqCst, one side of the Dekker pair (module docs).
        let threads = c.waiting.saturating_sub(c.pending);
        self.armed
            .store(threads + c.line.members(), Ordering::SeqCst);
        // The waiter's side: the store above, then its check (module docs).
        dekker_fence();
    }

    /// Wakes one waiter not yet woken, if any. Call after making the
    /// condition true.
    #[inline]
    pub(crate) fn notify_one(&self) {
        self.notify_one_granting(|| None);
    }

    /// As [`notify_one`](Signal::notify_one), for a slot freed while
    /// futures may wait: on the futures' turn (`Line::futures_turn`),
    /// `grant()` takes the slot for the first future in line (its token),
    /// which is woken with it; otherwise one thread is woken.
    #[inline]
    pub(crate) fn notify_one_granting(&self, grant: impl FnOnce() -> Option<usize>) {
        // The notifier's side: the caller's write, then the load below.
        dekker_fence();
        // ORDERING: SeqCst, the notifier's side of the Dekker pair.
        if self.armed.load(Ordering::SeqCst) != 0 {
            self.notify_slow(grant);
        }
    }

    /// Wakes every waiter, if any (futures without a grant).
    #[inline]
    pub(crate) fn notify_all(&self) {
        dekker_fence();
        // ORDERING: SeqCst, as in `notify_one`.
        if self.armed.load(Ordering::SeqCst) != 0 {
            self.notify_all_slow();
        }
    }

    #[cold]
    fn notify_slow(&self, grant: impl FnOnce() -> Option<usize>) {
        let mut c = lock(&self.counts);
        let threads = c.waiting > c.pending;
        let mut granted = None;
        if c.line.has_waiting()
            && c.line.futures_turn(threads)
            && let Some(token) = grant()
        {
            granted = c.line.grant_first(token);
        }
        if granted.is_none() && threads {
            c.pending += 1;
            self.cond.notify_one();
        }
        self.rearm(&c);
        drop(c);
        wake(granted);
    }

    #[cold]
    fn notify_all_slow(&self) {
        let mut c = lock(&self.counts);
        c.pending = c.waiting;
        self.cond.notify_all();
        let futures = c.line.take_all();
        self.rearm(&c);
        drop(c);
        for waker in futures {
            wake(Some(waker));
        }
    }

    /// Is nobody waiting? A future that has not waited yet may then try
    /// its condition at once, without the lock.
    #[inline]
    pub(crate) fn is_quiet(&self) -> bool {
        // ORDERING: Relaxed: a hint; `poll_wait` decides under the lock.
        self.armed.load(Ordering::Relaxed) == 0
    }

    /// The future at `place` checks its condition: `check(may_take,
    /// grant)` is given whether the future's turn in line has come and the
    /// token of a slot granted to it (if any), and says whether the wait
    /// is over (it may answer `true` without its turn, for a closed door).
    /// Pending: the future is in line and will be woken. Once the wait is
    /// over, if a future still waits in line, `grant_next()` may take a
    /// free slot for it (`Line` module docs).
    pub(crate) fn poll_wait(
        &self,
        place: &mut Place,
        cx: &mut Context<'_>,
        check: impl FnOnce(bool, Option<usize>) -> bool,
        grant_next: impl FnOnce() -> Option<usize>,
    ) -> Poll<()> {
        // Cloned before the lock: a waker is user code.
        let waker = cx.waker().clone();
        let mut c = lock(&self.counts);
        let arrival = c.line.arrive(place);
        if arrival.new {
            // Armed before the check (module docs).
            self.rearm(&c);
        }
        if !check(c.line.may_take(arrival), arrival.grant) {
            let replaced = c.line.park(arrival, waker);
            drop(c);
            drop_quietly(replaced);
            return Poll::Pending;
        }
        let left = c.line.leave(place);
        let mut next = None;
        if c.line.has_waiting()
            && let Some(token) = grant_next()
        {
            next = c.line.grant_first(token);
        }
        self.rearm(&c);
        drop(c);
        drop_quietly((left, waker));
        wake(next);
        Poll::Ready(())
    }

    /// The future at `place` is dropped: it leaves the line. Returns the
    /// token of a slot granted to it and not taken, for the caller to give
    /// back.
    pub(crate) fn cancel(&self, place: &mut Place) -> Option<usize> {
        if place.is_new() {
            return None;
        }
        let mut c = lock(&self.counts);
        let cancelled = c.line.cancel(place)?;
        self.rearm(&c);
        drop(c);
        drop_quietly(cancelled.waker);
        cancelled.grant
    }

    /// Threads waiting now (tests).
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        lock(&self.counts).waiting
    }

    /// Waits until `ready()` holds or `deadline` passes (`None`: no
    /// deadline). Returns the last answer of `ready()`.
    pub(crate) fn wait(&self, deadline: Option<Instant>, mut ready: impl FnMut() -> bool) -> bool {
        let mut c: MutexGuard<'_, Counts> = lock(&self.counts);
        c.waiting += 1;
        self.rearm(&c);
        let outcome = loop {
            if ready() {
                break true;
            }
            let (guard, timed_out) = match wait_until(&self.cond, c, deadline) {
                Ok(g) => (g, false),
                Err(g) => (g, true),
            };
            c = guard;
            if c.pending > 0 {
                c.pending -= 1;
                self.rearm(&c);
            }
            if timed_out {
                break ready();
            }
        };
        c.waiting -= 1;
        c.pending = c.pending.min(c.waiting);
        self.rearm(&c);
        drop(c);
        outcome
    }
}
