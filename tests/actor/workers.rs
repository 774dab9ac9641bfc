//! The worker the resize tests drive (tests/actor/resize.rs and
//! resizer.rs): it logs its lifecycle by serial, counts each work letter
//! it performs, and holds on a gate for a hold letter.

use super::common::Gate;
use super::support::LIMIT;
use priority_executor::actor::{
    Actor, ActorError, Outbox, Reason, Stage, StageBuilder, StageContext,
};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};

/// A letter: work with an id, or a hold that keeps its instance on the
/// gate until the test opens it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    Work(u32),
    Hold,
}

/// What the instances did, by serial: each instance the factory makes
/// gets the next serial (indices are taken again, serials never).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    Init(u32),
    Perform(u32, Job),
    Destroy(u32, Reason),
}

pub struct Shared {
    pub events: Mutex<Vec<Ev>>,
    /// Performs per work id.
    pub counts: Vec<AtomicU32>,
    pub serial: AtomicU32,
    pub gate: Gate,
    pub held: Mutex<mpsc::Sender<u32>>,
    pub done: Mutex<mpsc::Sender<(u32, u32)>>,
    pub destroyed: Mutex<mpsc::Sender<(u32, usize, Reason)>>,
    pub panic_factory: AtomicBool,
    pub panic_init: AtomicBool,
}

/// The receiving ends of [`Shared`]'s channels.
pub struct Seen {
    pub held: mpsc::Receiver<u32>,
    pub done: mpsc::Receiver<(u32, u32)>,
    pub destroyed: mpsc::Receiver<(u32, usize, Reason)>,
}

impl Seen {
    pub fn held(&self) -> u32 {
        self.held.recv_timeout(LIMIT).expect("an instance held")
    }

    pub fn done(&self) -> (u32, u32) {
        self.done.recv_timeout(LIMIT).expect("a letter performed")
    }

    pub fn destroyed(&self) -> (u32, usize, Reason) {
        self.destroyed
            .recv_timeout(LIMIT)
            .expect("an instance destroyed")
    }
}

pub fn shared(letters: u32) -> (Arc<Shared>, Seen) {
    let (held_tx, held) = mpsc::channel();
    let (done_tx, done) = mpsc::channel();
    let (destroyed_tx, destroyed) = mpsc::channel();
    let shared = Arc::new(Shared {
        events: Mutex::new(Vec::new()),
        counts: (0..letters).map(|_| AtomicU32::new(0)).collect(),
        serial: AtomicU32::new(0),
        gate: Gate::default(),
        held: Mutex::new(held_tx),
        done: Mutex::new(done_tx),
        destroyed: Mutex::new(destroyed_tx),
        panic_factory: AtomicBool::new(false),
        panic_init: AtomicBool::new(false),
    });
    (
        shared,
        Seen {
            held,
            done,
            destroyed,
        },
    )
}

impl Shared {
    pub fn log(&self, ev: Ev) {
        self.events.lock().expect("events").push(ev);
    }

    pub fn events(&self) -> Vec<Ev> {
        self.events.lock().expect("events").clone()
    }

    /// Every work letter was performed exactly once.
    pub fn assert_each_once(&self) {
        for (id, count) in self.counts.iter().enumerate() {
            assert_eq!(
                count.load(Ordering::SeqCst),
                1,
                "letter {id} performed once"
            );
        }
    }

    /// Each instance made: one `init` first (unless it failed), its
    /// performs, one `destroy` last. Returns the destroys' reasons.
    pub fn assert_lives(&self) -> Vec<Reason> {
        let events = self.events();
        let made = self.serial.load(Ordering::SeqCst);
        let mut reasons = Vec::new();
        for serial in 0..made {
            let mine: Vec<&Ev> = events
                .iter()
                .filter(|e| match e {
                    Ev::Init(s) | Ev::Perform(s, _) | Ev::Destroy(s, _) => *s == serial,
                })
                .collect();
            let Some(Ev::Destroy(_, reason)) = mine.last() else {
                panic!("instance {serial} destroyed last: {mine:?}");
            };
            reasons.push(*reason);
            let lived = &mine[..mine.len() - 1];
            if *reason == Reason::FailedInit {
                assert!(lived.is_empty(), "instance {serial} took no letter");
                continue;
            }
            assert_eq!(lived.first(), Some(&&Ev::Init(serial)), "init first");
            assert!(
                lived[1..].iter().all(|e| matches!(e, Ev::Perform(..))),
                "instance {serial}: one init, then performs only: {lived:?}"
            );
        }
        reasons
    }
}

pub struct Worker {
    pub serial: u32,
    pub index: usize,
    pub shared: Arc<Shared>,
}

impl Actor for Worker {
    type In = Job;
    type Out = ();

    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        assert_eq!(ctx.instance(), self.index);
        if self.shared.panic_init.swap(false, Ordering::SeqCst) {
            panic!("resize test: deliberate init panic");
        }
        self.shared.log(Ev::Init(self.serial));
        Ok(())
    }

    fn perform(&mut self, job: Job, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        self.shared.log(Ev::Perform(self.serial, job));
        match job {
            Job::Work(id) => {
                self.shared.counts[id as usize].fetch_add(1, Ordering::SeqCst);
                let _ = self
                    .shared
                    .done
                    .lock()
                    .expect("done")
                    .send((self.serial, id));
            }
            Job::Hold => {
                let _ = self.shared.held.lock().expect("held").send(self.serial);
                self.shared.gate.wait();
            }
        }
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        self.shared.log(Ev::Destroy(self.serial, reason));
        let _ = self.shared.destroyed.lock().expect("destroyed").send((
            self.serial,
            self.index,
            reason,
        ));
    }
}

pub fn workers(name: &str, shared: &Arc<Shared>) -> StageBuilder<Worker> {
    let shared = shared.clone();
    Stage::builder(name, move |index| {
        if shared.panic_factory.swap(false, Ordering::SeqCst) {
            panic!("resize test: deliberate factory panic");
        }
        Worker {
            serial: shared.serial.fetch_add(1, Ordering::SeqCst),
            index,
            shared: shared.clone(),
        }
    })
}

/// A stage of `n` workers, each held in a `Job::Hold` perform until the
/// gate opens; returns once all `n` are inside.
pub fn all_held(name: &str, shared: &Arc<Shared>, seen: &Seen, n: usize) -> Stage<Worker> {
    let stage = workers(name, shared).instances(n).spawn().expect("spawn");
    let addr = stage.addr();
    for _ in 0..n {
        addr.send(Job::Hold).unwrap();
    }
    for _ in 0..n {
        seen.held();
    }
    stage
}
