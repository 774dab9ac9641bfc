//! RabbitMQ priority queues into the lanes of a
//! [`priority_executor::Executor`].
//!
//! - [`Bridge`] consumes queues into an executor: each delivery becomes a
//!   job in the lane its broker priority maps to ([`PriorityTable`]), with
//!   at most `prefetch` deliveries in hand, so the rest waits in the broker
//!   in priority order. A delivery is acked only after its job finished;
//!   failed, panicked or expired jobs go to a dead-letter exchange with the
//!   reason in headers; jobs handed back by `shutdown_now` are requeued.
//!   A lost connection is reported and retried with backoff.
//! - [`Publisher`] publishes with publisher confirms, each message with its
//!   broker priority: given, from a lane through the table, from a
//!   `Prioritized` value ([`Outgoing::prioritized`]) or from the registry's
//!   rules for an ESB `Message` (`Outgoing::from_message`). Like the
//!   bridge, it asks the broker for a heartbeat, so a broker that stops
//!   answering without closing the connection is found out
//!   ([`DEFAULT_HEARTBEAT`]; [`PublisherBuilder`] sets it and the
//!   connection timeout).
//! - With the default feature `executors-toml`, a queue's settings come
//!   from `[amqp.NAME]` in `executors.toml`
//!   (`ConsumerConfig::from_executors_toml`), and [`Bridge::builder`]
//!   feeds a registry's executor (`executors.get(name)?`).
//! - [`StageProcess`] runs one stage of an actor pipeline
//!   (`priority_executor::actor`) in a process of its own, its inbox and
//!   outbox being queues, so Kabuki's Download -> Index x N -> Write runs as
//!   separate processes; the drain marker crosses them in order
//!   ([`pipeline`]).
//!
//! The AMQP client (lapin, on tokio) runs on a thread of the bridge's own;
//! handlers are plain closures on the executor's worker threads, so users
//! need no async runtime.
//!
//! # Guarantees
//!
//! - At least once: a message is acked only after its handler returned
//!   `Ok`, or after its dead letter was confirmed by the broker. A process
//!   that dies, or a connection that drops, leaves its unacked messages to
//!   the broker, which delivers them again (a message whose handler had
//!   finished but whose ack was not sent runs twice; so may one whose
//!   dead letter or retry copy was published but not confirmed in time).
//! - Never an ack for an unfinished job: the ack is sent by the task that
//!   awaited the job's handle.
//! - Nothing is dropped: an unmapped broker priority runs in the unmapped
//!   lane and is counted; a refused or handed-back job is requeued.
//!
//! # Dead letters
//!
//! A dead letter is the original body and properties, published (with
//! confirm) to the configured dead-letter exchange with these headers
//! added, then the original is acked:
//!
//! | header | value |
//! |---|---|
//! | `x-pe-reason` | `failed` (retries spent), `panicked`, `rejected` ([`Failure::reject`], e.g. an undecodable body), `expired` (`start_within`) |
//! | `x-pe-error` | the handler's error, the panic message, or the expiry |
//! | `x-pe-attempts` | how many attempts ran |
//! | `x-pe-queue` | the queue it came from |
//!
//! # Retries
//!
//! A failed attempt with retries left waits out its backoff in the
//! broker: a copy goes to the retry queue `<queue>.retry-<ms>ms` (a
//! time-to-live of the backoff, this queue as its dead-letter target), its
//! header `x-pe-retries` counting the attempts made, and the original is
//! acked once the copy is confirmed. No prefetch slot is held during the
//! backoff, and a consumer that dies meanwhile loses nothing
//! ([`ConsumerConfig::retries`]).

#![deny(missing_docs, missing_debug_implementations, unreachable_pub)]

mod bridge;
mod config;
mod declare;
mod delivery;
mod drain;
mod error;
#[cfg(feature = "executors-toml")]
mod file;
mod liveness;
mod metrics;
mod outgoing;
pub mod pipeline;
mod publisher;
mod runtime;
mod session;
mod table;

pub use bridge::{Bridge, BridgeBuilder, BridgeMonitor};
pub use config::ConsumerConfig;
pub use delivery::{Failure, Incoming};
pub use error::BridgeError;
pub use liveness::{DEFAULT_CONNECTION_TIMEOUT, DEFAULT_HEARTBEAT};
pub use metrics::{ConsumerMetrics, Event};
pub use outgoing::Outgoing;
pub use pipeline::{DrainReport, StageProcess, StageProcessBuilder, Wire, stage_priorities};
pub use publisher::{AsyncPublisher, Publisher, PublisherBuilder};
pub use table::PriorityTable;

/// The headers a dead letter carries beside the original ones.
pub mod headers {
    /// Why: `failed`, `panicked`, `rejected` or `expired`.
    pub const REASON: &str = crate::session::REASON_HEADER;
    /// The handler's error, the panic message, or the expiry.
    pub const ERROR: &str = crate::session::ERROR_HEADER;
    /// How many attempts ran.
    pub const ATTEMPTS: &str = crate::session::ATTEMPTS_HEADER;
    /// The queue the message came from.
    pub const QUEUE: &str = crate::session::QUEUE_HEADER;
}
