//! The one place the crate takes its synchronisation primitives from.
//!
//! Under `cfg(loom)` every atomic, lock, condition variable and thread
//! spawn comes from [loom], so the model tests in `tests/loom_*.rs`
//! check the production code itself, not a copy of it. Outside loom these
//! are the standard library's types and cost nothing extra.
//!
//! The lane queue is the one structure loom cannot see inside
//! (`crossbeam_deque::Injector`); under loom it is replaced by a
//! `Mutex<VecDeque>` with the same push/steal contract, see [`queue`].
//!
//! [loom]: https://docs.rs/loom

pub(crate) mod queue;

// `Arc` stays std's under loom too: the pool's methods take
// `self: &Arc<Self>`, a receiver loom's `Arc` cannot be without the unstable
// `arbitrary_self_types`, and the reference count is not what the models
// check (the job cells in `job.rs` use std's `Arc` for the same reason).
pub(crate) use std::sync::Arc;

#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;

#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;

pub(crate) mod atomic {
    #[cfg(not(loom))]
    pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    #[cfg(loom)]
    pub(crate) use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
