//! The consumer bridge: queues into an executor's lanes.
//!
//! - `builder`: its settings, and starting it (blocking or async);
//! - `check`: a queue's settings checked against the executor;
//! - `monitor`: its counters read from anywhere.

mod builder;
mod check;
mod monitor;

pub use builder::BridgeBuilder;
pub use monitor::BridgeMonitor;

use crate::metrics::ConsumerMetrics;
use crate::runtime::{block, refuse_endless_wait};
use priority_executor::Executor;
use std::fmt;
use std::time::Duration;
use tokio::runtime::{Handle, Runtime};
use tokio::sync::{oneshot, watch};

/// Consumes RabbitMQ queues into an [`Executor`]: each delivery becomes a
/// job in the lane its broker priority maps to, and is acked only once that
/// job has finished.
///
/// The bridge's async side (the AMQP client) runs on one thread of its own,
/// or on the application's tokio runtime
/// ([`BridgeBuilder::runtime`]); jobs run on the executor's worker threads.
/// Stop it with [`stop`](Bridge::stop), or [`stop_async`](Bridge::stop_async)
/// in async code (or by dropping it): the consumers are cancelled, what is
/// in hand finishes and is acked, the channels close.
///
/// A delivery whose lane is full stays in hand (unacked, within the
/// prefetch) and goes into the lane as soon as a worker frees a slot: the
/// bridge awaits room ([`Executor::reserve`]), it does not poll.
///
/// # Examples
///
/// ```no_run
/// use priority_executor::{Capacity, Executor, Priority};
/// use priority_executor_amqp::{Bridge, ConsumerConfig, PriorityTable};
///
/// let exec = Executor::builder()
///     .core_threads(4)
///     .max_threads(4)
///     .lane(Priority(10), Capacity::Bounded(100))
///     .lane(Priority(1), Capacity::Bounded(100))
///     .build()?;
/// let config = ConsumerConfig::new("visa")
///     .max_priority(10)
///     .priorities(PriorityTable::new().map(0..=4, Priority(1)).map(5..=10, Priority(10)))
///     .prefetch(4)
///     .dead_letter_exchange("visa.dlx")
///     .dead_letter_queue("visa.dead");
/// let bridge = Bridge::builder("amqp://guest:guest@127.0.0.1:5672/%2f", exec.clone())
///     .consume(config, |msg| {
///         println!("visa application {}", msg.body_str()?);
///         Ok(())
///     })
///     .start()?;
/// // ... later
/// let metrics = bridge.stop();
/// println!("{} acked", metrics[0].acked);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Bridge {
    /// The bridge's own runtime: `None` on the application's, or once
    /// stopped.
    runtime: Option<Runtime>,
    /// It runs on the application's runtime, a current-thread one.
    borrowed_current: bool,
    stop: watch::Sender<bool>,
    /// One per queue: its consumer task has ended.
    done: Vec<oneshot::Receiver<()>>,
    monitor: BridgeMonitor,
}

impl Bridge {
    /// Starts configuring a bridge into `executor` from the broker at `uri`
    /// (`amqp://user:password@host:port/vhost`, the vhost `/` written
    /// `%2f`). Pass a clone (`exec.clone()`) to keep using the executor;
    /// the bridge's clone keeps it open until the bridge is stopped or
    /// dropped. Once the executor is shut down (through any clone, or with
    /// its `executors.toml` registry), deliveries are requeued and the
    /// bridge stops consuming.
    ///
    /// # Examples
    ///
    /// See [`Bridge`]. One of an `executors.toml` registry:
    ///
    /// ```no_run
    /// use priority_executor::Registry;
    /// use priority_executor_amqp::{Bridge, ConsumerConfig};
    ///
    /// let executors = Registry::from_path("executors.toml")?;
    /// let exec = executors.get("visa_priority_exec")?;
    /// let config = ConsumerConfig::new("visa"); // or from [amqp.visa_priority_exec] in the file
    /// let bridge = Bridge::builder("amqp://guest:guest@127.0.0.1:5672/%2f", exec)
    ///     .consume(config, |msg| {
    ///         println!("{}", msg.body_str()?);
    ///         Ok(())
    ///     })
    ///     .start()?;
    /// # drop(bridge);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder(uri: impl Into<String>, executor: Executor) -> BridgeBuilder {
        BridgeBuilder::new(uri.into(), executor)
    }

    /// A snapshot of the counters, one entry per queue, in the order the
    /// queues were added.
    pub fn metrics(&self) -> Vec<ConsumerMetrics> {
        self.monitor.metrics()
    }

    /// A handle that reads the same counters from anywhere (another
    /// thread, a dashboard) while the application keeps the bridge itself;
    /// it outlives the bridge.
    ///
    /// # Examples
    ///
    /// See [`BridgeMonitor`].
    pub fn monitor(&self) -> BridgeMonitor {
        self.monitor.clone()
    }

    /// Stops gracefully: cancels every consumer, lets the jobs in hand
    /// finish (retries included) and acks or dead-letters them, closes the
    /// channels and the connections, and returns the final counters.
    ///
    /// Jobs already handed to the executor are run by it, so stop the
    /// bridge before shutting the executor down; if the executor is shut
    /// down first ([`shutdown_now`](priority_executor::Executor::shutdown_now)), its handed-back jobs are
    /// requeued to the broker, never acked.
    ///
    /// This blocks the calling thread until the consumers have ended
    /// (on a worker of a multi-thread runtime, after that runtime moved
    /// the thread's other tasks elsewhere). In async code use
    /// [`stop_async`](Bridge::stop_async).
    ///
    /// # Panics
    ///
    /// If called inside a current-thread runtime while the bridge runs on
    /// the application's current-thread runtime
    /// ([`runtime`](BridgeBuilder::runtime)):
    /// the consumers may need that runtime's only thread, and the wait
    /// would never end. The consumers are told to stop all the same, as
    /// when the bridge is dropped.
    pub fn stop(mut self) -> Vec<ConsumerMetrics> {
        refuse_endless_wait(self.borrowed_current, "stop");
        let _ = self.stop.send(true);
        let done = std::mem::take(&mut self.done);
        block(all_ended(done));
        if let Some(runtime) = self.runtime.take() {
            let_go(runtime);
        }
        self.metrics()
    }

    /// As [`stop`](Bridge::stop), awaiting the end of the consumers
    /// instead of blocking: for async code, on any runtime.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use priority_executor::{Capacity, Executor, Priority};
    /// # use priority_executor_amqp::{Bridge, ConsumerConfig};
    /// # async fn run(exec: Executor) -> Result<(), Box<dyn std::error::Error>> {
    /// let bridge = Bridge::builder("amqp://127.0.0.1:5672/%2f", exec)
    ///     .runtime(tokio::runtime::Handle::current())
    ///     .consume(ConsumerConfig::new("jobs"), |_| Ok(()))
    ///     .start_async()
    ///     .await?;
    /// // ... later
    /// let metrics = bridge.stop_async().await;
    /// # let _ = metrics;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn stop_async(mut self) -> Vec<ConsumerMetrics> {
        let _ = self.stop.send(true);
        all_ended(std::mem::take(&mut self.done)).await;
        if let Some(runtime) = self.runtime.take() {
            // Its tasks have ended: nothing to wait for.
            runtime.shutdown_background();
        }
        self.metrics()
    }
}

/// Waits until every consumer task has ended (an error: it ended, or its
/// runtime went away, without a word).
async fn all_ended(done: Vec<oneshot::Receiver<()>>) {
    for done in done {
        let _ = done.await;
    }
}

/// Stops the bridge's own runtime, giving its last tasks (closing
/// connections) a moment; in async code, where waiting is refused, in the
/// background.
fn let_go(runtime: Runtime) {
    if Handle::try_current().is_ok() {
        runtime.shutdown_background();
    } else {
        runtime.shutdown_timeout(Duration::from_secs(5));
    }
}

impl Drop for Bridge {
    /// Stops as [`stop`](Bridge::stop) does. Dropped in async code, it
    /// never blocks (nor panics): the consumers are told to stop and end
    /// on their own, the bridge's own runtime, if any, on a thread of its
    /// own.
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        let done = std::mem::take(&mut self.done);
        let runtime = self.runtime.take();
        if Handle::try_current().is_err() {
            futures_lite::future::block_on(all_ended(done));
            if let Some(runtime) = runtime {
                let_go(runtime);
            }
        } else if let Some(runtime) = runtime {
            let spawned = std::thread::Builder::new()
                .name("amqp-bridge-stop".to_owned())
                .spawn(move || {
                    futures_lite::future::block_on(all_ended(done));
                    let_go(runtime);
                });
            // No thread to be had: the runtime goes with the closure,
            // stopped in the background.
            drop(spawned);
        }
    }
}

impl fmt::Debug for Bridge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bridge")
            .field("queues", &self.monitor.queues().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}
