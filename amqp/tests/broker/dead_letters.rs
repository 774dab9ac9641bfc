//! Failing messages reach the dead-letter queue after their retries, with
//! the reason in headers; nothing else does.

use crate::common::{executor, unique, wait_until};
use priority_executor::{Capacity, Executor, Priority};
use priority_executor_amqp::{Bridge, ConsumerConfig, Failure, Outgoing, Publisher, headers};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Letters = Arc<Mutex<HashMap<String, HashMap<&'static str, String>>>>;

/// Consumes the dead-letter queue, keeping each letter's headers by id.
fn read_dead_letters(dlq: &str, expected: usize) -> HashMap<String, HashMap<&'static str, String>> {
    let letters: Letters = Arc::default();
    let l = letters.clone();
    let bridge = Bridge::builder(crate::common::uri(), executor(1))
        .consume(ConsumerConfig::new(dlq).no_declare(), move |msg| {
            let mut h = HashMap::new();
            for name in [
                headers::REASON,
                headers::ERROR,
                headers::ATTEMPTS,
                headers::QUEUE,
            ] {
                h.insert(name, msg.header(name).unwrap_or_default());
            }
            l.lock()
                .unwrap()
                .insert(msg.message_id().unwrap_or("").to_owned(), h);
            Ok(())
        })
        .start()
        .expect("consume the dead letters");
    wait_until(Duration::from_secs(30), "the dead letters", || {
        letters.lock().unwrap().len() >= expected
    });
    std::thread::sleep(Duration::from_millis(300)); // and no more
    bridge.stop();
    Arc::try_unwrap(letters).unwrap().into_inner().unwrap()
}

#[test]
fn failures_reach_the_dead_letter_queue_with_their_reason() {
    let publisher: Publisher = crate::broker_or_skip!();
    let queue = unique("dl");
    let dlq = format!("{queue}.dead");
    let config = ConsumerConfig::new(&queue)
        .max_priority(10)
        .prefetch(4)
        .dead_letter_exchange(format!("{queue}.dlx"))
        .dead_letter_queue(&dlq)
        .retries(2, Duration::from_millis(5), 2.0);
    publisher.declare(&config).expect("declare");
    let mut messages: Vec<Outgoing> = (0..20)
        .map(|i| Outgoing::to_queue(&queue, "fine").message_id(format!("ok{i}")))
        .collect();
    messages.push(Outgoing::to_queue(&queue, "fail").message_id("fail"));
    messages.push(Outgoing::to_queue(&queue, "flaky").message_id("flaky"));
    messages.push(Outgoing::to_queue(&queue, "panic").message_id("panic"));
    messages.push(Outgoing::to_queue(&queue, vec![0xff, 0xfe]).message_id("undecodable"));
    publisher.publish_all(messages).expect("publish");

    let flaky_attempts = Arc::new(AtomicU32::new(0));
    let fa = flaky_attempts.clone();
    let bridge = Bridge::builder(crate::common::uri(), executor(2))
        .consume(config, move |msg| match msg.body_str()? {
            "fail" => Err(Failure::retry(format!(
                "backend down (attempt {})",
                msg.attempt()
            ))),
            "flaky" => {
                fa.fetch_add(1, Ordering::SeqCst);
                if msg.attempt() < 3 {
                    Err(Failure::retry("not yet"))
                } else {
                    Ok(())
                }
            }
            "panic" => panic!("handler bug"),
            _ => Ok(()),
        })
        .start()
        .expect("start");
    wait_until(Duration::from_secs(60), "all settled", || {
        let m = &bridge.metrics()[0];
        m.acked + m.dead_lettered == 24
    });
    let metrics = bridge.stop();
    let m = &metrics[0];
    assert_eq!((m.acked, m.dead_lettered), (21, 3), "{m:?}");
    assert_eq!((m.failed, m.panicked, m.rejected), (1, 1, 1), "{m:?}");
    assert_eq!(m.retried, 2 + 2, "fail retried twice, flaky twice: {m:?}");
    assert_eq!(flaky_attempts.load(Ordering::SeqCst), 3);
    assert_eq!(publisher.queue_len(&queue).expect("len"), 0);

    let letters = read_dead_letters(&dlq, 3);
    assert_eq!(letters.len(), 3, "only the three failures: {letters:?}");
    let fail = &letters["fail"];
    assert_eq!(fail[headers::REASON], "failed");
    assert_eq!(fail[headers::ATTEMPTS], "3");
    assert_eq!(fail[headers::ERROR], "backend down (attempt 3)");
    assert_eq!(fail[headers::QUEUE], queue);
    let panic = &letters["panic"];
    assert_eq!(panic[headers::REASON], "panicked");
    assert_eq!(panic[headers::ATTEMPTS], "1", "a panic is not retried");
    assert!(panic[headers::ERROR].contains("handler bug"), "{panic:?}");
    let bad = &letters["undecodable"];
    assert_eq!(bad[headers::REASON], "rejected");
    assert_eq!(bad[headers::ATTEMPTS], "1");
    assert!(
        bad[headers::ERROR].contains(&format!("queue {queue:?}"))
            && bad[headers::ERROR].contains("not UTF-8"),
        "the error names the queue and what is wrong: {bad:?}"
    );
    for name in [&queue, &dlq] {
        publisher.delete_queue(name).expect("delete");
    }
}

/// A job not started within `start_within` is dead-lettered as expired.
#[test]
fn a_job_not_started_in_time_is_dead_lettered_as_expired() {
    let publisher: Publisher = crate::broker_or_skip!();
    let queue = unique("expiry");
    let dlq = format!("{queue}.dead");
    let config = ConsumerConfig::new(&queue)
        .prefetch(2)
        .dead_letter_exchange(format!("{queue}.dlx"))
        .dead_letter_queue(&dlq)
        .start_within(Duration::from_millis(100));
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all([
            Outgoing::to_queue(&queue, "slow").message_id("slow"),
            Outgoing::to_queue(&queue, "late").message_id("late"),
        ])
        .expect("publish");
    // One thread: "late" waits in the lane while "slow" runs 400 ms.
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(1), Capacity::Bounded(8))
        .build()
        .expect("executor");
    let bridge = Bridge::builder(crate::common::uri(), exec)
        .consume(config, |msg| {
            if msg.body() == b"slow" {
                std::thread::sleep(Duration::from_millis(400));
            }
            Ok(())
        })
        .start()
        .expect("start");
    wait_until(Duration::from_secs(30), "both settled", || {
        let m = &bridge.metrics()[0];
        m.acked + m.dead_lettered == 2
    });
    let m = bridge.stop().remove(0);
    assert_eq!((m.acked, m.expired, m.dead_lettered), (1, 1, 1), "{m:?}");
    let letters = read_dead_letters(&dlq, 1);
    let late = &letters["late"];
    assert_eq!(late[headers::REASON], "expired");
    assert_eq!(late[headers::ATTEMPTS], "0", "no attempt ran");
    assert!(
        late[headers::ERROR].contains("start_within = 100ms"),
        "{late:?}"
    );
    for name in [&queue, &dlq] {
        publisher.delete_queue(name).expect("delete");
    }
}

/// A `start_within` past the clock's reach is no limit: the job runs and
/// the delivery is acked.
#[test]
fn a_start_within_past_the_clocks_reach_is_no_limit() {
    let publisher: Publisher = crate::broker_or_skip!();
    let queue = unique("no-expiry");
    let config = ConsumerConfig::new(&queue).start_within(Duration::MAX);
    publisher.declare(&config).expect("declare");
    publisher
        .publish(&Outgoing::to_queue(&queue, "job"))
        .expect("publish");
    let (tx, ran) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let bridge = Bridge::builder(crate::common::uri(), crate::common::executor(1))
        .consume(config, move |msg| {
            let _ = tx.lock().unwrap().send(msg.body().to_vec());
            Ok(())
        })
        .start()
        .expect("start");
    let body = ran
        .recv_timeout(Duration::from_secs(30))
        .expect("the job ran");
    assert_eq!(body, b"job");
    // Stopping settles what is in hand first.
    let m = bridge.stop().remove(0);
    assert_eq!((m.acked, m.expired, m.dead_lettered), (1, 0, 0), "{m:?}");
    assert_eq!(publisher.queue_len(&queue).expect("len"), 0);
    publisher.delete_queue(&queue).expect("delete");
}

/// A dead-letter exchange with no queue bound takes no copy: the message is
/// not acked as if dead-lettered (it would be lost), but requeued, with an
/// event naming the exchange, until a queue is there to take it.
#[test]
fn a_dead_letter_no_queue_takes_is_requeued_not_lost() {
    use priority_executor_amqp::Event;

    let publisher: Publisher = crate::broker_or_skip!();
    let queue = unique("dl-unbound");
    let dlx = format!("{queue}.dlx");
    // The exchange is declared; no queue is bound to it.
    let config = ConsumerConfig::new(&queue)
        .prefetch(1)
        .dead_letter_exchange(&dlx);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all([Outgoing::to_queue(&queue, "bad").message_id("bad")])
        .expect("publish");

    let failures: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = failures.clone();
    let bridge = Bridge::builder(crate::common::uri(), executor(1))
        .on_event(move |event| {
            if let Event::DeadLetterFailed { error, .. } = event {
                seen.lock().unwrap().push(error.clone());
            }
        })
        .consume(config, |_| Err(Failure::reject("never valid")))
        .start()
        .expect("start");
    wait_until(Duration::from_secs(30), "two failed dead letters", || {
        failures.lock().unwrap().len() >= 2
    });
    let m = bridge.stop().remove(0);
    assert_eq!((m.acked, m.dead_lettered), (0, 0), "{m:?}");
    let error = failures.lock().unwrap()[0].clone();
    assert!(
        error.contains("no queue took") && error.contains(&dlx),
        "the event names the exchange: {error}"
    );
    assert_eq!(
        publisher.queue_len(&queue).expect("len"),
        1,
        "the message is back in its queue"
    );
    publisher.delete_queue(&queue).expect("delete");
}

/// An error longer than a frame is cut in the dead letter's header: the
/// letter gets through, and the connection stays up.
#[test]
fn a_very_long_error_is_cut_in_the_dead_letter() {
    let publisher: Publisher = crate::broker_or_skip!();
    let queue = unique("dl-long");
    let dlq = format!("{queue}.dead");
    let config = ConsumerConfig::new(&queue)
        .prefetch(1)
        .dead_letter_exchange(format!("{queue}.dlx"))
        .dead_letter_queue(&dlq);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all([Outgoing::to_queue(&queue, "long").message_id("long")])
        .expect("publish");
    let bridge = Bridge::builder(crate::common::uri(), executor(1))
        .consume(config, |_| Err(Failure::reject("x".repeat(300_000))))
        .start()
        .expect("start");
    wait_until(Duration::from_secs(30), "the dead letter", || {
        bridge.metrics()[0].dead_lettered == 1
    });
    let m = bridge.stop().remove(0);
    assert_eq!(m.dead_lettered, 1, "{m:?}");
    let letters = read_dead_letters(&dlq, 1);
    let error = &letters["long"][headers::ERROR];
    assert!(
        error.len() <= 4096 && error.starts_with("xxx"),
        "{}",
        error.len()
    );
    for name in [&queue, &dlq] {
        publisher.delete_queue(name).expect("delete");
    }
}

#[test]
fn no_declare_checks_the_dead_letter_exchange_and_queue_at_start() {
    let publisher: Publisher = crate::broker_or_skip!();
    let queue = unique("dl-nodeclare");
    let declared = ConsumerConfig::new(&queue)
        .dead_letter_exchange(format!("{queue}.dlx"))
        .dead_letter_queue(format!("{queue}.dead"));
    publisher.declare(&declared).expect("declare");
    let start = |config: ConsumerConfig| {
        Bridge::builder(crate::common::uri(), executor(1))
            .consume(config, |_| Ok(()))
            .start()
    };

    // All three exist: it starts.
    let bridge = start(declared.clone().no_declare()).expect("everything exists");
    bridge.stop();
    // An exchange nobody declared: refused at start, naming it.
    let missing = format!("{queue}.nowhere");
    let err = start(
        ConsumerConfig::new(&queue)
            .no_declare()
            .dead_letter_exchange(&missing),
    )
    .expect_err("no such exchange");
    assert!(err.to_string().contains(&format!("{missing:?}")), "{err}");
    // A dead-letter queue nobody declared: the same.
    let lost = format!("{queue}.lost");
    let err = start(
        ConsumerConfig::new(&queue)
            .no_declare()
            .dead_letter_exchange(format!("{queue}.dlx"))
            .dead_letter_queue(&lost),
    )
    .expect_err("no such queue");
    assert!(err.to_string().contains(&format!("{lost:?}")), "{err}");

    for name in [queue.clone(), format!("{queue}.dead")] {
        publisher.delete_queue(&name).expect("delete");
    }
}
