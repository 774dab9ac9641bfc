//! The end of a `broker` script: one of the ends, then every letter and
//! every consumer accounted for.

use crate::common::{self, step};
use crate::consumer::{self, Cn, Letter};
use crate::{End, State};
use priority_executor::actor::{Addr, Broker, DeadLetter, Fault, Phase, Reason};
use std::sync::Mutex;
use std::sync::atomic::Ordering;

impl State {
    pub fn end(
        self,
        broker: Broker<Cn>,
        addr: Addr<Letter>,
        end: End,
        dead: &Mutex<Vec<DeadLetter<Letter>>>,
        faults: &Mutex<Vec<Fault<Letter>>>,
    ) {
        let alive = !self.registered.is_empty();
        let exit = match end {
            End::Drain => {
                step("drain");
                let exit = broker.drain();
                if !self.may_end {
                    let expected = if alive {
                        Reason::Drained
                    } else {
                        Reason::NoConsumers
                    };
                    assert_eq!(exit.reason, expected, "a drain's reason");
                }
                Some(exit)
            }
            End::Join => {
                if !self.may_end {
                    // Nothing would end it: no `end_after`, no stop.
                    step("stop before join");
                    assert!(addr.stop().is_ok(), "stop refused while open");
                }
                step("join");
                Some(broker.join())
            }
            End::Stop | End::Kill => {
                step("stop or kill");
                let accepted = if matches!(end, End::Stop) {
                    addr.stop().is_ok()
                } else {
                    addr.kill().is_ok()
                };
                assert!(accepted || self.may_end, "{end:?} refused while open");
                step("join");
                let exit = broker.join();
                if !self.may_end && alive {
                    let expected = if matches!(end, End::Stop) {
                        Reason::Stopped
                    } else {
                        Reason::Killed
                    };
                    assert_eq!(exit.reason, expected, "the reason after {end:?}");
                }
                Some(exit)
            }
            End::Drop => {
                step("drop");
                drop(broker);
                None
            }
        };
        drop(addr);

        step("check letters");
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
                    let id = consumer::id_in(&f.error)
                        .unwrap_or_else(|| panic!("a perform fault names no letter: {f:?}"));
                    fault_of[id] += 1;
                    perform_faults += 1;
                }
                Phase::Init | Phase::Destroy => assert!(f.message.is_none(), "{f:?}"),
                _ => panic!("unexpected fault {f:?}"),
            }
        }
        let (mut ok, mut back) = (0u64, 0u64);
        let mut performed_ids = Vec::new();
        for (id, r) in letters.iter().enumerate() {
            let outcomes = (r.ok(), dead_of[id], r.back(), fault_of[id]);
            assert_eq!(
                outcomes.0 + outcomes.1 + outcomes.2 + outcomes.3,
                1,
                "letter {id}: (performed, dead, handed back, faulted) = {outcomes:?}"
            );
            if r.ok() == 1 {
                performed_ids.push(id);
            }
            ok += r.ok() as u64;
            back += r.back() as u64;
        }
        let mut outputs = std::mem::take(&mut *self.log.outputs.lock().unwrap());
        outputs.sort_unstable();
        assert_eq!(outputs, performed_ids, "outputs, one per letter performed");
        assert_eq!(
            self.log.late_batches.load(Ordering::SeqCst),
            0,
            "a batch handed to a consumer after its destroy"
        );

        if let Some(exit) = &exit {
            let m = &exit.metrics;
            assert!(m.is_balanced(), "{m:?}");
            assert_eq!((m.queued, m.running), (0, 0), "{m:?}");
            assert_eq!(m.offered, self.offered, "{m:?}");
            assert_eq!(m.handed_back, back, "{m:?}");
            assert_eq!(m.performed, ok, "{m:?}");
            assert_eq!(m.dead_lettered, dead.len() as u64, "{m:?}");
            assert_eq!(m.faulted, perform_faults, "{m:?}");
            assert_eq!(m.instances, 0, "{m:?}");
            assert_eq!(
                m.lanes.iter().map(|l| l.accepted).sum::<u64>(),
                m.accepted,
                "{m:?}"
            );
            for lane in &m.lanes {
                assert_eq!(lane.queued, 0, "{lane:?}");
            }
        }

        step("check consumers");
        let lives = self.log.lives.lock().unwrap().clone();
        let init_faults = faults.iter().filter(|f| f.phase == Phase::Init).count();
        let mut failed_inits = 0;
        for (serial, life) in lives.iter().enumerate() {
            if self.not_started.contains(&serial) {
                assert_eq!(
                    (life.inits, life.destroys.len(), life.batches),
                    (0, 0, 0),
                    "consumer {serial} never started: {life:?}"
                );
                continue;
            }
            assert_eq!(life.inits, 1, "consumer {serial}: {life:?}");
            if life.init_failed {
                failed_inits += 1;
                assert_eq!(life.destroys, vec![Reason::FailedInit], "consumer {serial}");
                assert_eq!(life.batches, 0, "consumer {serial}: {life:?}");
            } else if self.unregistered.contains(&serial) {
                assert_eq!(
                    life.destroys,
                    vec![Reason::Unregistered],
                    "consumer {serial}"
                );
            } else {
                assert_eq!(life.destroys.len(), 1, "consumer {serial}: {life:?}");
                if let Some(exit) = &exit {
                    assert_eq!(life.destroys[0], exit.reason, "consumer {serial}: {life:?}");
                }
            }
        }
        assert_eq!(init_faults, failed_inits, "one fault per failed init");

        // Every copy of every letter is gone once the broker is.
        drop((dead, faults));
        step("threads exit");
        let outlived = common::wait_threads_gone("fb");
        if !outlived.is_empty() {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| {
                eprintln!(
                    "fuzz: note: broker threads {outlived:?} outlived its end \
                     (end {end:?}; reported once)"
                )
            });
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
