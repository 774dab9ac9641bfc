//! Declaring a queue as configured, with its dead-letter exchange and
//! queue: the same for the consumer and the publisher.

use crate::config::ConsumerConfig;
use crate::error::{BridgeError, broker_error, declare_error};
use lapin::options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions};
use lapin::types::FieldTable;
use lapin::{Channel, ExchangeKind};

/// Declares the dead-letter exchange and queue, and the queue, as
/// configured (or, with `no_declare`, checks that they exist).
pub(crate) async fn declare(config: &ConsumerConfig, channel: &Channel) -> Result<(), BridgeError> {
    let queue = config.queue.as_str();
    if !config.declare {
        passive(channel, queue)
            .await
            .map_err(|e| declare_error(queue, e))?;
        // Checked now, not at the first failed message: a dead letter
        // with nowhere to go would be requeued again and again.
        if let Some(dlx) = &config.dead_letter_exchange {
            dead_letter_exchange(channel, queue, dlx, false).await?;
        }
        if let Some(dlq) = &config.dead_letter_queue {
            passive(channel, dlq)
                .await
                .map_err(|e| declare_error(dlq, e))?;
        }
        return Ok(());
    }
    if let Some(dlx) = &config.dead_letter_exchange {
        dead_letter_exchange(channel, queue, dlx, true).await?;
        if let Some(dlq) = &config.dead_letter_queue {
            channel
                .queue_declare(
                    dlq.as_str().into(),
                    QueueDeclareOptions::durable(),
                    FieldTable::default(),
                )
                .await
                .map_err(|e| declare_error(dlq, e))?;
            channel
                .queue_bind(
                    dlq.as_str().into(),
                    dlx.as_str().into(),
                    "".into(),
                    QueueBindOptions::default(),
                    FieldTable::default(),
                )
                .await
                .map_err(|e| {
                    broker_error(format!("binding dead_letter_queue {dlq:?} to {dlx:?}"), e)
                })?;
        }
    }
    channel
        .queue_declare(
            queue.into(),
            QueueDeclareOptions::durable(),
            config.queue_arguments(),
        )
        .await
        .map_err(|e| declare_error(queue, e))?;
    Ok(())
}

/// Declares the dead-letter exchange `dlx` of `queue` (fanout, durable),
/// or with `create` false checks that it exists.
async fn dead_letter_exchange(
    channel: &Channel,
    queue: &str,
    dlx: &str,
    create: bool,
) -> Result<(), BridgeError> {
    let options = ExchangeDeclareOptions {
        durable: true,
        passive: !create,
        ..ExchangeDeclareOptions::default()
    };
    channel
        .exchange_declare(dlx.into(), ExchangeKind::Fanout, options, FieldTable::default())
        .await
        .map_err(|e| {
            let operation = if create {
                format!("queue {queue:?}: declaring its dead_letter_exchange {dlx:?} (fanout, durable)")
            } else {
                format!("queue {queue:?} (no_declare): checking that its dead_letter_exchange {dlx:?} exists")
            };
            broker_error(operation, e)
        })
}

/// Declares `queue` passively: the broker's answer (its message and
/// consumer counts) if it exists, its refusal if not.
pub(crate) async fn passive(channel: &Channel, queue: &str) -> Result<lapin::Queue, lapin::Error> {
    channel
        .queue_declare(
            queue.into(),
            QueueDeclareOptions::default().passive(),
            FieldTable::default(),
        )
        .await
}
