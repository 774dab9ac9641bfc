//! Instances that come and go (rule 26 of src/actor/README.md):
//! `Stage::resize` adds instances (each `init` before its first perform)
//! and removes them (each `destroy` after its last perform), and every
//! letter is performed exactly once however the stage is resized.

use super::common::{Gate, quiet_panics};
use super::support::{assert_balanced, within};
use super::workers::{Ev, Job, Worker, all_held, shared, workers};
use priority_executor::actor::{
    Actor, ActorError, MAX_INSTANCES, Outbox, Phase, Reason, ResizeError, Stage, StageContext,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, Weak, mpsc};

#[test]
fn letters_are_performed_once_while_instances_come_and_go_under_load() {
    within("resize under load", || {
        const LETTERS: u32 = 20_000;
        let (shared, _seen) = shared(LETTERS);
        let stage = workers("churn", &shared)
            .instances(2)
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        let producer = std::thread::spawn(move || {
            for id in 0..LETTERS {
                addr.send(Job::Work(id)).expect("accepted");
            }
        });
        let sizes = [6, 3, 8, 1, 5, 2, 7, 1, 4];
        for &n in &sizes {
            assert_eq!(stage.resize(n), Ok(n));
            assert_eq!(stage.metrics().instances, n);
        }
        producer.join().expect("producer");
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(exit.metrics.performed, u64::from(LETTERS));
        assert_eq!(exit.metrics.instances, 4);
        assert_balanced(&exit.metrics);
        shared.assert_each_once();
        let reasons = shared.assert_lives();
        // A growth takes back the removals not yet taken before it makes
        // instances, so how many were made depends on the timing.
        let made = shared.serial.load(Ordering::SeqCst) as usize;
        // From 2 + 6 (every removal taken back) to 2 + 21 (none).
        assert!((8..=23).contains(&made));
        assert_eq!(
            reasons.len(),
            made,
            "one init and one destroy per instance made"
        );
        let gone = reasons.iter().filter(|r| **r == Reason::Removed).count();
        let drained = reasons.iter().filter(|r| **r == Reason::Drained).count();
        assert_eq!((gone, drained), (made - 4, 4));
    });
}

#[test]
fn a_new_instance_inits_before_its_first_perform_and_a_removed_one_destroys_after_its_last() {
    within("resize lifecycle order", || {
        let (shared, seen) = shared(20);
        let stage = workers("order", &shared).spawn().expect("spawn");
        let addr = stage.addr();
        addr.send(Job::Hold).unwrap();
        assert_eq!(seen.held(), 0);
        // Instance 0 is held: the new instance performs everything.
        assert_eq!(stage.resize(2), Ok(2));
        assert!(
            shared.events().contains(&Ev::Init(1)),
            "resize waits for init"
        );
        for id in 0..10 {
            addr.send(Job::Work(id)).unwrap();
        }
        for _ in 0..10 {
            assert_eq!(seen.done().0, 1);
        }
        // Only instance 1 can take the removal: 0 is still held.
        assert_eq!(stage.resize(1), Ok(1));
        assert_eq!(seen.destroyed(), (1, 1, Reason::Removed));
        assert_eq!(stage.metrics().instances, 1);
        for id in 10..20 {
            addr.send(Job::Work(id)).unwrap();
        }
        shared.gate.open();
        for _ in 10..20 {
            assert_eq!(seen.done().0, 0);
        }
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(seen.destroyed(), (0, 0, Reason::Drained));
        shared.assert_each_once();
        assert_eq!(
            shared.assert_lives(),
            vec![Reason::Drained, Reason::Removed]
        );
        let events = shared.events();
        let at = |ev: &Ev| events.iter().position(|e| e == ev).expect("logged");
        let last_perform_1 = events
            .iter()
            .rposition(|e| matches!(e, Ev::Perform(1, _)))
            .expect("instance 1 performed");
        assert!(at(&Ev::Init(1)) < at(&Ev::Perform(1, Job::Work(0))));
        assert!(last_perform_1 < at(&Ev::Destroy(1, Reason::Removed)));
    });
}

#[test]
fn removing_down_to_one_while_letters_are_queued_still_drains_them_all() {
    within("resize to one with a backlog", || {
        const LETTERS: u32 = 1000;
        let (shared, seen) = shared(LETTERS);
        let stage = all_held("backlog", &shared, &seen, 4);
        let addr = stage.addr();
        for id in 0..LETTERS {
            addr.send(Job::Work(id)).unwrap();
        }
        assert_eq!(stage.resize(1), Ok(1));
        assert_eq!(stage.metrics().instances, 1);
        shared.gate.open();
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(exit.metrics.performed, u64::from(LETTERS) + 4);
        assert_balanced(&exit.metrics);
        shared.assert_each_once();
        let mut reasons = shared.assert_lives();
        reasons.sort_by_key(|r| *r == Reason::Drained);
        assert_eq!(
            reasons,
            vec![
                Reason::Removed,
                Reason::Removed,
                Reason::Removed,
                Reason::Drained
            ]
        );
        // The three that left took nothing after their hold: the one left
        // performed the whole backlog.
        let by: Vec<u32> = (0..LETTERS).map(|_| seen.done().0).collect();
        assert!(
            by.iter().all(|s| *s == by[0]),
            "one instance drained it all"
        );
    });
}

#[test]
fn resize_refuses_zero_too_many_and_an_ending_stage() {
    within("resize errors", || {
        let (shared, seen) = shared(0);
        let stage = workers("errors", &shared)
            .instances(2)
            .spawn()
            .expect("spawn");
        let invalid = |n| match stage.resize(n) {
            Err(ResizeError::Invalid(invalid)) => (invalid.setting, invalid.value),
            other => panic!("resize({n}) gave {other:?}"),
        };
        assert_eq!(invalid(0), ("instances", "0".to_owned()));
        let too_many = MAX_INSTANCES + 1;
        assert_eq!(invalid(too_many), ("instances", too_many.to_string()));
        assert_eq!(stage.resize(2), Ok(2), "the same size changes nothing");
        assert_eq!(stage.metrics().instances, 2);
        stage.addr().stop().unwrap();
        // The stop was dispatched (the door closed) before any destroy.
        assert_eq!(seen.destroyed().2, Reason::Stopped);
        let ending = Err(ResizeError::Ending {
            stage: "errors".to_owned(),
        });
        assert_eq!(stage.resize(3), ending);
        assert_eq!(stage.resize(1), ending);
        assert_eq!(
            stage.resize(0).unwrap_err().to_string(),
            "instances = 0 is not allowed (expected 1 to 1024)"
        );
        let exit = stage.join();
        assert_eq!((exit.reason, exit.metrics.instances), (Reason::Stopped, 2));
        assert_eq!(shared.serial.load(Ordering::SeqCst), 2, "no instance made");
    });
}

#[test]
fn a_panicking_factory_or_init_for_a_new_instance_is_a_fault_and_the_stage_serves_on() {
    quiet_panics("resize test: deliberate");
    within("resize with panics", || {
        const LETTERS: u32 = 500;
        let (shared, seen) = shared(LETTERS);
        let stage = workers("faulty", &shared).spawn().expect("spawn");
        let addr = stage.addr();
        addr.send(Job::Hold).unwrap();
        seen.held();
        for id in 0..LETTERS {
            addr.send(Job::Work(id)).unwrap();
        }
        shared.panic_factory.store(true, Ordering::SeqCst);
        assert_eq!(
            stage.resize(3),
            Ok(2),
            "the factory panicked for one of two"
        );
        shared.panic_init.store(true, Ordering::SeqCst);
        assert_eq!(stage.resize(4), Ok(3), "one init of two panicked");
        assert_eq!(stage.metrics().instances, 3);
        let faults = stage.take_faults();
        assert_eq!(faults.len(), 2, "{faults:?}");
        assert!(faults.iter().all(|f| f.phase == Phase::Init));
        assert!(faults[0].error.contains("factory panicked"), "{faults:?}");
        assert!(
            faults[1].error.contains("deliberate init panic"),
            "{faults:?}"
        );
        shared.gate.open();
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(exit.metrics.performed, u64::from(LETTERS) + 1);
        assert_balanced(&exit.metrics);
        shared.assert_each_once();
        let mut reasons = shared.assert_lives();
        reasons.sort_by_key(|r| *r == Reason::Drained);
        assert_eq!(
            reasons,
            vec![
                Reason::FailedInit,
                Reason::Drained,
                Reason::Drained,
                Reason::Drained
            ]
        );
    });
}

#[test]
fn resizes_racing_a_stop_or_a_kill_lose_no_letter() {
    within("resize racing the end", || {
        const LETTERS: u32 = 3000;
        for round in 0..12u32 {
            let (shared, _seen) = shared(LETTERS);
            let dead: Arc<Vec<AtomicU32>> =
                Arc::new((0..LETTERS).map(|_| AtomicU32::new(0)).collect());
            let sink = dead.clone();
            let stage = workers("race", &shared)
                .instances(2)
                .on_dead_letter(move |d| {
                    if let Job::Work(id) = d.message {
                        sink[id as usize].fetch_add(1, Ordering::SeqCst);
                    }
                })
                .spawn()
                .expect("spawn");
            let addr = stage.addr();
            let handed_back = std::thread::scope(|s| {
                let sender = s.spawn(|| {
                    let mut back = Vec::new();
                    for id in 0..LETTERS {
                        if let Err(e) = addr.send(Job::Work(id)) {
                            assert!(matches!(e.into_inner(), Job::Work(i) if i == id));
                            back.push(id);
                        }
                        if id == LETTERS / 2 {
                            let ended = if round % 2 == 0 {
                                addr.stop()
                            } else {
                                addr.kill()
                            };
                            ended.expect("the first end");
                        }
                    }
                    back
                });
                s.spawn(|| {
                    let mut n = round as usize;
                    loop {
                        n = (n * 7 + 3) % 5;
                        match stage.resize(n + 1) {
                            Ok(size) => assert!((1..=n + 1).contains(&size)),
                            Err(ResizeError::Ending { .. }) => break,
                            Err(e) => panic!("unexpected {e}"),
                        }
                    }
                });
                sender.join().expect("sender")
            });
            let exit = stage.join();
            let want = if round % 2 == 0 {
                Reason::Stopped
            } else {
                Reason::Killed
            };
            assert_eq!(exit.reason, want);
            assert_balanced(&exit.metrics);
            for id in 0..LETTERS {
                let ends = shared.counts[id as usize].load(Ordering::SeqCst)
                    + dead[id as usize].load(Ordering::SeqCst)
                    + u32::from(handed_back.contains(&id));
                assert_eq!(ends, 1, "round {round}: letter {id} ends once");
            }
            let reasons = shared.assert_lives();
            assert!(
                reasons.iter().all(|r| [want, Reason::Removed].contains(r)),
                "{reasons:?}"
            );
        }
    });
}

#[test]
fn a_stage_that_keeps_its_factory_is_still_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Stage<Worker>>();
}

#[test]
fn growing_right_after_a_shrink_keeps_the_instances_asked_to_leave() {
    within("regrow takes removals back", || {
        let (shared, seen) = shared(0);
        let stage = all_held("regrow", &shared, &seen, 4);
        // All four are held: none has taken its removal yet.
        assert_eq!(stage.resize(2), Ok(2));
        assert_eq!(stage.resize(4), Ok(4));
        assert_eq!(
            shared.serial.load(Ordering::SeqCst),
            4,
            "the removals are taken back: the factory is not called"
        );
        assert_eq!(stage.metrics().instances, 4);
        shared.gate.open();
        let exit = stage.drain();
        assert_eq!((exit.reason, exit.metrics.performed), (Reason::Drained, 4));
        assert_eq!(exit.metrics.instances, 4);
        assert_balanced(&exit.metrics);
        assert_eq!(shared.assert_lives(), vec![Reason::Drained; 4]);
    });
}

/// Fails its `init`, and holds its `destroy` on a gate.
struct Stillborn(Gate);

impl Actor for Stillborn {
    type In = ();
    type Out = ();
    fn init(&mut self, _: &StageContext<'_>) -> Result<(), ActorError> {
        Err("resize test: init refused".into())
    }
    fn perform(&mut self, (): (), _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
    fn destroy(&mut self, _: Reason) {
        self.0.wait();
    }
}

#[test]
fn a_stage_whose_every_init_failed_is_not_revived_by_a_resize() {
    within("no revival", || {
        let gate = Gate::default();
        let made = Arc::new(AtomicU32::new(0));
        let (g, m) = (gate.clone(), made.clone());
        let stage = Stage::builder("stillborn", move |_| {
            m.fetch_add(1, Ordering::SeqCst);
            Stillborn(g.clone())
        })
        .spawn()
        .expect("spawn returns once every init ran");
        // Its only instance is still in `destroy(FailedInit)`.
        assert_eq!(
            stage.resize(2),
            Err(ResizeError::Ending {
                stage: "stillborn".to_owned()
            })
        );
        assert_eq!(made.load(Ordering::SeqCst), 1, "the factory is not called");
        gate.open();
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::FailedInit);
        assert_eq!(exit.metrics.instances, 0);
    });
}

type Slot = Weak<OnceLock<Stage<Reenter>>>;

/// Resizes its own stage from its `init`, as its factory does.
struct Reenter {
    slot: Slot,
    tx: mpsc::Sender<Result<usize, ResizeError>>,
}

/// A resize of the stage in `slot`, if it is there yet.
fn resize_from(slot: &Slot, tx: &mpsc::Sender<Result<usize, ResizeError>>) {
    if let Some(stage) = slot.upgrade().as_ref().and_then(|s| s.get()) {
        let _ = tx.send(stage.resize(3));
    }
}

impl Actor for Reenter {
    type In = ();
    type Out = ();
    fn init(&mut self, _: &StageContext<'_>) -> Result<(), ActorError> {
        resize_from(&self.slot, &self.tx);
        Ok(())
    }
    fn perform(&mut self, (): (), _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
}

#[test]
fn a_resize_from_the_factory_or_a_new_init_of_the_same_stage_is_refused() {
    within("re-entrant resize", || {
        let slot: Arc<OnceLock<Stage<Reenter>>> = Arc::new(OnceLock::new());
        let (tx, rx) = mpsc::channel();
        let weak = Arc::downgrade(&slot);
        let stage = Stage::builder("reenter", move |_| {
            resize_from(&weak, &tx);
            Reenter {
                slot: weak.clone(),
                tx: tx.clone(),
            }
        })
        .spawn()
        .expect("spawn");
        assert!(slot.set(stage).is_ok());
        let stage = slot.get().expect("set");
        assert_eq!(stage.resize(2), Ok(2));
        let refused = Err(ResizeError::Reentrant {
            stage: "reenter".to_owned(),
        });
        // The factory's call for instance 1, then its `init`'s.
        assert_eq!(rx.try_recv(), Ok(refused.clone()));
        assert_eq!(rx.try_recv(), Ok(refused));
        assert_eq!(rx.try_recv(), Err(mpsc::TryRecvError::Empty));
        let stage = Arc::into_inner(slot)
            .and_then(OnceLock::into_inner)
            .expect("the only handle");
        let exit = stage.drain();
        assert_eq!((exit.reason, exit.metrics.instances), (Reason::Drained, 2));
    });
}
