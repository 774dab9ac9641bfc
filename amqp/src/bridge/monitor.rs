//! A bridge's counters without the bridge: a cheap handle that reads them
//! (for a dashboard, a metrics exporter) while the application keeps, stops
//! or drops the bridge itself.

use crate::metrics::{ConsumerMetrics, Counters};
use std::fmt;
use std::sync::Arc;

/// Reads a [`Bridge`](crate::Bridge)'s counters, per queue, from anywhere:
/// cloned cheaply, `Send` and `Sync`, and valid after the bridge is
/// stopped or dropped (its counters then stay as they ended). Made by
/// [`Bridge::monitor`](crate::Bridge::monitor).
///
/// # Examples
///
/// ```no_run
/// use priority_executor::{Capacity, Executor, Priority};
/// use priority_executor_amqp::{Bridge, ConsumerConfig};
///
/// let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
/// let bridge = Bridge::builder("amqp://127.0.0.1:5672/%2f", exec)
///     .consume(ConsumerConfig::new("jobs"), |_| Ok(()))
///     .start()?;
/// let monitor = bridge.monitor();
/// std::thread::spawn(move || {
///     for queue in monitor.metrics() {
///         println!("{}: {} acked, connected {}", queue.queue, queue.acked, queue.connected);
///     }
/// });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct BridgeMonitor {
    /// The name the bridge's connections show in the broker.
    name: Arc<str>,
    queues: Arc<[(Arc<str>, Arc<Counters>)]>,
}

impl BridgeMonitor {
    pub(crate) fn new(name: &str, queues: Vec<(Arc<str>, Arc<Counters>)>) -> BridgeMonitor {
        BridgeMonitor {
            name: Arc::from(name),
            queues: queues.into(),
        }
    }

    /// The name the bridge's connections show in the broker
    /// ([`BridgeBuilder::connection_name`](crate::BridgeBuilder::connection_name),
    /// by default the executor's name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A snapshot of the counters, one entry per queue, in the order the
    /// queues were added: as [`Bridge::metrics`](crate::Bridge::metrics).
    pub fn metrics(&self) -> Vec<ConsumerMetrics> {
        self.queues
            .iter()
            .map(|(queue, counters)| counters.snapshot(queue))
            .collect()
    }

    /// The queues, in the order they were added.
    pub(crate) fn queues(&self) -> impl Iterator<Item = &str> {
        self.queues.iter().map(|(queue, _)| &**queue)
    }
}

impl fmt::Debug for BridgeMonitor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BridgeMonitor")
            .field("name", &self.name)
            .field("queues", &self.queues().collect::<Vec<_>>())
            .finish()
    }
}
