//! A panicking `perform`, `init` or `destroy` is reported (fault sink,
//! reason), never kills a worker, never hangs `drain()`. Failed performs
//! go through the retry policy first.

use super::support::{assert_balanced, within};
use priority_executor::actor::{
    Actor, ActorError, Outbox, Phase, Pipeline, Reason, SendError, Stage, StageContext,
};
use priority_executor::{Priority, RetryPolicy};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const DELIBERATE: &str = "actor tests: deliberate panic";

/// Panics in `init` for the instances listed, in `perform` for multiples
/// of 10, fails (returns an error) for numbers ending in 5, and panics in
/// `destroy` when asked.
struct Faulty {
    id: usize,
    bad_init: Vec<usize>,
    bad_destroy: bool,
    performed: Arc<AtomicUsize>,
    destroyed: Arc<Mutex<Vec<(usize, Reason)>>>,
}

impl Actor for Faulty {
    type In = u32;
    type Out = u32;

    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        if self.bad_init.contains(&ctx.instance()) {
            panic!("{DELIBERATE} in init");
        }
        Ok(())
    }

    fn perform(&mut self, n: u32, out: &mut Outbox<'_, u32>) -> Result<(), ActorError> {
        if n.is_multiple_of(10) {
            panic!("{DELIBERATE} in perform {n}");
        }
        if n % 10 == 5 {
            return Err(format!("cannot perform {n}").into());
        }
        self.performed.fetch_add(1, Ordering::SeqCst);
        let _ = out.send(n);
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        if let Ok(mut d) = self.destroyed.lock() {
            d.push((self.id, reason));
        }
        if self.bad_destroy {
            panic!("{DELIBERATE} in destroy");
        }
    }
}

struct Probes {
    performed: Arc<AtomicUsize>,
    destroyed: Arc<Mutex<Vec<(usize, Reason)>>>,
}

fn faulty(
    name: &str,
    bad_init: &[usize],
    bad_destroy: bool,
) -> (priority_executor::actor::StageBuilder<Faulty>, Probes) {
    let performed = Arc::new(AtomicUsize::new(0));
    let destroyed = Arc::new(Mutex::new(Vec::new()));
    let (p, d, bad) = (performed.clone(), destroyed.clone(), bad_init.to_vec());
    let builder = Stage::builder(name, move |id| Faulty {
        id,
        bad_init: bad.clone(),
        bad_destroy,
        performed: p.clone(),
        destroyed: d.clone(),
    });
    (
        builder,
        Probes {
            performed,
            destroyed,
        },
    )
}

#[test]
fn a_panicking_perform_is_reported_and_the_instance_lives_on() {
    within("perform panics", || {
        let (builder, probes) = faulty("perform-panics", &[], false);
        let stage = builder.instances(2).spawn().expect("spawn");
        let addr = stage.addr();
        for n in 1..=100 {
            addr.send(n).unwrap();
        }
        while stage.metrics().settled() < 100 {
            std::thread::yield_now();
        }
        let faults = stage.take_faults();
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        assert_eq!((exit.metrics.performed, exit.metrics.faulted), (80, 20));
        assert_eq!(probes.performed.load(Ordering::SeqCst), 80);
        assert_eq!(faults.len(), 20);
        let panics = faults
            .iter()
            .filter(|f| f.error.contains(DELIBERATE))
            .count();
        assert_eq!(panics, 10);
        assert!(
            faults
                .iter()
                .all(|f| f.phase == Phase::Perform && f.attempts == 1)
        );
        assert!(faults.iter().any(|f| f.error == "cannot perform 15"));
        assert!(
            faults.iter().all(|f| f.message.is_none()),
            "no copy without a retry policy"
        );
    });
}

#[test]
fn failed_performs_are_retried_then_reported_with_the_message() {
    within("retries", || {
        let (builder, _) = faulty("retry", &[], false);
        let (tx, rx) = std::sync::mpsc::channel();
        let stage = builder
            .retry(RetryPolicy::new(2))
            .on_fault(move |f| tx.send(f).unwrap())
            .spawn()
            .expect("spawn");
        stage.addr().send(5).unwrap();
        stage.addr().send(10).unwrap();
        stage.addr().send(7).unwrap();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        assert_eq!((exit.metrics.performed, exit.metrics.faulted), (1, 2));
        assert_eq!(exit.metrics.retried, 4);
        let faults: Vec<_> = rx.try_iter().collect();
        assert_eq!(faults.len(), 2);
        assert_eq!(faults[0].message, Some(5));
        assert_eq!(faults[0].attempts, 3);
        assert_eq!(faults[0].priority, Some(Priority::MEDIUM));
        assert_eq!(faults[1].message, Some(10));
        assert!(faults[1].error.contains(DELIBERATE));
    });
}

#[test]
fn a_panicking_init_is_reported_and_the_other_instances_serve() {
    within("init panics", || {
        let (builder, probes) = faulty("init-panics", &[0], false);
        let stage = builder.instances(2).spawn().expect("spawn");
        let faults = stage.take_faults();
        assert_eq!(faults.len(), 1);
        assert_eq!((faults[0].phase, faults[0].instance), (Phase::Init, 0));
        assert!(faults[0].error.contains(DELIBERATE));
        for n in 1..=9 {
            stage.addr().send(n).unwrap();
        }
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.performed, 8);
        let mut destroyed = probes.destroyed.lock().unwrap().clone();
        destroyed.sort_by_key(|d| d.0);
        assert_eq!(
            destroyed,
            vec![(0, Reason::FailedInit), (1, Reason::Drained)]
        );
    });
}

#[test]
fn when_every_init_fails_the_stage_ends_and_drain_returns() {
    within("all inits fail", || {
        let (builder, probes) = faulty("no-instance", &[0, 1], false);
        let stage = builder.instances(2).spawn().expect("spawn");
        let addr = stage.addr();
        while stage.finished().is_none() {
            std::thread::yield_now();
        }
        assert!(matches!(
            addr.send(1).unwrap_err(),
            SendError::ShutDown { .. }
        ));
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::FailedInit);
        assert_balanced(&exit.metrics);
        assert_eq!(probes.destroyed.lock().unwrap().len(), 2);
    });
}

#[test]
fn a_panicking_destroy_is_reported_and_drain_returns() {
    within("destroy panics", || {
        let (builder, probes) = faulty("destroy-panics", &[], true);
        let (tx, rx) = std::sync::mpsc::channel();
        let stage = builder
            .instances(3)
            .on_fault(move |f| tx.send(f).unwrap())
            .spawn()
            .expect("spawn");
        stage.addr().send(1).unwrap();
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        let faults: Vec<_> = rx.try_iter().collect();
        assert_eq!(faults.len(), 3);
        assert!(faults.iter().all(|f| f.phase == Phase::Destroy));
        assert_eq!(probes.destroyed.lock().unwrap().len(), 3);
    });
}

#[test]
fn a_pipeline_with_panicking_stages_still_drains() {
    within("pipeline with panics", || {
        let (first, _) = faulty("first", &[], true);
        let (second, probes) = faulty("second", &[], true);
        let pipeline = Pipeline::builder(first.instances(2))
            .then(second)
            .spawn()
            .expect("spawn");
        for n in 1..=200 {
            pipeline.addr().send(n).unwrap();
        }
        let exits = pipeline.drain();
        for exit in &exits {
            assert_eq!(exit.reason, Reason::Drained);
            assert_balanced(&exit.metrics);
        }
        // 160 pass the first stage; the second performs all of them.
        assert_eq!(exits[0].metrics.performed, 160);
        assert_eq!(exits[1].metrics.offered, 160);
        assert_eq!(probes.performed.load(Ordering::SeqCst), 160);
    });
}

/// An error whose `Display` panics.
#[derive(Debug)]
struct Unprintable;

impl std::fmt::Display for Unprintable {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        panic!("{DELIBERATE} in an error's Display");
    }
}

impl std::error::Error for Unprintable {}

/// A message whose `Clone` panics for 3, and whose copy of 1 panics when
/// dropped (the original does not).
#[derive(Debug, PartialEq)]
struct Touchy {
    n: u32,
    copy: bool,
}

impl Clone for Touchy {
    fn clone(&self) -> Self {
        assert!(self.n != 3, "{DELIBERATE} in a message's Clone");
        Touchy {
            n: self.n,
            copy: true,
        }
    }
}

impl Drop for Touchy {
    fn drop(&mut self) {
        if self.copy && self.n == 1 && !std::thread::panicking() {
            panic!("{DELIBERATE} in a copy's drop");
        }
    }
}

/// Fails 2 with an unprintable error; performs the rest.
struct Picky;

impl Actor for Picky {
    type In = Touchy;
    type Out = ();

    fn perform(&mut self, m: Touchy, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        if m.n == 2 {
            return Err(Box::new(Unprintable));
        }
        Ok(())
    }
}

#[test]
fn user_code_around_a_perform_that_panics_faults_the_letter_and_drain_returns() {
    // A copy for the retry policy (the message's `Clone`), the copy's
    // destructor after a perform, and the text of a returned error (its
    // `Display`): each is user code outside the perform itself.
    within("clone, drop and display panics", || {
        let (tx, rx) = std::sync::mpsc::channel();
        let stage = Stage::builder("touchy", |_| Picky)
            .retry(RetryPolicy::new(1))
            .on_fault(move |f| tx.send(f).unwrap())
            .spawn()
            .expect("spawn");
        for n in 1..=4 {
            stage.addr().send(Touchy { n, copy: false }).unwrap();
        }
        let exit = stage.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        assert_eq!((exit.metrics.performed, exit.metrics.faulted), (2, 2));
        let faults: Vec<_> = rx.try_iter().collect();
        let text = |n: u32| {
            let f = faults
                .iter()
                .find(|f| f.message.as_ref().is_some_and(|m| m.n == n));
            f.map(|f| f.error.clone())
        };
        assert!(text(2).is_some_and(|e| e.contains("an error whose Display panicked")));
        assert!(text(3).is_some_and(|e| e.contains("copying the message panicked")));
    });
}

/// A message whose drop panics once armed.
struct Bomb {
    armed: bool,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.armed && !std::thread::panicking() {
            panic!("{DELIBERATE}: a message's drop");
        }
    }
}

/// Holds its instance on the first (unarmed) message until the gate opens.
struct Holding {
    started: std::sync::mpsc::Sender<()>,
    gate: std::sync::mpsc::Receiver<()>,
}

impl Actor for Holding {
    type In = Bomb;
    type Out = ();
    fn perform(&mut self, bomb: Bomb, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        if !bomb.armed {
            self.started.send(())?;
            self.gate.recv()?;
        }
        Ok(())
    }
}

#[test]
fn kept_dead_letters_whose_drop_panics_do_not_fail_join() {
    within("dead letters dropped quietly", || {
        let (started_tx, started) = std::sync::mpsc::channel();
        let (open, gate) = std::sync::mpsc::channel();
        let parts = Mutex::new(Some((started_tx, gate)));
        let stage = Stage::builder("bombs", move |_| {
            let (started, gate) = parts.lock().unwrap().take().expect("one instance");
            Holding { started, gate }
        })
        .spawn()
        .expect("spawn");
        let addr = stage.addr();
        addr.send(Bomb { armed: false }).unwrap();
        started.recv().unwrap();
        // Queued behind the held one, then killed: kept as dead letters,
        // dropped with the stage.
        addr.send(Bomb { armed: true }).unwrap();
        addr.send(Bomb { armed: true }).unwrap();
        addr.kill().unwrap();
        open.send(()).unwrap();
        drop(addr);
        let joined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stage.join()));
        let exit = joined.expect("join gives the exit");
        assert_eq!(exit.reason, Reason::Killed);
        assert_eq!(exit.metrics.dead_lettered, 2);
    });
}
