//! The consumer bridge: queues into an executor's lanes.

use crate::config::ConsumerConfig;
use crate::delivery::{Failure, Incoming};
use crate::error::BridgeError;
use crate::liveness::check_uri;
use crate::metrics::{ConsumerMetrics, Counters, Event};
use crate::runtime::new_runtime;
use crate::session::{self, Ctx, DrainFn, EventFn, HandlerFn};
use priority_executor::{Capacity, Executor, Priority};
use std::fmt;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::sync::watch;

/// Consumes RabbitMQ queues into an [`Executor`]: each delivery becomes a
/// job in the lane its broker priority maps to, and is acked only once that
/// job has finished.
///
/// The bridge's async side (the AMQP client) runs on one thread of its own;
/// jobs run on the executor's worker threads. Stop it with
/// [`stop`](Bridge::stop) (or by dropping it): the consumers are cancelled,
/// what is in hand finishes and is acked, the channels close.
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
    runtime: Option<Runtime>,
    stop: watch::Sender<bool>,
    done: Vec<mpsc::Receiver<()>>,
    queues: Vec<(Arc<str>, Arc<Counters>)>,
}

/// Settings of a [`Bridge`]: the broker, the executor, and one handler per
/// queue.
///
/// # Examples
///
/// See [`Bridge`].
#[must_use = "a builder does nothing until .start() is called"]
pub struct BridgeBuilder {
    uri: String,
    executor: Executor,
    consumers: Vec<(ConsumerConfig, HandlerFn, Option<DrainFn>)>,
    events: Option<EventFn>,
    backoff: (Duration, Duration),
    name: String,
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
    /// use priority_executor::Executors;
    /// use priority_executor_amqp::{Bridge, ConsumerConfig};
    ///
    /// let executors = Executors::from_path("executors.toml")?;
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
        BridgeBuilder {
            uri: uri.into(),
            name: executor.name().to_owned(),
            executor,
            consumers: Vec::new(),
            events: None,
            backoff: (Duration::from_millis(100), Duration::from_secs(30)),
        }
    }

    /// A snapshot of the counters, one entry per queue, in the order the
    /// queues were added.
    pub fn metrics(&self) -> Vec<ConsumerMetrics> {
        self.queues
            .iter()
            .map(|(queue, counters)| counters.snapshot(queue))
            .collect()
    }

    /// Stops gracefully: cancels every consumer, lets the jobs in hand
    /// finish (retries included) and acks or dead-letters them, closes the
    /// channels and the connections, and returns the final counters.
    ///
    /// Jobs already handed to the executor are run by it, so stop the
    /// bridge before shutting the executor down; if the executor is shut
    /// down first ([`shutdown_now`](priority_executor::Executor::shutdown_now)), its handed-back jobs are
    /// requeued to the broker, never acked.
    pub fn stop(mut self) -> Vec<ConsumerMetrics> {
        self.stop_inner();
        self.metrics()
    }

    fn stop_inner(&mut self) {
        let _ = self.stop.send(true);
        for done in self.done.drain(..) {
            // Err: the task ended (or its runtime went away) without a word.
            let _ = done.recv();
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(5));
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

impl fmt::Debug for Bridge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bridge")
            .field(
                "queues",
                &self.queues.iter().map(|(q, _)| &**q).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl BridgeBuilder {
    /// Consume the queue of `config`, running `handler` for each message
    /// on an executor worker. `Ok` acks the message; a [`Failure`] is
    /// retried or dead-lettered as configured; a panic dead-letters it.
    ///
    /// # Examples
    ///
    /// See [`Bridge`].
    pub fn consume<H>(mut self, config: ConsumerConfig, handler: H) -> Self
    where
        H: Fn(&Incoming) -> Result<(), Failure> + Send + Sync + 'static,
    {
        self.consumers.push((config, Arc::new(handler), None));
        self
    }

    /// As [`consume`](Self::consume), for a stage's inbox: the first drain
    /// marker delivered stops the consumer, and once every delivery before
    /// it is settled the marker is acked and handed to `drained`.
    pub(crate) fn consume_until_drained<H>(
        mut self,
        config: ConsumerConfig,
        handler: H,
        drained: DrainFn,
    ) -> Self
    where
        H: Fn(&Incoming) -> Result<(), Failure> + Send + Sync + 'static,
    {
        self.consumers
            .push((config, Arc::new(handler), Some(drained)));
        self
    }

    /// Receives connection losses, reconnections and other events (on the
    /// bridge's thread: keep it short; a panic in it is ignored).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use priority_executor::{Capacity, Executor, Priority};
    /// # use priority_executor_amqp::{Bridge, ConsumerConfig};
    /// # let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build()?;
    /// let bridge = Bridge::builder("amqp://127.0.0.1:5672/%2f", exec)
    ///     .consume(ConsumerConfig::new("jobs"), |_| Ok(()))
    ///     .on_event(|event| eprintln!("amqp: {event:?}"))
    ///     .start()?;
    /// # drop(bridge);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_event(mut self, callback: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.events = Some(Arc::new(callback));
        self
    }

    /// The wait before reconnecting after a lost connection: `first`, then
    /// doubling up to `max`. Default 100 ms to 30 s.
    ///
    /// # Examples
    ///
    /// ```
    /// # use priority_executor::{Capacity, Executor, Priority};
    /// # use priority_executor_amqp::Bridge;
    /// # use std::time::Duration;
    /// # let exec = Executor::builder().lane(Priority(1), Capacity::Unbounded).build().unwrap();
    /// let builder = Bridge::builder("amqp://127.0.0.1:5672/%2f", exec)
    ///     .reconnect_backoff(Duration::from_millis(50), Duration::from_secs(5));
    /// # let _ = builder;
    /// ```
    pub fn reconnect_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.backoff = (first.max(Duration::from_millis(1)), max.max(first));
        self
    }

    /// The name the connections show in the broker (default: the
    /// executor's name).
    pub fn connection_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Checks the settings against the executor, connects, declares the
    /// queues and starts consuming. Returns once every queue is consumed.
    ///
    /// # Errors
    ///
    /// A [`BridgeError`] naming the queue and the setting: a URI that does
    /// not parse, no broker at its address, a refused login, a queue that
    /// exists with another `x-max-priority`, a table naming a lane the
    /// executor lacks, a prefetch of 0 or beyond a bounded lane's free
    /// capacity.
    pub fn start(self) -> Result<Bridge, BridgeError> {
        check_uri(&self.uri)?;
        let mut contexts = Vec::new();
        for (config, handler, drain) in self.consumers {
            let unmapped = check_config(&config, &self.executor)?;
            contexts.push(Arc::new(Ctx {
                uri: self.uri.clone(),
                queue: Arc::from(config.queue.as_str()),
                unmapped,
                config,
                executor: self.executor.clone(),
                handler,
                counters: Arc::new(Counters::default()),
                events: self.events.clone(),
                backoff: self.backoff,
                name: self.name.clone(),
                drain,
            }));
        }
        let runtime = new_runtime("amqp-bridge")?;
        let (stop, stop_rx) = watch::channel(false);
        let mut bridge = Bridge {
            runtime: None,
            stop,
            done: Vec::new(),
            queues: contexts
                .iter()
                .map(|c| (c.queue.clone(), c.counters.clone()))
                .collect(),
        };
        let mut ready = Vec::new();
        for ctx in contexts {
            let (ready_tx, ready_rx) = mpsc::sync_channel(1);
            let (done_tx, done_rx) = mpsc::sync_channel(1);
            let stop = stop_rx.clone();
            runtime.spawn(async move {
                session::run(ctx, ready_tx, stop).await;
                let _ = done_tx.send(());
            });
            ready.push(ready_rx);
            bridge.done.push(done_rx);
        }
        bridge.runtime = Some(runtime);
        for ready in ready {
            match ready.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e), // dropping the bridge stops the others
                Err(_) => {
                    return Err(BridgeError::Runtime(
                        "a consumer task ended before it started".to_owned(),
                    ));
                }
            }
        }
        Ok(bridge)
    }
}

impl fmt::Debug for BridgeBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BridgeBuilder")
            .field("uri", &crate::error::redact(&self.uri))
            .field("executor", &self.executor.name())
            .field(
                "queues",
                &self
                    .consumers
                    .iter()
                    .map(|(c, _, _)| c.queue())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// Checks a queue's settings against the executor; returns the unmapped
/// lane.
fn check_config(config: &ConsumerConfig, executor: &Executor) -> Result<Priority, BridgeError> {
    let queue = config.queue.clone();
    let metrics = executor.metrics();
    let lanes: Vec<Priority> = executor
        .config()
        .lanes
        .iter()
        .map(|lane| lane.priority)
        .collect();
    let lane_list = lanes
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let lowest = lanes.last().copied().ok_or_else(|| BridgeError::Config {
        queue: queue.clone(),
        setting: "executor".to_owned(),
        reason: "the executor has no lanes".to_owned(),
    })?;
    let unmapped = config.table.unmapped_lane().unwrap_or(lowest);
    let mut used = config.table.lanes();
    used.push(unmapped);
    used.sort();
    used.dedup();
    for lane in &used {
        if !lanes.contains(lane) {
            return Err(BridgeError::UnknownLane {
                queue,
                lane: *lane,
                executor: executor.name().to_owned(),
                lanes: lane_list,
            });
        }
    }
    if config.prefetch == 0 {
        return Err(BridgeError::Config {
            queue,
            setting: "prefetch".to_owned(),
            reason: "prefetch = 0 means no limit to RabbitMQ, which makes broker priority useless; set 1 or more (about the executor's threads)".to_owned(),
        });
    }
    for lane in &used {
        if let Some(m) = metrics.lane(*lane)
            && let Capacity::Bounded(capacity) = m.capacity
        {
            let free = capacity.saturating_sub(m.queued);
            if usize::from(config.prefetch) > free {
                return Err(BridgeError::Config {
                    queue,
                    setting: "prefetch".to_owned(),
                    reason: format!(
                        "prefetch = {} is more than lane {} can take ({free} free of {capacity}): deliveries would wait outside the lanes; lower the prefetch or raise the lane's capacity",
                        config.prefetch, lane
                    ),
                });
            }
        }
    }
    Ok(unmapped)
}
