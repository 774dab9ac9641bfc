//! How a stage process is made: its queues, instances and priorities, and
//! the start that declares the queues, spawns the local stage and consumes
//! the inbox.

use super::process::StageProcess;
use super::queues::{control_queue, queue_config, stage_priorities};
use super::remote::{Remote, UNPUBLISHED, perform_remote};
use super::wire::Wire;
use crate::bridge::Bridge;
use crate::config::ConsumerConfig;
use crate::delivery::Incoming;
use crate::drain::Marker;
use crate::error::BridgeError;
use crate::outgoing::Outgoing;
use crate::publisher::Publisher;
use crate::table::PriorityTable;
use priority_executor::actor::{Actor, Stage};
use priority_executor::{Capacity, Executor, Priority};
use std::fmt;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Factory<A> = Box<dyn FnMut(usize) -> A + Send>;

/// One stage of a pipeline across processes, in this process: N instances
/// of an [`Actor`] fed from the inbox queue, their outputs published to the
/// outbox queue (Kabuki's `-a`, `-i`, `-o`).
///
/// A stage without an inbox is a source: it is fed with
/// [`StageProcess::send`] and starts the drain with
/// [`StageProcess::drain`]. A stage with an inbox runs until the drain
/// marker reaches it ([`StageProcess::drain`] waits for it).
///
/// # Examples
///
/// ```no_run
/// use priority_executor::actor::{Actor, ActorError, Outbox};
/// use priority_executor_amqp::StageProcess;
///
/// struct Index;
/// impl Actor for Index {
///     type In = String;
///     type Out = String;
///     fn perform(&mut self, doc: String, out: &mut Outbox<'_, String>) -> Result<(), ActorError> {
///         out.send(doc.replace("Download", "Index"))?;
///         Ok(())
///     }
/// }
///
/// // amqp-pipeline --stage index -i index -o write -n 2, started twice
/// let stage = StageProcess::builder("amqp://guest:guest@127.0.0.1:5672/%2f", "index", |_| Index)
///     .inbox("index")
///     .outbox("write")
///     .instances(2)
///     .start()?;
/// let report = stage.drain()?; // returns once the drain marker came and everything before it ran
/// println!("{report}");
/// # Ok::<(), priority_executor_amqp::BridgeError>(())
/// ```
#[must_use = "a builder does nothing until .start() is called"]
pub struct StageProcessBuilder<A: Actor> {
    uri: String,
    name: String,
    factory: Factory<A>,
    instances: usize,
    inbox: Option<String>,
    outbox: Option<String>,
    table: PriorityTable,
    retries: u32,
    reports_within: Option<Duration>,
}

impl<A: Actor> StageProcess<A>
where
    A::In: Wire,
    A::Out: Wire,
{
    /// Starts configuring the stage `name` of a pipeline on the broker at
    /// `uri`; `factory(i)` makes instance `i`.
    ///
    /// # Examples
    ///
    /// See [`StageProcessBuilder`].
    pub fn builder(
        uri: impl Into<String>,
        name: impl Into<String>,
        factory: impl FnMut(usize) -> A + Send + 'static,
    ) -> StageProcessBuilder<A> {
        StageProcessBuilder {
            uri: uri.into(),
            name: name.into(),
            factory: Box::new(factory),
            instances: 1,
            inbox: None,
            outbox: None,
            table: stage_priorities(),
            retries: 0,
            reports_within: None,
        }
    }
}

impl<A: Actor> StageProcessBuilder<A>
where
    A::In: Wire,
    A::Out: Wire,
{
    /// How many instances in this process (threads; also the inbox's
    /// prefetch). Default 1.
    pub fn instances(mut self, n: usize) -> Self {
        self.instances = n.max(1);
        self
    }

    /// The queue this stage consumes (Kabuki's `-i`).
    pub fn inbox(mut self, queue: impl Into<String>) -> Self {
        self.inbox = Some(queue.into());
        self
    }

    /// The queue this stage's outputs go to (Kabuki's `-o`); without one,
    /// outputs are dropped (a last stage).
    pub fn outbox(mut self, queue: impl Into<String>) -> Self {
        self.outbox = Some(queue.into());
        self
    }

    /// The broker-priority-to-lane table of the inbox, also used to give
    /// outputs their broker priority. Default [`stage_priorities`].
    pub fn priorities(mut self, table: PriorityTable) -> Self {
        self.table = table;
        self
    }

    /// A failed perform of an inbox message runs again up to `n` times
    /// before the message is dead-lettered. Default 0. The retries wait in
    /// this process, the message in hand (not in a retry queue of the
    /// broker), so a drain marker behind it passes only after them.
    pub fn retries(mut self, n: u32) -> Self {
        self.retries = n;
        self
    }

    /// How long [`StageProcess::drain`], holding drain marker 0 of an inbox
    /// several processes consume, waits for the other processes' reports.
    /// Past it, it sends the markers downstream all the same (so the
    /// stages after it drain and exit) and returns an error naming the
    /// missing reports: a process that died with its marker, or before it
    /// took one, whose messages wait in the inbox for the next run (whose
    /// consumers drop a marker it left there: one sent before they
    /// started). By
    /// default it waits as long as it takes: a process reports once its
    /// own stage has drained, which with long performs takes long.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use priority_executor::actor::{Actor, ActorError, Outbox};
    /// # struct Index;
    /// # impl Actor for Index {
    /// #     type In = String;
    /// #     type Out = String;
    /// #     fn perform(&mut self, d: String, o: &mut Outbox<'_, String>) -> Result<(), ActorError> {
    /// #         o.send(d)?;
    /// #         Ok(())
    /// #     }
    /// # }
    /// use priority_executor_amqp::StageProcess;
    /// use std::time::Duration;
    ///
    /// let stage = StageProcess::builder("amqp://guest:guest@127.0.0.1:5672/%2f", "index", |_| Index)
    ///     .inbox("index")
    ///     .outbox("write")
    ///     .drain_reports_within(Duration::from_secs(600))
    ///     .start()?;
    /// # Ok::<(), priority_executor_amqp::BridgeError>(())
    /// ```
    pub fn drain_reports_within(mut self, limit: Duration) -> Self {
        self.reports_within = Some(limit);
        self
    }

    /// Declares the queues, starts the instances (every `init` has run)
    /// and, with an inbox, starts consuming it.
    ///
    /// An `init` that fails is no error here: it is in the drain report's
    /// faults. Once no instance is left to take a message from the inbox,
    /// the delivery is handed back to the queue (not acked, not
    /// dead-lettered), the inbox consumer stops and
    /// [`StageProcess::drain`] returns an error saying so.
    ///
    /// # Errors
    ///
    /// A [`BridgeError`] naming the queue and setting (a queue declared
    /// with another `x-max-priority`, no broker, a refused login), or the
    /// stage's spawn error.
    pub fn start(self) -> Result<StageProcess<A>, BridgeError> {
        let prefetch = u16::try_from(self.instances).unwrap_or(u16::MAX);
        let publisher = Arc::new(Publisher::connect(self.uri.as_str())?);
        if let Some(outbox) = &self.outbox {
            publisher.declare(&queue_config(outbox, &self.table, prefetch, self.retries))?;
            publisher.declare(&ConsumerConfig::new(control_queue(outbox)))?;
        }
        if let Some(inbox) = &self.inbox {
            publisher.declare(&ConsumerConfig::new(control_queue(inbox)))?;
        }
        let faults: Arc<Mutex<Vec<String>>> = Arc::default();
        let mut factory = self.factory;
        let mut builder = Stage::builder(self.name.clone(), move |i| Remote { inner: factory(i) })
            .instances(self.instances)
            // A dead letter's envelope is dropped at once: its delivery's
            // handler hears `Skipped` and hands it back to the inbox (the
            // consumer then stops), rather than waiting for an envelope
            // kept among the stage's dead letters.
            .on_dead_letter(drop);
        {
            let faults = faults.clone();
            builder = builder.on_fault(move |fault| {
                if let Ok(mut f) = faults.lock() {
                    f.push(fault.error.to_string());
                }
            });
        }
        if let Some(outbox) = self.outbox.clone() {
            let publisher = publisher.clone();
            let table = self.table.clone();
            builder = builder.on_output(move |out: A::Out, priority| {
                let mut msg = Outgoing::to_queue(outbox.as_str(), out.to_bytes());
                if let Some(p) = table.broker_priority(priority) {
                    msg = msg.priority(p);
                }
                if let Err(e) = publisher.publish(&msg) {
                    UNPUBLISHED.with(|u| {
                        u.borrow_mut()
                            .get_or_insert_with(|| format!("an output was not published: {e}"));
                    });
                }
            });
        }
        let stage = builder.spawn()?;
        let addr = stage.addr();
        let (bridge, drained) = match &self.inbox {
            None => (None, None),
            Some(inbox) => {
                let config = queue_config(inbox, &self.table, prefetch, self.retries);
                let mut lanes = self.table.lanes();
                let lowest = lanes.first().copied().unwrap_or(Priority::LOW);
                if self.table.unmapped_lane().is_none() {
                    lanes.push(lowest);
                }
                let mut exec = Executor::builder()
                    .name(format!("{}-inbox", self.name))
                    .core_threads(self.instances)
                    .max_threads(self.instances);
                lanes.sort();
                lanes.dedup();
                for lane in lanes {
                    exec = exec.lane(lane, Capacity::Bounded(self.instances));
                }
                let exec = exec.build()?;
                let (tx, rx) = mpsc::sync_channel::<Result<Marker, String>>(1);
                let handler_addr = addr.clone();
                let bridge = Bridge::builder(self.uri.as_str(), exec)
                    .connection_name(format!("{}-inbox", self.name))
                    .consume_until_drained(
                        config,
                        move |msg: &Incoming| perform_remote::<A>(&handler_addr, msg),
                        Arc::new(move |drained| {
                            let _ = tx.try_send(drained);
                        }),
                    )
                    .start()?;
                (Some(bridge), Some(rx))
            }
        };
        Ok(StageProcess {
            name: self.name,
            stage: Some(stage),
            addr,
            bridge,
            drained,
            publisher,
            uri: self.uri,
            inbox: self.inbox,
            outbox: self.outbox,
            faults,
            reports_within: self.reports_within,
        })
    }
}

impl<A: Actor> fmt::Debug for StageProcessBuilder<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StageProcessBuilder")
            .field("uri", &crate::error::redact(&self.uri))
            .field("name", &self.name)
            .field("instances", &self.instances)
            .field("inbox", &self.inbox)
            .field("outbox", &self.outbox)
            .finish_non_exhaustive()
    }
}
