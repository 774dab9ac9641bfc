//! The bridge in a tokio application: an [`AsyncPublisher`] publishes
//! with confirms from a task, a [`Bridge`] on the application's runtime
//! consumes into an executor's lanes, and all three stop by being awaited
//! (the executor's shutdown too: no runtime thread blocks on it).
//!
//! Needs a broker: `AMQP_ADDR`, or `scripts/rabbitmq start`'s local node.
//!
//! ```text
//! scripts/rabbitmq start
//! cargo run -p priority-executor-amqp --example tokio_app
//! ```

use priority_executor::{Capacity, Executor, Priority};
use priority_executor_amqp::{Bridge, ConsumerConfig, Outgoing, PriorityTable, Publisher};
use std::error::Error;
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::sync::mpsc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let uri = std::env::var("AMQP_ADDR")
        .unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned());
    let queue = format!("pe-example-tokio-{}", std::process::id());
    let table = PriorityTable::new()
        .map(0..=4, Priority(1))
        .map(5..=9, Priority(10));
    let config = ConsumerConfig::new(&queue)
        .max_priority(9)
        .priorities(table)
        .prefetch(4);

    let publisher = Publisher::builder(uri.as_str()).connect_async().await?;
    publisher.declare(&config).await?;
    // One urgent message in ten.
    let sent = publisher
        .publish_all((0..200u32).map(|i| {
            Outgoing::to_queue(&queue, format!("order {i}")).priority(if i.is_multiple_of(10) {
                9
            } else {
                0
            })
        }))
        .await?;
    println!("published {sent} orders (confirmed)");

    let exec = Executor::builder()
        .name("orders")
        .core_threads(2)
        .max_threads(2)
        .lane(Priority(10), Capacity::Bounded(16))
        .lane(Priority(1), Capacity::Bounded(16))
        .build()?;
    let (done, mut finished) = mpsc::unbounded_channel();
    let bridge = Bridge::builder(uri.as_str(), exec.clone())
        .runtime(Handle::current())
        .consume(config, move |msg| {
            // Runs on an executor worker: blocking work is fine here.
            std::thread::sleep(Duration::from_micros(200));
            done.send(msg.lane())
                .map_err(priority_executor_amqp::Failure::retry)
        })
        .start_async()
        .await?;

    let (mut urgent, mut standard) = (0, 0);
    while urgent + standard < sent {
        match tokio::time::timeout(Duration::from_secs(30), finished.recv()).await {
            Ok(Some(Priority(10))) => urgent += 1,
            Ok(Some(_)) => standard += 1,
            Ok(None) | Err(_) => return Err("the orders did not all arrive within 30 s".into()),
        }
    }
    let metrics = bridge.stop_async().await;
    println!(
        "done: {urgent} urgent, {standard} standard; acked {}, dead-lettered {}",
        metrics[0].acked, metrics[0].dead_lettered
    );
    assert_eq!(metrics[0].acked as usize, sent);
    publisher.delete_queue(&queue).await?;
    publisher.close().await;
    // Every accepted job has run and the workers are joined once this
    // resolves; the wait runs on a thread of its own, not the runtime's.
    exec.shutdown_async().await;
    assert!(exec.is_terminated());
    Ok(())
}
