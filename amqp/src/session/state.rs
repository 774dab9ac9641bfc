//! The session loop's state, and the way of a delivery into it: taken in
//! hand, mapped to its lane and handed to the executor (or held, waiting
//! for room, while the lane is full).

use super::ctx::Ctx;
use super::timeouts::guarded;
use super::types::{Attempt, InHand, Msg};
use super::waiting::Waiting;
use crate::delivery::{Incoming, Received, retried_attempts};
use crate::drain::{Marker, sent_us};
use crate::metrics::Counters;
use lapin::message::Delivery;
use lapin::options::{BasicAckOptions, BasicNackOptions};
use lapin::{Acker, Channel, ConnectionStatus};
use priority_executor::{EnqueueError, JobOptions, Permit};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, UNIX_EPOCH};
use tokio::sync::mpsc;

/// The session loop's state.
pub(super) struct State {
    pub(super) ctx: Arc<Ctx>,
    pub(super) tx: mpsc::UnboundedSender<Msg>,
    pub(super) in_hand: HashMap<u64, InHand>,
    /// Deliveries whose lane was full, waiting for room.
    pub(super) waiting: Waiting,
    pub(super) alive: Arc<AtomicBool>,
    /// The confirm channel for dead letters and retries.
    pub(super) publishing: Option<Channel>,
    /// Held by a copy from its publish to its confirm: one copy at a time
    /// on `publishing`, so a copy that comes back unroutable is known for
    /// the one it is (the client hands a returned message to whichever
    /// confirm it resolves next).
    pub(super) one_copy: Arc<tokio::sync::Mutex<()>>,
    /// The retry queues declared in this session.
    pub(super) retry_queues: HashSet<String>,
    pub(super) executor_down: bool,
    pub(super) status: ConnectionStatus,
    /// The drain marker taken (held unacked until the rest is settled).
    pub(super) marker: Option<(Marker, Acker)>,
    /// Why the handler no longer takes deliveries, once it said so: the
    /// session consumes nothing more and hands back what it is given.
    pub(super) refused: Option<String>,
}

pub(super) type Step = Result<(), String>;

impl State {
    pub(super) async fn on_delivery(&mut self, delivery: Delivery) -> Step {
        let marker = match self.ctx.drain {
            Some(_) => Marker::from_headers(delivery.properties.headers().as_ref()),
            None => None,
        };
        // A marker taken, or the handler refusing: nothing more is taken.
        let closed = self.marker.is_some() || self.refused.is_some();
        match (marker, closed) {
            // Sent before this consumer started: a drain it was not
            // counted in, left by an earlier run. Dropped; the drain goes
            // on.
            (Some(_), false) if self.sent_before_start(&delivery) => {
                let ack = delivery.acker.ack(BasicAckOptions::default());
                return match guarded(&self.status, "dropping a stale drain marker", ack).await {
                    Ok(true) => Ok(()),
                    Ok(false) => Err("the delivery's channel is gone".to_owned()),
                    Err(e) => Err(e),
                };
            }
            (Some(marker), false) => {
                self.marker = Some((marker, delivery.acker));
                return Ok(());
            }
            // Another consumer's marker: handed back for it.
            (Some(_), true) => return self.hand_back(delivery.acker).await,
            // Published after the drain, or not taken by the handler: for
            // whoever consumes next.
            (None, true) => {
                Counters::add(&self.ctx.counters.delivered);
                self.hand_back(delivery.acker).await?;
                Counters::add(&self.ctx.counters.requeued);
                return Ok(());
            }
            (None, false) => {}
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
        // A retry that waited in the broker: the attempts made before.
        let attempts = retried_attempts(delivery.properties.headers().as_ref());
        self.in_hand.insert(
            tag,
            InHand {
                received,
                properties: delivery.properties,
                acker: delivery.acker,
                attempts,
                since: now,
                arrived: now,
            },
        );
        ctx.counters.set_in_hand(self.in_hand.len());
        self.submit(tag).await
    }

    /// Was this drain marker sent before the consumer started (on the
    /// clocks of the sender's and this host)? A marker without its send
    /// time is taken.
    fn sent_before_start(&self, delivery: &Delivery) -> bool {
        let started = self
            .ctx
            .started
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or(0);
        sent_us(delivery.properties.headers().as_ref())
            .is_some_and(|sent| u128::from(sent) < started)
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
    /// behind the deliveries already waiting for its lane, if any (each
    /// lane keeps its order), and a full lane leaves it in hand, waiting
    /// for room.
    pub(super) async fn submit(&mut self, tag: u64) -> Step {
        let Some(lane) = self.in_hand.get(&tag).map(|i| i.received.lane) else {
            return Ok(());
        };
        if self.waiting.holds(lane) {
            self.waiting.push(lane, tag);
            return Ok(());
        }
        self.hand_over(tag, None).await
    }

    /// A lane has room for the first delivery waiting for it: `room` is
    /// the slot held for it, or the executor's refusal (shut down).
    pub(super) async fn on_room(
        &mut self,
        tag: u64,
        room: Result<Permit, EnqueueError<()>>,
    ) -> Step {
        match room {
            Ok(permit) => self.hand_over(tag, Some(permit)).await,
            Err(_) => {
                self.executor_down = true;
                self.requeue(tag).await
            }
        }
    }

    /// Queues the delivery's next attempt in its lane: in the slot of
    /// `permit`, or, without one, if the lane has room now.
    async fn hand_over(&mut self, tag: u64, permit: Option<Permit>) -> Step {
        let Some(item) = self.in_hand.get_mut(&tag) else {
            return Ok(());
        };
        item.attempts += 1;
        let attempt = item.attempts;
        let lane = item.received.lane;
        let received = item.received.clone();
        let since = item.since;
        // A limit past the clock's reach is no limit.
        let deadline = self
            .ctx
            .config
            .start_within
            .and_then(|d| item.arrived.checked_add(d));
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
        let queued = match permit {
            Some(permit) => permit.enqueue(job),
            None => self.ctx.executor.enqueue_with(
                lane,
                job,
                JobOptions::new().wait_at_most(Duration::ZERO),
            ),
        };
        match queued {
            Ok(handle) => {
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let result = handle.await;
                    let _ = tx.send(Msg::Finished { tag, result });
                });
                Ok(())
            }
            Err(EnqueueError::Full { .. }) => {
                Counters::add(&self.ctx.counters.lane_full);
                if let Some(item) = self.in_hand.get_mut(&tag) {
                    item.attempts -= 1;
                }
                self.waiting.push(lane, tag);
                Ok(())
            }
            Err(e) => {
                // Shut down (or, impossibly after the checks at start, an
                // unknown lane): the broker gets the message back.
                if matches!(e, EnqueueError::ShutDown { .. }) {
                    self.executor_down = true;
                }
                self.requeue(tag).await
            }
        }
    }
}
