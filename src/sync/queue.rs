//! The FIFO queue of a mailbox lane that keeps no ring (unbounded, or
//! bounded above the ring's size), and, under loom, of a pool lane.
//!
//! Outside loom this is crossbeam's `SegQueue`: lock-free, FIFO, many
//! producers and many consumers. Under loom it is a `Mutex<VecDeque>`, which
//! keeps the contract the lanes rely on (a push that has returned is
//! visible to the next pop, FIFO order) while letting the model checker
//! explore every interleaving of the counters and the sleep protocol around
//! it. A pool lane outside loom keeps its jobs in `tickets.rs`.

#[cfg(not(loom))]
mod imp {
    use crossbeam_queue::SegQueue;

    pub(crate) struct Queue<T> {
        inner: SegQueue<T>,
    }

    impl<T> Queue<T> {
        pub(crate) fn new() -> Self {
            Queue {
                inner: SegQueue::new(),
            }
        }

        #[inline]
        pub(crate) fn push(&self, value: T) {
            self.inner.push(value);
        }

        /// Takes the oldest element, or `None` if the queue looked empty.
        #[inline]
        pub(crate) fn pop(&self) -> Option<T> {
            self.inner.pop()
        }

        /// Did the queue look empty? A peek (a mailbox lane's).
        #[cfg_attr(not(feature = "actor"), allow(dead_code))]
        #[inline]
        pub(crate) fn is_empty(&self) -> bool {
            self.inner.is_empty()
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

        #[cfg_attr(not(feature = "actor"), allow(dead_code))]
        pub(crate) fn is_empty(&self) -> bool {
            lock(&self.inner).is_empty()
        }
    }
}

pub(crate) use imp::Queue;
