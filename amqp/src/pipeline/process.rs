//! A running stage process: fed by its inbox or by `send`, drained when the
//! marker comes, and passing the drain on.

use super::envelope::Envelope;
use super::queues::control_queue;
use super::remote::Remote;
use super::report::DrainReport;
use super::wire::Wire;
use crate::bridge::Bridge;
use crate::config::ConsumerConfig;
use crate::drain::{EPOCH_HEADER, INDEX_HEADER, Marker};
use crate::error::BridgeError;
use crate::outgoing::Outgoing;
use crate::publisher::Publisher;
use priority_executor::actor::{Actor, Addr, SendError, Stage};
use priority_executor::{Capacity, Executor, Priority};
use std::collections::HashSet;
use std::fmt;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A running stage process: see [`StageProcessBuilder`](crate::StageProcessBuilder).
pub struct StageProcess<A: Actor> {
    pub(super) name: String,
    pub(super) stage: Option<Stage<Remote<A>>>,
    pub(super) addr: Addr<Envelope<A::In>>,
    pub(super) bridge: Option<Bridge>,
    /// The drain marker, or why the inbox consumer ended without one.
    pub(super) drained: Option<Receiver<Result<Marker, String>>>,
    pub(super) publisher: Arc<Publisher>,
    pub(super) uri: String,
    pub(super) inbox: Option<String>,
    pub(super) outbox: Option<String>,
    pub(super) faults: Arc<Mutex<Vec<String>>>,
    /// How long marker 0's holder waits for the others' reports, if not
    /// for ever.
    pub(super) reports_within: Option<Duration>,
}

impl<A: Actor> StageProcess<A>
where
    A::In: Wire,
    A::Out: Wire,
{
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
    /// stopping without a marker (the bridge's runtime failed, or no
    /// instance was left to take the inbox's messages: those went back to
    /// the queue, for the next consumer); the other
    /// processes' reports not all in within
    /// [`drain_reports_within`](crate::StageProcessBuilder::drain_reports_within)
    /// (the markers were sent downstream all the same).
    pub fn drain(mut self) -> Result<DrainReport, BridgeError> {
        let marker = match self.drained.take() {
            Some(rx) => match rx.recv() {
                Ok(Ok(marker)) => marker,
                Ok(Err(reason)) => {
                    let faults = self.faults.lock().map(|f| f.clone()).unwrap_or_default();
                    return Err(BridgeError::Runtime(format!(
                        "stage {}: the inbox consumer stopped without a drain marker: \
                         {reason}; faults: {faults:?}",
                        self.name
                    )));
                }
                Err(_) => {
                    return Err(BridgeError::Runtime(format!(
                        "stage {}: the inbox consumer ended without a drain marker",
                        self.name
                    )));
                }
            },
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
        let mut missing = None;
        if marker.index == 0 {
            if marker.count > 1
                && let Some(inbox) = &self.inbox
            {
                // Reports missing past the limit: the markers still go
                // downstream, so the stages after this one drain too.
                if let Err(error) = self.await_reports(inbox, &marker) {
                    if self.reports_within.is_none() {
                        return Err(error);
                    }
                    missing = Some(error);
                }
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
        if let Some(error) = missing {
            return Err(error);
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
        let exec = Executor::builder()
            .name("drain-reports")
            .core_threads(1)
            .max_threads(1)
            .lane(Priority(1), Capacity::Unbounded)
            .build()
            .map_err(|e| BridgeError::Runtime(e.to_string()))?;
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
        // A limit past the clock's reach is no limit.
        let deadline = self
            .reports_within
            .and_then(|limit| Instant::now().checked_add(limit));
        let missing = |reported: &HashSet<u32>| -> Vec<u32> {
            (0..marker.count)
                .filter(|i| *i != marker.index && !reported.contains(i))
                .collect()
        };
        while (reported.len() as u32) < marker.count - 1 {
            let received = match deadline {
                Some(deadline) => {
                    rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                }
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match received {
                Ok(index) if index != marker.index => {
                    reported.insert(index);
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    bridge.stop();
                    return Err(BridgeError::Runtime(format!(
                        "stage {}: drain {}: no report from the holders of markers {:?} of {} \
                         on {} within {:?} (drain_reports_within): a process that died \
                         with its marker, or never took it; the markers went downstream",
                        self.name,
                        marker.epoch,
                        missing(&reported),
                        marker.count,
                        control_queue(inbox),
                        self.reports_within.unwrap_or_default()
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => {
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

fn new_epoch(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{name}-{}-{nanos}", std::process::id())
}
