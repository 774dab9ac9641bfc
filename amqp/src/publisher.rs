//! Publishing with publisher confirms, each message with its broker
//! priority.

use crate::config::ConsumerConfig;
use crate::error::{BridgeError, broker_error, check_uri, connect_error, redact};
use crate::runtime::{new_runtime, wait_on};
use crate::session::declare;
use crate::table::PriorityTable;
use lapin::options::{
    BasicPublishOptions, ConfirmSelectOptions, QueueDeclareOptions, QueueDeleteOptions,
    QueuePurgeOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties, PublisherConfirm};
use priority_executor::Priority;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::sync::Mutex;

/// A message to publish.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
/// use priority_executor_amqp::{Outgoing, PriorityTable};
///
/// let table = PriorityTable::new().map(0..=4, Priority(1)).map(5..=9, Priority(10));
/// let msg = Outgoing::to_queue("visa", "application 42")
///     .lane(&table, Priority(10)) // broker priority 9, the highest that maps to lane 10
///     .message_id("42")
///     .header("PRIORITYID", "ABC");
/// assert_eq!(msg.broker_priority(), Some(9));
/// ```
#[derive(Clone, Debug)]
pub struct Outgoing {
    exchange: String,
    routing_key: String,
    body: Vec<u8>,
    priority: Option<u8>,
    message_id: Option<String>,
    headers: FieldTable,
}

impl Outgoing {
    /// To the queue `queue`, through the default exchange.
    pub fn to_queue(queue: impl Into<String>, body: impl Into<Vec<u8>>) -> Outgoing {
        Outgoing::to_exchange("", queue, body)
    }

    /// To `exchange` with `routing_key`.
    pub fn to_exchange(
        exchange: impl Into<String>,
        routing_key: impl Into<String>,
        body: impl Into<Vec<u8>>,
    ) -> Outgoing {
        Outgoing {
            exchange: exchange.into(),
            routing_key: routing_key.into(),
            body: body.into(),
            priority: None,
            message_id: None,
            headers: FieldTable::default(),
        }
    }

    /// The broker priority (0-255; the queue's `x-max-priority` caps it).
    pub fn priority(mut self, priority: u8) -> Outgoing {
        self.priority = Some(priority);
        self
    }

    /// The broker priority that lands the message in `lane` through
    /// `table` (the highest one mapped to it); unchanged if none is.
    pub fn lane(mut self, table: &PriorityTable, lane: Priority) -> Outgoing {
        if let Some(p) = table.broker_priority(lane) {
            self.priority = Some(p);
        }
        self
    }

    /// The broker priority that lands `value` in the lane of its own
    /// priority ([`Prioritized`](priority_executor::actor::Prioritized))
    /// through `table`; unchanged if it has none (the default) or the
    /// table maps no broker priority to it.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Priority;
    /// use priority_executor::actor::Prioritized;
    /// use priority_executor_amqp::{Outgoing, PriorityTable};
    ///
    /// struct Visa {
    ///     diplomatic: bool,
    /// }
    /// impl Prioritized for Visa {
    ///     fn priority(&self) -> Option<Priority> {
    ///         self.diplomatic.then_some(Priority(10))
    ///     }
    /// }
    /// let table = PriorityTable::new().map(0..=4, Priority(1)).map(5..=9, Priority(10));
    /// let urgent = Outgoing::to_queue("visa", "1").prioritized(&table, &Visa { diplomatic: true });
    /// assert_eq!(urgent.broker_priority(), Some(9));
    /// let plain = Outgoing::to_queue("visa", "2").prioritized(&table, &Visa { diplomatic: false });
    /// assert_eq!(plain.broker_priority(), None); // the queue's lowest, 0
    /// ```
    pub fn prioritized(
        self,
        table: &PriorityTable,
        value: &impl priority_executor::actor::Prioritized,
    ) -> Outgoing {
        match value.priority() {
            Some(lane) => self.lane(table, lane),
            None => self,
        }
    }

    /// A [`Message`](priority_executor::Message) of the ESB layer to
    /// `queue`: its body, its properties as headers, and the broker priority
    /// that lands it in the lane the `executor`'s rules of `executors` give
    /// it (`PRIORITYID=ABC` -> 10), through `table`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Executors, Message, Priority};
    /// use priority_executor_amqp::{Outgoing, PriorityTable};
    ///
    /// let executors = Executors::from_toml_str(r#"
    /// [executors.visa]
    /// rules = "visa"
    /// lanes = [{ priority = 10 }, { priority = 1 }]
    /// [rules.visa]
    /// when = [{ priority = 10, header = "PRIORITYID", equals = "ABC" }]
    /// "#)?;
    /// let table = PriorityTable::new().map(0..=4, Priority(1)).map(5..=9, Priority(10));
    /// let msg = Message::builder().property("PRIORITYID", "ABC").body("application 7").build();
    /// let out = Outgoing::from_message("visa", &msg, &executors, "visa", &table);
    /// assert_eq!(out.broker_priority(), Some(9));
    /// let plain = Outgoing::from_message("visa", &Message::new(), &executors, "visa", &table);
    /// assert_eq!(plain.broker_priority(), Some(4)); // the lowest lane, 1
    /// executors.shutdown();
    /// # Ok::<(), priority_executor::ConfigError>(())
    /// ```
    #[cfg(feature = "executors-toml")]
    pub fn from_message(
        queue: impl Into<String>,
        message: &priority_executor::Message,
        executors: &priority_executor::Executors,
        executor: &str,
        table: &PriorityTable,
    ) -> Outgoing {
        let mut out = Outgoing::to_queue(queue, message.body().to_vec());
        for (name, value) in message.properties() {
            out = out.header(name, value);
        }
        match executors.priority_for(executor, message) {
            Some(lane) => out.lane(table, lane),
            None => out,
        }
    }

    /// The broker priority set, if any.
    pub fn broker_priority(&self) -> Option<u8> {
        self.priority
    }

    /// The `message-id` property.
    pub fn message_id(mut self, id: impl Into<String>) -> Outgoing {
        self.message_id = Some(id.into());
        self
    }

    /// A header, sent as text.
    pub fn header(mut self, name: &str, value: impl fmt::Display) -> Outgoing {
        self.headers.insert(
            name.into(),
            AMQPValue::LongString(LongString::from(value.to_string().into_bytes())),
        );
        self
    }

    /// The headers set so far.
    #[cfg(test)]
    pub(crate) fn headers(&self) -> &FieldTable {
        &self.headers
    }

    fn properties(&self) -> BasicProperties {
        let mut p = BasicProperties::default().with_delivery_mode(2); // persistent
        if let Some(priority) = self.priority {
            p = p.with_priority(priority);
        }
        if let Some(id) = &self.message_id {
            p = p.with_message_id(id.as_str().into());
        }
        if !self.headers.inner().is_empty() {
            p = p.with_headers(self.headers.clone());
        }
        p
    }
}

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
/// A lost connection is opened again on the next call.
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
    uri: String,
    runtime: Option<Runtime>,
    link: Arc<Mutex<Option<Link>>>,
}

impl Publisher {
    /// Connects to the broker at `uri`.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Uri`], [`BridgeError::Connect`] or
    /// [`BridgeError::Login`], naming the URI (without its password).
    pub fn connect(uri: impl Into<String>) -> Result<Publisher, BridgeError> {
        let uri = uri.into();
        check_uri(&uri)?;
        let publisher = Publisher {
            runtime: Some(new_runtime("amqp-publisher")?),
            link: Arc::new(Mutex::new(None)),
            uri,
        };
        publisher.run(|link, _| async move {
            let _ = link;
            Ok(())
        })?;
        Ok(publisher)
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
        wait_on(runtime.handle(), async move {
            let work = async {
                let channel = {
                    let mut link = link.lock().await;
                    let usable = link
                        .as_ref()
                        .is_some_and(|l| l.channel.status().connected());
                    if !usable {
                        *link = Some(open(&uri).await?);
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
            .finish_non_exhaustive()
    }
}

async fn open(uri: &str) -> Result<Link, BridgeError> {
    let connection = Connection::connect(
        uri,
        ConnectionProperties::default().with_connection_name("priority-executor-publisher".into()),
    )
    .await
    .map_err(|e| connect_error(uri, e))?;
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

fn target(message: &Outgoing) -> String {
    if message.exchange.is_empty() {
        format!("queue {:?}", message.routing_key)
    } else {
        format!(
            "exchange {:?} (routing key {:?})",
            message.exchange, message.routing_key
        )
    }
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
        .map_err(|e| broker_error(format!("publishing to {}", target(message)), e))
}

async fn settle(confirm: PublisherConfirm, message: &Outgoing) -> Result<(), BridgeError> {
    let confirmation = confirm
        .await
        .map_err(|e| broker_error(format!("publishing to {}", target(message)), e))?;
    if confirmation.is_nack() {
        return Err(BridgeError::Broker {
            operation: format!("publishing to {}", target(message)),
            reason: "the broker nacked the message".to_owned(),
        });
    }
    if let Some(returned) = confirmation.take_message() {
        return Err(BridgeError::Broker {
            operation: format!("publishing to {}", target(message)),
            reason: format!(
                "no queue took it ({} {}): declare the queue first",
                returned.reply_code, returned.reply_text
            ),
        });
    }
    Ok(())
}
