//! Waiting until the pool is idle without shutting it down (rule 7 of
//! `sleep/README.md`): no job queued, none claimed or running, no retry
//! waiting out its backoff.
//!
//! Nothing here runs per job. A worker marks itself busy in its own
//! [`WorkerSlot`] (a plain store on its own cache line) before it tries to
//! claim a job and keeps the mark through the whole batch it then runs;
//! it clears the mark only when it stops searching (to sleep or exit), and
//! only then, on that cold path, looks for idle-waiters to notify. The
//! timer's side looks too, once it has re-queued retries and taken them
//! off its pending count.

use super::Shared;
use super::worker::WorkerSlot;
use crate::sync::atomic::{Ordering, fence};
use crate::sync::{Arc, deadline_after, lock, wait_until};
use std::time::{Duration, Instant};

/// Whose busy marks an idle check ignores.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Quiet {
    /// A thread outside the pool waits for every job.
    Everyone,
    /// Rule 8: a worker waiting on the pool (its job in `wait_idle`), and
    /// whoever decides whether to wake the waiters, ignore every worker
    /// whose job is itself waiting on the pool, its own included (each
    /// waiter then checks for itself).
    ExceptPoolWaiters,
}

/// How many idle moments have been seen, by each waiter's measure (the
/// join generation of `threadpool` and `rusty_pool`): a waiter notes the
/// generation as it starts and returns once it has moved on, even if the
/// pool is busy again by the time it wakes, so a waiter that returns and
/// enqueues at once cannot send the other waiters of the same moment back
/// to sleep.
#[derive(Default)]
pub(crate) struct IdleGenerations {
    /// Idle for a thread outside the pool: no busy mark at all.
    everyone: u64,
    /// Idle for a worker waiting on the pool: no busy mark but those of
    /// workers waiting on the pool (rule 8).
    except_pool_waiters: u64,
}

impl IdleGenerations {
    fn of(&self, quiet: Quiet) -> u64 {
        match quiet {
            Quiet::Everyone => self.everyone,
            Quiet::ExceptPoolWaiters => self.except_pool_waiters,
        }
    }
}

impl Shared {
    /// Rule 7: is the pool idle? `quiet` says which busy marks do not
    /// count (rule 8: those of workers waiting on the pool).
    ///
    /// The order of the loads is the argument. Retries: the timer
    /// re-queues a due retry (the lane's count up) before it takes it off
    /// `pending` (down, SeqCst), so reading `pending` first and then the
    /// lanes cannot miss one in transit. Claims: a worker sets its busy
    /// mark before the compare-and-swap that claims a job, and that CAS
    /// (AcqRel) heads a release sequence of every later change of the
    /// lane's count (all are read-modify-writes). So a load of the count
    /// that sees the claim, or anything after it, also sees the mark set,
    /// or cleared later, after the job ran and the worker found nothing
    /// more. Reading the lanes before the marks thus closes the window
    /// between a claim and the worker counting itself busy.
    pub(super) fn is_quiescent(&self, quiet: Quiet) -> bool {
        match self.quiescence() {
            None => false,
            Some(held) => quiet == Quiet::ExceptPoolWaiters || held == Quiet::Everyone,
        }
    }

    /// The strongest idle measure that holds now (`Everyone` before
    /// `ExceptPoolWaiters`), or `None` if the pool is busy by both: one
    /// pass over the loads [`Shared::is_quiescent`] describes.
    fn quiescence(&self) -> Option<Quiet> {
        if self.timer.pending() != 0 {
            return None;
        }
        // After `shutdown_now` nothing queued will run (tombstones of
        // refused producers may remain): only running jobs count.
        if !self.is_stopped() && self.any_ready() {
            return None;
        }
        let mut held = Quiet::Everyone;
        for w in lock(&self.workers).iter() {
            if w.is_busy() {
                // ORDERING: SeqCst, after the mark's acquire load: a
                // waiting worker's mark was stored before it notified the
                // waiters (rule 8), so one that sees the notification
                // sees the mark.
                if !w.waits_on_pool.load(Ordering::SeqCst) {
                    return None;
                }
                held = Quiet::ExceptPoolWaiters;
            }
        }
        Some(held)
    }

    /// A worker stops searching (it is about to sleep or exit): clear its
    /// busy mark, then let the idle-waiters out if the pool is now idle.
    #[cold]
    pub(super) fn stop_searching(&self, slot: &WorkerSlot) {
        slot.set_busy(false);
        self.look_for_idle_waiters();
    }

    /// `n` retries taken off the timer are in their lanes, or handed back:
    /// they stop counting as pending, and the pool may be idle with that.
    /// The worker that ran the last job may have looked while they still
    /// counted, so the one that lands them looks for idle-waiters too.
    pub(super) fn retries_landed(&self, n: usize) {
        self.timer.landed(n);
        self.look_for_idle_waiters();
    }

    /// After a change that can make the pool idle (a busy mark cleared,
    /// `pending` lowered): lets the idle-waiters out if it is idle now.
    #[cold]
    pub(super) fn look_for_idle_waiters(&self) {
        // ORDERING: rule 7. A SeqCst fence between the caller's change and
        // loading `idle_waiters`, paired with the one a waiter has between
        // counting itself and reading `pending` and the marks: either this
        // load sees the waiter, or the waiter's reads see the change.
        fence(Ordering::SeqCst);
        // A look without the lock first: most workers going to sleep
        // leave others busy, and only the one that makes the pool idle
        // needs the lock (it looks again under it).
        if self.idle_waiters.load(Ordering::SeqCst) > 0
            && self.is_quiescent(Quiet::ExceptPoolWaiters)
        {
            let mut generations = lock(&self.idle_lock);
            self.observe_idle(&mut generations);
        }
    }

    /// Under `idle_lock`: if the pool is idle now, by either measure,
    /// moves that measure's generation on and wakes every waiter. Called
    /// by a worker that stops searching and by each waiter as it looks, so
    /// whoever sees an idle moment lets out every waiter of that moment.
    fn observe_idle(&self, generations: &mut IdleGenerations) {
        let Some(held) = self.quiescence() else {
            return;
        };
        generations.except_pool_waiters += 1;
        if held == Quiet::Everyone {
            generations.everyone += 1;
        }
        self.became_idle.notify_all();
    }

    /// Wakes every idle-waiter to look again. Taking the lock orders this
    /// after any change the caller made, for a waiter checking under it.
    #[cold]
    pub(super) fn notify_idle(&self) {
        let _guard = lock(&self.idle_lock);
        self.became_idle.notify_all();
    }

    /// Blocks until the pool is idle (or has terminated), or until
    /// `deadline`. Returns whether it was idle.
    pub(crate) fn wait_idle(self: &Arc<Self>, deadline: Option<Instant>) -> bool {
        // Rule 8: a job waiting marks its worker before counting itself a
        // waiter, so a worker that sees the count sees the mark too.
        let _waiting = self.wait_on_pool();
        let quiet = if self.is_own_worker() {
            Quiet::ExceptPoolWaiters
        } else {
            Quiet::Everyone
        };
        let mut generations = lock(&self.idle_lock);
        self.idle_waiters.fetch_add(1, Ordering::SeqCst);
        // ORDERING: rule 7, the waiter's side of the fence pair.
        fence(Ordering::SeqCst);
        let start = generations.of(quiet);
        let idle = loop {
            // Idle now (by this waiter's measure) moves its generation on.
            self.observe_idle(&mut generations);
            if generations.of(quiet) != start || self.is_terminated() {
                break true;
            }
            match wait_until(&self.became_idle, generations, deadline) {
                Ok(woken) => generations = woken,
                Err(late) => {
                    generations = late;
                    // One last look: the deadline is no reason to call a
                    // pool busy that became idle meanwhile.
                    self.observe_idle(&mut generations);
                    break generations.of(quiet) != start || self.is_terminated();
                }
            }
        };
        self.idle_waiters.fetch_sub(1, Ordering::SeqCst);
        drop(generations);
        idle
    }

    /// `wait_idle` with a timeout; a timeout too long for `Instant` is no
    /// limit.
    pub(crate) fn wait_idle_timeout(self: &Arc<Self>, timeout: Duration) -> bool {
        self.wait_idle(deadline_after(timeout))
    }
}
