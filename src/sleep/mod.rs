//! Idle workers: how they sleep and how a producer wakes one.
//!
//! The protocol and the invariants it keeps are in `README.md` beside this
//! file; keep the two in step.

use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::{Condvar, Mutex, deadline_after, dekker_fence, lock, wait_until};
use crossbeam_utils::CachePadded;
use std::time::Duration;

/// Why a call to [`Sleep::sleep`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// The re-check after registering found work (or shutdown); never slept.
    Recheck,
    /// A producer (or shutdown) handed this sleeper a wake token.
    Woken,
    /// The keep-alive ran out with no token.
    TimedOut,
}

struct Counts {
    sleepers: usize,
    tokens: usize,
}

pub(crate) struct Sleep {
    /// Mirror of `Counts::sleepers`, written under the lock, read without
    /// it by producers so the common case (nobody asleep) takes no lock.
    sleepers: CachePadded<AtomicUsize>,
    counts: Mutex<Counts>,
    wakeup: Condvar,
}

impl Sleep {
    pub(crate) fn new() -> Sleep {
        Sleep {
            sleepers: CachePadded::new(AtomicUsize::new(0)),
            counts: Mutex::new(Counts {
                sleepers: 0,
                tokens: 0,
            }),
            wakeup: Condvar::new(),
        }
    }

    /// Producer side, called after a job was published (its lane's `ready`
    /// incremented with SeqCst). Wakes one sleeper if there is any and says
    /// whether it did.
    #[inline]
    pub(crate) fn wake_one(&self) -> bool {
        // ORDERING: SeqCst load after the SeqCst publish; see README, rule 1.
        dekker_fence();
        if self.sleepers.load(Ordering::SeqCst) == 0 {
            return false;
        }
        self.wake_one_slow()
    }

    #[cold]
    fn wake_one_slow(&self) -> bool {
        let mut counts = lock(&self.counts);
        if counts.sleepers == 0 {
            return false;
        }
        counts.sleepers -= 1;
        counts.tokens += 1;
        self.sleepers.store(counts.sleepers, Ordering::SeqCst);
        drop(counts);
        self.wakeup.notify_one();
        true
    }

    /// Wakes every sleeper (shutdown).
    pub(crate) fn wake_all(&self) {
        let mut counts = lock(&self.counts);
        counts.tokens += counts.sleepers;
        counts.sleepers = 0;
        self.sleepers.store(0, Ordering::SeqCst);
        drop(counts);
        self.wakeup.notify_all();
    }

    /// Worker side: sleep until woken, or until `keep_alive` runs out
    /// (`None`: no limit). `should_wake` is re-checked after registering as
    /// a sleeper; it must load every lane's `ready` with SeqCst and the
    /// shutdown state.
    pub(crate) fn sleep(
        &self,
        keep_alive: Option<Duration>,
        should_wake: impl Fn() -> bool,
    ) -> Wake {
        let mut counts = lock(&self.counts);
        counts.sleepers += 1;
        // ORDERING: SeqCst RMW before the re-check; see README, rule 1.
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        dekker_fence();
        if should_wake() {
            counts.sleepers -= 1;
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
            return Wake::Recheck;
        }
        // A keep-alive too long for `Instant` never times out.
        let deadline = keep_alive.and_then(deadline_after);
        loop {
            counts = match wait_until(&self.wakeup, counts, deadline) {
                Ok(counts) => counts,
                Err(mut counts) => {
                    counts.sleepers -= 1;
                    self.sleepers.fetch_sub(1, Ordering::SeqCst);
                    return Wake::TimedOut;
                }
            };
            if counts.tokens > 0 {
                counts.tokens -= 1;
                return Wake::Woken;
            }
            // Spurious wake-up or timeout: loop re-checks the deadline.
        }
    }

    /// Workers asleep right now.
    pub(crate) fn sleepers(&self) -> usize {
        self.sleepers.load(Ordering::Relaxed)
    }
}
