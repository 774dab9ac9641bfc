//! The bridge and the publisher in a tokio application: on its runtime,
//! awaited, and dropped inside async code without a panic or a block.

use crate::common::{executor, unique, uri};
use priority_executor::Priority;
use priority_executor_amqp::{
    AsyncPublisher, Bridge, ConsumerConfig, Outgoing, PriorityTable, Publisher,
};
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::time::timeout;

/// The async publisher, or `None` where the blocking check finds no
/// broker (and `CI` is not set).
async fn connect() -> Option<AsyncPublisher> {
    // The blocking check is made and dropped on a plain thread.
    tokio::task::spawn_blocking(crate::common::broker)
        .await
        .expect("the check")?;
    Some(
        Publisher::builder(uri())
            .connect_async()
            .await
            .expect("an async publisher"),
    )
}

/// Waits until `queue` has no consumer left (at most 30 s).
async fn no_consumer(publisher: &AsyncPublisher, queue: &str) {
    let waited = timeout(Duration::from_secs(30), async {
        while publisher.consumer_count(queue).await.expect("consumers") > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the consumer of {queue} never went away");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_and_consume_on_the_applications_runtime() {
    let Some(publisher) = connect().await else {
        return;
    };
    let queue = unique("async");
    let table = PriorityTable::new()
        .map(0..=4, Priority(1))
        .map(5..=9, Priority(10));
    let config = ConsumerConfig::new(&queue)
        .max_priority(9)
        .priorities(table)
        .prefetch(8);
    publisher.declare(&config).await.expect("declare");
    let sent = publisher
        .publish_all((0..50u32).map(|i| {
            Outgoing::to_queue(&queue, format!("{i}"))
                .message_id(i.to_string())
                .priority(if i.is_multiple_of(5) { 9 } else { 0 })
        }))
        .await
        .expect("publish");
    assert_eq!(sent, 50);

    let (tx, mut rx) = mpsc::unbounded_channel();
    let bridge = Bridge::builder(uri(), executor(2))
        .runtime(Handle::current())
        .consume(config, move |msg| {
            tx.send((msg.body_str()?.to_owned(), msg.lane()))
                .map_err(priority_executor_amqp::Failure::retry)
        })
        .start_async()
        .await
        .expect("the bridge starts on this runtime");
    let mut seen = BTreeSet::new();
    while seen.len() < 50 {
        let (body, lane) = timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("every message within 30 s")
            .expect("the handler's sender");
        let i: u32 = body.parse().expect("a number");
        let expected = if i.is_multiple_of(5) {
            Priority(10)
        } else {
            Priority(1)
        };
        assert_eq!(lane, expected, "message {i}");
        assert!(seen.insert(i), "message {i} twice");
    }
    let m = bridge.stop_async().await.remove(0);
    assert_eq!((m.acked, m.requeued, m.dead_lettered), (50, 0, 0), "{m:?}");
    assert_eq!(publisher.queue_len(&queue).await.expect("len"), 0);
    // Published and confirmed from a task while another task consumes.
    publisher.delete_queue(&queue).await.expect("delete");
    publisher.close().await;
}

#[tokio::test(flavor = "current_thread")]
async fn dropped_in_async_code_neither_panics_nor_blocks() {
    let Some(publisher) = connect().await else {
        return;
    };
    let queue = unique("async-drop");
    let config = ConsumerConfig::new(&queue);
    publisher.declare(&config).await.expect("declare");

    // Made on a plain thread, with runtimes of their own, as a blocking
    // user would; dropped here, on the one thread of this runtime.
    let (blocking_publisher, own_runtime) = std::thread::spawn({
        let config = config.clone();
        move || {
            let p = Publisher::connect(uri()).expect("publisher");
            p.publish(&Outgoing::to_queue(config.queue(), "one"))
                .expect("publish");
            let b = Bridge::builder(uri(), executor(1))
                .consume(config, |_| Ok(()))
                .start()
                .expect("bridge");
            (p, b)
        }
    })
    .join()
    .expect("the plain thread");
    drop(blocking_publisher);
    drop(own_runtime);
    no_consumer(&publisher, &queue).await;

    // On this runtime: dropping only tells the consumer to stop, and it
    // ends on this thread once this task awaits.
    let on_this_runtime = Bridge::builder(uri(), executor(1))
        .runtime(Handle::current())
        .consume(config, |_| Ok(()))
        .start_async()
        .await
        .expect("bridge");
    drop(on_this_runtime);
    no_consumer(&publisher, &queue).await;

    let clone = publisher.clone();
    drop(clone);
    assert_eq!(publisher.queue_len(&queue).await.expect("len"), 0);
    publisher.delete_queue(&queue).await.expect("delete");
    drop(publisher);
}

/// Runs a bridge on `runtime`, started inside it, and calls the blocking
/// `stop` there too. `None` without a broker; else the panic's message,
/// if `stop` panicked. A hang is a failure (a watchdog), and the queue's
/// consumer must be gone either way.
fn blocking_stop_inside(runtime: tokio::runtime::Runtime, name: &str) -> Option<Option<String>> {
    let (finished, outcome) = std::sync::mpsc::channel();
    let queue = unique(name);
    std::thread::spawn(move || {
        let message = runtime.block_on(async {
            let publisher = connect().await?;
            let config = ConsumerConfig::new(&queue);
            publisher.declare(&config).await.expect("declare");
            let bridge = Bridge::builder(uri(), executor(1))
                .runtime(Handle::current())
                .consume(config, |_| Ok(()))
                .start_async()
                .await
                .expect("bridge");
            // In a task: on a multi-thread runtime, on one of its workers.
            let stopped = tokio::spawn(async move {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bridge.stop()))
            })
            .await
            .expect("the stopping task");
            let message = stopped.err().map(|payload| {
                payload
                    .downcast::<String>()
                    .map_or_else(|_| String::new(), |text| *text)
            });
            no_consumer(&publisher, &queue).await;
            publisher.delete_queue(&queue).await.expect("delete");
            Some(message)
        });
        let _ = finished.send(message);
    });
    outcome
        .recv_timeout(Duration::from_secs(60))
        .expect("the blocking stop returned")
}

/// Inside the current-thread runtime the bridge runs on, a blocking `stop`
/// would wait for ever for consumers that need that thread: it panics
/// with a message naming `stop_async`, and the consumer still stops.
#[test]
fn a_blocking_stop_inside_its_current_thread_runtime_panics_instead_of_hanging() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    if let Some(stopped) = blocking_stop_inside(runtime, "blocking-stop-current") {
        let message = stopped.expect("a blocking stop here is refused");
        assert!(
            message.contains("Bridge::stop") && message.contains("stop_async"),
            "{message}"
        );
    }
}

/// On the one worker of a multi-thread runtime the bridge runs on, a
/// blocking `stop` hands the worker's tasks to another thread and returns.
#[test]
fn a_blocking_stop_on_the_only_worker_of_its_runtime_returns() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    if let Some(stopped) = blocking_stop_inside(runtime, "blocking-stop-multi") {
        assert_eq!(stopped, None, "a blocking stop on a multi-thread runtime");
    }
}

/// One publisher shared by two tasks, one publishing to a queue, the other
/// to a queue nobody declared: each call hears of its own message, never
/// of the other's (the broker's answer for an unroutable message is not
/// taken for another call's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_publisher_reports_each_unroutable_message_to_its_own_call() {
    let Some(publisher) = connect().await else {
        return;
    };
    let queue = unique("shared-publisher");
    publisher
        .declare(&ConsumerConfig::new(&queue))
        .await
        .expect("declare");
    let nowhere = unique("shared-publisher-nowhere");
    const EACH: usize = 1000;
    let routed = tokio::spawn({
        let (publisher, queue) = (publisher.clone(), queue.clone());
        async move {
            let mut refused = 0;
            for i in 0..EACH {
                let message = Outgoing::to_queue(&queue, format!("kept {i}"));
                refused += usize::from(publisher.publish(&message).await.is_err());
            }
            refused
        }
    });
    let lost = tokio::spawn({
        let publisher = publisher.clone();
        async move {
            let mut confirmed = 0;
            for i in 0..EACH {
                let message = Outgoing::to_queue(&nowhere, format!("lost {i}"));
                confirmed += usize::from(publisher.publish(&message).await.is_ok());
            }
            confirmed
        }
    });
    let (refused, confirmed) = (routed.await.expect("task"), lost.await.expect("task"));
    assert_eq!(
        (refused, confirmed),
        (0, 0),
        "routable refused, unroutable confirmed"
    );
    assert_eq!(
        publisher.queue_len(&queue).await.expect("len"),
        u32::try_from(EACH).expect("small")
    );
    publisher.delete_queue(&queue).await.expect("delete");
}

/// A bridge on a multi-thread runtime, stopped by a blocking call made
/// inside another, current-thread runtime: its tasks run on threads of
/// their own, so the call waits for them and returns.
#[test]
fn a_blocking_stop_inside_another_current_thread_runtime_returns() {
    let runs_on = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let caller = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let handle = runs_on.handle().clone();
    let (finished, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stopped = caller.block_on(async {
            let publisher = connect().await?;
            let queue = unique("blocking-stop-other");
            let config = ConsumerConfig::new(&queue);
            publisher.declare(&config).await.expect("declare");
            let bridge = Bridge::builder(uri(), executor(1))
                .runtime(handle)
                .consume(config, |_| Ok(()))
                .start_async()
                .await
                .expect("bridge");
            let stopped =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bridge.stop())).is_ok();
            no_consumer(&publisher, &queue).await;
            publisher.delete_queue(&queue).await.expect("delete");
            Some(stopped)
        });
        let _ = finished.send(stopped);
    });
    let stopped = outcome
        .recv_timeout(Duration::from_secs(60))
        .expect("the blocking stop returned");
    assert_ne!(stopped, Some(false), "the blocking stop panicked");
    drop(runs_on);
}
