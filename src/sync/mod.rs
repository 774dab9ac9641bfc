//! The one place the crate takes its synchronisation primitives from.
//!
//! Under `cfg(loom)` every atomic, lock, condition variable and thread
//! spawn comes from [loom], so the model tests in `tests/loom_*.rs`
//! check the production code itself, not a copy of it. Outside loom these
//! are the standard library's types and cost nothing extra.
//!
//! Two structures loom does not see inside: the pool lanes' queue
//! ([`tickets`], under loom a `Mutex<VecDeque>` in the lane, and a model
//! of its own), and a mailbox lane's segmented queue
//! (`crossbeam_queue::SegQueue`, under loom the same locked deque, see
//! `queue`).
//!
//! [loom]: https://docs.rs/loom

pub(crate) mod ending;
pub(crate) mod line;
pub(crate) mod owned;
#[cfg(any(feature = "actor", loom))]
pub(crate) mod queue;
#[cfg(any(feature = "actor", loom))]
pub(crate) mod ring;
#[cfg(feature = "actor")]
pub(crate) mod spin;
pub(crate) mod tickets;

use std::time::{Duration, Instant};

// `Arc` stays std's under loom too: the pool's methods take
// `self: &Arc<Self>`, a receiver loom's `Arc` cannot be without the unstable
// `arbitrary_self_types`, and the reference count is not what the models
// check (the job cells in `job.rs` use std's `Arc` for the same reason).
pub(crate) use std::sync::Arc;

#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;
#[cfg(not(loom))]
pub(crate) use std::thread_local;

#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;
#[cfg(loom)]
pub(crate) use loom::thread_local;

/// `UnsafeCell` with loom's closure API, so the job cell's accesses are
/// checked under the models.
#[cfg(not(loom))]
pub(crate) mod cell {
    #[derive(Debug)]
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        #[inline]
        pub(crate) const fn new(value: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(value))
        }

        #[inline]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }

        #[inline]
        pub(crate) fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }
}

#[cfg(loom)]
pub(crate) use loom::cell;

pub(crate) mod atomic {
    #[cfg(not(loom))]
    pub(crate) use std::sync::atomic::{
        AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering, fence,
    };

    #[cfg(loom)]
    pub(crate) use loom::sync::atomic::{
        AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering, fence,
    };
}

/// The middle of a Dekker pair: a SeqCst write to one location, then a
/// SeqCst read of another (see `sleep/README.md`, rules 1 and 4, and the
/// bounded lanes' `space_waiters`).
///
/// In the language's memory model the SeqCst accesses alone forbid both
/// sides reading the other's old value, so outside loom this is nothing.
/// loom models SeqCst accesses as AcqRel (its README, "Unsupported
/// features"; a SeqCst load may even return a location's initial value
/// after a newer SeqCst write), and reports lost wake-ups that cannot
/// happen; a SeqCst fence, which loom does model, states the same ordering
/// so the models check the protocol rather than that gap.
#[inline(always)]
pub(crate) fn dekker_fence() {
    #[cfg(loom)]
    loom::sync::atomic::fence(loom::sync::atomic::Ordering::SeqCst);
}

/// Spin hint for the short waits of the protocol; under loom a yield, so the
/// model checker can run the thread being waited for.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// How long a producer may wait for a slot in a full lane.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    No,
    Forever,
    Until(Instant),
}

impl Wait {
    /// Waiting at most `timeout`; a timeout too long for `Instant` is no
    /// limit.
    pub(crate) fn at_most(timeout: Duration) -> Wait {
        match deadline_after(timeout) {
            Some(deadline) => Wait::Until(deadline),
            None => Wait::Forever,
        }
    }

    /// Waiting as an option says: as long as it takes (`None`), never
    /// (zero), or at most the time given.
    pub(crate) fn from_limit(limit: Option<Duration>) -> Wait {
        match limit {
            None => Wait::Forever,
            Some(timeout) if timeout.is_zero() => Wait::No,
            Some(timeout) => Wait::at_most(timeout),
        }
    }
}

/// Exponential backoff for the short waits of a protocol (a pusher between
/// its slot and its push, a sender waiting for room): crossbeam's
/// `Backoff` outside loom. Under loom each snooze is a loom yield, so the
/// model checker runs the thread being waited for, and the spin completes
/// after two snoozes: the models see the spin and the sleep after it
/// without exploring every step of a long spin.
#[cfg(not(loom))]
pub(crate) use crossbeam_utils::Backoff;

#[cfg(loom)]
pub(crate) use loom_backoff::Backoff;

#[cfg(loom)]
mod loom_backoff {
    use std::cell::Cell;

    /// Snoozes before `is_completed` says to stop spinning.
    const STEPS: u32 = 2;

    #[derive(Debug, Default)]
    pub(crate) struct Backoff {
        step: Cell<u32>,
    }

    impl Backoff {
        pub(crate) fn new() -> Backoff {
            Backoff::default()
        }

        // The pool's lane queue only snoozes; the mailboxes reset and ask.
        #[cfg_attr(not(feature = "actor"), allow(dead_code))]
        pub(crate) fn reset(&self) {
            self.step.set(0);
        }

        pub(crate) fn snooze(&self) {
            loom::thread::yield_now();
            self.step.set(self.step.get().saturating_add(1));
        }

        #[cfg_attr(not(feature = "actor"), allow(dead_code))]
        pub(crate) fn is_completed(&self) -> bool {
            self.step.get() >= STEPS
        }
    }
}

/// Gives up the rest of the time slice while waiting for another thread to
/// finish a step it has already started (a producer between its push and its
/// count, a worker between its steal and its release).
#[inline]
pub(crate) fn yield_now() {
    thread::yield_now();
}

/// Locks a mutex whose data stays consistent even if a holder panicked: the
/// crate only keeps counters and queues under its locks, never half-updated
/// user state, so poisoning carries no information here.
#[inline]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Waits on `condvar` until notified, or until `deadline` (`None`: no
/// deadline). `Err` gives the guard back without waiting once the deadline
/// has passed. Wake-ups may be spurious: callers loop, re-checking their
/// condition first.
#[inline]
pub(crate) fn wait_until<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    deadline: Option<Instant>,
) -> Result<MutexGuard<'a, T>, MutexGuard<'a, T>> {
    let Some(deadline) = deadline else {
        return Ok(match condvar.wait(guard) {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        });
    };
    let now = Instant::now();
    if now >= deadline {
        return Err(guard);
    }
    Ok(match condvar.wait_timeout(guard, deadline - now) {
        Ok((g, _)) => g,
        Err(p) => p.into_inner().0,
    })
}

/// `now + timeout`, or `None` (never) when that is past what `Instant` can
/// hold: a huge timeout means no time limit, never a panic.
#[inline]
pub(crate) fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// Adds one to `counter` unless it has reached `limit` (a compare-and-swap
/// loop). Returns the value before the increment.
#[inline]
pub(crate) fn increment_below(counter: &atomic::AtomicUsize, limit: usize) -> Option<usize> {
    let mut current = counter.load(atomic::Ordering::SeqCst);
    loop {
        if current >= limit {
            return None;
        }
        // ORDERING: SeqCst, as every access to the thread counts (rules 3
        // and 4 of sleep/README.md pair them with the lanes' counts).
        match counter.compare_exchange_weak(
            current,
            current + 1,
            atomic::Ordering::SeqCst,
            atomic::Ordering::SeqCst,
        ) {
            Ok(_) => return Some(current),
            Err(actual) => current = actual,
        }
    }
}

/// Subtracts one from `counter` unless it is at or below `floor`. Returns
/// the value before the decrement.
#[inline]
pub(crate) fn decrement_above(counter: &atomic::AtomicUsize, floor: usize) -> Option<usize> {
    let mut current = counter.load(atomic::Ordering::SeqCst);
    loop {
        if current <= floor {
            return None;
        }
        // ORDERING: as in `increment_below`.
        match counter.compare_exchange_weak(
            current,
            current - 1,
            atomic::Ordering::SeqCst,
            atomic::Ordering::SeqCst,
        ) {
            Ok(_) => return Some(current),
            Err(actual) => current = actual,
        }
    }
}
