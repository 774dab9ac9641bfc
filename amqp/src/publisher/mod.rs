//! Publishing with publisher confirms, each message with its broker
//! priority: blocking ([`Publisher`]) or async ([`AsyncPublisher`]).
//!
//! - `link`: the connection, its confirm channel, one message's confirm;
//! - `asynchronous`: the publisher as futures on the caller's runtime;
//! - `blocking`: the same driven on a runtime thread of its own.

mod asynchronous;
mod blocking;
mod link;

pub use asynchronous::AsyncPublisher;
pub use blocking::Publisher;

use crate::error::{BridgeError, redact};
use crate::liveness::Liveness;
use crate::runtime::{new_runtime, wait_on};
use std::fmt;
use std::time::Duration;

/// The settings of a [`Publisher`] before it connects: how it finds out
/// that the broker stopped answering.
///
/// # Examples
///
/// ```no_run
/// use priority_executor_amqp::{Outgoing, Publisher};
/// use std::time::Duration;
///
/// let publisher = Publisher::builder("amqp://guest:guest@127.0.0.1:5672/%2f")
///     .heartbeat(Duration::from_secs(5)) // a silent broker is found out within 10 s
///     .connection_timeout(Duration::from_secs(3))
///     .connect()?;
/// publisher.publish(&Outgoing::to_queue("visa", "application 1"))?;
/// # Ok::<(), priority_executor_amqp::BridgeError>(())
/// ```
#[derive(Clone)]
#[must_use = "a builder does nothing until it connects"]
pub struct PublisherBuilder {
    uri: String,
    liveness: Liveness,
}

impl PublisherBuilder {
    fn new(uri: String) -> Self {
        PublisherBuilder {
            uri,
            liveness: Liveness::default(),
        }
    }

    /// The heartbeat asked of the broker (which may ask a shorter one):
    /// a connection that has heard nothing from the broker for two
    /// heartbeats is closed as lost, and the call waiting on it fails.
    /// Whole seconds, rounded up, from 1 s to `u16::MAX` s (about 18
    /// hours; a longer one is cut to it). Replaces the URI's `heartbeat`;
    /// default: the URI's, else [`DEFAULT_HEARTBEAT`](crate::DEFAULT_HEARTBEAT).
    pub fn heartbeat(mut self, every: Duration) -> Self {
        self.liveness = self.liveness.heartbeat(every);
        self
    }

    /// The time allowed to open a connection: the TCP connect and the
    /// AMQP handshake. Whole milliseconds, rounded up, at least 1 ms.
    /// Replaces the URI's `connection_timeout`; default: the URI's, else
    /// [`DEFAULT_CONNECTION_TIMEOUT`](crate::DEFAULT_CONNECTION_TIMEOUT).
    pub fn connection_timeout(mut self, limit: Duration) -> Self {
        self.liveness = self.liveness.connection_timeout(limit);
        self
    }

    /// Connects to the broker, for blocking use: the client runs on a
    /// runtime thread of the publisher's own.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Uri`], [`BridgeError::Connect`] (no broker, or none
    /// answering within the connection timeout) or [`BridgeError::Login`],
    /// naming the URI (without its password).
    pub fn connect(self) -> Result<Publisher, BridgeError> {
        let target = self.liveness.uri(&self.uri)?;
        let runtime = new_runtime("amqp-publisher")?;
        let connected = wait_on(runtime.handle(), AsyncPublisher::connect(self.uri, target))?;
        match connected {
            Ok(publisher) => Ok(Publisher::new(runtime, publisher)),
            Err(e) => {
                runtime.shutdown_background();
                Err(e)
            }
        }
    }

    /// Connects to the broker from async code, on the caller's tokio
    /// runtime: an [`AsyncPublisher`].
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub async fn connect_async(self) -> Result<AsyncPublisher, BridgeError> {
        let target = self.liveness.uri(&self.uri)?;
        AsyncPublisher::connect(self.uri, target).await
    }
}

impl fmt::Debug for PublisherBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublisherBuilder")
            .field("uri", &redact(&self.uri))
            .field("liveness", &self.liveness)
            .finish()
    }
}
