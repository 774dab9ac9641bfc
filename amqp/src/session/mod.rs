//! One queue's consumer: connect, declare, consume into the lanes, settle
//! each delivery after its job, and reconnect after a loss.
//!
//! - `ctx`: what one queue's consumer is given, shared by its sessions;
//! - `types`: how a session ends, the loop's messages, a delivery in hand;
//! - `timeouts`: the time limits of broker operations;
//! - `state`: the loop's state, and deliveries on their way to the executor;
//! - `waiting`: deliveries waiting for room in a full lane;
//! - `settle`: how each delivery in hand ends (ack, retry, requeue or dead letter);
//! - `retry`: retries that wait in the broker, in retry queues;
//! - `connection`: one session: connect, consume, loop, close.

mod connection;
mod ctx;
mod retry;
mod settle;
mod state;
mod timeouts;
mod types;
mod waiting;

pub(crate) use ctx::{Ctx, DrainFn, EventFn, HandlerFn};
pub(crate) use settle::{ATTEMPTS_HEADER, ERROR_HEADER, QUEUE_HEADER, REASON_HEADER};

use crate::error::BridgeError;
use crate::metrics::{Counters, Event};
use connection::Session;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use timeouts::OPEN_TIMEOUT;
use tokio::sync::{oneshot, watch};
use types::End;

/// Consumes the queue until stopped: the first session's result goes to
/// `ready`; later losses are reported and retried with backoff.
pub(crate) async fn run(
    ctx: Arc<Ctx>,
    ready: oneshot::Sender<Result<(), BridgeError>>,
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
                // Before the word that it started: a started bridge reads
                // connected.
                ctx.counters.set_connected(true);
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
                let end = session.run(&ctx, &mut stop).await;
                ctx.counters.set_connected(false);
                match end {
                    End::Stopped => break,
                    End::ExecutorShutDown => {
                        ctx.event(Event::ExecutorShutDown {
                            queue: ctx.queue.to_string(),
                        });
                        if let Some(drain) = &ctx.drain {
                            drain(Err(format!(
                                "the executor of queue {:?} shut down",
                                &*ctx.queue
                            )));
                        }
                        break;
                    }
                    // Consuming again would hand every delivery back.
                    End::Refused(reason) => {
                        if let Some(drain) = &ctx.drain {
                            drain(Err(reason));
                        }
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
