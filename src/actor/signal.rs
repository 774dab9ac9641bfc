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
//! caller's is (a lane's `opened` and `taken` counts, the door, the
//! generation count). No fence is needed, so the hot path pays for none.
//! (Under loom, which models SeqCst accesses as acquire/release only,
//! `dekker_fence` states the same order with a SeqCst fence on both sides:
//! after the waiter's store of the count, and before the notifier's load.
//! Outside loom it is nothing.)
//!
//! A notify takes a *pending* wake-up: the count drops by one, so while a
//! producer outruns a sleeping consumer only its first push pays for the
//! lock and the wake-up; each waiter gives one pending wake-up back when it
//! wakes (spurious or not), which re-arms the count if it sleeps again.

use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::{Condvar, Mutex, MutexGuard, dekker_fence, lock, wait_until};
use std::time::Instant;

#[derive(Default)]
struct Counts {
    waiting: usize,
    /// Wake-ups sent and not yet taken by a waiter.
    pending: usize,
}

#[derive(Default)]
pub(crate) struct Signal {
    /// `waiting - pending`: waiters a notify would reach.
    armed: AtomicUsize,
    counts: Mutex<Counts>,
    cond: Condvar,
}

impl Signal {
    fn rearm(&self, c: &Counts) {
        // ORDERING: SeqCst, one side of the Dekker pair (module docs).
        self.armed
            .store(c.waiting.saturating_sub(c.pending), Ordering::SeqCst);
        // The waiter's side: the store above, then its check (module docs).
        dekker_fence();
    }

    /// Wakes one waiter not yet woken, if any. Call after making the
    /// condition true.
    #[inline]
    pub(crate) fn notify_one(&self) {
        // The notifier's side: the caller's write, then the load below.
        dekker_fence();
        // ORDERING: SeqCst, the notifier's side of the Dekker pair.
        if self.armed.load(Ordering::SeqCst) != 0 {
            self.notify_slow(false);
        }
    }

    /// Wakes every waiter, if any.
    #[inline]
    pub(crate) fn notify_all(&self) {
        dekker_fence();
        // ORDERING: SeqCst, as in `notify_one`.
        if self.armed.load(Ordering::SeqCst) != 0 {
            self.notify_slow(true);
        }
    }

    #[cold]
    fn notify_slow(&self, all: bool) {
        let mut c = lock(&self.counts);
        if c.waiting <= c.pending {
            return;
        }
        if all {
            c.pending = c.waiting;
            self.cond.notify_all();
        } else {
            c.pending += 1;
            self.cond.notify_one();
        }
        self.rearm(&c);
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
