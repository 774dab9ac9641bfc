//! Pipelines across processes: a stage of `priority_executor::actor` whose
//! inbox and outbox are broker queues, so each stage runs in processes of
//! its own (Kabuki's `-a ACTOR -i INBOX -o OUTBOX`), as many per stage as
//! needed, and a drain marker crosses them in order.
//!
//! # The drain across processes
//!
//! With N processes consuming one queue a single marker reaches only one
//! of them, and messages may still be in the others' hands. So:
//!
//! 1. The stage that starts the drain (the source, [`StageProcess::drain`]
//!    without an inbox) first drains its local stage: every output is
//!    published and confirmed. Then it reads how many consumers its outbox
//!    has (M, at least 1) and publishes M markers (index 0..M, count M, one epoch) at
//!    broker priority 0, behind everything published before them.
//! 2. Each consumer of that queue takes exactly one marker: on its first
//!    it stops consuming (a marker or message delivered to it after that is
//!    handed back to the queue, for the others), finishes and acks what it
//!    has in hand (everything delivered to it before the marker), then
//!    drains its local stage, whose outputs are published and confirmed.
//! 3. The holder of a marker other than 0 then reports to the stage's
//!    control queue (`INBOX.drain`) and exits. The holder of marker 0 waits
//!    for the M - 1 reports of its epoch; then every message published into
//!    the queue before the markers has been performed, by whichever
//!    process, and its outputs are in the outbox: it sends markers
//!    downstream as in step 1.
//!
//! No step waits for a fixed time. Every process of a stage must be
//! consuming when the markers for its queue are counted (start the
//! downstream processes first, as Kabuki's script did); a process that
//! joins later gets no marker.
//!
//! # Guarantees
//!
//! A message is acked only after its perform returned and every output it
//! sent was confirmed by the broker (at least once: a process that dies
//! in between leaves it to the broker, which delivers it again). A body
//! the stage cannot decode is dead-lettered to `INBOX.dlx` (kept in
//! `INBOX.dead`) with the reason naming the queue and the type; a failed
//! perform is too, after the configured retries.

use crate::bridge::Bridge;
use crate::config::ConsumerConfig;
use crate::delivery::{Failure, Incoming};
use crate::drain::{EPOCH_HEADER, INDEX_HEADER, Marker};
use crate::error::BridgeError;
use crate::metrics::ConsumerMetrics;
use crate::outgoing::Outgoing;
use crate::publisher::Publisher;
use crate::table::PriorityTable;
use priority_executor::actor::{
    Actor, ActorError, Addr, Context, Exit, Outbox, Reason, SendError, Stage,
};
use priority_executor::{Capacity, Executor, Priority};
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// A message type that crosses processes: how it is written into a
/// message body and read back.
///
/// # Examples
///
/// ```
/// use priority_executor_amqp::Wire;
///
/// #[derive(Debug, PartialEq)]
/// struct Document(u32);
///
/// impl Wire for Document {
///     fn to_bytes(&self) -> Vec<u8> {
///         self.0.to_string().into_bytes()
///     }
///     fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
///         let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
///         text.parse().map(Document).map_err(|e| format!("{text:?}: {e}"))
///     }
/// }
/// assert_eq!(Document::from_bytes(&Document(7).to_bytes()), Ok(Document(7)));
/// assert!(Document::from_bytes(b"seven").is_err());
/// ```
pub trait Wire: Sized {
    /// The message body.
    fn to_bytes(&self) -> Vec<u8>;
    /// The value back from a body.
    ///
    /// # Errors
    ///
    /// Why the body is not one (the message is then dead-lettered with
    /// that reason).
    fn from_bytes(bytes: &[u8]) -> Result<Self, String>;
}

impl Wire for String {
    fn to_bytes(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        String::from_utf8(bytes.to_vec()).map_err(|e| format!("not UTF-8 text ({e})"))
    }
}

impl Wire for Vec<u8> {
    fn to_bytes(&self) -> Vec<u8> {
        self.clone()
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        Ok(bytes.to_vec())
    }
}

impl Wire for () {
    fn to_bytes(&self) -> Vec<u8> {
        Vec::new()
    }
    fn from_bytes(_: &[u8]) -> Result<Self, String> {
        Ok(())
    }
}

macro_rules! wire_number {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            fn to_bytes(&self) -> Vec<u8> {
                self.to_string().into_bytes()
            }
            fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
                let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text ({e})"))?;
                text.trim()
                    .parse()
                    .map_err(|e| format!("{text:?} is not a {} ({e})", stringify!($t)))
            }
        }
    )*};
}
wire_number!(u8, u16, u32, u64, usize, i32, i64, f64);

/// How a perform of a message from the inbox came out, as its handler
/// learns it.
enum Performed {
    Done,
    Failed(String),
    Panicked,
    Skipped,
}

/// Tells the waiting handler how the perform came out; dropped unused (a
/// panic, or a letter the stage never performed), it says so.
struct Done(Option<SyncSender<Performed>>);

impl Done {
    fn finish(mut self, performed: Performed) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(performed);
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(if std::thread::panicking() {
                Performed::Panicked
            } else {
                Performed::Skipped
            });
        }
    }
}

/// A message for the local stage, from the inbox (with the handler
/// waiting on `done`) or sent by this process.
struct Envelope<M> {
    msg: M,
    done: Option<Done>,
}

thread_local! {
    /// The first output of the current perform that the broker did not
    /// take: the input is then not acked.
    static UNPUBLISHED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The user's actor inside the local stage.
struct Remote<A> {
    inner: A,
}

impl<A: Actor> Actor for Remote<A> {
    type In = Envelope<A::In>;
    type Out = A::Out;

    fn init(&mut self, ctx: &Context<'_>) -> Result<(), ActorError> {
        self.inner.init(ctx)
    }

    fn perform(
        &mut self,
        envelope: Envelope<A::In>,
        out: &mut Outbox<'_, A::Out>,
    ) -> Result<(), ActorError> {
        let Envelope { msg, done } = envelope;
        UNPUBLISHED.with(|u| u.borrow_mut().take());
        let result = self
            .inner
            .perform(msg, out)
            .map_err(|e| e.to_string())
            .and_then(|()| match UNPUBLISHED.with(|u| u.borrow_mut().take()) {
                None => Ok(()),
                Some(e) => Err(e),
            });
        match done {
            Some(done) => {
                done.finish(match result {
                    Ok(()) => Performed::Done,
                    Err(e) => Performed::Failed(e),
                });
                Ok(())
            }
            None => result.map_err(ActorError::from),
        }
    }

    fn destroy(&mut self, reason: Reason) {
        self.inner.destroy(reason);
    }
}

/// The broker priorities of a stage's queues: 0-3 to
/// [`Priority::LOW`], 4-6 to [`Priority::MEDIUM`], 7-9 to
/// [`Priority::HIGH`], 10 and above to [`Priority::URGENT`] (the actor
/// layer's levels); the queues are declared with `x-max-priority` 10.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
/// use priority_executor_amqp::stage_priorities;
///
/// let table = stage_priorities();
/// assert_eq!(table.lane_for(Some(5)), Some(Priority::MEDIUM));
/// // An output at MEDIUM is published with broker priority 6.
/// assert_eq!(table.broker_priority(Priority::MEDIUM), Some(6));
/// ```
pub fn stage_priorities() -> PriorityTable {
    PriorityTable::new()
        .map(0..=3, Priority::LOW)
        .map(4..=6, Priority::MEDIUM)
        .map(7..=9, Priority::HIGH)
        .map(10..=255, Priority::URGENT)
}

type Factory<A> = Box<dyn FnMut(usize) -> A>;

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
}

/// A running stage process: see [`StageProcessBuilder`].
pub struct StageProcess<A: Actor> {
    name: String,
    stage: Option<Stage<Remote<A>>>,
    addr: Addr<Envelope<A::In>>,
    bridge: Option<Bridge>,
    drained: Option<Receiver<Marker>>,
    publisher: Arc<Publisher>,
    uri: String,
    inbox: Option<String>,
    outbox: Option<String>,
    faults: Arc<Mutex<Vec<String>>>,
}

/// What a stage process did, once drained.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DrainReport {
    /// The stage's name.
    pub stage: String,
    /// The local stage's end (reason and counters).
    pub exit: Exit,
    /// The inbox consumer's counters (none for a source).
    pub inbox: Option<ConsumerMetrics>,
    /// The marker this process took: (index, count); a source's own is
    /// (0, 1).
    pub marker: (u32, u32),
    /// Markers sent downstream (0 unless this process held marker 0 and
    /// has an outbox).
    pub forwarded: u32,
    /// Failures of perform, init or publishing outputs, in order.
    pub faults: Vec<String>,
}

impl fmt::Display for DrainReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.exit.metrics;
        write!(
            f,
            "stage {} {}: performed {}, faulted {}, marker {}/{}",
            self.stage, self.exit.reason, m.performed, m.faulted, self.marker.0, self.marker.1
        )?;
        if let Some(i) = &self.inbox {
            write!(
                f,
                ", inbox acked {} dead-lettered {} requeued {}",
                i.acked, i.dead_lettered, i.requeued
            )?;
        }
        if self.forwarded > 0 {
            write!(f, ", {} markers sent downstream", self.forwarded)?;
        }
        Ok(())
    }
}

/// The control queue of the stage consuming `inbox`.
fn control_queue(inbox: &str) -> String {
    format!("{inbox}.drain")
}

/// How a stage's queue is declared: the same by its consumers and by the
/// stage that publishes into it.
fn queue_config(queue: &str, table: &PriorityTable, prefetch: u16, retries: u32) -> ConsumerConfig {
    ConsumerConfig::new(queue)
        .max_priority(10)
        .priorities(table.clone())
        .prefetch(prefetch)
        .dead_letter_exchange(format!("{queue}.dlx"))
        .dead_letter_queue(format!("{queue}.dead"))
        .retries(retries, std::time::Duration::from_millis(50), 2.0)
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
        factory: impl FnMut(usize) -> A + 'static,
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
        }
    }

    /// Sends a message to the local stage (a source's input), at the
    /// stage's default priority.
    ///
    /// # Errors
    ///
    /// The message back if the stage no longer accepts messages.
    pub fn send(&self, msg: A::In) -> Result<(), A::In> {
        self.addr
            .send(Envelope { msg, done: None })
            .map_err(|e: SendError<_>| e.into_inner().msg)
    }

    /// Drains this process and passes the drain on.
    ///
    /// With an inbox: waits for the drain marker (see the
    /// [module](crate::pipeline) docs), so everything published into the
    /// inbox before it is performed. Without one (a source): starts a new
    /// drain. Then drains the local stage (its outputs are confirmed), and
    /// either reports to the holder of marker 0 or, holding it, waits for
    /// the others' reports and sends the markers downstream.
    ///
    /// # Errors
    ///
    /// A broker error while reporting or forwarding; the inbox consumer
    /// stopping without a marker (the bridge's runtime failed).
    pub fn drain(mut self) -> Result<DrainReport, BridgeError> {
        let marker = match self.drained.take() {
            Some(rx) => rx.recv().map_err(|_| {
                BridgeError::Runtime(format!(
                    "stage {}: the inbox consumer ended without a drain marker",
                    self.name
                ))
            })?,
            None => Marker {
                epoch: new_epoch(&self.name),
                index: 0,
                count: 1,
            },
        };
        let inbox = self.bridge.take().map(|b| b.stop().remove(0));
        let exit = match self.stage.take() {
            Some(stage) => stage.drain(),
            None => return Err(BridgeError::Runtime("drained twice".to_owned())),
        };
        let mut forwarded = 0;
        if marker.index == 0 {
            if marker.count > 1
                && let Some(inbox) = &self.inbox
            {
                self.await_reports(inbox, &marker)?;
            }
            if let Some(outbox) = &self.outbox {
                let count = self.publisher.consumer_count(outbox)?.max(1);
                self.publisher.publish_all((0..count).map(|index| {
                    Marker {
                        epoch: marker.epoch.clone(),
                        index,
                        count,
                    }
                    .outgoing(outbox)
                }))?;
                forwarded = count;
            }
        } else if let Some(inbox) = &self.inbox {
            self.publisher.publish(
                &Outgoing::to_queue(control_queue(inbox), Vec::new())
                    .header(EPOCH_HEADER, &marker.epoch)
                    .header(INDEX_HEADER, marker.index),
            )?;
        }
        let faults = self
            .faults
            .lock()
            .map(|mut f| std::mem::take(&mut *f))
            .unwrap_or_default();
        Ok(DrainReport {
            stage: self.name.clone(),
            exit,
            inbox,
            marker: (marker.index, marker.count),
            forwarded,
            faults,
        })
    }

    /// Waits for the reports of the other `count - 1` marker holders of
    /// this epoch on the control queue; older epochs' reports are dropped.
    fn await_reports(&self, inbox: &str, marker: &Marker) -> Result<(), BridgeError> {
        let exec = Arc::new(
            Executor::builder()
                .name("drain-reports")
                .core_threads(1)
                .max_threads(1)
                .lane(Priority(1), Capacity::Unbounded)
                .build()
                .map_err(|e| BridgeError::Runtime(e.to_string()))?,
        );
        let (tx, rx) = mpsc::channel::<u32>();
        let tx = Mutex::new(tx);
        let epoch = marker.epoch.clone();
        let bridge = Bridge::builder(self.uri.as_str(), exec)
            .connection_name(format!("{}-drain", self.name))
            .consume(
                ConsumerConfig::new(control_queue(inbox)).prefetch(16),
                move |msg| {
                    if msg.header(EPOCH_HEADER).as_deref() == Some(epoch.as_str())
                        && let Some(index) = msg.header(INDEX_HEADER).and_then(|i| i.parse().ok())
                        && let Ok(tx) = tx.lock()
                    {
                        let _ = tx.send(index);
                    }
                    Ok(())
                },
            )
            .start()?;
        let mut reported = HashSet::new();
        while (reported.len() as u32) < marker.count - 1 {
            match rx.recv() {
                Ok(index) if index != marker.index => {
                    reported.insert(index);
                }
                Ok(_) => {}
                Err(_) => {
                    return Err(BridgeError::Runtime(format!(
                        "stage {}: the control queue's consumer ended",
                        self.name
                    )));
                }
            }
        }
        bridge.stop();
        Ok(())
    }

    /// The stage's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl<A: Actor> fmt::Debug for StageProcess<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StageProcess")
            .field("name", &self.name)
            .field("inbox", &self.inbox)
            .field("outbox", &self.outbox)
            .finish_non_exhaustive()
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

fn new_epoch(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{name}-{}-{nanos}", std::process::id())
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
    /// before the message is dead-lettered. Default 0.
    pub fn retries(mut self, n: u32) -> Self {
        self.retries = n;
        self
    }

    /// Declares the queues, starts the instances (every `init` has run)
    /// and, with an inbox, starts consuming it.
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
            .instances(self.instances);
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
        let stage = builder.spawn().map_err(|e| BridgeError::Config {
            queue: self.inbox.clone().unwrap_or_default(),
            setting: "stage".to_owned(),
            reason: e.to_string(),
        })?;
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
                let exec = Arc::new(exec.build().map_err(|e| BridgeError::Config {
                    queue: inbox.clone(),
                    setting: "instances".to_owned(),
                    reason: e.to_string(),
                })?);
                let (tx, rx) = mpsc::sync_channel::<Marker>(1);
                let handler_addr = addr.clone();
                let bridge = Bridge::builder(self.uri.as_str(), exec)
                    .connection_name(format!("{}-inbox", self.name))
                    .consume_until_drained(
                        config,
                        move |msg: &Incoming| perform_remote::<A>(&handler_addr, msg),
                        Arc::new(move |marker| {
                            let _ = tx.send(marker);
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
        })
    }
}

/// The inbox handler: decodes the body, hands it to the local stage in the
/// delivery's lane and waits for the perform (and its outputs' confirms).
fn perform_remote<A: Actor>(addr: &Addr<Envelope<A::In>>, msg: &Incoming) -> Result<(), Failure>
where
    A::In: Wire,
{
    let value = A::In::from_bytes(msg.body()).map_err(|e| {
        Failure::reject(format!(
            "queue {:?}: the body is not a {}: {e}",
            msg.queue(),
            std::any::type_name::<A::In>()
        ))
    })?;
    let (tx, rx) = mpsc::sync_channel(1);
    let envelope = Envelope {
        msg: value,
        done: Some(Done(Some(tx))),
    };
    if addr.send_at(envelope, msg.lane()).is_err() {
        return Err(Failure::retry(format!(
            "stage {}: no longer accepts messages",
            addr.name()
        )));
    }
    match rx.recv() {
        Ok(Performed::Done) => Ok(()),
        Ok(Performed::Failed(e)) => Err(Failure::retry(e)),
        Ok(Performed::Panicked) => Err(Failure::reject(format!(
            "stage {}: perform panicked",
            addr.name()
        ))),
        Ok(Performed::Skipped) | Err(_) => Err(Failure::retry(format!(
            "stage {}: the message was not performed",
            addr.name()
        ))),
    }
}
