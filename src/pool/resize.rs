//! The thread settings of a live pool, and changing them: core and max
//! threads and the keep-alive (Java's `setCorePoolSize`,
//! `setMaximumPoolSize`, `setKeepAliveTime`).
//!
//! The limits are plain atomics read where they were read as constants
//! before: a producer or worker that reads an old value makes one growth
//! or retirement decision by it, as if it had acted just before the
//! change. No job depends on them: jobs are always queued in the lanes,
//! and the rules of `sleep/README.md` wake a worker for each whatever the
//! limits are. They are std atomics even under loom: no model resizes a
//! pool, and keeping them out of the models keeps their search small.

use super::{PoolConfig, Shared};
use crate::error::BuildError;
use crate::sync::atomic::Ordering as SyncOrdering;
use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

pub(crate) struct Limits {
    core: AtomicUsize,
    max: AtomicUsize,
    /// The keep-alive in ns, saturating (about 584 years: never).
    keep_alive_ns: AtomicU64,
    allow_core_timeout: bool,
    /// Changes made so far, bumped by each setter before any wake of the
    /// sleepers. A worker reads it before it reads the limits to decide how
    /// to sleep, and its wake condition compares it again after it
    /// registers as a sleeper: a change whose wake-all came before that
    /// registration (and so reached no one) makes it decide again.
    changes: AtomicUsize,
    /// Held by the setters, so `core <= max` holds between them; keeps the
    /// keep-alive exactly as given, for `config()`.
    keep_alive: StdMutex<Duration>,
}

impl Limits {
    pub(super) fn new(config: PoolConfig) -> Limits {
        Limits {
            core: AtomicUsize::new(config.core),
            max: AtomicUsize::new(config.max),
            keep_alive_ns: AtomicU64::new(saturating_ns(config.keep_alive)),
            allow_core_timeout: config.allow_core_timeout,
            changes: AtomicUsize::new(0),
            keep_alive: StdMutex::new(config.keep_alive),
        }
    }

    #[inline]
    pub(crate) fn core(&self) -> usize {
        self.core.load(Ordering::Relaxed)
    }

    #[inline]
    pub(crate) fn max(&self) -> usize {
        self.max.load(Ordering::Relaxed)
    }

    /// `max` as a SeqCst load: for the re-check after a claim (rule 3),
    /// which pairs with the SeqCst swap of a resize.
    #[inline]
    pub(crate) fn max_seqcst(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }

    #[inline]
    pub(crate) fn allow_core_timeout(&self) -> bool {
        self.allow_core_timeout
    }

    /// Changes of the limits so far (see the field).
    #[inline]
    pub(crate) fn changes(&self) -> usize {
        // ORDERING: SeqCst, as the setters' increment; the sleep's lock
        // already orders a wake-all before a later registration.
        self.changes.load(Ordering::SeqCst)
    }

    /// The keep-alive a worker going to sleep uses.
    pub(crate) fn keep_alive(&self) -> Duration {
        Duration::from_nanos(self.keep_alive_ns.load(Ordering::Relaxed))
    }

    /// The settings now, for `config()` and `Debug`.
    pub(crate) fn snapshot(&self) -> PoolConfig {
        let keep_alive = self.settings();
        PoolConfig {
            core: self.core(),
            max: self.max(),
            keep_alive: *keep_alive,
            allow_core_timeout: self.allow_core_timeout,
        }
    }

    fn settings(&self) -> std::sync::MutexGuard<'_, Duration> {
        match self.keep_alive.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

fn saturating_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Shared {
    /// Sets `core_threads` and `max_threads` together, checked as a pair,
    /// so that no order of the two changes is needed (nor refused on the
    /// way). Growing starts threads at once for jobs that wait, up to the
    /// new core, or while more jobs wait than workers are idle, up to the
    /// new max; shrinking wakes the sleepers, and workers above the new
    /// max (or above the new core, idle for the keep-alive) exit. A lane's
    /// `max_running` given as a share of the threads is resolved again
    /// against the new max (sleepers woken if it rose).
    pub(crate) fn set_threads(
        self: &std::sync::Arc<Self>,
        core: usize,
        max: usize,
    ) -> Result<(), BuildError> {
        self.resize(|_, _| (core, max))
    }

    /// Sets `core_threads` alone, checked against `max_threads` as it is
    /// under the lock every thread setting takes: a concurrent
    /// `set_max_threads` is not undone by it, nor is the pair checked
    /// against a max about to change. As [`Shared::set_threads`]
    /// otherwise.
    pub(crate) fn set_core_threads(
        self: &std::sync::Arc<Self>,
        core: usize,
    ) -> Result<(), BuildError> {
        self.resize(|_, max| (core, max))
    }

    /// Sets `max_threads` alone, checked against `core_threads` as it is
    /// under the settings' lock (see [`Shared::set_core_threads`]).
    pub(crate) fn set_max_threads(
        self: &std::sync::Arc<Self>,
        max: usize,
    ) -> Result<(), BuildError> {
        self.resize(|core, _| (core, max))
    }

    /// The one path of the three setters above: under the settings' lock,
    /// `pick` turns the current `(core, max)` into the new pair, which is
    /// checked, then applied. On an error nothing changes.
    fn resize(
        self: &std::sync::Arc<Self>,
        pick: impl FnOnce(usize, usize) -> (usize, usize),
    ) -> Result<(), BuildError> {
        let settings = self.limits.settings();
        // Every writer of the limits holds the lock: these are current.
        let (core, max) = pick(self.limits.core(), self.limits.max());
        crate::error::check_threads(core, max)?;
        let old_core = self.limits.core.swap(core, Ordering::SeqCst);
        let old_max = self.limits.max.swap(max, Ordering::SeqCst);
        // A lane capped at a share of `max_threads` follows it, under the
        // settings' lock so that racing resizes leave the caps of the last.
        let mut caps_rose = false;
        for lane in self.lanes.iter() {
            caps_rose |= lane.resolve_max_running(max);
        }
        self.limits.changes.fetch_add(1, Ordering::SeqCst);
        drop(settings);
        if core < old_core || max < old_max || caps_rose {
            self.sleep.wake_all();
        }
        if max > old_max {
            self.grow_to(max);
        } else if core > old_core {
            self.grow_to(core);
        }
        Ok(())
    }

    /// Sets the keep-alive, and wakes the sleepers so that they sleep
    /// again with it.
    pub(crate) fn set_keep_alive(&self, keep_alive: Duration) {
        let mut settings = self.limits.settings();
        *settings = keep_alive;
        self.limits
            .keep_alive_ns
            .store(saturating_ns(keep_alive), Ordering::SeqCst);
        self.limits.changes.fetch_add(1, Ordering::SeqCst);
        drop(settings);
        self.sleep.wake_all();
    }

    /// Starts threads, up to `limit`, while more jobs wait than workers
    /// are idle (a new worker counts as idle: it is about to search).
    pub(super) fn grow_to(self: &std::sync::Arc<Self>, limit: usize) {
        while !self.is_closed() && !self.is_stopped() {
            let live = self.live.load(SyncOrdering::SeqCst);
            if live >= limit.min(self.limits.max())
                || self.queued() <= self.idle.load(SyncOrdering::SeqCst)
                || !self.spawn_worker()
            {
                return;
            }
        }
    }
}
