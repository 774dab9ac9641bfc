//! The letters and the actor of the `stage` target: each letter says how
//! its performs go (fail the first attempts, by error or panic; wait for
//! the script; send a child letter to its own stage), and every copy of it
//! counts its clones and drops.

use crate::common::{Guard, PANIC_MESSAGE, Record};
use priority_executor::actor::{Actor, ActorError, Addr, Outbox, Reason, SendError, StageContext};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// A perform that waits until the script opens it.
pub type Gate = Arc<(Mutex<bool>, Condvar)>;

pub fn open(gate: &Gate) {
    *gate.0.lock().unwrap_or_else(|p| p.into_inner()) = true;
    gate.1.notify_all();
}

fn wait(gate: &Gate) {
    let mut open = gate.0.lock().unwrap_or_else(|p| p.into_inner());
    while !*open {
        open = gate.1.wait(open).unwrap_or_else(|p| p.into_inner());
    }
}

#[derive(Clone, Debug)]
pub struct Letter {
    pub id: usize,
    pub guard: Guard,
    pub priority: Option<u8>,
    pub even: bool,
    pub ttl: u32,
    /// Attempts that fail before one succeeds (counted over every copy).
    pub fail_first: u8,
    pub fail_panics: bool,
    /// The predicate strategy panics on it.
    pub strategy_panics: bool,
    pub hold: Option<Gate>,
    /// Each attempt sends a child letter to the stage itself.
    pub echo: bool,
}

/// What the script and the instances share.
#[derive(Default)]
pub struct Log {
    pub letters: Mutex<Vec<Arc<Record>>>,
    pub addr: OnceLock<Addr<Letter>>,
    pub made: AtomicUsize,
    pub inits: AtomicUsize,
    pub destroys: Mutex<Vec<(usize, Reason)>>,
    /// Sends offered by the instances (children).
    pub offered: AtomicUsize,
    /// Refusals the instances saw: (Full, ShutDown).
    pub child_full: AtomicUsize,
    /// Instances whose `init` fails (bit i), by panic if `init_panics`.
    pub init_fails: u8,
    pub init_panics: bool,
    pub destroy_panics: bool,
}

impl Log {
    /// A new letter's id and guard.
    pub fn letter(&self) -> (usize, Guard) {
        let (guard, record) = Guard::new();
        let mut letters = self.letters.lock().unwrap_or_else(|p| p.into_inner());
        letters.push(record);
        (letters.len() - 1, guard)
    }
}

pub fn simple(log: &Log) -> Letter {
    let (id, guard) = log.letter();
    Letter {
        id,
        guard,
        priority: None,
        even: true,
        ttl: 0,
        fail_first: 0,
        fail_panics: false,
        strategy_panics: false,
        hold: None,
        echo: false,
    }
}

pub struct Fz {
    pub log: Arc<Log>,
    pub index: usize,
}

impl Actor for Fz {
    type In = Letter;
    type Out = ();

    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        assert_eq!(ctx.instance(), self.index);
        self.log.inits.fetch_add(1, Ordering::SeqCst);
        if self.log.init_fails >> (self.index % 8) & 1 == 1 {
            if self.log.init_panics {
                panic!("{PANIC_MESSAGE} in init");
            }
            return Err("init fails".into());
        }
        Ok(())
    }

    fn perform(&mut self, m: Letter, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        // ORDERING: SeqCst counts, read by the script once the stage ended.
        let attempt = m.guard.0.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(gate) = &m.hold {
            wait(gate);
        }
        if m.echo
            && let Some(addr) = self.log.addr.get()
        {
            let child = simple(&self.log);
            self.log.offered.fetch_add(1, Ordering::SeqCst);
            // Rule 16: from its own instance a send never waits.
            if let Err(e) = addr.send(child) {
                if matches!(e, SendError::Full { .. }) {
                    self.log.child_full.fetch_add(1, Ordering::SeqCst);
                }
                let child = e.into_inner();
                child.guard.0.back.fetch_add(1, Ordering::SeqCst);
            }
        }
        if attempt < usize::from(m.fail_first) {
            if m.fail_panics {
                panic!("{PANIC_MESSAGE} fz#{}#", m.id);
            }
            return Err(format!("fz#{}#", m.id).into());
        }
        m.guard.0.ok.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        self.log
            .destroys
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((self.index, reason));
        if self.log.destroy_panics {
            panic!("{PANIC_MESSAGE} in destroy");
        }
    }
}

/// The letter id a fault's text names (`fz#<id>#`).
pub fn id_in(text: &str) -> Option<usize> {
    let start = text.find("fz#")? + 3;
    let end = start + text[start..].find('#')?;
    text[start..end].parse().ok()
}
