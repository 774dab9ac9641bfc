//! Who keeps the pool open: the [`Executor`](crate::Executor) values, each
//! one count here. Worker threads, queued jobs, timers and futures hold the
//! `Arc<Shared>` itself, which keeps the memory but not the pool open, so
//! the pool never keeps itself running. When the last `Executor` goes, the
//! pool shuts down gracefully (rule 5), from whichever thread dropped it
//! (rule 8 if that is one of the pool's own workers). (A registry's
//! reload shuts a retired executor down whoever holds it:
//! `esb/registry/running.rs`.)

use super::Shared;
use crate::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};

/// Above this many `Executor` values the count could wrap: abort, as
/// `Arc` does.
const MAX_OWNERS: usize = isize::MAX as usize;

#[derive(Default)]
pub(crate) struct Owners {
    /// `Executor` values alive. Plain std atomics: the loom models check the
    /// shutdown itself, not this count.
    count: AtomicUsize,
    /// Set when `shutdown_timeout` gave up waiting: the last `Executor`
    /// does not wait either, the threads drain in the background.
    detached: AtomicBool,
}

impl Shared {
    /// One more `Executor`.
    #[inline]
    pub(crate) fn acquire(&self) {
        // ORDERING: as `Arc::clone`: a new owner is made from an existing
        // one, which orders everything before it.
        if self.owners.count.fetch_add(1, Ordering::Relaxed) > MAX_OWNERS {
            std::process::abort();
        }
    }

    /// One `Executor` fewer; the last one shuts the pool down gracefully,
    /// or, detached, leaves it draining in the background.
    pub(crate) fn release(self: &Arc<Self>) {
        // ORDERING: as `Arc`'s drop: every owner's use of the pool happens
        // before the last one acts on it.
        if self.owners.count.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        fence(Ordering::Acquire);
        if self.owners.detached.load(Ordering::Relaxed) {
            return;
        }
        self.shut_down(None);
    }

    /// The last `Executor` will not wait for the threads.
    pub(crate) fn detach(&self) {
        self.owners.detached.store(true, Ordering::Relaxed);
    }
}
