//! One queue's consumer: connect, declare, consume into the lanes, settle
//! each delivery after its job, and reconnect after a loss.

use crate::bridge::{DrainFn, EventFn, HandlerFn};
use crate::config::ConsumerConfig;
use crate::declare::declare;
use crate::delivery::{Failure, Incoming, Received};
use crate::drain::Marker;
use crate::error::{BridgeError, broker_error};
use crate::liveness::{self, parse_uri};
use crate::metrics::{Counters, Event};
use futures_lite::StreamExt;
use lapin::message::Delivery;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicNackOptions,
    BasicPublishOptions, BasicQosOptions, ConfirmSelectOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{Acker, BasicProperties, Channel, Connection, ConnectionProperties, ConnectionStatus};
use priority_executor::{ExecutorHandle, JobError, Priority};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// Headers a dead letter carries, beside the original ones.
pub(crate) const REASON_HEADER: &str = "x-pe-reason";
pub(crate) const ERROR_HEADER: &str = "x-pe-error";
pub(crate) const ATTEMPTS_HEADER: &str = "x-pe-attempts";
pub(crate) const QUEUE_HEADER: &str = "x-pe-queue";

/// The longest wait for the broker to answer one operation; past it the
/// connection counts as lost (a client whose I/O has stopped may never
/// resolve it).
const OPERATION_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait to connect, declare and start consuming.
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);

/// `fut`, or an error naming `what` once `limit` has passed.
async fn within<T, E: ToString>(
    limit: Duration,
    what: &str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    match tokio::time::timeout(limit, fut).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "{what}: no answer from the broker within {limit:?}"
        )),
    }
}

/// `fut` under [`within`], given up as soon as the client reports the
/// connection gone (checked every 100 ms).
async fn guarded<T, E: ToString>(
    status: &ConnectionStatus,
    what: &str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    let lost = async {
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if !status.connected() {
                return format!("{what}: the connection is lost");
            }
        }
    };
    tokio::select! {
        result = within(OPERATION_TIMEOUT, what, fut) => result,
        error = lost => Err(error),
    }
}

/// Everything one queue's consumer needs, shared by its sessions.
pub(crate) struct Ctx {
    pub(crate) uri: String,
    pub(crate) queue: Arc<str>,
    pub(crate) unmapped: Priority,
    pub(crate) config: ConsumerConfig,
    pub(crate) executor: ExecutorHandle,
    pub(crate) handler: HandlerFn,
    pub(crate) counters: Arc<Counters>,
    pub(crate) events: Option<EventFn>,
    pub(crate) backoff: (Duration, Duration),
    pub(crate) name: String,
    /// Set for a stage's inbox: drain markers are recognised, and the
    /// first one ends the consumer once everything before it is settled.
    pub(crate) drain: Option<DrainFn>,
}

impl Ctx {
    /// Tells the callback; a panicking callback is ignored, so it cannot
    /// take the consumer down.
    fn event(&self, event: Event) {
        if let Some(f) = &self.events {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&event)));
        }
    }
}

/// Consumes the queue until stopped: the first session's result goes to
/// `ready`; later losses are reported and retried with backoff.
pub(crate) async fn run(
    ctx: Arc<Ctx>,
    ready: SyncSender<Result<(), BridgeError>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut ready = Some(ready);
    let mut backoff = ctx.backoff.0;
    loop {
        let opened = tokio::select! {
            opened = tokio::time::timeout(OPEN_TIMEOUT, Session::open(&ctx)) => {
                opened.unwrap_or_else(|_| Err(BridgeError::Broker {
                    operation: format!("queue {:?}: connecting and starting to consume", &*ctx.queue),
                    reason: format!("no answer from the broker within {OPEN_TIMEOUT:?}"),
                }))
            }
            _ = stop.changed(), if ready.is_none() => break,
        };
        match opened {
            Err(error) => {
                if let Some(ready) = ready.take() {
                    let _ = ready.send(Err(error));
                    return;
                }
                ctx.event(Event::Disconnected {
                    queue: ctx.queue.to_string(),
                    error: error.to_string(),
                    in_hand: 0,
                    retry_in: backoff,
                });
            }
            Ok(session) => {
                match ready.take() {
                    Some(ready) => {
                        let _ = ready.send(Ok(()));
                    }
                    None => Counters::add(&ctx.counters.reconnects),
                }
                ctx.event(Event::Connected {
                    queue: ctx.queue.to_string(),
                });
                backoff = ctx.backoff.0;
                match session.run(&ctx, &mut stop).await {
                    End::Stopped => break,
                    End::ExecutorShutDown => {
                        ctx.event(Event::ExecutorShutDown {
                            queue: ctx.queue.to_string(),
                        });
                        break;
                    }
                    End::Lost { error, in_hand } => {
                        ctx.counters.set_in_hand(0);
                        ctx.counters
                            .abandoned
                            .fetch_add(in_hand as u64, Ordering::Relaxed);
                        ctx.event(Event::Disconnected {
                            queue: ctx.queue.to_string(),
                            error,
                            in_hand,
                            retry_in: backoff,
                        });
                    }
                }
            }
        }
        if *stop.borrow() {
            break;
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stop.changed() => break,
        }
        backoff = (backoff * 2).min(ctx.backoff.1);
    }
    ctx.event(Event::Stopped {
        queue: ctx.queue.to_string(),
    });
}

/// How a session ended.
enum End {
    Stopped,
    ExecutorShutDown,
    Lost { error: String, in_hand: usize },
}

/// What one attempt of a job came to, as seen by its closure.
enum Attempt {
    Done,
    Failed(Failure),
    Expired(Duration),
    /// The session that delivered it is gone: not run (the broker delivers
    /// the message again).
    Stale,
}

/// Messages to the session loop.
enum Msg {
    Finished {
        tag: u64,
        result: Result<Attempt, JobError>,
    },
    RetryDue {
        tag: u64,
    },
    DeadLettered {
        tag: u64,
        result: Result<(), String>,
    },
}

/// A delivery in hand: not yet acked, nacked or dead-lettered.
struct InHand {
    received: Arc<Received>,
    properties: BasicProperties,
    acker: Acker,
    attempts: u32,
    /// When it arrived, or when its retry fell due.
    since: Instant,
    arrived: Instant,
}

static CONSUMERS: AtomicU64 = AtomicU64::new(0);

struct Session {
    connection: Connection,
    channel: Channel,
    dead_letters: Option<Channel>,
    consumer: lapin::Consumer,
    tag: String,
    /// Cleared when the session ends: queued jobs it delivered are skipped.
    alive: Arc<AtomicBool>,
}

impl Session {
    async fn open(ctx: &Ctx) -> Result<Session, BridgeError> {
        let queue = &*ctx.queue;
        let properties =
            ConnectionProperties::default().with_connection_name(ctx.name.as_str().into());
        let uri = parse_uri(&ctx.uri)?;
        let connection = liveness::connect(&ctx.uri, uri, properties).await?;
        let channel = connection
            .create_channel()
            .await
            .map_err(|e| broker_error(format!("queue {queue:?}: opening a channel"), e))?;
        declare(&ctx.config, &channel).await?;
        channel
            .basic_qos(ctx.config.prefetch, BasicQosOptions::default())
            .await
            .map_err(|e| {
                broker_error(
                    format!(
                        "queue {queue:?}: setting prefetch = {}",
                        ctx.config.prefetch
                    ),
                    e,
                )
            })?;
        let dead_letters = match &ctx.config.dead_letter_exchange {
            None => None,
            Some(dlx) => {
                let c = connection.create_channel().await.map_err(|e| {
                    broker_error(
                        format!("queue {queue:?}: opening the channel for {dlx:?}"),
                        e,
                    )
                })?;
                c.confirm_select(ConfirmSelectOptions::default())
                    .await
                    .map_err(|e| {
                        broker_error(
                            format!("queue {queue:?}: publisher confirms for {dlx:?}"),
                            e,
                        )
                    })?;
                Some(c)
            }
        };
        let tag = format!(
            "{}-{}-{}-{}",
            ctx.name,
            queue,
            std::process::id(),
            CONSUMERS.fetch_add(1, Ordering::Relaxed)
        );
        let consumer = channel
            .basic_consume(
                queue.into(),
                tag.as_str().into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(|e| broker_error(format!("queue {queue:?}: starting to consume"), e))?;
        Ok(Session {
            connection,
            channel,
            dead_letters,
            consumer,
            tag,
            alive: Arc::new(AtomicBool::new(true)),
        })
    }

    async fn run(mut self, ctx: &Arc<Ctx>, stop: &mut watch::Receiver<bool>) -> End {
        let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
        let mut state = State {
            ctx: ctx.clone(),
            tx,
            in_hand: HashMap::new(),
            blocked: VecDeque::new(),
            alive: self.alive.clone(),
            dead_letters: self.dead_letters.clone(),
            executor_down: false,
            status: self.connection.status().clone(),
            marker: None,
        };
        let mut consuming = true;
        let mut stopping = *stop.borrow();
        let mut watchdog = tokio::time::interval(Duration::from_secs(1));
        if stopping {
            // Stopped while connecting: consume nothing.
            if let Err(e) = self.cancel().await {
                return self.lost(e, 0);
            }
        }
        loop {
            if (stopping || state.executor_down) && !consuming && state.in_hand.is_empty() {
                break;
            }
            // A drain marker: consume nothing more; finish what is in hand.
            if (state.executor_down || state.marker.is_some()) && !stopping {
                stopping = true;
                if let Err(e) = self.cancel().await {
                    let n = state.in_hand.len();
                    return self.lost(e, n);
                }
            }
            let result = tokio::select! {
                biased;
                msg = rx.recv() => match msg {
                    Some(msg) => state.on_msg(msg).await,
                    None => Ok(()),
                },
                _ = stop.changed(), if !stopping => {
                    stopping = true;
                    self.cancel().await
                }
                delivery = self.consumer.next(), if consuming => match delivery {
                    Some(Ok(delivery)) => state.on_delivery(delivery).await,
                    Some(Err(e)) => Err(e.to_string()),
                    None => {
                        consuming = false;
                        if stopping || state.executor_down {
                            Ok(())
                        } else {
                            Err(format!("the broker cancelled the consumer of queue {:?} (was it deleted?)", &*ctx.queue))
                        }
                    }
                },
                _ = tokio::time::sleep(Duration::from_millis(2)), if !state.blocked.is_empty() => {
                    state.submit_blocked().await
                }
                _ = watchdog.tick() => self.check(),
            };
            if let Err(error) = result {
                let n = state.in_hand.len();
                return self.lost(error, n);
            }
        }
        self.alive.store(false, Ordering::Release);
        if let Some((marker, acker)) = state.marker.take() {
            // Everything delivered before the marker is settled. With the
            // executor shut down some were requeued, not done: the marker
            // goes back too.
            let drained = !state.executor_down;
            let settle = async {
                if drained {
                    acker.ack(BasicAckOptions::default()).await
                } else {
                    acker
                        .nack(BasicNackOptions {
                            requeue: true,
                            ..BasicNackOptions::default()
                        })
                        .await
                }
            };
            if let Err(e) = guarded(&state.status, "acknowledging the drain marker", settle).await {
                return self.lost(e, 0);
            }
            if drained && let Some(drain) = &ctx.drain {
                drain(marker);
            }
        }
        let _ = within(
            OPERATION_TIMEOUT,
            "closing the channel",
            self.channel.close(200, "stopped".into()),
        )
        .await;
        if let Some(c) = &self.dead_letters {
            let _ = within(
                OPERATION_TIMEOUT,
                "closing the channel",
                c.close(200, "stopped".into()),
            )
            .await;
        }
        let _ = within(
            OPERATION_TIMEOUT,
            "closing the connection",
            self.connection.close(200, "stopped".into()),
        )
        .await;
        if state.executor_down && !*stop.borrow() {
            End::ExecutorShutDown
        } else {
            End::Stopped
        }
    }

    /// A connection or channel the client knows to be gone ends the
    /// session even if no operation has failed yet.
    fn check(&self) -> Result<(), String> {
        let connection = self.connection.status();
        if !connection.connected() {
            return Err(format!("connection lost ({connection:?})"));
        }
        if !self.channel.status().connected() {
            return Err(format!("channel closed ({:?})", self.channel.status()));
        }
        Ok(())
    }

    async fn cancel(&self) -> Result<(), String> {
        within(
            OPERATION_TIMEOUT,
            "cancelling the consumer",
            self.channel
                .basic_cancel(self.tag.as_str().into(), BasicCancelOptions::default()),
        )
        .await
    }

    /// Ends a session that lost its connection or channel: nothing in hand
    /// is acked (the broker delivers it again), queued jobs are skipped.
    fn lost(self, error: String, in_hand: usize) -> End {
        self.alive.store(false, Ordering::Release);
        // Closing may fail too; the broker requeues on its own either way.
        let connection = self.connection;
        tokio::spawn(async move {
            let _ = within(
                OPERATION_TIMEOUT,
                "closing",
                connection.close(320, "lost".into()),
            )
            .await;
        });
        End::Lost { error, in_hand }
    }
}

/// The session loop's state.
struct State {
    ctx: Arc<Ctx>,
    tx: mpsc::UnboundedSender<Msg>,
    in_hand: HashMap<u64, InHand>,
    /// Deliveries whose lane was full: tried again shortly.
    blocked: VecDeque<u64>,
    alive: Arc<AtomicBool>,
    dead_letters: Option<Channel>,
    executor_down: bool,
    status: ConnectionStatus,
    /// The drain marker taken (held unacked until the rest is settled).
    marker: Option<(Marker, Acker)>,
}

type Step = Result<(), String>;

impl State {
    async fn on_delivery(&mut self, delivery: Delivery) -> Step {
        if self.ctx.drain.is_some() {
            let marker = Marker::from_headers(delivery.properties.headers().as_ref());
            match (marker, self.marker.is_some()) {
                (Some(marker), false) => {
                    self.marker = Some((marker, delivery.acker));
                    return Ok(());
                }
                // Another consumer's marker: handed back for it.
                (Some(_), true) => return self.hand_back(delivery.acker).await,
                // Published after the drain: for whoever consumes next.
                (None, true) => {
                    Counters::add(&self.ctx.counters.delivered);
                    self.hand_back(delivery.acker).await?;
                    Counters::add(&self.ctx.counters.requeued);
                    return Ok(());
                }
                (None, false) => {}
            }
        }
        let ctx = &self.ctx;
        Counters::add(&ctx.counters.delivered);
        if delivery.redelivered {
            Counters::add(&ctx.counters.redelivered);
        }
        let broker_priority = *delivery.properties.priority();
        let (lane, mapped) = match ctx.config.table.lane_for(broker_priority) {
            Some(lane) => (lane, true),
            None => {
                Counters::add(&ctx.counters.unmapped);
                (ctx.unmapped, false)
            }
        };
        let received = Arc::new(Received {
            queue: ctx.queue.clone(),
            body: delivery.data,
            broker_priority,
            lane,
            mapped,
            message_id: delivery
                .properties
                .message_id()
                .as_ref()
                .map(|s| s.as_str().to_owned()),
            routing_key: delivery.routing_key.as_str().to_owned(),
            redelivered: delivery.redelivered,
            headers: delivery.properties.headers().clone(),
        });
        let tag = delivery.delivery_tag;
        let now = Instant::now();
        self.in_hand.insert(
            tag,
            InHand {
                received,
                properties: delivery.properties,
                acker: delivery.acker,
                attempts: 0,
                since: now,
                arrived: now,
            },
        );
        ctx.counters.set_in_hand(self.in_hand.len());
        // FIFO within a lane: behind deliveries already waiting for it.
        let waiting = self
            .blocked
            .iter()
            .any(|t| self.in_hand.get(t).is_some_and(|i| i.received.lane == lane));
        if waiting {
            self.blocked.push_back(tag);
            return Ok(());
        }
        self.submit(tag).await
    }

    /// Requeues a delivery that is not taken into hand.
    async fn hand_back(&self, acker: Acker) -> Step {
        let nack = acker.nack(BasicNackOptions {
            requeue: true,
            ..BasicNackOptions::default()
        });
        match guarded(&self.status, "handing a delivery back", nack).await {
            Ok(true) => Ok(()),
            Ok(false) => Err("the delivery's channel is gone".to_owned()),
            Err(e) => Err(e),
        }
    }

    /// Hands the delivery's next attempt to the executor, without blocking:
    /// a full lane leaves it in hand, to be tried again shortly.
    async fn submit(&mut self, tag: u64) -> Step {
        let Some(item) = self.in_hand.get_mut(&tag) else {
            return Ok(());
        };
        item.attempts += 1;
        let attempt = item.attempts;
        let lane = item.received.lane;
        let received = item.received.clone();
        let since = item.since;
        let deadline = self.ctx.config.start_within.map(|d| item.arrived + d);
        let alive = self.alive.clone();
        let handler = self.ctx.handler.clone();
        let job = move || {
            if !alive.load(Ordering::Acquire) {
                return Attempt::Stale;
            }
            let started = Instant::now();
            if let Some(deadline) = deadline
                && started > deadline
            {
                return Attempt::Expired(started.duration_since(since));
            }
            let incoming = Incoming {
                received,
                attempt,
                waited: started.duration_since(since),
            };
            match handler(&incoming) {
                Ok(()) => Attempt::Done,
                Err(failure) => Attempt::Failed(failure),
            }
        };
        match self.ctx.executor.try_enqueue(lane, job) {
            Ok(handle) => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let result = handle.await;
                    let _ = tx.send(Msg::Finished { tag, result });
                });
                Ok(())
            }
            Err(e) if e.is_full() => {
                Counters::add(&self.ctx.counters.lane_full);
                if let Some(item) = self.in_hand.get_mut(&tag) {
                    item.attempts -= 1;
                }
                self.blocked.push_back(tag);
                Ok(())
            }
            Err(e) => {
                // Shut down (or, impossibly after the checks at start, an
                // unknown lane): the broker gets the message back.
                if e.is_shut_down() {
                    self.executor_down = true;
                }
                self.requeue(tag).await
            }
        }
    }

    /// Tries the deliveries waiting for room again, in order within each
    /// lane; a lane still full keeps the rest of its deliveries waiting,
    /// other lanes go ahead.
    async fn submit_blocked(&mut self) -> Step {
        let mut still = VecDeque::new();
        let mut full: Vec<Priority> = Vec::new();
        while let Some(tag) = self.blocked.pop_front() {
            let Some(lane) = self.in_hand.get(&tag).map(|i| i.received.lane) else {
                continue;
            };
            if full.contains(&lane) {
                still.push_back(tag);
                continue;
            }
            let before = self.blocked.len();
            self.submit(tag).await?;
            if self.blocked.len() > before {
                // Full again: submit put it back at the end.
                if let Some(tag) = self.blocked.pop_back() {
                    still.push_back(tag);
                }
                full.push(lane);
            }
        }
        self.blocked = still;
        Ok(())
    }

    async fn on_msg(&mut self, msg: Msg) -> Step {
        match msg {
            Msg::Finished { tag, result } => self.on_finished(tag, result).await,
            Msg::RetryDue { tag } => {
                if let Some(item) = self.in_hand.get_mut(&tag) {
                    item.since = Instant::now();
                }
                self.submit(tag).await
            }
            Msg::DeadLettered { tag, result } => match result {
                Ok(()) => self.settle(tag, Settle::DeadLettered).await,
                Err(error) => {
                    self.ctx.event(Event::DeadLetterFailed {
                        queue: self.ctx.queue.to_string(),
                        error,
                    });
                    self.requeue(tag).await
                }
            },
        }
    }

    async fn on_finished(&mut self, tag: u64, result: Result<Attempt, JobError>) -> Step {
        let counters = self.ctx.counters.clone();
        let Some(item) = self.in_hand.get(&tag) else {
            return Ok(());
        };
        let attempts = item.attempts;
        match result {
            Ok(Attempt::Done) => self.settle(tag, Settle::Ack).await,
            Ok(Attempt::Stale) => Ok(()),
            Ok(Attempt::Failed(failure)) if failure.reject => {
                Counters::add(&counters.rejected);
                self.dead_letter(tag, "rejected", &failure.message).await
            }
            Ok(Attempt::Failed(failure)) => {
                if attempts > self.ctx.config.max_retries {
                    Counters::add(&counters.failed);
                    self.dead_letter(tag, "failed", &failure.message).await
                } else {
                    Counters::add(&counters.retried);
                    let delay = self.ctx.config.retry_delay(attempts);
                    let tx = self.tx.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(delay).await;
                        let _ = tx.send(Msg::RetryDue { tag });
                    });
                    Ok(())
                }
            }
            Ok(Attempt::Expired(waited)) => {
                Counters::add(&counters.expired);
                let limit = self.ctx.config.start_within.unwrap_or_default();
                let message = format!(
                    "not started within start_within = {limit:?} (waited {waited:?} in lane {})",
                    item.received.lane
                );
                self.dead_letter(tag, "expired", &message).await
            }
            Err(JobError::Panicked { message }) => {
                Counters::add(&counters.panicked);
                self.dead_letter(tag, "panicked", &message).await
            }
            // Handed back by shutdown_now and dropped, or pushed out of a
            // discard-oldest lane: it never ran.
            Err(_) => self.requeue(tag).await,
        }
    }

    /// Publishes the message, with the reason, to the dead-letter exchange
    /// (confirmed), and acks it once the broker has the copy. Without a
    /// dead-letter exchange: rejects it without requeue, so the queue's own
    /// dead-lettering (`x-death`) applies.
    async fn dead_letter(&mut self, tag: u64, reason: &str, error: &str) -> Step {
        let Some(channel) = self.dead_letters.clone() else {
            return self.settle(tag, Settle::Reject).await;
        };
        let Some(item) = self.in_hand.get_mut(&tag) else {
            return Ok(());
        };
        let mut headers = item.properties.headers().clone().unwrap_or_default();
        headers.insert(REASON_HEADER.into(), long_string(reason));
        headers.insert(ERROR_HEADER.into(), long_string(error));
        headers.insert(
            ATTEMPTS_HEADER.into(),
            AMQPValue::LongLongInt(i64::from(item.attempts)),
        );
        headers.insert(QUEUE_HEADER.into(), long_string(&self.ctx.queue));
        let properties = item.properties.clone().with_headers(headers);
        let exchange: ShortString = self
            .ctx
            .config
            .dead_letter_exchange
            .as_deref()
            .unwrap_or_default()
            .into();
        let routing_key: ShortString = item.received.routing_key.as_str().into();
        let received = item.received.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let publish = async {
                let confirm = channel
                    .basic_publish(
                        exchange,
                        routing_key,
                        BasicPublishOptions::default(),
                        &received.body,
                        properties,
                    )
                    .await?;
                confirm.await
            };
            let result = match within(OPERATION_TIMEOUT, "publishing a dead letter", publish).await
            {
                Ok(c) if c.is_ack() => Ok(()),
                Ok(_) => Err("the broker nacked the dead letter".to_owned()),
                Err(e) => Err(e),
            };
            let _ = tx.send(Msg::DeadLettered { tag, result });
        });
        Ok(())
    }

    async fn requeue(&mut self, tag: u64) -> Step {
        self.settle(tag, Settle::Requeue).await
    }

    async fn settle(&mut self, tag: u64, how: Settle) -> Step {
        let Some(item) = self.in_hand.remove(&tag) else {
            return Ok(());
        };
        let counters = &self.ctx.counters;
        counters.set_in_hand(self.in_hand.len());
        let settle = async {
            match how {
                Settle::Ack | Settle::DeadLettered => {
                    item.acker.ack(BasicAckOptions::default()).await
                }
                Settle::Reject => {
                    item.acker
                        .nack(BasicNackOptions {
                            requeue: false,
                            ..BasicNackOptions::default()
                        })
                        .await
                }
                Settle::Requeue => {
                    item.acker
                        .nack(BasicNackOptions {
                            requeue: true,
                            ..BasicNackOptions::default()
                        })
                        .await
                }
            }
        };
        let result = guarded(&self.status, "acknowledging a delivery", settle).await;
        // Ok(false): the delivery's channel was reset, which the broker
        // answers by delivering it again.
        let failed = match result {
            Ok(true) => None,
            Ok(false) => Some("the delivery's channel is gone".to_owned()),
            Err(e) => Some(e),
        };
        if let Some(error) = failed {
            // The broker redelivers it; count it as abandoned with the rest.
            counters.abandoned.fetch_add(1, Ordering::Relaxed);
            return Err(error);
        }
        Counters::add(match how {
            Settle::Ack => &counters.acked,
            Settle::DeadLettered | Settle::Reject => &counters.dead_lettered,
            Settle::Requeue => &counters.requeued,
        });
        Ok(())
    }
}

enum Settle {
    Ack,
    DeadLettered,
    Reject,
    Requeue,
}

fn long_string(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s.as_bytes().to_vec()))
}
