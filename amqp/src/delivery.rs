//! What a handler sees of a delivery, and how it says it failed.

use lapin::types::{AMQPValue, FieldTable};
use priority_executor::Priority;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The parts of a delivery kept while it is in hand.
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) queue: Arc<str>,
    pub(crate) body: Vec<u8>,
    pub(crate) broker_priority: Option<u8>,
    pub(crate) lane: Priority,
    pub(crate) mapped: bool,
    pub(crate) message_id: Option<String>,
    pub(crate) routing_key: String,
    pub(crate) redelivered: bool,
    pub(crate) headers: Option<FieldTable>,
}

/// A message as its handler sees it, on an executor worker thread.
///
/// # Examples
///
/// ```no_run
/// use priority_executor_amqp::{Failure, Incoming};
///
/// fn handle(msg: &Incoming) -> Result<(), Failure> {
///     let text = msg.body_str()?; // not UTF-8: dead-lettered at once, the queue named
///     let amount: u32 = text.parse().map_err(Failure::reject)?; // never retried
///     println!("{amount} from {} (lane {})", msg.queue(), msg.lane());
///     Ok(())
/// }
/// # let _ = handle;
/// ```
#[derive(Debug, Clone)]
pub struct Incoming {
    pub(crate) received: Arc<Received>,
    pub(crate) attempt: u32,
    pub(crate) waited: Duration,
}

impl Incoming {
    /// The queue it came from.
    pub fn queue(&self) -> &str {
        &self.received.queue
    }

    /// The body.
    pub fn body(&self) -> &[u8] {
        &self.received.body
    }

    /// The body as UTF-8 text.
    ///
    /// # Errors
    ///
    /// A [`Failure::reject`] naming the queue and the first bad byte: the
    /// message is dead-lettered at once with that reason.
    pub fn body_str(&self) -> Result<&str, Failure> {
        std::str::from_utf8(&self.received.body).map_err(|e| {
            Failure::reject(format!(
                "queue {:?}: the body is not UTF-8 text ({e})",
                self.queue()
            ))
        })
    }

    /// The broker priority it was published with (`None`: no property,
    /// which the broker and the table treat as 0).
    pub fn broker_priority(&self) -> Option<u8> {
        self.received.broker_priority
    }

    /// The executor lane it runs in.
    pub fn lane(&self) -> Priority {
        self.received.lane
    }

    /// Was the lane found in the table (`false`: the unmapped lane)?
    pub fn mapped(&self) -> bool {
        self.received.mapped
    }

    /// The `message-id` property.
    pub fn message_id(&self) -> Option<&str> {
        self.received.message_id.as_deref()
    }

    /// The routing key it was published with.
    pub fn routing_key(&self) -> &str {
        &self.received.routing_key
    }

    /// Did the broker deliver it before (to this or another consumer)
    /// without an ack?
    pub fn redelivered(&self) -> bool {
        self.received.redelivered
    }

    /// Which attempt this is: 1, then 2 for the first retry, ...
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// How long this attempt waited between the delivery (or the retry
    /// being due) and its start on a worker.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// A header as text: strings as they are, numbers and booleans
    /// formatted; `None` if absent or of another type.
    pub fn header(&self, name: &str) -> Option<String> {
        let headers = self.received.headers.as_ref()?;
        let value = headers.inner().iter().find(|(k, _)| k.as_str() == name)?.1;
        header_text(value)
    }
}

/// The header a retry's copy carries: how many attempts were made.
pub(crate) const RETRIES_HEADER: &str = "x-pe-retries";

/// The attempts made before a delivery that came back from a retry queue
/// (0 for any other).
pub(crate) fn retried_attempts(headers: Option<&lapin::types::FieldTable>) -> u32 {
    headers
        .and_then(|h| {
            h.inner()
                .iter()
                .find(|(k, _)| k.as_str() == RETRIES_HEADER)
                .and_then(|(_, v)| header_text(v))
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A header value as text, where it has one.
pub(crate) fn header_text(value: &AMQPValue) -> Option<String> {
    Some(match value {
        AMQPValue::LongString(s) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        AMQPValue::ShortString(s) => s.as_str().to_owned(),
        AMQPValue::Boolean(b) => b.to_string(),
        AMQPValue::ShortShortInt(n) => n.to_string(),
        AMQPValue::ShortShortUInt(n) => n.to_string(),
        AMQPValue::ShortInt(n) => n.to_string(),
        AMQPValue::ShortUInt(n) => n.to_string(),
        AMQPValue::LongInt(n) => n.to_string(),
        AMQPValue::LongUInt(n) => n.to_string(),
        AMQPValue::LongLongInt(n) => n.to_string(),
        AMQPValue::Timestamp(n) => n.to_string(),
        _ => return None,
    })
}

/// Why a handler did not finish a message.
///
/// Any error converts into a retryable failure, so `?` works on any
/// `std::error::Error`; [`Failure::reject`] is for messages no retry can
/// help (an undecodable body): they are dead-lettered at once.
///
/// # Examples
///
/// ```
/// use priority_executor_amqp::Failure;
///
/// let transient = Failure::retry("backend timed out");
/// let permanent = Failure::reject("not a visa application");
/// assert!(!transient.is_reject() && permanent.is_reject());
/// assert_eq!(permanent.to_string(), "not a visa application");
/// ```
pub struct Failure {
    pub(crate) message: String,
    pub(crate) reject: bool,
    /// The handler could not take the delivery and it never ran: it goes
    /// back to the queue, and the consumer stops consuming.
    pub(crate) give_back: bool,
}

impl Failure {
    /// A failure worth another attempt (up to the configured retries).
    pub fn retry(error: impl fmt::Display) -> Failure {
        Failure {
            message: error.to_string(),
            reject: false,
            give_back: false,
        }
    }

    /// A failure no retry can mend: dead-lettered at once.
    pub fn reject(error: impl fmt::Display) -> Failure {
        Failure {
            message: error.to_string(),
            reject: true,
            give_back: false,
        }
    }

    /// The handler can no longer take deliveries (a stage whose instances
    /// ended): the delivery never ran and is handed back to the queue,
    /// neither acked nor dead-lettered, and the consumer stops consuming.
    pub(crate) fn give_back(error: impl fmt::Display) -> Failure {
        Failure {
            message: error.to_string(),
            reject: false,
            give_back: true,
        }
    }

    /// Is it a [`reject`](Failure::reject)?
    pub fn is_reject(&self) -> bool {
        self.reject
    }
}

impl<E: std::error::Error> From<E> for Failure {
    fn from(error: E) -> Failure {
        Failure::retry(error)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failure")
            .field("message", &self.message)
            .field("reject", &self.reject)
            .finish()
    }
}
