//! A cheap monotonic timestamp that fits in an atomic: nanoseconds since
//! the first time the crate asked for the time.
//!
//! Only executors that use a time-based policy (deadlines, aging, hooks
//! that report waits) read the clock on their hot path.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds since the crate's epoch; never 0, so 0 can mean "none".
#[inline]
pub(crate) fn now_ns() -> u64 {
    to_ns(Instant::now())
}

/// An instant as nanoseconds since the crate's epoch (instants before it
/// map to 1, saturating).
#[inline]
pub(crate) fn to_ns(instant: Instant) -> u64 {
    let epoch = *EPOCH.get_or_init(Instant::now);
    let ns = instant.saturating_duration_since(epoch).as_nanos();
    u64::try_from(ns).unwrap_or(u64::MAX).max(1)
}

/// Nanoseconds of a duration, saturating.
#[inline]
pub(crate) fn dur_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
