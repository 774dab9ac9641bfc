//! The async publisher: every operation a future on the caller's tokio
//! runtime.

use super::link::{Link, send, settle};
use crate::config::ConsumerConfig;
use crate::declare::{declare, passive};
use crate::error::{BridgeError, broker_error, redact};
use crate::outgoing::Outgoing;
use lapin::Channel;
use lapin::options::{QueueDeleteOptions, QueuePurgeOptions};
use lapin::uri::AMQPUri;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::sync::Mutex;

/// The time limit of one operation.
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// Publishes with publisher confirms from async code: the form of
/// [`Publisher`](crate::Publisher) for a tokio application. Every
/// operation is a future run on the caller's runtime (which needs its
/// time driver, as `#[tokio::main]` gives); no thread of its own, nothing
/// blocks.
///
/// Made with [`PublisherBuilder::connect_async`](crate::PublisherBuilder::connect_async).
/// Clones share one connection, so tasks can publish through it; their
/// publishes take turns, each waiting for its own confirm, so that the
/// broker's return of an unroutable message reaches the call that sent
/// it. For throughput, send many messages in one
/// [`publish_all`](AsyncPublisher::publish_all), or use a publisher per
/// task. The last clone dropped closes the connection in the background (on the
/// runtime it is dropped in, if any): dropping never blocks or panics.
/// [`close`](AsyncPublisher::close) closes it and waits.
///
/// A lost connection is opened again on the next call; heartbeat and
/// time limits are those of [`Publisher`](crate::Publisher).
///
/// # Examples
///
/// ```no_run
/// use priority_executor_amqp::{ConsumerConfig, Outgoing, Publisher};
///
/// # async fn run() -> Result<(), priority_executor_amqp::BridgeError> {
/// let publisher = Publisher::builder("amqp://guest:guest@127.0.0.1:5672/%2f")
///     .connect_async()
///     .await?;
/// publisher.declare(&ConsumerConfig::new("visa").max_priority(10)).await?;
/// publisher.publish(&Outgoing::to_queue("visa", "application 1").priority(9)).await?;
/// publisher.close().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct AsyncPublisher {
    inner: Arc<Inner>,
}

struct Inner {
    /// As given: errors name it (without its password).
    uri: String,
    /// As connected to: with the heartbeat and connection timeout.
    target: AMQPUri,
    link: Mutex<Option<Link>>,
    /// Held by a call from its first publish to its last confirm: the
    /// client hands the broker's return of an unroutable message to
    /// whichever confirm of the channel it completes next, so two calls
    /// with confirms in flight at once could swap it (one message
    /// reported unroutable, the unroutable one confirmed). One call at a
    /// time, a return can only reach the call that published it. Taken
    /// before a call's time limit starts: waiting in line is not the
    /// broker's silence.
    confirming: Mutex<()>,
}

/// Held by a call from its first publish to its last confirm: dropped
/// before that (the call's future dropped, or its time limit passed), it
/// leaves confirms, and maybe a return, pending on the channel, so the
/// next call opens a new one instead of inheriting them.
struct Confirming<'a> {
    _turn: tokio::sync::MutexGuard<'a, ()>,
    link: &'a Mutex<Option<Link>>,
    done: bool,
}

impl Drop for Confirming<'_> {
    fn drop(&mut self) {
        if !self.done {
            // The link lock is only ever held briefly, never across a
            // confirm; if another task holds it now, it is opening a link
            // anyway.
            if let Ok(mut link) = self.link.try_lock() {
                drop(link.take());
            }
        }
    }
}

impl AsyncPublisher {
    /// Connects (the work of [`PublisherBuilder::connect_async`](crate::PublisherBuilder::connect_async)).
    pub(super) async fn connect(uri: String, target: AMQPUri) -> Result<Self, BridgeError> {
        let publisher = AsyncPublisher {
            inner: Arc::new(Inner {
                uri,
                target,
                link: Mutex::new(None),
                confirming: Mutex::new(()),
            }),
        };
        publisher
            .run(|| "connecting".to_owned(), |_| async { Ok(()) })
            .await?;
        Ok(publisher)
    }

    /// Runs `f` with a connected confirm channel, opening one if needed;
    /// `what` names the operation in a time-out's error.
    async fn run<T, F, Fut>(&self, what: impl FnOnce() -> String, f: F) -> Result<T, BridgeError>
    where
        F: FnOnce(Channel) -> Fut,
        Fut: Future<Output = Result<T, BridgeError>>,
    {
        self.run_within(CALL_LIMIT, what, f).await
    }

    /// Runs `f` with a connected confirm channel for at most `limit`; past
    /// it the connection is dropped (and opened again by the next call),
    /// since a client whose I/O has stopped may never answer.
    async fn run_within<T, F, Fut>(
        &self,
        limit: Duration,
        what: impl FnOnce() -> String,
        f: F,
    ) -> Result<T, BridgeError>
    where
        F: FnOnce(Channel) -> Fut,
        Fut: Future<Output = Result<T, BridgeError>>,
    {
        let inner = &self.inner;
        let work = async {
            let channel = {
                let mut link = inner.link.lock().await;
                if !link.as_ref().is_some_and(Link::usable) {
                    *link = Some(Link::open(&inner.uri, inner.target.clone()).await?);
                }
                match link.as_ref() {
                    Some(l) => l.channel.clone(),
                    None => return Err(BridgeError::Runtime("no channel".to_owned())),
                }
            };
            f(channel).await
        };
        match tokio::time::timeout(limit, work).await {
            Ok(result) => result,
            Err(_) => {
                drop(inner.link.lock().await.take());
                Err(BridgeError::Broker {
                    operation: what(),
                    reason: format!("no answer from the broker within {limit:?}"),
                })
            }
        }
    }

    /// Declares the queue of `config` as a [`Bridge`](crate::Bridge) would
    /// (`x-max-priority`, the dead-letter exchange and queue), so messages
    /// can be published before any consumer starts.
    ///
    /// # Errors
    ///
    /// [`BridgeError::QueueMismatch`] if the queue exists with other
    /// arguments; a connection error.
    pub async fn declare(&self, config: &ConsumerConfig) -> Result<(), BridgeError> {
        self.run(
            || format!("declaring queue {:?}", config.queue),
            |channel| async move { declare(config, &channel).await },
        )
        .await
    }

    /// Publishes one message and waits for the broker's confirm.
    ///
    /// # Errors
    ///
    /// The broker nacked it, no queue took it (returned as unroutable), or
    /// the connection failed.
    pub async fn publish(&self, message: &Outgoing) -> Result<(), BridgeError> {
        let mut turn = self.confirming().await;
        let settled = self
            .run(
                || format!("publishing to {}", message.target()),
                |channel| async move {
                    let confirm = send(&channel, message).await?;
                    settle(confirm, message).await
                },
            )
            .await;
        turn.done = true;
        settled
    }

    /// Publishes every message, then waits for all the confirms (much
    /// faster than one [`publish`](AsyncPublisher::publish) at a time).
    /// Returns how many the broker confirmed.
    ///
    /// # Errors
    ///
    /// A message of the batch was nacked, came back unroutable or was not
    /// sent: the error names the first message whose confirm said so,
    /// which with several unroutable ones in flight may be another of
    /// them (the client pairs a returned message with the next confirm it
    /// completes). Every confirm of the batch is awaited first. Publish
    /// the batch again: delivery is at least once.
    pub async fn publish_all(
        &self,
        messages: impl IntoIterator<Item = Outgoing>,
    ) -> Result<usize, BridgeError> {
        let messages: Vec<Outgoing> = messages.into_iter().collect();
        let limit = CALL_LIMIT + Duration::from_millis(messages.len() as u64);
        let count = messages.len();
        let mut turn = self.confirming().await;
        let settled = self.run_within(
            limit,
            || format!("publishing {count} messages"),
            |channel| async move {
                // Every confirm of what was sent is awaited, an error or
                // not: a return left waiting would be handed to the next
                // call's confirm.
                let mut first_error = None;
                let mut confirms = Vec::with_capacity(messages.len());
                for message in &messages {
                    match send(&channel, message).await {
                        Ok(confirm) => confirms.push(confirm),
                        Err(err) => {
                            first_error = Some(err);
                            break;
                        }
                    }
                }
                for (confirm, message) in confirms.into_iter().zip(&messages) {
                    if let Err(err) = settle(confirm, message).await {
                        first_error.get_or_insert(err);
                    }
                }
                first_error.map_or(Ok(messages.len()), Err)
            },
        );
        let settled = settled.await;
        turn.done = true;
        settled
    }

    /// This call's turn to publish and wait for its confirms (see
    /// `Inner::confirming`).
    async fn confirming(&self) -> Confirming<'_> {
        Confirming {
            _turn: self.inner.confirming.lock().await,
            link: &self.inner.link,
            done: false,
        }
    }

    /// How many messages wait in `queue` (not counting those delivered and
    /// unacked).
    ///
    /// # Errors
    ///
    /// The queue does not exist, or the connection failed.
    pub async fn queue_len(&self, queue: &str) -> Result<u32, BridgeError> {
        self.inspect(queue, "reading its length", |q| q.message_count())
            .await
    }

    /// How many consumers `queue` has now (every process consuming it
    /// counts one per [`Bridge`](crate::Bridge) queue).
    ///
    /// # Errors
    ///
    /// The queue does not exist, or the connection failed.
    pub async fn consumer_count(&self, queue: &str) -> Result<u32, BridgeError> {
        self.inspect(queue, "reading its consumers", |q| q.consumer_count())
            .await
    }

    /// Declares `queue` passively (it must exist) and reads one figure of
    /// the answer; an error says what was being read (`what`).
    async fn inspect(
        &self,
        queue: &str,
        what: &'static str,
        read: fn(&lapin::Queue) -> u32,
    ) -> Result<u32, BridgeError> {
        let named = || format!("queue {queue:?}: {what}");
        self.run(named, |channel| async move {
            passive(&channel, queue)
                .await
                .map(|q| read(&q))
                .map_err(|e| broker_error(named(), e))
        })
        .await
    }

    /// Removes every waiting message of `queue`; returns how many.
    ///
    /// # Errors
    ///
    /// The queue does not exist, or the connection failed.
    pub async fn purge(&self, queue: &str) -> Result<u32, BridgeError> {
        let what = || format!("queue {queue:?}: purging");
        self.run(what, |channel| async move {
            channel
                .queue_purge(queue.into(), QueuePurgeOptions::default())
                .await
                .map_err(|e| broker_error(what(), e))
        })
        .await
    }

    /// Deletes `queue` (gone or not, it is gone after).
    ///
    /// # Errors
    ///
    /// The connection failed.
    pub async fn delete_queue(&self, queue: &str) -> Result<(), BridgeError> {
        let what = || format!("queue {queue:?}: deleting");
        self.run(what, |channel| async move {
            channel
                .queue_delete(queue.into(), QueueDeleteOptions::default())
                .await
                .map(|_| ())
                .map_err(|e| broker_error(what(), e))
        })
        .await
    }

    /// Closes the connection and waits for the broker's answer (at most
    /// 30 s). Other clones find it closed and open a new one if used.
    pub async fn close(self) {
        let link = self.inner.link.lock().await.take();
        if let Some(link) = link {
            let _ = tokio::time::timeout(CALL_LIMIT, link.close()).await;
        }
    }

    /// The URI, without its password.
    pub(super) fn uri(&self) -> String {
        redact(&self.inner.uri)
    }

    /// As connected to.
    pub(super) fn target(&self) -> &AMQPUri {
        &self.inner.target
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Never blocks: the close runs on the runtime this is dropped in,
        // if any; outside one the connection is let go as it is.
        if let Some(link) = self.link.get_mut().take()
            && let Ok(runtime) = Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = tokio::time::timeout(CALL_LIMIT, link.close()).await;
            });
        }
    }
}

impl fmt::Debug for AsyncPublisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncPublisher")
            .field("uri", &self.uri())
            .field("heartbeat_secs", &self.target().query.heartbeat)
            .field(
                "connection_timeout_ms",
                &self.target().query.connection_timeout,
            )
            .finish_non_exhaustive()
    }
}
