//! Retries wait in the broker: the backoff holds no prefetch slot, and a
//! consumer that stops during it loses nothing.

use crate::common::{executor, unique, uri};
use priority_executor_amqp::{Bridge, ConsumerConfig, Failure, Outgoing};
use std::sync::mpsc;
use std::time::Duration;

/// The backoff: long beside a delivery's round trip, short for a test.
const BACKOFF: Duration = Duration::from_secs(3);

#[test]
fn a_retry_waits_in_the_broker_and_survives_its_consumer() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("retry");
    let retry_queue = format!("{queue}.retry-{}ms", BACKOFF.as_millis());
    let config = ConsumerConfig::new(&queue)
        .prefetch(1)
        .retries(2, BACKOFF, 1.0);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all(["a", "b"].map(|body| Outgoing::to_queue(&queue, body)))
        .expect("publish");

    // First consumer: "a" fails once; "b" succeeds.
    let (tx, seen) = mpsc::channel();
    let first = Bridge::builder(uri(), executor(1))
        .consume(config.clone(), move |msg| {
            let body = msg.body_str()?.to_owned();
            tx.send((body.clone(), msg.attempt()))
                .map_err(Failure::retry)?;
            if body == "a" {
                return Err(Failure::retry("not yet"));
            }
            Ok(())
        })
        .start()
        .expect("the first consumer");
    let next = || {
        seen.recv_timeout(Duration::from_secs(30))
            .expect("a delivery")
    };
    assert_eq!(next(), ("a".to_owned(), 1));
    // With a prefetch of 1, "b" is delivered only once "a" left the
    // consumer's hands: "a" waits its backoff in the retry queue.
    assert_eq!(next(), ("b".to_owned(), 1));
    assert_eq!(
        publisher.queue_len(&retry_queue).expect("the retry queue"),
        1,
        "the retry waits in the broker"
    );
    // The consumer goes away during the backoff.
    let m = first.stop().remove(0);
    assert_eq!((m.acked, m.retried, m.max_in_hand), (1, 1, 1), "{m:?}");

    // A new consumer gets the retry once it is due, as attempt 2.
    let (tx, seen) = mpsc::channel();
    let second = Bridge::builder(uri(), executor(1))
        .consume(config, move |msg| {
            tx.send((msg.body_str()?.to_owned(), msg.attempt()))
                .map_err(Failure::retry)
        })
        .start()
        .expect("the second consumer");
    let got = seen
        .recv_timeout(BACKOFF + Duration::from_secs(30))
        .expect("the retry comes back");
    assert_eq!(
        got,
        ("a".to_owned(), 2),
        "the attempt count travels with it"
    );
    let m = second.stop().remove(0);
    assert_eq!((m.acked, m.retried), (1, 0), "{m:?}");
    assert!(seen.try_recv().is_err(), "nothing runs twice");
    assert_eq!(publisher.queue_len(&queue).expect("len"), 0);
    assert_eq!(publisher.queue_len(&retry_queue).expect("len"), 0);
    for q in [&queue, &retry_queue] {
        publisher.delete_queue(q).expect("delete");
    }
}

/// A delivery handed to its retry queue is settled: acked once the broker
/// has the copy, and counted so, while its next attempt is delivered (and
/// counted) anew. So the balance of the counters holds after retries
/// that waited in the broker, as it does without them.
#[test]
fn the_counters_balance_after_retries_in_the_broker() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("retry-balance");
    let backoff = Duration::from_millis(100);
    let retry_queue = format!("{queue}.retry-{}ms", backoff.as_millis());
    let config = ConsumerConfig::new(&queue)
        .prefetch(2)
        .retries(4, backoff, 1.0);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all(["a", "b", "c"].map(|body| Outgoing::to_queue(&queue, body)))
        .expect("publish");

    // "a" fails its first 4 attempts and then succeeds; "b" succeeds at
    // once; "c" fails every attempt and is dead-lettered after its 4
    // retries (rejected: no dead-letter exchange).
    let (tx, last) = mpsc::channel();
    let bridge = Bridge::builder(uri(), executor(1))
        .consume(config, move |msg| {
            let body = msg.body_str()?.to_owned();
            let attempt = msg.attempt();
            if body == "b" || attempt == 5 {
                tx.send(body.clone()).map_err(Failure::retry)?;
            }
            match body.as_str() {
                "a" if attempt <= 4 => Err(Failure::retry("not yet")),
                "c" => Err(Failure::retry("never")),
                _ => Ok(()),
            }
        })
        .start()
        .expect("the bridge");
    let mut seen: Vec<String> = (0..3)
        .map(|_| {
            last.recv_timeout(Duration::from_secs(30))
                .expect("each message's last attempt")
        })
        .collect();
    seen.sort();
    assert_eq!(seen, ["a", "b", "c"]);
    let m = bridge.stop().remove(0);
    assert_eq!(
        (
            m.delivered,
            m.acked,
            m.dead_lettered,
            m.retried,
            m.retry_queued
        ),
        (11, 2, 1, 8, 8),
        "{m:?}"
    );
    assert_eq!(
        m.delivered,
        m.in_hand as u64 + m.acked + m.dead_lettered + m.requeued + m.retry_queued + m.abandoned,
        "every delivery is counted once: {m:?}"
    );
    assert_eq!(publisher.queue_len(&queue).expect("len"), 0);
    assert_eq!(publisher.queue_len(&retry_queue).expect("len"), 0);
    for q in [&queue, &retry_queue] {
        publisher.delete_queue(q).expect("delete");
    }
}
