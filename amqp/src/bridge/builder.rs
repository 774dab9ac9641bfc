//! The settings of a [`Bridge`], and starting it: blocking, or awaited
//! in async code.

use super::check::check_config;
use super::{Bridge, BridgeMonitor};
use crate::config::ConsumerConfig;
use crate::delivery::{Failure, Incoming};
use crate::error::BridgeError;
use crate::liveness::check_uri;
use crate::metrics::{Counters, Event};
use crate::runtime::{block, is_current_thread, new_runtime, refuse_endless_wait};
use crate::session::{self, Ctx, DrainFn, EventFn, HandlerFn};
use priority_executor::Executor;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::sync::{oneshot, watch};

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
    /// The application's runtime, if given.
    runtime: Option<Handle>,
}

impl BridgeBuilder {
    pub(super) fn new(uri: String, executor: Executor) -> Self {
        BridgeBuilder {
            uri,
            name: executor.name().to_owned(),
            executor,
            consumers: Vec::new(),
            events: None,
            backoff: (Duration::from_millis(100), Duration::from_secs(30)),
            runtime: None,
        }
    }

    /// Runs the bridge's async side on `runtime`, the application's,
    /// instead of a thread of its own. The runtime needs its I/O and time
    /// drivers (`enable_all`, as `#[tokio::main]` gives) and must outlive
    /// the bridge's consumers: stop the bridge before shutting it down.
    /// A current-thread runtime runs them only while its `block_on` runs:
    /// start and stop the bridge from inside it, with
    /// [`start_async`](Self::start_async) and
    /// [`Bridge::stop_async`].
    ///
    /// # Examples
    ///
    /// See [`Bridge::stop_async`].
    pub fn runtime(mut self, runtime: Handle) -> Self {
        self.runtime = Some(runtime);
        self
    }

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
    /// it is settled the marker is acked and handed to `drained`. A marker
    /// sent before the consumer started is acked and dropped. A consumer
    /// that ends without a marker (the handler no longer takes deliveries,
    /// the executor shut down) hands `drained` the reason.
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
    /// This blocks the calling thread; in async code, use
    /// [`start_async`](Self::start_async).
    ///
    /// # Panics
    ///
    /// If called inside a current-thread runtime with
    /// [`runtime`](Self::runtime) set to a current-thread runtime: the
    /// bridge's tasks may need that runtime's only thread, and the wait
    /// would never end.
    ///
    /// # Errors
    ///
    /// A [`BridgeError`] naming the queue and the setting: a URI that does
    /// not parse, no broker at its address, a refused login, a queue that
    /// exists with another `x-max-priority`, a table naming a lane the
    /// executor lacks, a prefetch of 0 or beyond a bounded lane's free
    /// capacity.
    pub fn start(self) -> Result<Bridge, BridgeError> {
        refuse_endless_wait(
            self.runtime.as_ref().is_some_and(is_current_thread),
            "start",
        );
        let (bridge, ready) = self.launch()?;
        block(all_ready(ready))?;
        Ok(bridge)
    }

    /// As [`start`](Self::start), awaiting the consumers' start instead
    /// of blocking: for async code, on any runtime.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    ///
    /// # Examples
    ///
    /// See [`Bridge::stop_async`].
    pub async fn start_async(self) -> Result<Bridge, BridgeError> {
        let (bridge, ready) = self.launch()?;
        all_ready(ready).await?;
        Ok(bridge)
    }

    /// Checks the settings and spawns one consumer task per queue; each
    /// tells on its receiver whether it started.
    fn launch(self) -> Result<(Bridge, Vec<Ready>), BridgeError> {
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
                started: std::time::SystemTime::now(),
            }));
        }
        let borrowed_current = self.runtime.as_ref().is_some_and(is_current_thread);
        let (own, handle) = match self.runtime {
            Some(handle) => (None, handle),
            None => {
                let runtime = new_runtime("amqp-bridge")?;
                let handle = runtime.handle().clone();
                (Some(runtime), handle)
            }
        };
        let (stop, stop_rx) = watch::channel(false);
        let mut bridge = Bridge {
            runtime: own,
            borrowed_current,
            stop,
            done: Vec::new(),
            monitor: BridgeMonitor::new(
                &self.name,
                contexts
                    .iter()
                    .map(|c| (c.queue.clone(), c.counters.clone()))
                    .collect(),
            ),
        };
        let mut ready = Vec::new();
        for ctx in contexts {
            let (ready_tx, ready_rx) = oneshot::channel();
            let (done_tx, done_rx) = oneshot::channel();
            let stop = stop_rx.clone();
            let queue = ctx.queue.to_string();
            handle.spawn(async move {
                session::run(ctx, ready_tx, stop).await;
                let _ = done_tx.send(());
            });
            ready.push((queue, ready_rx));
            bridge.done.push(done_rx);
        }
        Ok((bridge, ready))
    }
}

/// A consumer task's queue, and its word that it started or why not.
type Ready = (String, oneshot::Receiver<Result<(), BridgeError>>);

/// Waits until every consumer started; the first error otherwise (the
/// caller drops the bridge, which stops the others).
async fn all_ready(ready: Vec<Ready>) -> Result<(), BridgeError> {
    for (queue, ready) in ready {
        match ready.await {
            Ok(result) => result?,
            Err(_) => {
                return Err(BridgeError::Runtime(format!(
                    "the consumer of queue {queue:?} ended before it started \
                     (its runtime shut down, or its task panicked)"
                )));
            }
        }
    }
    Ok(())
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
