//! Deliveries waiting for room in a full lane: in arrival order within
//! each lane, each lane with one reservation of the executor awaited (no
//! timer: the session wakes when a worker frees a slot).

use priority_executor::{EnqueueError, Executor, Permit, Priority, Reserve};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::task::Poll;

/// The deliveries (by tag) waiting for room, per lane.
pub(super) struct Waiting {
    executor: Executor,
    lanes: Vec<Lane>,
}

struct Lane {
    priority: Priority,
    tags: VecDeque<u64>,
    /// The executor's promise of the lane's next free slot, for the first
    /// tag; kept across polls so the place in line is kept.
    reserve: Reserve,
}

impl Waiting {
    pub(super) fn new(executor: Executor) -> Self {
        Waiting {
            executor,
            lanes: Vec::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// Whether deliveries already wait for `lane`: a new one goes behind
    /// them, so each lane keeps its order.
    pub(super) fn holds(&self, lane: Priority) -> bool {
        self.lanes.iter().any(|l| l.priority == lane)
    }

    /// Puts `tag` behind the deliveries waiting for `lane`.
    pub(super) fn push(&mut self, lane: Priority, tag: u64) {
        match self.lanes.iter_mut().find(|l| l.priority == lane) {
            Some(l) => l.tags.push_back(tag),
            None => self.lanes.push(Lane {
                priority: lane,
                tags: VecDeque::from([tag]),
                reserve: self.executor.reserve(lane),
            }),
        }
    }

    /// The first delivery of a lane that has room now, with the slot held
    /// for it (or the reason there will be none: the executor shut down).
    ///
    /// Cancel-safe: dropped before it is ready (another branch of the
    /// session's `select!` won), it changes nothing and every lane keeps
    /// its place in line.
    pub(super) async fn next(&mut self) -> (u64, Result<Permit, EnqueueError<()>>) {
        poll_fn(|cx| {
            for i in 0..self.lanes.len() {
                let Poll::Ready(room) = self.lanes[i].reserve.poll_reserve(cx) else {
                    continue;
                };
                let lane = &mut self.lanes[i];
                let tag = lane.tags.pop_front().expect("a waiting lane holds a tag");
                if lane.tags.is_empty() {
                    self.lanes.remove(i);
                } else {
                    lane.reserve = self.executor.reserve(lane.priority);
                }
                return Poll::Ready((tag, room));
            }
            Poll::Pending
        })
        .await
    }
}
