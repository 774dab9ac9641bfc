//! A broker that stops answering without closing the connection (a
//! partition, a stalled proxy): the publisher's heartbeat finds the
//! connection lost, and the connection timeout bounds the opening of a
//! new one (the publisher's and the bridge's), long before their own time
//! limits.

use crate::common::{executor, unique};
use crate::proxy::proxied;
use priority_executor_amqp::{Bridge, BridgeError, ConsumerConfig, Outgoing, Publisher};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

/// Far beyond the heartbeat (1 s, lost after 2) and the connection
/// timeout (2 s) below, and under a publish's own limit (30 s): a hang,
/// not a timing.
const WATCHDOG: Duration = Duration::from_secs(20);

/// Publishes `body` to `queue` on a thread of its own; the result, or a
/// panic naming `what` if it has not come within the watchdog.
fn publish_watched(
    publisher: &Arc<Publisher>,
    queue: &str,
    body: &str,
    what: &str,
) -> Result<(), BridgeError> {
    let (tx, rx) = mpsc::channel();
    let (p, message) = (publisher.clone(), Outgoing::to_queue(queue, body));
    thread::spawn(move || {
        let _ = tx.send(p.publish(&message));
    });
    rx.recv_timeout(WATCHDOG)
        .unwrap_or_else(|_| panic!("{what}: no result within {WATCHDOG:?}: the publisher still waits on a broker that stopped answering"))
}

#[test]
fn a_publish_to_a_broker_that_stopped_answering_fails_on_the_heartbeat_not_the_time_limit() {
    let publisher = crate::broker_or_skip!();
    let (proxy, via_proxy) = proxied();
    let queue = unique("publisher-stall");
    publisher
        .declare(&ConsumerConfig::new(&queue))
        .expect("declare");
    let through = Arc::new(
        Publisher::builder(via_proxy)
            .heartbeat(Duration::from_secs(1))
            .connection_timeout(Duration::from_secs(2))
            .connect()
            .expect("connect"),
    );
    publish_watched(&through, &queue, "before", "before the stall").expect("before the stall");

    proxy.stall();
    let lost = publish_watched(
        &through,
        &queue,
        "during",
        "the publish on the stalled connection",
    )
    .expect_err("nothing passes: the message cannot be confirmed");
    assert!(
        lost.to_string().contains("heartbeat"),
        "the heartbeat found the connection lost: {lost}"
    );
    // A new connection passes the TCP connect (the proxy accepts) and then
    // hears nothing: the connection timeout ends the attempt.
    let reopen = publish_watched(
        &through,
        &queue,
        "reopen",
        "opening through the stalled proxy",
    )
    .expect_err("nothing passes: no connection can open");
    assert!(
        matches!(reopen, BridgeError::Connect { .. }),
        "the connection timeout ended the opening: {reopen}"
    );

    proxy.resume();
    publish_watched(&through, &queue, "after", "after the stall")
        .expect("a new connection after the stall");
    // At least once: "during" may have reached the broker unconfirmed.
    let len = publisher.queue_len(&queue).expect("len");
    assert!(
        (2..=3).contains(&len),
        "before and after, maybe during: {len}"
    );
    publisher.delete_queue(&queue).expect("delete");
}

#[test]
fn a_bridge_opening_through_a_stalled_proxy_gives_up_at_the_connection_timeout() {
    let publisher = crate::broker_or_skip!();
    let (proxy, via_proxy) = proxied();
    let queue = unique("bridge-stall");
    let config = ConsumerConfig::new(&queue);
    publisher.declare(&config).expect("declare");
    proxy.stall();
    // The proxy accepts the TCP connection and passes nothing: only the
    // connection timeout (1 s, from the URI) can end the opening.
    let uri = format!("{via_proxy}?connection_timeout=1000");
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let started = Bridge::builder(uri, executor(1))
            .consume(config, |_| Ok(()))
            .start()
            .map(drop);
        let _ = tx.send(started);
    });
    let started = rx.recv_timeout(WATCHDOG).unwrap_or_else(|_| {
        panic!("the bridge still waits after {WATCHDOG:?} on a proxy that answers nothing")
    });
    let err = started.expect_err("nothing passes: the bridge cannot start");
    assert!(
        matches!(err, BridgeError::Connect { .. }),
        "the connection timeout ended the opening: {err}"
    );
    proxy.resume();
    publisher.delete_queue(&queue).expect("delete");
}
