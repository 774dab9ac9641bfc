//! The FIFO queue inside one lane.
//!
//! Outside loom this is crossbeam's `Injector`: lock-free, FIFO, many
//! producers and many consumers. Under loom it is a `Mutex<VecDeque>`, which
//! keeps the contract the lane relies on (a push that has returned is
//! visible to the next steal, FIFO order) while letting the model checker
//! explore every interleaving of the counters and the sleep protocol around
//! it.

#[cfg(not(loom))]
mod imp {
    use crossbeam_deque::{Injector, Steal};

    pub(crate) struct Queue<T> {
        inner: Injector<T>,
    }

    impl<T> Queue<T> {
        pub(crate) fn new() -> Self {
            Queue {
                inner: Injector::new(),
            }
        }

        #[inline]
        pub(crate) fn push(&self, value: T) {
            self.inner.push(value);
        }

        /// Takes the oldest element, or `None` if the queue looked empty.
        /// Transient contention (`Steal::Retry`) is retried here.
        #[inline]
        pub(crate) fn pop(&self) -> Option<T> {
            loop {
                match self.inner.steal() {
                    Steal::Success(v) => return Some(v),
                    Steal::Empty => return None,
                    Steal::Retry => super::super::spin_hint(),
                }
            }
        }
    }
}

#[cfg(loom)]
mod imp {
    use crate::sync::{Mutex, lock};
    use std::collections::VecDeque;

    pub(crate) struct Queue<T> {
        inner: Mutex<VecDeque<T>>,
    }

    impl<T> Queue<T> {
        pub(crate) fn new() -> Self {
            Queue {
                inner: Mutex::new(VecDeque::new()),
            }
        }

        pub(crate) fn push(&self, value: T) {
            lock(&self.inner).push_back(value);
        }

        pub(crate) fn pop(&self) -> Option<T> {
            lock(&self.inner).pop_front()
        }
    }
}

pub(crate) use imp::Queue;
