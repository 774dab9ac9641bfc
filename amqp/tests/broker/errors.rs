//! Bad input: each error names the queue or the URI and the setting.

use crate::common::{executor, unique, uri, wait_until};
use priority_executor::Priority;
use priority_executor_amqp::{Bridge, BridgeError, ConsumerConfig, PriorityTable, Publisher};
use std::time::Duration;

#[test]
fn a_wrong_uri_is_named() {
    let err = Bridge::builder("amqp//127.0.0.1:5672", executor(1))
        .consume(ConsumerConfig::new("q"), |_| Ok(()))
        .start()
        .unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, BridgeError::Uri { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("\"amqp//127.0.0.1:5672\" is not valid"),
        "{err}"
    );
}

#[test]
fn no_broker_at_the_address_is_a_connect_error() {
    // Port 1 on loopback: nothing listens there.
    let err = Publisher::connect("amqp://guest:guest@127.0.0.1:1/%2f").unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, BridgeError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("127.0.0.1:1"), "{err}");
}

#[test]
fn a_refused_login_is_named_without_the_password() {
    let _broker = crate::broker_or_skip!();
    let good = uri();
    let Some((scheme, rest)) = good.split_once("://") else {
        panic!("{good}")
    };
    let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    let bad = format!("{scheme}://guest:not-the-password@{host}");
    let err = Bridge::builder(bad, executor(1))
        .consume(ConsumerConfig::new("q"), |_| Ok(()))
        .start()
        .unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, BridgeError::Login { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("refused the login") && text.contains("guest:***@"),
        "{text}"
    );
    assert!(!text.contains("not-the-password"), "{text}");
}

#[test]
fn a_queue_declared_with_another_max_priority_is_named() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("mismatch");
    publisher
        .declare(&ConsumerConfig::new(&queue).max_priority(10))
        .expect("declare");
    let err = Bridge::builder(uri(), executor(1))
        .consume(ConsumerConfig::new(&queue).max_priority(5), |_| Ok(()))
        .start()
        .unwrap_err();
    eprintln!("{err}");
    match &err {
        BridgeError::QueueMismatch {
            queue: q, setting, ..
        } => {
            assert_eq!(
                (q.as_str(), setting.as_str()),
                (queue.as_str(), "x-max-priority")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains(&format!(
            "queue {queue:?} exists with a different x-max-priority"
        )),
        "{err}"
    );
    publisher.delete_queue(&queue).expect("delete");
}

#[test]
fn settings_the_executor_cannot_meet_are_named() {
    // Checked before connecting: no broker needed.
    let err = Bridge::builder(uri(), executor(1))
        .consume(
            ConsumerConfig::new("q").priorities(PriorityTable::new().map(9..=9, Priority(5))),
            |_| Ok(()),
        )
        .start()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "queue \"q\": the priority table maps to lane 5, which executor \"amqp-test\" does not have (lanes: 10, 1)"
    );
    let err = Bridge::builder(uri(), executor(1))
        .consume(ConsumerConfig::new("q").prefetch(100), |_| Ok(()))
        .start()
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("queue \"q\": lane 1: prefetch = 100 is not allowed (expected at most 64: the lane has 64 of 64 places free"),
        "{err}"
    );
    let BridgeError::Invalid { setting, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (setting.setting, setting.value.as_str()),
        ("prefetch", "100")
    );
    let err = Bridge::builder(uri(), executor(1))
        .consume(ConsumerConfig::new("q").prefetch(0), |_| Ok(()))
        .start()
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("queue \"q\": prefetch = 0 is not allowed (expected at least 1"),
        "{err}"
    );
}

/// An undecodable body is dead-lettered (see dead_letters); without a
/// dead-letter exchange it is rejected, never requeued forever nor acked.
#[test]
fn an_undecodable_body_without_dead_letter_exchange_is_rejected_not_acked() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("undecodable");
    let config = ConsumerConfig::new(&queue).prefetch(2);
    publisher.declare(&config).expect("declare");
    publisher
        .publish(&priority_executor_amqp::Outgoing::to_queue(
            &queue,
            vec![0xc3, 0x28],
        ))
        .expect("publish");
    let bridge = Bridge::builder(uri(), executor(1))
        .consume(config, |msg| msg.body_str().map(|_| ()))
        .start()
        .expect("start");
    wait_until(Duration::from_secs(30), "the reject", || {
        bridge.metrics()[0].dead_lettered == 1
    });
    let m = bridge.stop().remove(0);
    assert_eq!((m.acked, m.rejected, m.requeued), (0, 1, 0), "{m:?}");
    publisher.delete_queue(&queue).expect("delete");
}
