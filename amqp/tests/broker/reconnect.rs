//! A lost connection is reported and retried with backoff; nothing is
//! lost, and only what was in hand runs twice.

use crate::common::{executor, unique, wait_until};
use crate::proxy::proxied;
use priority_executor_amqp::{Bridge, ConsumerConfig, Event, Outgoing};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

#[test]
fn the_publisher_connects_again_after_a_loss() {
    let publisher = crate::broker_or_skip!();
    let (proxy, via_proxy) = proxied();
    let queue = unique("publisher-reconnect");
    let config = ConsumerConfig::new(&queue);
    publisher.declare(&config).expect("declare");
    let through = priority_executor_amqp::Publisher::connect(via_proxy).expect("connect");
    through
        .publish(&Outgoing::to_queue(&queue, "1"))
        .expect("first");
    proxy.cut();
    // The call that meets the dead connection may fail (the message was
    // then not confirmed: publish it again); the next ones reconnect.
    let mut confirmed = 1;
    for i in 2..=5 {
        let mut sent = false;
        for _ in 0..3 {
            if through
                .publish(&Outgoing::to_queue(&queue, i.to_string()))
                .is_ok()
            {
                sent = true;
                break;
            }
            thread::sleep(Duration::from_millis(100));
        }
        assert!(sent, "message {i} after the loss");
        confirmed += 1;
    }
    // At least once: a publish reported failed may still have arrived.
    assert!(publisher.queue_len(&queue).expect("len") >= confirmed);
    publisher.delete_queue(&queue).expect("delete");
}

#[test]
fn a_lost_connection_is_reported_and_retried_and_nothing_is_lost() {
    let publisher = crate::broker_or_skip!();
    let (proxy, via_proxy) = proxied();

    let queue = unique("reconnect");
    let config = ConsumerConfig::new(&queue).prefetch(4);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all((0..200).map(|i| Outgoing::to_queue(&queue, "x").message_id(i.to_string())))
        .expect("publish");
    let runs: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let events = Arc::new(Mutex::new(Vec::new()));
    let (r, ev) = (runs.clone(), events.clone());
    let bridge = Bridge::builder(via_proxy, executor(2))
        .consume(config, move |msg| {
            thread::sleep(Duration::from_millis(3));
            *r.lock()
                .unwrap()
                .entry(msg.message_id().unwrap_or("").to_owned())
                .or_default() += 1;
            Ok(())
        })
        .on_event(move |e| {
            let _ = writeln!(std::io::stderr(), "event: {e:?}");
            ev.lock().unwrap().push(e.clone())
        })
        .reconnect_backoff(Duration::from_millis(50), Duration::from_secs(1))
        .start()
        .expect("start");
    let monitor = bridge.monitor();
    assert!(
        monitor.metrics()[0].connected,
        "a started bridge is connected"
    );
    wait_until(Duration::from_secs(30), "some done", || {
        runs.lock().unwrap().len() >= 30
    });
    proxy.cut();
    wait_until(Duration::from_secs(60), "every message", || {
        runs.lock().unwrap().len() == 200
    });
    wait_until(Duration::from_secs(30), "the queue to empty", || {
        publisher.queue_len(&queue).expect("len") == 0
    });
    let m = bridge.stop().remove(0);
    assert!(!m.connected, "a stopped bridge is not: {m:?}");
    assert_eq!(monitor.metrics()[0], m, "the monitor outlives the bridge");
    let runs = runs.lock().unwrap();
    let twice: usize = runs.values().map(|n| n - 1).sum();
    let events = events.lock().unwrap();
    eprintln!("{m:?}\n{twice} ran twice\n{events:?}");
    assert!(m.reconnects >= 1, "{m:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Disconnected { .. })),
        "the loss is reported: {events:?}"
    );
    // The broker redelivers what it had not seen acked: the deliveries in
    // hand at the loss, and those whose ack was still on the wire.
    assert!(
        twice as u64 <= m.redelivered,
        "only redelivered messages run again ({twice} > {})",
        m.redelivered
    );
    assert!(
        m.redelivered <= 4 * (m.reconnects + 1),
        "at most prefetch unacked per connection: {m:?}"
    );
    assert!(m.abandoned <= m.redelivered, "{m:?}");
    assert_eq!(m.acked + m.abandoned, m.delivered, "{m:?}");
    publisher.delete_queue(&queue).expect("delete");
}
