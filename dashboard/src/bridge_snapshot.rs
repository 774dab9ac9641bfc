//! The RabbitMQ bridges' part of the snapshot (feature `amqp`; without
//! it the list is empty, and the shape the same).

use serde::Serialize;

/// One bridge: the queues it consumes into an executor.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct BridgeSnapshot {
    /// The name it is shown by.
    pub name: String,
    /// Its queues, in the order the bridge consumes them.
    pub queues: Vec<BridgeQueueSnapshot>,
}

/// One queue a bridge consumes: its counters since the bridge started.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct BridgeQueueSnapshot {
    /// The queue.
    pub queue: String,
    /// Consuming now (connected to the broker).
    pub connected: bool,
    /// Deliveries in hand now: received, not yet acked or handed back.
    pub in_hand: usize,
    /// The most ever in hand at once.
    pub max_in_hand: usize,
    /// Deliveries received.
    pub delivered: u64,
    /// Acked after their job completed.
    pub acked: u64,
    /// Handed back to the broker to be delivered again.
    pub requeued: u64,
    /// Sent to the dead-letter exchange (or rejected without requeue).
    pub dead_lettered: u64,
    /// Attempts that failed and were run again.
    pub retried: u64,
    /// Connections made again after a loss.
    pub reconnects: u64,
}
