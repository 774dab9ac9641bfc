//! A condition threads wait on, with a count of waiters so that the side
//! making the condition true takes the lock only when someone waits
//! (crossbeam-channel's `SyncWaker::is_empty`).
//!
//! The protocol is a Dekker pair, as the pool's (`src/sleep/README.md`):
//! a waiter counts itself, fences, then checks its condition under the
//! lock; a notifier makes the condition true, fences, then reads the
//! count. At least one of them sees the other, and a notifier that sees a
//! waiter takes the lock, so it cannot notify between the waiter's check
//! and its wait.

use crate::sync::{Condvar, Mutex, lock, wait_until};
use std::sync::atomic::{AtomicUsize, Ordering, fence};
use std::time::Instant;

#[derive(Default)]
pub(crate) struct Signal {
    waiters: AtomicUsize,
    lock: Mutex<()>,
    cond: Condvar,
}

impl Signal {
    /// Wakes one waiter, if any. Call after making the condition true.
    #[inline]
    pub(crate) fn notify_one(&self) {
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) != 0 {
            self.notify_slow(false);
        }
    }

    /// Wakes every waiter, if any.
    #[inline]
    pub(crate) fn notify_all(&self) {
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) != 0 {
            self.notify_slow(true);
        }
    }

    #[cold]
    fn notify_slow(&self, all: bool) {
        let _guard = lock(&self.lock);
        if all {
            self.cond.notify_all();
        } else {
            self.cond.notify_one();
        }
    }

    /// Waits until `ready()` holds or `deadline` passes (`None`: no
    /// deadline). Returns the last answer of `ready()`.
    pub(crate) fn wait(&self, deadline: Option<Instant>, mut ready: impl FnMut() -> bool) -> bool {
        let mut guard = lock(&self.lock);
        // ORDERING: count first, then check (see the module docs).
        self.waiters.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let outcome = loop {
            if ready() {
                break true;
            }
            guard = match wait_until(&self.cond, guard, deadline) {
                Ok(g) => g,
                Err(g) => {
                    guard = g;
                    break ready();
                }
            };
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
        outcome
    }
}
