//! A count-down latch and a gate: how workloads wait for jobs without sleeps.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Opens when `count_down` has been called the set number of times.
///
/// The count is an atomic so the jobs' fast path is one `fetch_sub`; only the
/// job that reaches zero takes the lock, to wake the waiter.
#[derive(Debug, Default)]
pub struct Latch {
    /// On a line of its own: the jobs of every pool write it, and it must
    /// not share a line with whatever the allocator put next to it.
    left: CachePadded<AtomicUsize>,
    lock: Mutex<()>,
    opened: Condvar,
}

impl Latch {
    pub fn new(count: usize) -> Latch {
        Latch {
            left: CachePadded::new(AtomicUsize::new(count)),
            ..Latch::default()
        }
    }

    /// A latch that lives for the rest of the bench, so jobs can hold a
    /// `&'static` to it instead of an `Arc` (a shared reference count would
    /// add a contended atomic to every job of every pool).
    pub fn leak(count: usize) -> &'static Latch {
        Box::leak(Box::new(Latch::new(count)))
    }

    /// Re-arms the latch; only call it once the previous round has opened.
    pub fn reset(&self, count: usize) {
        self.left.store(count, Ordering::Release);
    }

    #[inline]
    pub fn count_down(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Taking the lock orders this notify after the waiter's check
            // of `left`, so the wake-up cannot be lost.
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.opened.notify_all();
        }
    }

    pub fn wait(&self) {
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.left.load(Ordering::Acquire) != 0 {
            guard = self.opened.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Holds jobs until opened: used to keep every worker busy while a backlog
/// is queued behind them.
#[derive(Debug, Default)]
pub struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    pub fn leak() -> &'static Gate {
        Box::leak(Box::default())
    }

    pub fn wait(&self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            open = self.opened.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub fn open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.opened.notify_all();
    }

    pub fn close(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = false;
    }
}

/// Occupies every one of `threads` workers of `pool` with a job that waits
/// on `gate`, and returns once all of them are running. Queued jobs then stay
/// queued until the gate opens.
pub fn block_workers<P: super::Pool>(pool: &P, threads: usize, gate: &'static Gate) {
    let started = Latch::leak(threads);
    for _ in 0..threads {
        pool.spawn(0, move || {
            started.count_down();
            gate.wait();
        });
    }
    started.wait();
}
