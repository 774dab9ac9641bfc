//! The blocking publisher: the async one driven on a runtime thread of its
//! own, for code on plain threads.

use super::PublisherBuilder;
use super::asynchronous::AsyncPublisher;
use crate::config::ConsumerConfig;
use crate::error::BridgeError;
use crate::outgoing::Outgoing;
use crate::runtime::wait_on;
use std::fmt;
use std::future::Future;
use std::time::Duration;
use tokio::runtime::{Handle, Runtime};

/// Publishes with publisher confirms: [`publish`](Publisher::publish)
/// returns once the broker has taken the message (persisted, for a durable
/// queue), and reports a message no queue took as an error. Blocking, on a
/// runtime thread of its own; share it between threads (`&self`), for
/// instance with the jobs of a [`Bridge`](crate::Bridge), so a job
/// publishes its result downstream before its input is acked. In a tokio
/// application, use its async form, [`AsyncPublisher`] (from
/// [`PublisherBuilder::connect_async`]).
///
/// A lost connection is opened again on the next call. A broker that
/// stops answering without closing the connection (a partition, a stalled
/// proxy) is found out by the heartbeat, as by a
/// [`Bridge`](crate::Bridge): the call then fails with the lost
/// connection, and opening a new one is bounded by the connection timeout
/// ([`PublisherBuilder`]; by default
/// [`DEFAULT_HEARTBEAT`](crate::DEFAULT_HEARTBEAT) and
/// [`DEFAULT_CONNECTION_TIMEOUT`](crate::DEFAULT_CONNECTION_TIMEOUT),
/// unless the URI sets them). Every call has a time limit of 30 s besides.
///
/// # Examples
///
/// ```no_run
/// use priority_executor_amqp::{ConsumerConfig, Outgoing, Publisher};
///
/// let publisher = Publisher::connect("amqp://guest:guest@127.0.0.1:5672/%2f")?;
/// publisher.declare(&ConsumerConfig::new("visa").max_priority(10))?;
/// publisher.publish(&Outgoing::to_queue("visa", "application 1").priority(9))?;
/// let sent = publisher.publish_all(
///     (0..1000).map(|i| Outgoing::to_queue("visa", format!("application {i}")).priority(0)),
/// )?;
/// assert_eq!(sent, 1000);
/// # Ok::<(), priority_executor_amqp::BridgeError>(())
/// ```
pub struct Publisher {
    /// Its runtime, `None` once closed.
    runtime: Option<Runtime>,
    publisher: AsyncPublisher,
}

impl Publisher {
    pub(super) fn new(runtime: Runtime, publisher: AsyncPublisher) -> Self {
        Publisher {
            runtime: Some(runtime),
            publisher,
        }
    }

    /// Connects to the broker at `uri` with the default heartbeat and
    /// connection timeout (unless the URI sets them); see
    /// [`builder`](Publisher::builder) to set them.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Uri`], [`BridgeError::Connect`] or
    /// [`BridgeError::Login`], naming the URI (without its password).
    pub fn connect(uri: impl Into<String>) -> Result<Publisher, BridgeError> {
        Publisher::builder(uri).connect()
    }

    /// Starts configuring a publisher to the broker at `uri`
    /// (`amqp://user:password@host:port/vhost`, the vhost `/` written
    /// `%2f`), blocking or async.
    ///
    /// # Examples
    ///
    /// See [`PublisherBuilder`].
    pub fn builder(uri: impl Into<String>) -> PublisherBuilder {
        PublisherBuilder::new(uri.into())
    }

    /// Runs one operation of the async publisher on the runtime and waits
    /// for it.
    fn run<T, F, Fut>(&self, f: F) -> Result<T, BridgeError>
    where
        F: FnOnce(AsyncPublisher) -> Fut,
        Fut: Future<Output = Result<T, BridgeError>> + Send + 'static,
        T: Send + 'static,
    {
        let Some(runtime) = &self.runtime else {
            return Err(BridgeError::Runtime("the publisher is closed".to_owned()));
        };
        wait_on(runtime.handle(), f(self.publisher.clone()))?
    }

    /// Declares the queue of `config` as a [`Bridge`](crate::Bridge) would
    /// (`x-max-priority`, the dead-letter exchange and queue), so messages
    /// can be published before any consumer starts.
    ///
    /// # Errors
    ///
    /// [`BridgeError::QueueMismatch`] if the queue exists with other
    /// arguments; a connection error.
    pub fn declare(&self, config: &ConsumerConfig) -> Result<(), BridgeError> {
        let config = config.clone();
        self.run(|p| async move { p.declare(&config).await })
    }

    /// Publishes one message and waits for the broker's confirm.
    ///
    /// # Errors
    ///
    /// The broker nacked it, no queue took it (returned as unroutable), or
    /// the connection failed.
    pub fn publish(&self, message: &Outgoing) -> Result<(), BridgeError> {
        let message = message.clone();
        self.run(|p| async move { p.publish(&message).await })
    }

    /// Publishes every message, then waits for all the confirms (much
    /// faster than one [`publish`](Publisher::publish) at a time). Returns
    /// how many the broker confirmed.
    ///
    /// # Errors
    ///
    /// A message of the batch was nacked, came back unroutable or was not
    /// sent: the error names the first message whose confirm said so,
    /// which with several unroutable ones in flight may be another of
    /// them (the client pairs a returned message with the next confirm it
    /// completes). Every confirm of the batch is awaited first. Publish
    /// the batch again: delivery is at least once.
    pub fn publish_all(
        &self,
        messages: impl IntoIterator<Item = Outgoing>,
    ) -> Result<usize, BridgeError> {
        let messages: Vec<Outgoing> = messages.into_iter().collect();
        self.run(|p| async move { p.publish_all(messages).await })
    }

    /// How many messages wait in `queue` (not counting those delivered and
    /// unacked).
    ///
    /// # Errors
    ///
    /// The queue does not exist, or the connection failed.
    pub fn queue_len(&self, queue: &str) -> Result<u32, BridgeError> {
        let queue = queue.to_owned();
        self.run(|p| async move { p.queue_len(&queue).await })
    }

    /// How many consumers `queue` has now (every process consuming it
    /// counts one per [`Bridge`](crate::Bridge) queue).
    ///
    /// # Errors
    ///
    /// The queue does not exist, or the connection failed.
    pub fn consumer_count(&self, queue: &str) -> Result<u32, BridgeError> {
        let queue = queue.to_owned();
        self.run(|p| async move { p.consumer_count(&queue).await })
    }

    /// Removes every waiting message of `queue`; returns how many.
    ///
    /// # Errors
    ///
    /// The queue does not exist, or the connection failed.
    pub fn purge(&self, queue: &str) -> Result<u32, BridgeError> {
        let queue = queue.to_owned();
        self.run(|p| async move { p.purge(&queue).await })
    }

    /// Deletes `queue` (gone or not, it is gone after).
    ///
    /// # Errors
    ///
    /// The connection failed.
    pub fn delete_queue(&self, queue: &str) -> Result<(), BridgeError> {
        let queue = queue.to_owned();
        self.run(|p| async move { p.delete_queue(&queue).await })
    }

    /// Closes the connection and waits for the broker's answer.
    pub fn close(mut self) {
        self.close_inner();
    }

    /// Closes the connection and stops the runtime. Inside async code
    /// (this dropped in a task) it must not block: a thread of its own
    /// does it, and this returns at once.
    fn close_inner(&mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        let publisher = self.publisher.clone();
        let close = move || {
            let _ = wait_on(runtime.handle(), publisher.close());
            runtime.shutdown_timeout(Duration::from_secs(2));
        };
        if Handle::try_current().is_ok() {
            let spawned = std::thread::Builder::new()
                .name("amqp-publisher-close".to_owned())
                .spawn(close);
            // No thread to be had: the connection is let go unclosed (the
            // broker notices), and the runtime with it, in the background.
            drop(spawned);
        } else {
            close();
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.close_inner();
    }
}

impl fmt::Debug for Publisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher")
            .field("uri", &self.publisher.uri())
            .field("heartbeat_secs", &self.publisher.target().query.heartbeat)
            .field(
                "connection_timeout_ms",
                &self.publisher.target().query.connection_timeout,
            )
            .finish_non_exhaustive()
    }
}
