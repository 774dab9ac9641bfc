//! Pipelines: stage k's outputs are stage k+1's input, typed at compile
//! time, with a drain marker that travels behind the payload.

use super::actor::Actor;
use super::addr::{Addr, Downstream, OutputFn};
use super::builder::StageBuilder;
use super::error::SpawnError;
use super::head::Head;
use super::metrics::StageMetrics;
use super::monitor::StageMonitor;
use super::reason::Reason;
use super::resize::Spawned;
use super::shared::{Exit, Link};
use crate::executor::Executor;
use crate::priority::Priority;
use crate::sync::ending::{Begun, Ending};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::thread::JoinHandle;

/// A spawned stage as the pipeline holds it. Dropping it drains the stage
/// first, so its executor's threads are free to be joined.
struct Running {
    link: Arc<dyn Link>,
    exec: Option<Executor>,
    /// The resizer's checks (rule 27), which end with the stage. Their
    /// thread holds the stage's factory and a clone of its executor.
    resizer: Option<JoinHandle<()>>,
}

impl Running {
    fn new<A: Actor>(spawned: Spawned<A>) -> Running {
        let Spawned {
            core,
            exec,
            resizer,
            ..
        } = spawned;
        Running {
            link: core,
            exec: Some(exec),
            resizer,
        }
    }

    /// Waits for the stage's end, then for its resizer's checks (so its
    /// factory is dropped by then), then shuts its executor down.
    fn end(&mut self) -> Reason {
        let reason = self.link.wait_done();
        if let Some(checks) = self.resizer.take() {
            let _ = checks.join();
        }
        drop(self.exec.take());
        reason
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.exec.is_some() {
            self.link.begin_drain();
            self.end();
        }
    }
}

struct Chain<I> {
    addr: Addr<I>,
    /// Upstream first.
    stages: Vec<Running>,
}

/// Spawns the stages chained so far, last first: outputs go `down`, the
/// last of them passes the marker to the `Link`, and a drain an actor asks
/// for begins at the `Head` (set by the first stage).
type Build<I, O> = Box<
    dyn FnOnce(Downstream<O>, Option<Arc<dyn Link>>, Arc<Head>) -> Result<Chain<I>, SpawnError>,
>;

/// Stages chained so far: messages `I` in, outputs `O` out.
///
/// # Examples
///
/// See [`Pipeline`].
#[must_use = "a builder does nothing until .spawn() is called"]
pub struct PipelineBuilder<I, O> {
    build: Build<I, O>,
    on_output: Option<OutputFn<O>>,
    stages: Vec<String>,
}

impl<I: Send + 'static, O: Send + 'static> PipelineBuilder<I, O> {
    /// Appends a stage whose input is the outputs so far (checked at
    /// compile time).
    ///
    /// # Examples
    ///
    /// See [`Pipeline`].
    pub fn then<B: Actor<In = O>>(self, next: StageBuilder<B>) -> PipelineBuilder<I, B::Out> {
        let upstream = self.build;
        let mut stages = self.stages;
        stages.push(format!("{next:?}"));
        PipelineBuilder {
            build: Box::new(move |down, link, head| {
                let spawned = next.spawn_into(down, link, head.clone(), false)?;
                let addr = Addr {
                    mb: spawned.core.mb.clone(),
                };
                let running = Running::new(spawned);
                let link = running.link.clone();
                let mut chain = upstream(Downstream::Stage(addr), Some(link), head)?;
                chain.stages.push(running);
                Ok(chain)
            }),
            on_output: None,
            stages,
        }
    }

    /// Receives the last stage's outputs with their priority (else they
    /// are dropped).
    ///
    /// # Examples
    ///
    /// See [`Pipeline`].
    pub fn on_output(mut self, sink: impl Fn(O, Priority) + Send + Sync + 'static) -> Self {
        self.on_output = Some(Arc::new(sink));
        self
    }

    /// Spawns every stage, last first, and returns once every `init` ran.
    ///
    /// # Errors
    ///
    /// The first stage's [`SpawnError`]; stages already spawned are
    /// drained and stopped.
    ///
    /// # Examples
    ///
    /// See [`Pipeline`].
    pub fn spawn(self) -> Result<Pipeline<I>, SpawnError> {
        let down = match self.on_output {
            Some(f) => Downstream::Output(f),
            None => Downstream::Discard,
        };
        let chain = (self.build)(down, None, Arc::default())?;
        Ok(Pipeline {
            addr: chain.addr,
            stages: chain.stages,
        })
    }
}

impl<I, O> fmt::Debug for PipelineBuilder<I, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PipelineBuilder")
            .field("stages", &self.stages)
            .finish_non_exhaustive()
    }
}

/// Stages joined output to input (Kabuki's actors joined by broker
/// queues), drained in order by a marker that travels behind the payload.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Reason, Stage};
/// use std::sync::mpsc;
///
/// struct Double;
/// impl Actor for Double {
///     type In = u64;
///     type Out = u64;
///     fn perform(&mut self, n: u64, out: &mut Outbox<'_, u64>) -> Result<(), ActorError> {
///         let _ = out.send(n * 2);
///         Ok(())
///     }
/// }
/// struct Show;
/// impl Actor for Show {
///     type In = u64;
///     type Out = String;
///     fn perform(&mut self, n: u64, out: &mut Outbox<'_, String>) -> Result<(), ActorError> {
///         let _ = out.send(n.to_string());
///         Ok(())
///     }
/// }
///
/// let (tx, rx) = mpsc::channel();
/// let pipeline = Pipeline::builder(Stage::builder("double", |_| Double))
///     .then(Stage::builder("show", |_| Show).instances(2))
///     .on_output(move |s, _priority| tx.send(s).unwrap())
///     .spawn()?;
/// let addr = pipeline.addr();
/// for n in 0..100 {
///     addr.send(n).unwrap();
/// }
/// let exits = pipeline.drain(); // returns once the last stage is destroyed
/// assert!(exits.iter().all(|e| e.reason == Reason::Drained && e.metrics.is_balanced()));
/// assert_eq!(rx.try_iter().count(), 100);
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
pub struct Pipeline<I> {
    addr: Addr<I>,
    stages: Vec<Running>,
}

impl Pipeline<()> {
    /// Starts a pipeline with its first stage.
    ///
    /// # Examples
    ///
    /// See [`Pipeline`].
    pub fn builder<A: Actor>(first: StageBuilder<A>) -> PipelineBuilder<A::In, A::Out> {
        let stages = vec![format!("{first:?}")];
        PipelineBuilder {
            build: Box::new(move |down, link, head| {
                let spawned = first.spawn_into(down, link, head, true)?;
                let addr = Addr {
                    mb: spawned.core.mb.clone(),
                };
                Ok(Chain {
                    addr,
                    stages: vec![Running::new(spawned)],
                })
            }),
            on_output: None,
            stages,
        }
    }
}

impl<I> Pipeline<I> {
    /// The first stage's address: send to the pipeline through it.
    ///
    /// # Examples
    ///
    /// See [`Addr`].
    pub fn addr(&self) -> Addr<I> {
        self.addr.clone()
    }

    /// Each stage's counters, first stage first.
    ///
    /// # Examples
    ///
    /// See [`StageMetrics`].
    pub fn metrics(&self) -> Vec<StageMetrics> {
        self.stages.iter().map(|s| s.link.metrics()).collect()
    }

    /// A [`StageMonitor`] of each stage, first stage first: views that do
    /// not own the pipeline. [`StageMonitor::drain`] on any of them drains
    /// the whole pipeline from its first stage.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Reason, Stage};
    ///
    /// struct Pass;
    /// impl Actor for Pass {
    ///     type In = u8;
    ///     type Out = u8;
    ///     fn perform(&mut self, n: u8, out: &mut Outbox<'_, u8>) -> Result<(), ActorError> {
    ///         let _ = out.send(n);
    ///         Ok(())
    ///     }
    /// }
    /// let pipeline = Pipeline::builder(Stage::builder("a", |_| Pass))
    ///     .then(Stage::builder("b", |_| Pass))
    ///     .spawn()?;
    /// let monitors = pipeline.monitors();
    /// let names: Vec<&str> = monitors.iter().map(|m| m.name()).collect();
    /// assert_eq!(names, ["a", "b"]);
    /// pipeline.addr().send(7).unwrap();
    /// monitors[1].drain(); // begins at stage "a", behind the 7
    /// let exits = pipeline.join();
    /// assert!(exits.iter().all(|e| e.reason == Reason::Drained));
    /// assert_eq!(monitors[1].metrics().performed, 1);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn monitors(&self) -> Vec<StageMonitor> {
        self.stages
            .iter()
            .map(|s| StageMonitor::new(s.link.clone()))
            .collect()
    }

    /// Sends the drain marker behind everything sent so far and waits
    /// until the last stage has destroyed its instances. Each stage stops
    /// accepting, performs what it accepted, destroys its instances, then
    /// passes the marker on. A send after this is refused with the
    /// message.
    ///
    /// # Examples
    ///
    /// See [`Pipeline`].
    pub fn drain(mut self) -> Vec<Exit> {
        self.assert_not_own("drain");
        if let Some(first) = self.stages.first() {
            first.link.begin_drain();
        }
        self.finish()
    }

    /// Waits until the pipeline ends by itself: one of its actors asked it
    /// to drain ([`Outbox::drain_pipeline`](super::Outbox::drain_pipeline),
    /// Kabuki's producer calling `shutdown()`), or its first stage ended
    /// (stopped, killed, idle), which passes the marker on as a drain
    /// does. Returns each stage's exit, first stage first.
    ///
    /// # Examples
    ///
    /// See `examples/kabuki.rs`.
    pub fn join(mut self) -> Vec<Exit> {
        self.assert_not_own("join");
        self.finish()
    }

    /// [`drain`](Pipeline::drain) as a future, for async code: any
    /// runtime can poll it, and it needs none. Its first poll sends the
    /// drain marker behind everything sent so far and starts the wait for
    /// the last stage's end on a thread of its own, named
    /// `{first stage}-drain`; it resolves to the exits `drain` returns,
    /// first stage first. The future is `'static`, `Send` and `Unpin`.
    ///
    /// Cancel-safe: dropping the future leaves the drain running on its
    /// thread. One dropped before its first poll drops the pipeline
    /// there, which drains it (as dropping the pipeline does): the thread
    /// dropping the future never waits.
    ///
    /// # Panics
    ///
    /// On its first poll by an instance of one of the pipeline's stages,
    /// as `drain` does there.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Reason, Stage};
    /// use std::sync::mpsc;
    ///
    /// struct Double;
    /// impl Actor for Double {
    ///     type In = u64;
    ///     type Out = u64;
    ///     fn perform(&mut self, n: u64, out: &mut Outbox<'_, u64>) -> Result<(), ActorError> {
    ///         let _ = out.send(n * 2);
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let (tx, rx) = mpsc::channel();
    /// let pipeline = Pipeline::builder(Stage::builder("double", |_| Double))
    ///     .then(Stage::builder("again", |_| Double))
    ///     .on_output(move |n, _priority| tx.send(n).unwrap())
    ///     .spawn()?;
    /// for n in 0..10 {
    ///     pipeline.addr().send(n).unwrap();
    /// }
    /// // In an async fn or block, on any runtime (futures' block_on here):
    /// let exits = futures::executor::block_on(pipeline.drain_async());
    /// assert!(exits.iter().all(|e| e.reason == Reason::Drained));
    /// assert_eq!(rx.try_iter().sum::<u64>(), 4 * 45);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn drain_async(self) -> impl Future<Output = Vec<Exit>> + Send + Unpin + 'static
    where
        I: Send + 'static,
    {
        self.end_async("drain", |pipeline| {
            if let Some(first) = pipeline.stages.first() {
                first.link.begin_drain();
            }
        })
    }

    /// [`join`](Pipeline::join) as a future: waits until the pipeline ends
    /// by itself, on a thread of its own named `{first stage}-join` that
    /// its first poll starts, and resolves to the exits `join` returns,
    /// first stage first. Any runtime can poll it, and it needs none; it
    /// is `'static`, `Send` and `Unpin`.
    ///
    /// Cancel-safe as [`drain_async`](Pipeline::drain_async): dropped once
    /// polled, its thread goes on waiting and then drops the pipeline
    /// (which drains it, as dropping the pipeline does); dropped before
    /// its first poll, the pipeline is dropped on a thread of its own.
    ///
    /// # Panics
    ///
    /// On its first poll by an instance of one of the pipeline's stages,
    /// as `join` does there.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Reason, Stage};
    ///
    /// struct Pass;
    /// impl Actor for Pass {
    ///     type In = u8;
    ///     type Out = u8;
    ///     fn perform(&mut self, n: u8, out: &mut Outbox<'_, u8>) -> Result<(), ActorError> {
    ///         let _ = out.send(n);
    ///         Ok(())
    ///     }
    /// }
    /// let pipeline = Pipeline::builder(Stage::builder("a", |_| Pass))
    ///     .then(Stage::builder("b", |_| Pass))
    ///     .spawn()?;
    /// pipeline.addr().send(7).unwrap();
    /// pipeline.monitors()[0].drain(); // ends it from elsewhere
    /// let exits = futures::executor::block_on(pipeline.join_async());
    /// assert!(exits.iter().all(|e| e.reason == Reason::Drained));
    /// assert_eq!(exits[1].metrics.performed, 1);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn join_async(self) -> impl Future<Output = Vec<Exit>> + Send + Unpin + 'static
    where
        I: Send + 'static,
    {
        self.end_async("join", |_| {})
    }

    /// The pipeline's end as a future: on the first poll the checks of the
    /// blocking forms and `begin` run on the polling thread, the wait on a
    /// thread named `{first stage}-{what}`.
    fn end_async(self, what: &'static str, begin: fn(&Pipeline<I>)) -> Ending<Vec<Exit>>
    where
        I: Send + 'static,
    {
        let first = self.stages.first().map(|s| s.link.metrics().name);
        let name = format!("{}-{what}", first.unwrap_or_default());
        Ending::owning(std::thread::Builder::new().name(name), move || {
            let mut pipeline = self;
            pipeline.assert_not_own(&format!("{what}_async"));
            begin(&pipeline);
            Begun::Wait(Box::new(move || pipeline.finish()))
        })
    }

    fn assert_not_own(&self, what: &str) {
        assert!(
            !self.stages.iter().any(|s| s.link.is_own_thread()),
            "Pipeline::{what} called by an instance of one of its stages: \
             it would wait for itself; drop the pipeline instead"
        );
    }

    fn finish(&mut self) -> Vec<Exit> {
        let mut exits = Vec::with_capacity(self.stages.len());
        for stage in &mut self.stages {
            let reason = stage.end();
            exits.push(Exit {
                reason,
                metrics: stage.link.metrics(),
            });
        }
        exits
    }
}

/// Dropping a pipeline drains it stage by stage, as
/// [`drain`](Pipeline::drain). Dropped on one of its stages' instances
/// (inside a `perform`), it cannot wait for that stage, nor for the stages
/// behind it (rule 19 of `src/actor/README.md`): it sends the drain marker
/// and returns at once; the marker travels as in a drain, and each
/// stage's last instance shuts its executor down. `drain` from there
/// panics with that advice instead of waiting for ever.
impl<I> Drop for Pipeline<I> {
    fn drop(&mut self) {
        if !self.stages.iter().any(|s| s.link.is_own_thread()) {
            // `Running`'s drops drain the stages in order.
            return;
        }
        if let Some(first) = self.stages.first() {
            first.link.begin_drain();
        }
        for stage in &mut self.stages {
            if let Some(exec) = stage.exec.take() {
                stage.link.hand_over(exec);
            }
        }
    }
}

impl<I> fmt::Debug for Pipeline<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.metrics().into_iter().map(|m| m.name).collect();
        f.debug_struct("Pipeline")
            .field("stages", &names)
            .finish_non_exhaustive()
    }
}
