//! A count that one thread writes and any thread reads.

use super::atomic::{AtomicU64, Ordering};

/// A count written only by its owner (one worker, one actor instance),
/// read by anyone, summed with others when read. Adding to it is a load
/// and a store on the owner's own cache line: no locked instruction, and
/// no line taken from another core, where a shared `fetch_add` per job
/// would move one line between every writer.
#[derive(Default)]
pub(crate) struct OwnedCount(AtomicU64);

impl OwnedCount {
    /// Adds one. Only the owner calls this.
    #[inline]
    pub(crate) fn add_one(&self) {
        // ORDERING: Relaxed, and a load then a store rather than a
        // read-modify-write: with one writer no increment can be lost;
        // readers want a figure, not an order with anything else (as with a
        // shared counter's relaxed `fetch_add`).
        self.0
            .store(self.0.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// The count, leaving zero (the owner hands it over as it goes).
    pub(crate) fn take(&self) -> u64 {
        self.0.swap(0, Ordering::Relaxed)
    }
}
