//! Retries that wait in the broker. A failed delivery with attempts left
//! is copied, with the count of attempts made in a header, to a retry
//! queue whose time-to-live is the backoff and whose dead-letter target is
//! the work queue; once the broker confirms the copy, the original is
//! acked. While it waits no prefetch slot is held, and a consumer that
//! dies meanwhile loses nothing: the broker brings it back on time.
//!
//! One retry queue per backoff (`<queue>.retry-<ms>ms`): messages in a
//! queue of one time-to-live expire in the order they came, which a
//! per-message time-to-live would not ensure.

use super::state::{State, Step};
use super::timeouts::{OPERATION_TIMEOUT, within};
use super::types::Msg;
use crate::delivery::RETRIES_HEADER;
use lapin::options::QueueDeclareOptions;
use lapin::types::{AMQPValue, FieldTable, ShortString};
use std::time::Duration;

/// The retry queue of `queue` for a backoff of `delay`.
pub(crate) fn retry_queue(queue: &str, delay: Duration) -> String {
    format!("{queue}.retry-{}ms", delay.as_millis())
}

impl State {
    /// Sends the delivery's next attempt through the retry queue of
    /// `delay`; the original is acked once the broker has the copy
    /// ([`Msg::Retried`]). Without a publishing channel, or in a pipeline
    /// stage's inbox, it waits in hand instead.
    pub(super) async fn retry(&mut self, tag: u64, delay: Duration) -> Step {
        // A pipeline stage's inbox retries in hand: a copy waiting in the
        // broker is out of hand, and the drain marker behind it would pass
        // before its retry ran.
        let channel = match &self.publishing {
            Some(channel) if self.ctx.drain.is_none() => channel.clone(),
            _ => {
                self.retry_in_hand(tag, delay);
                return Ok(());
            }
        };
        let Some(item) = self.in_hand.get(&tag) else {
            return Ok(());
        };
        let name = retry_queue(&self.ctx.queue, delay);
        if !self.retry_queues.contains(&name) {
            let mut args = FieldTable::default();
            let ttl = i64::try_from(delay.as_millis()).unwrap_or(i64::MAX);
            args.insert("x-message-ttl".into(), AMQPValue::LongLongInt(ttl));
            args.insert(
                "x-dead-letter-exchange".into(),
                AMQPValue::LongString("".into()),
            );
            args.insert(
                "x-dead-letter-routing-key".into(),
                AMQPValue::LongString(self.ctx.queue.as_bytes().to_vec().into()),
            );
            let declared = within(
                OPERATION_TIMEOUT,
                "declaring a retry queue",
                channel.queue_declare(name.as_str().into(), QueueDeclareOptions::durable(), args),
            )
            .await;
            if let Err(error) = declared {
                // The retry still happens, waiting in hand.
                self.ctx.event(crate::metrics::Event::RetryInHand {
                    queue: self.ctx.queue.to_string(),
                    error: format!("retry queue {name:?}: {error}"),
                });
                self.retry_in_hand(tag, delay);
                return Ok(());
            }
            self.retry_queues.insert(name.clone());
        }
        let mut headers = item.properties.headers().clone().unwrap_or_default();
        headers.insert(
            RETRIES_HEADER.into(),
            AMQPValue::LongLongInt(i64::from(item.attempts)),
        );
        let properties = item.properties.clone().with_headers(headers);
        self.publish_copy(
            channel,
            ShortString::from(""),
            name.as_str().into(),
            tag,
            properties,
            move |tag, result| Msg::Retried { tag, delay, result },
        );
        Ok(())
    }

    /// The retry waits in the process, the delivery in hand (unacked).
    pub(super) fn retry_in_hand(&self, tag: u64, delay: Duration) {
        self.send_after(delay, Msg::RetryDue { tag });
    }

    /// Hands `msg` to the session loop after `delay`.
    pub(super) fn send_after(&self, delay: Duration, msg: Msg) {
        let tx = self.tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = tx.send(msg);
        });
    }
}
