//! The probe actor the tests drive, its event log, and a watchdog.

#![allow(dead_code)]

use super::common::Gate;
use priority_executor::actor::{
    Actor, ActorError, Addr, Outbox, Reason, Stage, StageBuilder, StageContext, StageMetrics,
};
use priority_executor::{Priority, SendOptions};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// How long a step may take before it counts as hung: a hang detector,
/// not a timing assertion.
pub const LIMIT: Duration = Duration::from_secs(30);

/// The lane of the gate message: above every lane the tests use.
pub const GATE: Priority = Priority(1000);

/// [`common::within`](super::common::within) with this binary's [`LIMIT`].
pub fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    super::common::within(what, LIMIT, f)
}

/// A test message: a label and a sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    pub label: char,
    pub seq: u32,
}

pub fn msg(label: char, seq: u32) -> Msg {
    Msg { label, seq }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Init(usize),
    Perform(usize, Msg),
    Destroy(usize, Reason),
}

#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<Event>>>);

impl Log {
    pub fn push(&self, e: Event) {
        self.0.lock().expect("log lock").push(e);
    }

    pub fn events(&self) -> Vec<Event> {
        self.0.lock().expect("log lock").clone()
    }

    /// The messages performed, in order, the gate message excluded.
    pub fn performed(&self) -> Vec<Msg> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Perform(_, m) if m.label != 'G' => Some(m),
                _ => None,
            })
            .collect()
    }

    pub fn count(&self, f: impl Fn(&Event) -> bool) -> usize {
        self.events().iter().filter(|e| f(e)).count()
    }
}

/// Holds the instance that dispatches the gate message until opened.
#[derive(Clone)]
pub struct Hold {
    gate: Gate,
    started_tx: Arc<Mutex<mpsc::Sender<()>>>,
    started: Arc<Mutex<mpsc::Receiver<()>>>,
}

impl Default for Hold {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel();
        Hold {
            gate: Gate::default(),
            started_tx: Arc::new(Mutex::new(tx)),
            started: Arc::new(Mutex::new(rx)),
        }
    }
}

impl Hold {
    /// Waits until an instance is held on the gate.
    pub fn wait_held(&self) {
        self.started
            .lock()
            .expect("hold lock")
            .recv_timeout(LIMIT)
            .expect("the gate message started");
    }

    pub fn open(&self) {
        self.gate.open();
    }
}

/// Logs its lifecycle and forwards what it performs. A message labelled
/// `G` holds the instance on the hold; `P` panics; `E` fails.
pub struct Probe {
    pub id: usize,
    pub log: Log,
    pub hold: Hold,
}

impl Actor for Probe {
    type In = Msg;
    type Out = Msg;

    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        self.log.push(Event::Init(ctx.instance()));
        Ok(())
    }

    fn perform(&mut self, m: Msg, out: &mut Outbox<'_, Msg>) -> Result<(), ActorError> {
        self.log.push(Event::Perform(out.instance(), m));
        match m.label {
            'G' => {
                let _ = self.hold.started_tx.lock().expect("hold lock").send(());
                self.hold.gate.wait();
            }
            'P' => panic!("probe: deliberate panic"),
            'E' => return Err("probe: deliberate error".into()),
            _ => {}
        }
        let _ = out.send(m);
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        self.log.push(Event::Destroy(self.id, reason));
    }
}

/// The stage's address, once one of its instances is held on `hold` by
/// the gate message: what is sent next queues up behind it.
pub fn held<A: Actor<In = Msg>>(stage: &Stage<A>, hold: &Hold) -> Addr<Msg> {
    let addr = stage.addr();
    addr.send_with(msg('G', 0), SendOptions::new().priority(GATE))
        .unwrap();
    hold.wait_held();
    addr
}

/// A stage of probes sharing `log` and `hold`.
pub fn probes(name: &str, log: &Log, hold: &Hold) -> StageBuilder<Probe> {
    let (log, hold) = (log.clone(), hold.clone());
    priority_executor::actor::Stage::builder(name, move |id| Probe {
        id,
        log: log.clone(),
        hold: hold.clone(),
    })
}

/// Rule 18 of src/actor/README.md.
pub fn assert_balanced(m: &StageMetrics) {
    assert_eq!(
        m.offered,
        m.performed + m.faulted + m.dead_lettered + m.handed_back,
        "offered = performed + faulted + dead-lettered + handed back, for stage {:?}: {m:#?}",
        m.name
    );
    assert_eq!((m.queued, m.running), (0, 0), "stage {:?} is quiet", m.name);
}

impl Hold {
    /// For actors other than the probe: report held, then wait.
    pub fn open_and_hold(&self) {
        let _ = self.started_tx.lock().expect("hold lock").send(());
        self.gate.wait();
    }
}
