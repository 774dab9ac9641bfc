//! The RabbitMQ bridges a dashboard shows (feature `amqp`).

use crate::board::Dashboard;
use crate::names::unique_name;
use crate::watched_bridge::WatchedBridge;
use priority_executor_amqp::{Bridge, ConsumerMetrics};
use std::sync::Arc;

impl Dashboard {
    /// Shows a RabbitMQ bridge's queues (feature `amqp`): per queue,
    /// messages in hand, acked, requeued and dead-lettered, and whether it
    /// is connected. The dashboard keeps the bridge's
    /// [`monitor`](Bridge::monitor), not the bridge: the application
    /// still stops or drops it (its counters then stay as they ended). It
    /// is shown under its connection name; a name already taken gets `#2`,
    /// `#3`… appended.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use priority_executor::{Capacity, Executor, Priority};
    /// use priority_executor_amqp::{Bridge, ConsumerConfig};
    /// use priority_executor_dashboard::Dashboard;
    ///
    /// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
    /// let bridge = Bridge::builder("amqp://127.0.0.1:5672/%2f", exec.clone())
    ///     .consume(ConsumerConfig::new("jobs"), |_| Ok(()))
    ///     .start()?;
    /// let app: axum::Router = Dashboard::new().executor(&exec).bridge(&bridge).router();
    /// # drop(app);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bridge(self, bridge: &Bridge) -> Dashboard {
        let monitor = bridge.monitor();
        let name = monitor.name().to_owned();
        self.bridge_with(name, move || monitor.metrics())
    }

    /// Shows the queues `read` returns, under `name` (feature `amqp`):
    /// for a bridge reached some other way, or counters of another
    /// source in the same shape. `read` is called once per snapshot, so
    /// it should be quick; if it panics, the bridge shows no queue.
    ///
    /// # Panics
    ///
    /// If the dashboard's router or server was already made.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor_amqp::ConsumerMetrics;
    /// use priority_executor_dashboard::Dashboard;
    ///
    /// let dashboard = Dashboard::new().bridge_with("orders", || {
    ///     let mut queue = ConsumerMetrics::default();
    ///     queue.queue = "orders".to_owned();
    ///     queue.acked = 3;
    ///     vec![queue]
    /// });
    /// let snapshot = dashboard.snapshot();
    /// assert_eq!(snapshot.bridges[0].queues[0].acked, 3);
    /// ```
    pub fn bridge_with(
        self,
        name: impl Into<String>,
        read: impl Fn() -> Vec<ConsumerMetrics> + Send + Sync + 'static,
    ) -> Dashboard {
        let wanted = name.into();
        self.with(move |inner| {
            let name = unique_name(&wanted, |n| inner.bridges.iter().any(|b| b.name == n));
            inner.bridges.push(WatchedBridge {
                name,
                read: Arc::new(read),
            });
        })
    }
}
