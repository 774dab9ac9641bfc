//! A lock for short critical sections: a mailbox's take lock
//! (`actor/dispatch.rs`). The only user code run in it is the waker of a
//! future waiting for room in a lane (`Addr::reserve`), woken by the pop
//! that frees the slot, with a panic caught; its docs ask that it neither
//! block nor poll the task on the spot. Unlocking is a plain
//! Release store, where the standard mutex's unlock is a read-modify-write
//! (it must learn whether a thread sleeps on it): one locked instruction
//! less on every dispatch. A thread that finds it held spins, then yields
//! its time slice, then naps (from [`FIRST_NAP`] doubling up to
//! [`LAST_NAP`]) until it is free: the sections it guards are short (a
//! pop, a sweep of a lane), except a `stop`'s or a `kill`'s sweep that
//! waits for a held permit to be used or dropped, which may take as long
//! as its holder likes; the instances waiting for the lock meanwhile cost
//! no core.
//!
//! Under loom it is loom's mutex, so the models see every interleaving of
//! what it guards.

/// Yields a waiting thread makes, once done spinning, before it naps.
#[cfg_attr(loom, allow(dead_code))]
const YIELDS: u32 = 64;
/// A waiting thread's first nap: the lock has been held through its spin
/// and [`YIELDS`] yields, so it is a long hold.
#[cfg_attr(loom, allow(dead_code))]
const FIRST_NAP: std::time::Duration = std::time::Duration::from_micros(50);
/// The longest nap a waiting thread takes between looks.
#[cfg_attr(loom, allow(dead_code))]
const LAST_NAP: std::time::Duration = std::time::Duration::from_millis(1);

#[cfg(not(loom))]
mod imp {
    use super::{FIRST_NAP, LAST_NAP, YIELDS};
    use crossbeam_utils::Backoff;
    use std::cell::UnsafeCell;
    use std::ops::{Deref, DerefMut};
    use std::sync::atomic::{AtomicBool, Ordering};

    pub(crate) struct SpinLock<T> {
        held: AtomicBool,
        value: UnsafeCell<T>,
        /// Naps taken by waiting threads, for the tests.
        #[cfg(test)]
        pub(super) naps: std::sync::atomic::AtomicUsize,
    }

    // SAFETY: the value is reached only through a guard, and one guard at
    // a time exists (`lock`), so the lock hands `&mut T` from thread to
    // thread as a mutex does: `T: Send` is all it needs.
    unsafe impl<T: Send> Sync for SpinLock<T> {}

    pub(crate) struct SpinGuard<'a, T> {
        lock: &'a SpinLock<T>,
    }

    impl<T> SpinLock<T> {
        pub(crate) fn new(value: T) -> Self {
            SpinLock {
                held: AtomicBool::new(false),
                value: UnsafeCell::new(value),
                #[cfg(test)]
                naps: std::sync::atomic::AtomicUsize::new(0),
            }
        }

        #[inline]
        pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
            // ORDERING: Acquire on taking the lock pairs with the Release
            // store of the guard's drop: what the last holder wrote is
            // seen by the next.
            if self
                .held
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                self.lock_slow();
            }
            SpinGuard { lock: self }
        }

        #[cold]
        fn lock_slow(&self) {
            let backoff = Backoff::new();
            loop {
                // Counted per hold: a waiter that loses the race to many
                // short holds in turn keeps yielding, and only one hold
                // that lasts through the yields (after the spin, which is
                // once per call) puts it to sleep.
                let mut yields = 0;
                let mut nap = FIRST_NAP;
                // Read first, so waiting threads share the line until it
                // is released.
                while self.held.load(Ordering::Relaxed) {
                    if !backoff.is_completed() {
                        backoff.snooze();
                    } else if yields < YIELDS {
                        yields += 1;
                        std::thread::yield_now();
                    } else {
                        // A long hold (a sweep waiting for a permit).
                        #[cfg(test)]
                        self.naps.fetch_add(1, Ordering::Relaxed);
                        std::thread::sleep(nap);
                        nap = (nap * 2).min(LAST_NAP);
                    }
                }
                // ORDERING: as in `lock`.
                if self
                    .held
                    .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
            }
        }
    }

    impl<T> Deref for SpinGuard<'_, T> {
        type Target = T;

        #[inline]
        fn deref(&self) -> &T {
            // SAFETY: the guard holds the lock: no other reference to the
            // value exists while it lives.
            unsafe { &*self.lock.value.get() }
        }
    }

    impl<T> DerefMut for SpinGuard<'_, T> {
        #[inline]
        fn deref_mut(&mut self) -> &mut T {
            // SAFETY: as in `deref`, and `&mut self` makes it unique.
            unsafe { &mut *self.lock.value.get() }
        }
    }

    impl<T> Drop for SpinGuard<'_, T> {
        #[inline]
        fn drop(&mut self) {
            // ORDERING: Release publishes the holder's writes to the next
            // `lock`'s Acquire.
            self.lock.held.store(false, Ordering::Release);
        }
    }
}

#[cfg(loom)]
mod imp {
    use crate::sync::{Mutex, MutexGuard, lock};

    pub(crate) struct SpinLock<T>(Mutex<T>);

    pub(crate) type SpinGuard<'a, T> = MutexGuard<'a, T>;

    impl<T> SpinLock<T> {
        pub(crate) fn new(value: T) -> Self {
            SpinLock(Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
            lock(&self.0)
        }
    }
}

pub(crate) use imp::SpinLock;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::SpinLock;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    /// Two threads add through the lock: every increment is seen, so no two
    /// guards ever held the value at once (and Miri sees each access).
    #[test]
    fn guards_exclude_each_other() {
        let lock = Arc::new(SpinLock::new(0u64));
        let rounds = if cfg!(miri) { 200 } else { 100_000 };
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || {
                    for _ in 0..rounds {
                        let mut n = lock.lock();
                        let before = *n;
                        std::thread::yield_now();
                        *n = before + 1;
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("no panic");
        }
        assert_eq!(*lock.lock(), 2 * rounds);
    }

    /// A thread waiting through a long hold naps instead of spinning, and
    /// still takes the lock once it is released.
    #[test]
    fn a_waiter_naps_through_a_long_hold() {
        let lock = Arc::new(SpinLock::new(0u64));
        let held = lock.lock();
        let waiter = {
            let lock = Arc::clone(&lock);
            std::thread::spawn(move || *lock.lock() += 1)
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while lock.naps.load(Ordering::Relaxed) < 2 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        let naps = lock.naps.load(Ordering::Relaxed);
        drop(held);
        waiter.join().expect("no panic");
        assert!(naps >= 2, "the waiter napped {naps} times in 30 s");
        assert_eq!(*lock.lock(), 1);
    }
}
