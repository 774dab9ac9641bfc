//! The one place the crate takes its synchronisation primitives from.
//!
//! Under `cfg(loom)` every atomic, lock, condition variable, `Arc` and
//! thread spawn comes from [loom], so the model tests in `tests/loom_*.rs`
//! check the production code itself, not a copy of it. Outside loom these
//! are the standard library's types and cost nothing extra.
//!
//! The lane queue is the one structure loom cannot see inside
//! (`crossbeam_deque::Injector`); under loom it is replaced by a
//! `Mutex<VecDeque>` with the same push/steal contract, see [`queue`].
//!
//! [loom]: https://docs.rs/loom

pub(crate) mod queue;

#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;

#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;

pub(crate) mod atomic {
    #[cfg(not(loom))]
    pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    #[cfg(loom)]
    pub(crate) use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
