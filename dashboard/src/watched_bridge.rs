//! A RabbitMQ bridge as the dashboard holds it (feature `amqp`): how it is
//! read, and its part of the snapshot.

use crate::bridge_snapshot::{BridgeQueueSnapshot, BridgeSnapshot};
use priority_executor_amqp::ConsumerMetrics;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// Reads a bridge's counters, one entry per queue.
pub(crate) type ReadFn = Arc<dyn Fn() -> Vec<ConsumerMetrics> + Send + Sync>;

pub(crate) struct WatchedBridge {
    pub(crate) name: String,
    pub(crate) read: ReadFn,
}

impl WatchedBridge {
    pub(crate) fn snapshot(&self) -> BridgeSnapshot {
        let queues = catch_unwind(AssertUnwindSafe(|| (self.read)())).unwrap_or_default();
        BridgeSnapshot {
            name: self.name.clone(),
            queues: queues
                .into_iter()
                .map(|m| BridgeQueueSnapshot {
                    queue: m.queue,
                    connected: m.connected,
                    in_hand: m.in_hand,
                    max_in_hand: m.max_in_hand,
                    delivered: m.delivered,
                    acked: m.acked,
                    requeued: m.requeued,
                    dead_lettered: m.dead_lettered,
                    retried: m.retried,
                    reconnects: m.reconnects,
                })
                .collect(),
        }
    }
}
