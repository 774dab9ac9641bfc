//! Instances that come and go (rules 26 and 27 of src/actor/README.md):
//! `Stage::resize` adds instances (each `init` before its first perform)
//! and removes them (each `destroy` after its last perform), and every
//! letter is performed exactly once however the stage is resized; a
//! `Resizer` does it by the mailbox's depth.

use super::common::{Gate, quiet_panics};
use super::support::{LIMIT, assert_balanced, within};
use priority_executor::actor::{
    Actor, ActorError, MAX_INSTANCES, Outbox, Phase, Reason, ResizeError, Resizer, SpawnError,
    Stage, StageBuilder, StageContext,
};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// A letter: work with an id, or a hold that keeps its instance on the
/// gate until the test opens it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    Work(u32),
    Hold,
}

/// What the instances did, by serial: each instance the factory makes
/// gets the next serial (indices are taken again, serials never).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ev {
    Init(u32),
    Perform(u32, Job),
    Destroy(u32, Reason),
}

struct Shared {
    events: Mutex<Vec<Ev>>,
    /// Performs per work id.
    counts: Vec<AtomicU32>,
    serial: AtomicU32,
    gate: Gate,
    held: Mutex<mpsc::Sender<u32>>,
    done: Mutex<mpsc::Sender<(u32, u32)>>,
    destroyed: Mutex<mpsc::Sender<(u32, usize, Reason)>>,
    panic_factory: AtomicBool,
    panic_init: AtomicBool,
}

/// The receiving ends of [`Shared`]'s channels.
struct Seen {
    held: mpsc::Receiver<u32>,
    done: mpsc::Receiver<(u32, u32)>,
    destroyed: mpsc::Receiver<(u32, usize, Reason)>,
}

impl Seen {
    fn held(&self) -> u32 {
        self.held.recv_timeout(LIMIT).expect("an instance held")
    }

    fn done(&self) -> (u32, u32) {
        self.done.recv_timeout(LIMIT).expect("a letter performed")
    }

    fn destroyed(&self) -> (u32, usize, Reason) {
        self.destroyed
            .recv_timeout(LIMIT)
            .expect("an instance destroyed")
    }
}

fn shared(letters: u32) -> (Arc<Shared>, Seen) {
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
    fn log(&self, ev: Ev) {
        self.events.lock().expect("events").push(ev);
    }

    fn events(&self) -> Vec<Ev> {
        self.events.lock().expect("events").clone()
    }

    /// Every work letter was performed exactly once.
    fn assert_each_once(&self) {
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
    fn assert_lives(&self) -> Vec<Reason> {
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

struct Worker {
    serial: u32,
    index: usize,
    shared: Arc<Shared>,
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

fn workers(name: &str, shared: &Arc<Shared>) -> StageBuilder<Worker> {
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
        let (mut added, mut removed, mut size) = (2, 0, 2);
        for &n in &sizes {
            assert_eq!(stage.resize(n), Ok(n));
            assert_eq!(stage.metrics().instances, n);
            if n > size {
                added += n - size;
            } else {
                removed += size - n;
            }
            size = n;
        }
        producer.join().expect("producer");
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(exit.metrics.performed, u64::from(LETTERS));
        assert_eq!(exit.metrics.instances, 4);
        assert_balanced(&exit.metrics);
        shared.assert_each_once();
        let reasons = shared.assert_lives();
        assert_eq!(
            reasons.len(),
            added,
            "one init and one destroy per instance made"
        );
        let gone = reasons.iter().filter(|r| **r == Reason::Removed).count();
        let drained = reasons.iter().filter(|r| **r == Reason::Drained).count();
        assert_eq!((gone, drained), (removed, 4));
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
        let stage = workers("backlog", &shared)
            .instances(4)
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        for _ in 0..4 {
            addr.send(Job::Hold).unwrap();
        }
        for _ in 0..4 {
            seen.held();
        }
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
        assert_eq!(stage.resize(0), Err(ResizeError::NoInstances));
        assert_eq!(
            stage.resize(MAX_INSTANCES + 1),
            Err(ResizeError::OutOfRange {
                value: MAX_INSTANCES + 1,
                max: MAX_INSTANCES
            })
        );
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
            ResizeError::NoInstances.to_string(),
            "a stage needs at least one instance (got 0; allowed 1 to 1024)"
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
fn a_resizer_grows_to_its_max_on_a_backlog_and_shrinks_to_its_min_when_idle() {
    within("resizer", || {
        let (shared, seen) = shared(0);
        let stage = workers("elastic", &shared)
            .resizer(Resizer::new(1, 3).every(Duration::from_millis(1)))
            .spawn()
            .expect("spawn");
        assert_eq!(stage.metrics().instances, 1);
        let addr = stage.addr();
        for _ in 0..10 {
            addr.send(Job::Hold).unwrap();
        }
        // Each instance added takes a hold: 9 queued > 1 per instance,
        // then 8 > 2; at 3 the maximum holds.
        let mut held: Vec<u32> = (0..3).map(|_| seen.held()).collect();
        held.sort_unstable();
        assert_eq!(held, vec![0, 1, 2]);
        assert_eq!(stage.metrics().instances, 3);
        shared.gate.open();
        // Idle checks remove one instance each, down to the minimum.
        for _ in 0..2 {
            assert_eq!(seen.destroyed().2, Reason::Removed);
        }
        assert_eq!(stage.metrics().instances, 1);
        let exit = stage.drain();
        assert_eq!((exit.reason, exit.metrics.performed), (Reason::Drained, 10));
        assert_balanced(&exit.metrics);
        assert_eq!(
            shared.serial.load(Ordering::SeqCst),
            3,
            "never above the maximum"
        );
        let mut reasons = shared.assert_lives();
        reasons.sort_by_key(|r| *r == Reason::Drained);
        assert_eq!(
            reasons,
            vec![Reason::Removed, Reason::Removed, Reason::Drained]
        );
    });
}

#[test]
fn a_resizer_checks_its_range_and_starts_the_stage_inside_it() {
    within("resizer settings", || {
        let (shared, _seen) = shared(0);
        let err = workers("bad", &shared)
            .resizer(Resizer::new(0, 2))
            .spawn()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "resizer min = 0 is out of range: allowed 1 to 1024"
        );
        let err = workers("bad", &shared)
            .resizer(Resizer::new(3, 2))
            .spawn()
            .unwrap_err();
        assert!(matches!(
            err,
            SpawnError::OutOfRange {
                value: 2,
                min: 3,
                ..
            }
        ));
        let stage = workers("clamped", &shared)
            .instances(5)
            .resizer(Resizer::new(1, 2).every(Duration::from_secs(3600)))
            .spawn()
            .expect("spawn");
        assert_eq!(stage.metrics().instances, 2);
        assert_eq!(stage.drain().reason, Reason::Drained);
    });
}

#[test]
fn a_stage_that_keeps_its_factory_is_still_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Stage<Worker>>();
}
