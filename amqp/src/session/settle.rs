//! How each delivery in hand ends: acked after its job, retried after a
//! failure, requeued when it never ran, or dead-lettered with the reason.

use super::state::{State, Step};
use super::timeouts::{OPERATION_TIMEOUT, guarded, within};
use super::types::{Attempt, Msg, Settle};
use crate::delivery::RETRIES_HEADER;
use crate::metrics::{Counters, Event};
use lapin::options::{BasicAckOptions, BasicNackOptions, BasicPublishOptions};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{BasicProperties, Channel};
use priority_executor::JobError;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Headers a dead letter carries, beside the original ones.
pub(crate) const REASON_HEADER: &str = "x-pe-reason";
pub(crate) const ERROR_HEADER: &str = "x-pe-error";
pub(crate) const ATTEMPTS_HEADER: &str = "x-pe-attempts";
pub(crate) const QUEUE_HEADER: &str = "x-pe-queue";

/// How long a delivery whose dead letter failed stays in hand before it is
/// requeued.
const DEAD_LETTER_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

impl State {
    pub(super) async fn on_msg(&mut self, msg: Msg) -> Step {
        match msg {
            Msg::Finished { tag, result } => self.on_finished(tag, result).await,
            Msg::RetryDue { tag } => {
                if let Some(item) = self.in_hand.get_mut(&tag) {
                    item.since = Instant::now();
                }
                self.submit(tag).await
            }
            Msg::Retried { tag, delay, result } => match result {
                Ok(()) => self.settle(tag, Settle::Retried).await,
                Err(error) => {
                    self.ctx.event(Event::RetryInHand {
                        queue: self.ctx.queue.to_string(),
                        error: format!("sending a retry to its queue: {error}"),
                    });
                    self.retry_in_hand(tag, delay);
                    Ok(())
                }
            },
            Msg::DeadLettered { tag, result } => match result {
                Ok(()) => self.settle(tag, Settle::DeadLettered).await,
                Err(error) => {
                    self.ctx.event(Event::DeadLetterFailed {
                        queue: self.ctx.queue.to_string(),
                        error,
                    });
                    // Requeued after a pause, not at once: a dead letter
                    // that fails again (an exchange routing to no queue)
                    // would otherwise run its handler in a tight loop.
                    self.send_after(DEAD_LETTER_PAUSE, Msg::RequeueDue { tag });
                    Ok(())
                }
            },
            Msg::RequeueDue { tag } => self.requeue(tag).await,
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
            // The handler no longer takes deliveries: this one never ran.
            // Back to the queue, and the session consumes no more.
            Ok(Attempt::Failed(failure)) if failure.give_back => {
                self.refused.get_or_insert(failure.message);
                self.requeue(tag).await
            }
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
                    self.retry(tag, delay).await
                }
            }
            Ok(Attempt::Expired(waited)) => {
                Counters::add(&counters.expired);
                let limit = self.ctx.config.start_within.unwrap_or_default();
                let message = format!(
                    "not started within start_within = {limit:?} (waited {waited:?} in lane {})",
                    item.received.lane
                );
                // The attempt counted when it was queued never ran.
                if let Some(item) = self.in_hand.get_mut(&tag) {
                    item.attempts = item.attempts.saturating_sub(1);
                }
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
        let (Some(channel), Some(exchange)) = (
            self.publishing.clone(),
            self.ctx.config.dead_letter_exchange.clone(),
        ) else {
            return self.settle(tag, Settle::Reject).await;
        };
        let Some(item) = self.in_hand.get(&tag) else {
            return Ok(());
        };
        // Replayed into a queue, a dead letter starts its attempts afresh.
        let mut headers = FieldTable::from(
            item.properties
                .headers()
                .as_ref()
                .map(|h| h.inner().clone())
                .unwrap_or_default()
                .into_iter()
                .filter(|(k, _)| k.as_str() != RETRIES_HEADER)
                .collect::<std::collections::BTreeMap<_, _>>(),
        );
        headers.insert(REASON_HEADER.into(), long_string(reason));
        headers.insert(ERROR_HEADER.into(), long_string(&cut(error, ERROR_MAX)));
        headers.insert(
            ATTEMPTS_HEADER.into(),
            AMQPValue::LongLongInt(i64::from(item.attempts)),
        );
        headers.insert(QUEUE_HEADER.into(), long_string(&self.ctx.queue));
        let properties = item.properties.clone().with_headers(headers);
        let routing_key: ShortString = item.received.routing_key.as_str().into();
        self.publish_copy(
            channel,
            exchange.as_str().into(),
            routing_key,
            tag,
            properties,
            |tag, result| Msg::DeadLettered { tag, result },
        );
        Ok(())
    }

    /// Publishes a copy of the delivery's body with `properties` (with
    /// confirm, in a task of its own); the loop hears of the outcome
    /// through `done`.
    pub(super) fn publish_copy(
        &self,
        channel: Channel,
        exchange: ShortString,
        routing_key: ShortString,
        tag: u64,
        properties: BasicProperties,
        done: impl FnOnce(u64, Result<(), String>) -> Msg + Send + 'static,
    ) {
        let Some(item) = self.in_hand.get(&tag) else {
            return;
        };
        let received = item.received.clone();
        let tx = self.tx.clone();
        let one_copy = self.one_copy.clone();
        tokio::spawn(async move {
            let _one = one_copy.lock().await;
            let target = format!(
                "exchange {:?}, routing key {:?}",
                exchange.as_str(),
                routing_key.as_str()
            );
            let publish = async {
                let confirm = channel
                    .basic_publish(
                        exchange,
                        routing_key,
                        // A copy no queue takes comes back, rather than
                        // being confirmed and lost with the original.
                        BasicPublishOptions {
                            mandatory: true,
                            ..BasicPublishOptions::default()
                        },
                        &received.body,
                        properties,
                    )
                    .await?;
                confirm.await
            };
            let operation = format!("publishing a copy to {target}");
            let result = match within(OPERATION_TIMEOUT, &operation, publish).await {
                Ok(c) if c.is_nack() => Err(format!("the broker nacked the copy sent to {target}")),
                Ok(c) => match c.take_message() {
                    None => Ok(()),
                    Some(returned) => Err(format!(
                        "no queue took the copy sent to {target} ({} {}): bind a queue to it",
                        returned.reply_code, returned.reply_text
                    )),
                },
                Err(e) => Err(e),
            };
            let _ = tx.send(done(tag, result));
        });
    }

    pub(super) async fn requeue(&mut self, tag: u64) -> Step {
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
                Settle::Ack | Settle::DeadLettered | Settle::Retried => {
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
            // Also counted as retried, when the retry was decided.
            Settle::Retried => &counters.retry_queued,
        });
        Ok(())
    }
}

fn long_string(s: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(s.as_bytes().to_vec()))
}

/// The most bytes of an error a dead letter carries in [`ERROR_HEADER`]:
/// a header past the broker's frame size would close the connection, and
/// the delivery would fail the same way on every reconnect.
pub(crate) const ERROR_MAX: usize = 4096;

/// `text` cut to at most `max` bytes, at a character boundary, with `…`
/// saying it was.
fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mark = "…";
    let mut end = max.saturating_sub(mark.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{mark}", &text[..end]).into()
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn a_long_error_is_cut_at_a_character_boundary() {
        assert_eq!(cut("short", 10), "short");
        let long = "é".repeat(3000); // 6000 bytes
        let kept = cut(&long, 4096);
        assert!(kept.len() <= 4096, "{}", kept.len());
        assert!(kept.ends_with('…'));
        assert!(kept.trim_end_matches('…').chars().all(|c| c == 'é'));
    }
}
