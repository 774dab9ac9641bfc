//! The bridge's counters per queue, and the events it reports.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

/// Counters of one consumed queue, as returned by
/// [`Bridge::metrics`](crate::Bridge::metrics).
///
/// While the bridge runs, every delivery is in hand, or was acked,
/// dead-lettered, requeued, moved to its retry queue (its next attempt is
/// a delivery of its own, counted again), or abandoned with a lost
/// connection (the broker then delivers it again): `delivered == in_hand +
/// acked + dead_lettered + requeued + retry_queued + abandoned`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConsumerMetrics {
    /// The queue.
    pub queue: String,
    /// Deliveries received.
    pub delivered: u64,
    /// Deliveries the broker marked as redelivered.
    pub redelivered: u64,
    /// Acked after their job completed. (An ack is not confirmed by the
    /// broker: one sent just before a connection is lost may not arrive,
    /// and the broker then delivers the message again.)
    pub acked: u64,
    /// Sent to the dead-letter exchange (or rejected without requeue when
    /// none is configured), then acked.
    pub dead_lettered: u64,
    /// Of those: the handler failed on the last allowed attempt.
    pub failed: u64,
    /// Of those: the handler panicked.
    pub panicked: u64,
    /// Of those: the handler rejected the message ([`Failure::reject`](crate::Failure::reject)).
    pub rejected: u64,
    /// Of those: not started within `start_within`.
    pub expired: u64,
    /// Handed back to the broker (`nack` with requeue): jobs handed back
    /// by `shutdown_now`, or refused by an executor that is shutting down.
    pub requeued: u64,
    /// Attempts that failed and were run again: through the retry queue
    /// (those are counted in `retry_queued` too, once the delivery left),
    /// or waiting in hand.
    pub retried: u64,
    /// Moved to the retry queue: copied there, confirmed by the broker,
    /// then acked. The delivery is settled; its next attempt comes back
    /// from the broker after the backoff as a new delivery.
    pub retry_queued: u64,
    /// Deliveries whose broker priority the table did not map; they ran in
    /// the unmapped lane.
    pub unmapped: u64,
    /// Deliveries in hand when a connection was lost: unacked, so the
    /// broker delivers them again. Their jobs, if not started yet, are
    /// skipped.
    pub abandoned: u64,
    /// Connections made again after a loss.
    pub reconnects: u64,
    /// Times a delivery found its lane full and stayed in hand (unacked,
    /// within the prefetch) until the lane had room.
    pub lane_full: u64,
    /// Deliveries in hand now (unacked).
    pub in_hand: usize,
    /// The most ever in hand at once; never above the prefetch.
    pub max_in_hand: usize,
    /// Consuming now: set as the consumer connects (just before
    /// [`Event::Connected`]), cleared when its connection is lost or it
    /// stops.
    pub connected: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) delivered: AtomicU64,
    pub(crate) redelivered: AtomicU64,
    pub(crate) acked: AtomicU64,
    pub(crate) dead_lettered: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) panicked: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) expired: AtomicU64,
    pub(crate) requeued: AtomicU64,
    pub(crate) retried: AtomicU64,
    pub(crate) retry_queued: AtomicU64,
    pub(crate) unmapped: AtomicU64,
    pub(crate) abandoned: AtomicU64,
    pub(crate) reconnects: AtomicU64,
    pub(crate) lane_full: AtomicU64,
    pub(crate) in_hand: AtomicUsize,
    pub(crate) max_in_hand: AtomicUsize,
    pub(crate) connected: AtomicBool,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    /// Whether the queue is consumed now.
    pub(crate) fn set_connected(&self, connected: bool) {
        self.connected.store(connected, Relaxed);
    }

    pub(crate) fn set_in_hand(&self, n: usize) {
        self.in_hand.store(n, Relaxed);
        self.max_in_hand.fetch_max(n, Relaxed);
    }

    pub(crate) fn snapshot(&self, queue: &str) -> ConsumerMetrics {
        ConsumerMetrics {
            queue: queue.to_owned(),
            delivered: self.delivered.load(Relaxed),
            redelivered: self.redelivered.load(Relaxed),
            acked: self.acked.load(Relaxed),
            dead_lettered: self.dead_lettered.load(Relaxed),
            failed: self.failed.load(Relaxed),
            panicked: self.panicked.load(Relaxed),
            rejected: self.rejected.load(Relaxed),
            expired: self.expired.load(Relaxed),
            requeued: self.requeued.load(Relaxed),
            retried: self.retried.load(Relaxed),
            retry_queued: self.retry_queued.load(Relaxed),
            unmapped: self.unmapped.load(Relaxed),
            abandoned: self.abandoned.load(Relaxed),
            reconnects: self.reconnects.load(Relaxed),
            lane_full: self.lane_full.load(Relaxed),
            in_hand: self.in_hand.load(Relaxed),
            max_in_hand: self.max_in_hand.load(Relaxed),
            connected: self.connected.load(Relaxed),
        }
    }
}

/// Something the bridge reports to the
/// [`on_event`](crate::BridgeBuilder::on_event) callback (on its own
/// thread: keep the callback short).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// Consuming the queue (at start, and again after a reconnection).
    Connected {
        /// The queue.
        queue: String,
    },
    /// The connection or channel was lost, or connecting again failed; the
    /// bridge tries again after `retry_in`. The deliveries that were in
    /// hand are not acked: the broker delivers them again.
    Disconnected {
        /// The queue.
        queue: String,
        /// What happened.
        error: String,
        /// Deliveries in hand when it happened.
        in_hand: usize,
        /// The wait before the next attempt (doubling up to the maximum).
        retry_in: Duration,
    },
    /// Publishing a dead letter failed; the message was requeued instead.
    DeadLetterFailed {
        /// The queue.
        queue: String,
        /// What happened.
        error: String,
    },
    /// Sending a failed delivery to its retry queue failed (declaring the
    /// queue, or the broker's confirm of the copy); the retry waits in the
    /// process instead, the delivery in hand.
    RetryInHand {
        /// The queue.
        queue: String,
        /// What happened.
        error: String,
    },
    /// The executor refused a job because it is shutting down: the bridge
    /// requeued it and stops consuming this queue.
    ExecutorShutDown {
        /// The queue.
        queue: String,
    },
    /// The consumer of the queue has stopped.
    Stopped {
        /// The queue.
        queue: String,
    },
}
