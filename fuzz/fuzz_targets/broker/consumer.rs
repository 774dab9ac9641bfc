//! The letters and the consumers of the `broker` target: each letter says
//! how its takes go (sent back the first times, then failed by error or
//! panic, then performed), and each consumer how many letters of a batch
//! it takes, whether its `init` fails and whether its `destroy` panics.

use crate::common::{Guard, PANIC_MESSAGE, Record};
use priority_executor::actor::{Actor, ActorError, Batch, Outbox, Reason, StageContext};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug)]
pub struct Letter {
    pub id: usize,
    pub guard: Guard,
    pub priority: Option<u8>,
    pub even: bool,
    pub ttl: u32,
    /// Takes (over every copy) that send it back before it is performed.
    pub back_first: u8,
    /// Takes after those that fail, by error or by panic.
    pub fail_first: u8,
    pub fail_panics: bool,
    /// The predicate strategy panics on it.
    pub strategy_panics: bool,
}

/// One consumer's life, as it saw it.
#[derive(Debug, Default, Clone)]
pub struct Life {
    /// Its number from `StageContext::instance`, once `init` ran.
    pub instance: Option<usize>,
    pub inits: usize,
    pub init_failed: bool,
    pub destroys: Vec<Reason>,
    pub batches: usize,
}

/// What the script and the consumers share.
#[derive(Default)]
pub struct Log {
    pub letters: Mutex<Vec<Arc<Record>>>,
    /// Per consumer made by the script, in order.
    pub lives: Mutex<Vec<Life>>,
    pub batch_size: usize,
    /// Outputs received, by letter.
    pub outputs: Mutex<Vec<usize>>,
    /// Batches handed to a consumer already destroyed.
    pub late_batches: AtomicUsize,
}

impl Log {
    /// A new letter's id and guard.
    pub fn letter(&self) -> (usize, Guard) {
        let (guard, record) = Guard::new();
        let mut letters = self.letters.lock().unwrap_or_else(|p| p.into_inner());
        letters.push(record);
        (letters.len() - 1, guard)
    }

    pub fn life(&self, serial: usize) -> Life {
        self.lives.lock().unwrap_or_else(|p| p.into_inner())[serial].clone()
    }

    fn with_life<T>(&self, serial: usize, f: impl FnOnce(&mut Life) -> T) -> T {
        f(&mut self.lives.lock().unwrap_or_else(|p| p.into_inner())[serial])
    }
}

pub struct Cn {
    pub log: Arc<Log>,
    /// Its index in `Log::lives`.
    pub serial: usize,
    /// The most letters it takes from one batch (the rest go back).
    pub takes: usize,
    pub init_fails: bool,
    pub init_panics: bool,
    pub destroy_panics: bool,
}

impl Actor for Cn {
    type In = Letter;
    type Out = usize;

    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        self.log.with_life(self.serial, |l| {
            l.inits += 1;
            l.instance = Some(ctx.instance());
            l.init_failed = self.init_fails;
        });
        if self.init_fails {
            if self.init_panics {
                panic!("{PANIC_MESSAGE} in init");
            }
            return Err("init fails".into());
        }
        Ok(())
    }

    fn perform(&mut self, m: Letter, out: &mut Outbox<'_, usize>) -> Result<(), ActorError> {
        // Only through `perform_batch` below.
        let _ = out.send(m.id);
        panic!("perform called outside a batch for letter {}", m.id);
    }

    fn perform_batch(&mut self, batch: &mut Batch<'_, Letter, usize>) -> Result<(), ActorError> {
        let len = batch.len();
        assert!(
            (1..=self.log.batch_size).contains(&len),
            "a batch of {len}, batch size {}",
            self.log.batch_size
        );
        let me = batch.outbox().instance();
        let late = self.log.with_life(self.serial, |l| {
            l.batches += 1;
            assert_eq!(l.instance, Some(me));
            !l.destroys.is_empty()
        });
        if late {
            self.log.late_batches.fetch_add(1, Ordering::SeqCst);
        }
        let mut taken = 0;
        while taken < self.takes {
            let Some(m) = batch.next_letter() else { break };
            taken += 1;
            // ORDERING: SeqCst counts, read by the script once the broker
            // ended.
            let take = m.guard.0.calls.fetch_add(1, Ordering::SeqCst);
            let back = usize::from(m.back_first);
            if take < back {
                if let Err(m) = batch.send_back(m) {
                    panic!("a letter just taken could not be sent back: {}", m.id);
                }
                continue;
            }
            if take < back + usize::from(m.fail_first) {
                if m.fail_panics {
                    panic!("{PANIC_MESSAGE} fz#{}#", m.id);
                }
                return Err(format!("fz#{}#", m.id).into());
            }
            m.guard.0.ok.fetch_add(1, Ordering::SeqCst);
            let _ = batch.outbox().send(m.id);
        }
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        self.log.with_life(self.serial, |l| l.destroys.push(reason));
        if self.destroy_panics {
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
