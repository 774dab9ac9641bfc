//! What the bridge consumes and how: one [`ConsumerConfig`] per queue.

use crate::table::PriorityTable;
use lapin::types::{AMQPValue, FieldTable, ShortString};
use std::time::Duration;

/// How one queue is consumed into an executor.
///
/// Defaults: the queue is declared durable, without `x-max-priority`
/// unless [`max_priority`](ConsumerConfig::max_priority) is set; prefetch
/// 4; no dead-letter exchange (failed messages are then rejected without
/// requeue, and the queue's own dead-lettering, if any, applies); no
/// retries; no expiry.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
/// use priority_executor_amqp::{ConsumerConfig, PriorityTable};
/// use std::time::Duration;
///
/// let config = ConsumerConfig::new("visa")
///     .max_priority(10)
///     .priorities(PriorityTable::new().map(0..=4, Priority(1)).map(5..=10, Priority(10)))
///     .prefetch(4) // about the executor's threads: the rest waits in the broker, in priority order
///     .dead_letter_exchange("visa.dlx")
///     .dead_letter_queue("visa.dead")
///     .retries(2, Duration::from_millis(100), 2.0)
///     .start_within(Duration::from_secs(30));
/// assert_eq!(config.queue(), "visa");
/// ```
#[derive(Clone, Debug)]
pub struct ConsumerConfig {
    pub(crate) queue: String,
    pub(crate) declare: bool,
    pub(crate) max_priority: Option<u8>,
    pub(crate) table: PriorityTable,
    pub(crate) prefetch: u16,
    pub(crate) dead_letter_exchange: Option<String>,
    pub(crate) dead_letter_queue: Option<String>,
    pub(crate) max_retries: u32,
    pub(crate) retry_delay: Duration,
    pub(crate) retry_multiplier: f64,
    pub(crate) start_within: Option<Duration>,
}

impl ConsumerConfig {
    /// Consume the queue `queue`.
    ///
    /// # Examples
    ///
    /// See [`ConsumerConfig`].
    pub fn new(queue: impl Into<String>) -> Self {
        ConsumerConfig {
            queue: queue.into(),
            declare: true,
            max_priority: None,
            table: PriorityTable::new(),
            prefetch: 4,
            dead_letter_exchange: None,
            dead_letter_queue: None,
            max_retries: 0,
            retry_delay: Duration::ZERO,
            retry_multiplier: 1.0,
            start_within: None,
        }
    }

    /// The queue's name.
    ///
    /// # Examples
    ///
    /// See [`ConsumerConfig`].
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// Declare the queue with `x-max-priority = n` (a classic priority
    /// queue; RabbitMQ advises 10 or less). If the queue exists with
    /// another value, starting fails with
    /// [`BridgeError::QueueMismatch`](crate::BridgeError::QueueMismatch).
    ///
    /// # Examples
    ///
    /// See [`ConsumerConfig`].
    pub fn max_priority(mut self, n: u8) -> Self {
        self.max_priority = Some(n);
        self
    }

    /// Do not declare the queue (nor the dead-letter exchange and queue):
    /// it must exist, and its arguments are whatever it was declared with.
    /// The start checks that it exists, and so do the dead-letter exchange
    /// and queue if configured: a missing one is an error then, not at the
    /// first failed message.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor_amqp::ConsumerConfig;
    ///
    /// let config = ConsumerConfig::new("declared-elsewhere").no_declare();
    /// # let _ = config;
    /// ```
    pub fn no_declare(mut self) -> Self {
        self.declare = false;
        self
    }

    /// The broker-priority-to-lane table.
    ///
    /// # Examples
    ///
    /// See [`ConsumerConfig`].
    pub fn priorities(mut self, table: PriorityTable) -> Self {
        self.table = table;
        self
    }

    /// The table in use.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Priority;
    /// use priority_executor_amqp::{ConsumerConfig, PriorityTable};
    ///
    /// let config = ConsumerConfig::new("q").priorities(PriorityTable::new().map(9..=9, Priority(10)));
    /// assert_eq!(config.table().broker_priority(Priority(10)), Some(9));
    /// ```
    pub fn table(&self) -> &PriorityTable {
        &self.table
    }

    /// At most `n` deliveries in hand (unacknowledged) at once, queued in
    /// the lanes or running. Everything else stays in the broker, which
    /// hands out the highest priority first: a high-priority message waits
    /// behind at most `n` lower ones here. Set it to about the executor's
    /// threads; it must fit in the free capacity of every bounded lane the
    /// table uses (checked at start), so a delivery never waits outside
    /// the lanes. At least 1.
    ///
    /// # Examples
    ///
    /// See [`ConsumerConfig`].
    pub fn prefetch(mut self, n: u16) -> Self {
        self.prefetch = n;
        self
    }

    /// Where failed messages go: a confirmed publish to this exchange
    /// (declared durable, `fanout`, unless [`no_declare`](Self::no_declare))
    /// with the reason in headers, then the original is acked. The queue is
    /// also declared with `x-dead-letter-exchange` set to it, so messages
    /// the broker itself dead-letters (expired, rejected) go there too.
    ///
    /// A copy the exchange routes to no queue (nothing bound: see
    /// [`dead_letter_queue`](Self::dead_letter_queue)) is not taken for
    /// delivered: the original is requeued a second later, with an
    /// [`Event::DeadLetterFailed`](crate::Event::DeadLetterFailed) naming
    /// the exchange, and its handler runs again when it comes back. The
    /// error in the letter's `x-pe-error` is cut to 4 KiB.
    ///
    /// # Examples
    ///
    /// See [`ConsumerConfig`].
    pub fn dead_letter_exchange(mut self, exchange: impl Into<String>) -> Self {
        self.dead_letter_exchange = Some(exchange.into());
        self
    }

    /// A queue to declare (durable) and bind to the dead-letter exchange,
    /// so dead letters are kept.
    ///
    /// # Examples
    ///
    /// See [`ConsumerConfig`].
    pub fn dead_letter_queue(mut self, queue: impl Into<String>) -> Self {
        self.dead_letter_queue = Some(queue.into());
        self
    }

    /// A failed attempt ([`Failure::retry`](crate::Failure::retry), or any
    /// error the handler returns with `?`) is run again up to `max_retries`
    /// times, after `delay`, then `delay * multiplier`, ... (capped at one
    /// hour). The message waits in the broker, not in hand: its copy goes
    /// to a retry queue `<queue>.retry-<ms>ms` (declared on first use,
    /// with the backoff as its time-to-live and this queue as its
    /// dead-letter target, so the copy comes back when it is due), with
    /// the attempts made in the header `x-pe-retries`; the original is
    /// acked once the broker confirms the copy.
    /// A panic, a [`Failure::reject`](crate::Failure::reject) or an expiry
    /// is never retried.
    ///
    /// # Examples
    ///
    /// See [`ConsumerConfig`].
    pub fn retries(mut self, max_retries: u32, delay: Duration, multiplier: f64) -> Self {
        self.max_retries = max_retries;
        self.retry_delay = delay;
        self.retry_multiplier = if multiplier.is_finite() && multiplier >= 1.0 {
            multiplier
        } else {
            1.0
        };
        self
    }

    /// A delivery whose job has not started within `limit` of its arrival
    /// is not run: it is dead-lettered with the reason `expired`.
    ///
    /// # Examples
    ///
    /// See [`ConsumerConfig`].
    pub fn start_within(mut self, limit: Duration) -> Self {
        self.start_within = Some(limit);
        self
    }

    /// The wait before retry number `n` (1-based).
    pub(crate) fn retry_delay(&self, n: u32) -> Duration {
        if self.retry_delay.is_zero() {
            return Duration::ZERO;
        }
        let factor = self
            .retry_multiplier
            .powi(n.saturating_sub(1).min(64) as i32);
        let secs = self.retry_delay.as_secs_f64() * factor;
        if !secs.is_finite() || secs >= 3600.0 {
            Duration::from_secs(3600)
        } else {
            Duration::from_secs_f64(secs)
        }
    }

    /// The arguments the queue is declared with.
    pub(crate) fn queue_arguments(&self) -> FieldTable {
        let mut args = FieldTable::default();
        if let Some(n) = self.max_priority {
            // A signed 32-bit integer, as most clients send it.
            args.insert(
                ShortString::from("x-max-priority"),
                AMQPValue::LongInt(i32::from(n)),
            );
        }
        if let Some(dlx) = &self.dead_letter_exchange {
            args.insert(
                ShortString::from("x-dead-letter-exchange"),
                AMQPValue::LongString(dlx.as_str().into()),
            );
        }
        args
    }
}
