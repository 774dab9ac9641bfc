//! The `stage` script's sends and its end: every letter accounted for.

use crate::actor::{self, Fz, Gate, Letter, Log};
use crate::common::{self, step};
use crate::{End, Script, Spec, check_refusal};
use priority_executor::actor::{Addr, DeadLetter, Fault, Phase, Reason, Stage};
use priority_executor::{Priority, SendOptions};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct State {
    log: Arc<Log>,
    instances: usize,
    /// Sends the script offered.
    offered: u64,
    /// The stage may have closed its door: a stop or kill was accepted,
    /// it may go idle, or every instance fails `init`.
    pub may_close: bool,
    refuse: bool,
    /// A letter that sends from inside its perform was sent.
    pub echoed: bool,
}

impl State {
    pub fn new(s: &Script, log: &Arc<Log>, instances: usize) -> State {
        let all_fail = (0..instances).all(|i| s.init_fails >> (i % 8) & 1 == 1);
        State {
            log: Arc::clone(log),
            instances,
            offered: 0,
            may_close: s.idle_ms.is_some() || all_fail,
            refuse: s.unlisted % 3 == 2,
            echoed: false,
        }
    }

    /// Sends one letter; returns whether it was accepted.
    pub fn send(
        &mut self,
        addr: &Addr<Letter>,
        spec: Spec,
        hold: Option<Gate>,
        held: bool,
    ) -> bool {
        let (id, guard) = self.log.letter();
        let letter = Letter {
            id,
            guard,
            priority: spec.priority,
            even: spec.even,
            ttl: u32::from(spec.ttl % 12),
            fail_first: spec.fail_first % 4,
            fail_panics: spec.fail_panics,
            strategy_panics: spec.strategy_panics,
            hold,
            echo: spec.echo,
        };
        self.offered += 1;
        self.echoed |= spec.echo;
        // With a perform held, a blocking send to a full lane could wait
        // for ever on this very thread.
        let (result, blocking) = match spec.how {
            crate::How::Send if !held => (addr.send(letter), true),
            crate::How::At(p) if !held => (
                addr.send_with(letter, SendOptions::new().priority(Priority(u32::from(p)))),
                true,
            ),
            crate::How::Send | crate::How::At(_) | crate::How::Try => (
                addr.send_with(letter, SendOptions::new().wait_at_most(Duration::ZERO)),
                false,
            ),
            crate::How::Timeout => (
                addr.send_with(
                    letter,
                    SendOptions::new().wait_at_most(Duration::from_micros(100)),
                ),
                false,
            ),
        };
        match result {
            Ok(()) => true,
            Err(e) => {
                check_refusal(&e, blocking, self.may_close, self.refuse);
                let letter = e.into_inner();
                letter.guard.0.back.fetch_add(1, Ordering::SeqCst);
                false
            }
        }
    }

    pub fn end(
        self,
        stage: Stage<Fz>,
        addr: Addr<Letter>,
        end: End,
        sinks: bool,
        dead: &Mutex<Vec<DeadLetter<Letter>>>,
        faults: &Mutex<Vec<Fault<Letter>>>,
    ) {
        // Kept dead letters and faults must be taken before the stage is
        // consumed by `drain` or `join`: only a stop or a kill ends it
        // without consuming it.
        let end = match end {
            End::Drain | End::Drop if !sinks => End::Stop,
            end => end,
        };
        let exit = match end {
            End::Drain => {
                step("drain");
                Some(stage.drain())
            }
            End::Drop => {
                step("drop");
                drop(stage);
                None
            }
            End::Stop | End::Kill => {
                step("stop or kill");
                let _closed = if matches!(end, End::Stop) {
                    addr.stop()
                } else {
                    addr.kill()
                };
                if !sinks {
                    step("finished");
                    while stage.finished().is_none() {
                        std::thread::yield_now();
                    }
                    dead.lock().unwrap().extend(stage.take_dead_letters());
                    faults.lock().unwrap().extend(stage.take_faults());
                }
                step("join");
                Some(stage.join())
            }
        };
        drop(addr);
        let _ = self.log.addr.get();

        step("check");
        let letters = self.log.letters.lock().unwrap().clone();
        let mut dead_of = vec![0usize; letters.len()];
        let mut fault_of = vec![0usize; letters.len()];
        let dead = std::mem::take(&mut *dead.lock().unwrap());
        let faults = std::mem::take(&mut *faults.lock().unwrap());
        for d in &dead {
            dead_of[d.message.id] += 1;
        }
        let mut perform_faults = 0u64;
        for f in &faults {
            match f.phase {
                Phase::Perform => {
                    let id = actor::id_in(&f.error)
                        .unwrap_or_else(|| panic!("a perform fault names no letter: {f:?}"));
                    fault_of[id] += 1;
                    perform_faults += 1;
                }
                Phase::Init | Phase::Destroy => assert!(f.message.is_none()),
                _ => panic!("unexpected fault {f:?}"),
            }
        }
        let (mut ok, mut back) = (0u64, 0u64);
        for (id, r) in letters.iter().enumerate() {
            let outcomes = (r.ok(), dead_of[id], r.back(), fault_of[id]);
            assert_eq!(
                outcomes.0 + outcomes.1 + outcomes.2 + outcomes.3,
                1,
                "letter {id}: (performed, dead, handed back, faulted) = {outcomes:?}"
            );
            ok += r.ok() as u64;
            back += r.back() as u64;
        }

        let made = self.log.made.load(Ordering::SeqCst);
        assert_eq!(made, self.instances);
        if let Some(exit) = &exit {
            let m = &exit.metrics;
            assert!(m.is_balanced(), "{m:?}");
            assert_eq!((m.queued, m.running), (0, 0), "{m:?}");
            let offered = self.offered + self.log.offered.load(Ordering::SeqCst) as u64;
            assert_eq!(m.offered, offered, "{m:?}");
            assert_eq!(m.handed_back, back, "{m:?}");
            assert_eq!(m.performed, ok, "{m:?}");
            assert_eq!(m.dead_lettered, dead.len() as u64, "{m:?}");
            assert_eq!(m.faulted, perform_faults, "{m:?}");
            assert_eq!(
                m.lanes.iter().map(|l| l.accepted).sum::<u64>(),
                m.accepted,
                "{m:?}"
            );
            for lane in &m.lanes {
                assert_eq!(lane.queued, 0, "{lane:?}");
            }
            let inits_failed = faults.iter().filter(|f| f.phase == Phase::Init).count();
            if inits_failed == made {
                assert_eq!(exit.reason, Reason::FailedInit);
            }
        }
        let mut destroyed: Vec<usize> = self
            .log
            .destroys
            .lock()
            .unwrap()
            .iter()
            .map(|d| d.0)
            .collect();
        destroyed.sort_unstable();
        assert_eq!(
            destroyed,
            (0..made).collect::<Vec<_>>(),
            "destroy once per instance"
        );
        assert_eq!(self.log.inits.load(Ordering::SeqCst), made);

        // Every copy of every letter is gone once the stage is.
        drop((dead, faults));
        step("threads exit");
        let outlived = common::wait_threads_gone("fs-");
        if !outlived.is_empty() {
            // Not a failed check (the leak check would see it if it
            // lasted), but a stage's end should join its threads.
            eprintln!(
                "fuzz: note: stage threads {outlived:?} outlived the stage's end \
                 (end {end:?}, reason {:?}, {} instances)",
                exit.as_ref().map(|e| e.reason),
                self.instances
            );
        }
        for (id, r) in letters.iter().enumerate() {
            assert_eq!(
                r.drops(),
                r.clones() + 1,
                "letter {id}: {} copies, {} dropped",
                r.clones() + 1,
                r.drops()
            );
        }
    }
}
