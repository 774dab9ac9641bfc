//! One session of a queue's consumer: connect, declare, consume, run the
//! loop until stopped, drained or lost, and close.

use super::ctx::Ctx;
use super::state::State;
use super::timeouts::{OPERATION_TIMEOUT, guarded, within};
use super::types::{End, Msg};
use super::waiting::Waiting;
use crate::declare::declare;
use crate::error::{BridgeError, broker_error};
use crate::liveness::{self, parse_uri};
use futures_lite::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicNackOptions, BasicQosOptions,
    ConfirmSelectOptions,
};
use lapin::types::FieldTable;
use lapin::{Channel, Connection, ConnectionProperties};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

static CONSUMERS: AtomicU64 = AtomicU64::new(0);

pub(super) struct Session {
    connection: Connection,
    channel: Channel,
    /// The confirm channel for dead letters and retries, if either is
    /// configured.
    publishing: Option<Channel>,
    consumer: lapin::Consumer,
    tag: String,
    /// Cleared when the session ends: queued jobs it delivered are skipped.
    alive: Arc<AtomicBool>,
}

impl Session {
    pub(super) async fn open(ctx: &Ctx) -> Result<Session, BridgeError> {
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
        let publishing = if ctx.config.dead_letter_exchange.is_some() || ctx.config.max_retries > 0
        {
            let c = connection.create_channel().await.map_err(|e| {
                broker_error(
                    format!("queue {queue:?}: opening the channel for dead letters and retries"),
                    e,
                )
            })?;
            c.confirm_select(ConfirmSelectOptions::default())
                .await
                .map_err(|e| {
                    broker_error(
                        format!("queue {queue:?}: publisher confirms for dead letters and retries"),
                        e,
                    )
                })?;
            Some(c)
        } else {
            None
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
            publishing,
            consumer,
            tag,
            alive: Arc::new(AtomicBool::new(true)),
        })
    }

    pub(super) async fn run(mut self, ctx: &Arc<Ctx>, stop: &mut watch::Receiver<bool>) -> End {
        let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
        let mut state = State {
            ctx: ctx.clone(),
            tx,
            in_hand: HashMap::new(),
            waiting: Waiting::new(ctx.executor.clone()),
            alive: self.alive.clone(),
            publishing: self.publishing.clone(),
            one_copy: Arc::default(),
            retry_queues: HashSet::new(),
            executor_down: false,
            status: self.connection.status().clone(),
            marker: None,
            refused: None,
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
            // A drain marker, or a handler that no longer takes
            // deliveries: consume nothing more; finish what is in hand.
            if (state.executor_down || state.marker.is_some() || state.refused.is_some())
                && !stopping
            {
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
                (tag, room) = state.waiting.next(), if !state.waiting.is_empty() => {
                    state.on_room(tag, room).await
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
            // executor shut down, or the handler refusing, some were
            // requeued, not done: the marker goes back too.
            let drained = !state.executor_down && state.refused.is_none();
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
                drain(Ok(marker));
            }
        }
        let _ = within(
            OPERATION_TIMEOUT,
            "closing the channel",
            self.channel.close(200, "stopped".into()),
        )
        .await;
        if let Some(c) = &self.publishing {
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
        if let Some(reason) = state.refused {
            End::Refused(reason)
        } else if state.executor_down && !*stop.borrow() {
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
        // Dead letters and retries go out on it: closed (the broker closes
        // a channel that published to a missing exchange), every copy
        // would fail from then on; a new session opens a new one.
        if let Some(publishing) = &self.publishing
            && !publishing.status().connected()
        {
            return Err(format!(
                "the channel for dead letters and retries closed ({:?})",
                publishing.status()
            ));
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
