//! Publishing with publisher confirms, each message with its broker
//! priority.

use crate::config::ConsumerConfig;
use crate::declare::declare;
use crate::error::{BridgeError, broker_error, redact};
use crate::liveness::{self, Liveness};
use crate::outgoing::Outgoing;
use crate::runtime::{new_runtime, wait_on};
use lapin::options::{
    BasicPublishOptions, ConfirmSelectOptions, QueueDeclareOptions, QueueDeleteOptions,
    QueuePurgeOptions,
};
use lapin::types::{FieldTable, ShortString};
use lapin::uri::AMQPUri;
use lapin::{Channel, Connection, ConnectionProperties, PublisherConfirm};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::sync::Mutex;

struct Link {
    connection: Connection,
    channel: Channel,
}

/// Publishes with publisher confirms: [`publish`](Publisher::publish)
/// returns once the broker has taken the message (persisted, for a durable
/// queue), and reports a message no queue took as an error. Blocking, on a
/// runtime thread of its own; share it between threads (`&self`), for
/// instance with the jobs of a [`Bridge`](crate::Bridge), so a job
/// publishes its result downstream before its input is acked.
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
    /// As given: errors name it (without its password).
    uri: String,
    /// As connected to: with the heartbeat and connection timeout.
    target: AMQPUri,
    runtime: Option<Runtime>,
    link: Arc<Mutex<Option<Link>>>,
}

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
pub struct PublisherBuilder {
    uri: String,
    liveness: Liveness,
}

impl PublisherBuilder {
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

    /// Connects to the broker.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Uri`], [`BridgeError::Connect`] (no broker, or none
    /// answering within the connection timeout) or [`BridgeError::Login`],
    /// naming the URI (without its password).
    pub fn connect(self) -> Result<Publisher, BridgeError> {
        let target = self.liveness.uri(&self.uri)?;
        let publisher = Publisher {
            runtime: Some(new_runtime("amqp-publisher")?),
            link: Arc::new(Mutex::new(None)),
            uri: self.uri,
            target,
        };
        publisher.run(|link, _| async move {
            let _ = link;
            Ok(())
        })?;
        Ok(publisher)
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

impl Publisher {
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
    /// `%2f`).
    ///
    /// # Examples
    ///
    /// See [`PublisherBuilder`].
    pub fn builder(uri: impl Into<String>) -> PublisherBuilder {
        PublisherBuilder {
            uri: uri.into(),
            liveness: Liveness::default(),
        }
    }

    /// Runs `f` with a connected confirm channel, opening one if needed,
    /// for at most 30 s.
    fn run<T, F, Fut>(&self, f: F) -> Result<T, BridgeError>
    where
        F: FnOnce(Channel, String) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<T, BridgeError>> + Send,
        T: Send + 'static,
    {
        self.run_within(Duration::from_secs(30), f)
    }

    /// Runs `f` with a connected confirm channel for at most `limit`; past
    /// it the connection is dropped (and opened again by the next call),
    /// since a client whose I/O has stopped may never answer.
    fn run_within<T, F, Fut>(&self, limit: Duration, f: F) -> Result<T, BridgeError>
    where
        F: FnOnce(Channel, String) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<T, BridgeError>> + Send,
        T: Send + 'static,
    {
        let Some(runtime) = &self.runtime else {
            return Err(BridgeError::Runtime("the publisher is closed".to_owned()));
        };
        let link = self.link.clone();
        let uri = self.uri.clone();
        let target = self.target.clone();
        wait_on(runtime.handle(), async move {
            let work = async {
                let channel = {
                    let mut link = link.lock().await;
                    let usable = link
                        .as_ref()
                        .is_some_and(|l| l.channel.status().connected());
                    if !usable {
                        *link = Some(open(&uri, target).await?);
                    }
                    match link.as_ref() {
                        Some(l) => l.channel.clone(),
                        None => return Err(BridgeError::Runtime("no channel".to_owned())),
                    }
                };
                f(channel, uri).await
            };
            match tokio::time::timeout(limit, work).await {
                Ok(result) => result,
                Err(_) => {
                    if let Some(l) = link.lock().await.take() {
                        drop(l);
                    }
                    Err(BridgeError::Broker {
                        operation: "publisher".to_owned(),
                        reason: format!("no answer from the broker within {limit:?}"),
                    })
                }
            }
        })?
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
        self.run(move |channel, _| async move { declare(&config, &channel).await })
    }

    /// Publishes one message and waits for the broker's confirm.
    ///
    /// # Errors
    ///
    /// The broker nacked it, no queue took it (returned as unroutable), or
    /// the connection failed.
    pub fn publish(&self, message: &Outgoing) -> Result<(), BridgeError> {
        let message = message.clone();
        self.run(move |channel, _| async move {
            let confirm = send(&channel, &message).await?;
            settle(confirm, &message).await
        })
    }

    /// Publishes every message, then waits for all the confirms (much
    /// faster than one [`publish`](Publisher::publish) at a time). Returns
    /// how many the broker confirmed.
    ///
    /// # Errors
    ///
    /// The first message that was nacked, unroutable or not sent; the ones
    /// before it were confirmed, the ones after it may or may not have been
    /// (publish again: delivery is at least once).
    pub fn publish_all(
        &self,
        messages: impl IntoIterator<Item = Outgoing>,
    ) -> Result<usize, BridgeError> {
        let messages: Vec<Outgoing> = messages.into_iter().collect();
        let limit = Duration::from_secs(30) + Duration::from_millis(messages.len() as u64);
        self.run_within(limit, move |channel, _| async move {
            let mut confirms = Vec::with_capacity(messages.len());
            for message in &messages {
                confirms.push(send(&channel, message).await?);
            }
            for (confirm, message) in confirms.into_iter().zip(&messages) {
                settle(confirm, message).await?;
            }
            Ok(messages.len())
        })
    }

    /// How many messages wait in `queue` (not counting those delivered and
    /// unacked).
    ///
    /// # Errors
    ///
    /// The queue does not exist, or the connection failed.
    pub fn queue_len(&self, queue: &str) -> Result<u32, BridgeError> {
        self.inspect(queue, "reading its length", |q| q.message_count())
    }

    /// How many consumers `queue` has now (every process consuming it
    /// counts one per [`Bridge`](crate::Bridge) queue).
    ///
    /// # Errors
    ///
    /// The queue does not exist, or the connection failed.
    pub fn consumer_count(&self, queue: &str) -> Result<u32, BridgeError> {
        self.inspect(queue, "reading its consumers", |q| q.consumer_count())
    }

    /// Declares `queue` passively (it must exist) and reads one figure of
    /// the answer; an error says what was being read (`what`).
    fn inspect(
        &self,
        queue: &str,
        what: &'static str,
        read: fn(&lapin::Queue) -> u32,
    ) -> Result<u32, BridgeError> {
        let queue = queue.to_owned();
        self.run(move |channel, _| async move {
            channel
                .queue_declare(
                    queue.as_str().into(),
                    QueueDeclareOptions::default().passive(),
                    FieldTable::default(),
                )
                .await
                .map(|q| read(&q))
                .map_err(|e| broker_error(format!("queue {queue:?}: {what}"), e))
        })
    }

    /// Removes every waiting message of `queue`; returns how many.
    ///
    /// # Errors
    ///
    /// The queue does not exist, or the connection failed.
    pub fn purge(&self, queue: &str) -> Result<u32, BridgeError> {
        let queue = queue.to_owned();
        self.run(move |channel, _| async move {
            channel
                .queue_purge(queue.as_str().into(), QueuePurgeOptions::default())
                .await
                .map_err(|e| broker_error(format!("queue {queue:?}: purging"), e))
        })
    }

    /// Deletes `queue` (gone or not, it is gone after).
    ///
    /// # Errors
    ///
    /// The connection failed.
    pub fn delete_queue(&self, queue: &str) -> Result<(), BridgeError> {
        let queue = queue.to_owned();
        self.run(move |channel, _| async move {
            channel
                .queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
                .await
                .map(|_| ())
                .map_err(|e| broker_error(format!("queue {queue:?}: deleting"), e))
        })
    }

    /// Closes the connection.
    pub fn close(mut self) {
        self.close_inner();
    }

    fn close_inner(&mut self) {
        if self.runtime.is_none() {
            return;
        }
        let link = self.link.clone();
        let _ = self.run(move |_, _| async move {
            if let Some(l) = link.lock().await.take() {
                let _ = l.channel.close(200, "closed".into()).await;
                let _ = l.connection.close(200, "closed".into()).await;
            }
            Ok(())
        });
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(2));
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
            .field("uri", &redact(&self.uri))
            .field("heartbeat_secs", &self.target.query.heartbeat)
            .field(
                "connection_timeout_ms",
                &self.target.query.connection_timeout,
            )
            .finish_non_exhaustive()
    }
}

/// Opens a connection to `target` (`uri` with its heartbeat and
/// connection timeout) and a confirm channel on it.
async fn open(uri: &str, target: AMQPUri) -> Result<Link, BridgeError> {
    let properties =
        ConnectionProperties::default().with_connection_name("priority-executor-publisher".into());
    let connection = liveness::connect(uri, target, properties).await?;
    let channel = connection
        .create_channel()
        .await
        .map_err(|e| broker_error("publisher: opening a channel", e))?;
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await
        .map_err(|e| broker_error("publisher: turning publisher confirms on", e))?;
    Ok(Link {
        connection,
        channel,
    })
}

async fn send(channel: &Channel, message: &Outgoing) -> Result<PublisherConfirm, BridgeError> {
    channel
        .basic_publish(
            ShortString::from(message.exchange.as_str()),
            ShortString::from(message.routing_key.as_str()),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            &message.body,
            message.properties(),
        )
        .await
        .map_err(|e| broker_error(format!("publishing to {}", message.target()), e))
}

async fn settle(confirm: PublisherConfirm, message: &Outgoing) -> Result<(), BridgeError> {
    let confirmation = confirm
        .await
        .map_err(|e| broker_error(format!("publishing to {}", message.target()), e))?;
    if confirmation.is_nack() {
        return Err(BridgeError::Broker {
            operation: format!("publishing to {}", message.target()),
            reason: "the broker nacked the message".to_owned(),
        });
    }
    if let Some(returned) = confirmation.take_message() {
        return Err(BridgeError::Broker {
            operation: format!("publishing to {}", message.target()),
            reason: format!(
                "no queue took it ({} {}): declare the queue first",
                returned.reply_code, returned.reply_text
            ),
        });
    }
    Ok(())
}
