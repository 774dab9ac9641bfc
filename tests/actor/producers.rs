//! Kabuki's producing tier: an actor sends from `init` and asks its own
//! pipeline to drain; the marker goes behind everything it sent, so every
//! document reaches the last stage exactly once before the pipeline ends.

use super::support::{assert_balanced, within};
use priority_executor::actor::{
    Actor, ActorError, Outbox, Phase, Pipeline, Reason, SendError, Stage, StageContext,
};
use std::sync::{Arc, Mutex};

type Seen = Arc<Mutex<Vec<u64>>>;

/// Produces `0..n` from `init`, then asks for the drain (Kabuki's
/// DownloadActor); its inbox is never used.
struct Download {
    n: u64,
}

impl Actor for Download {
    type In = ();
    type Out = u64;
    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        let mut out = ctx.outbox()?;
        for doc in 0..self.n {
            out.send(doc)?;
        }
        out.drain_pipeline();
        Ok(())
    }
    fn perform(&mut self, (): (), _: &mut Outbox<'_, u64>) -> Result<(), ActorError> {
        Err("the producer takes no input".into())
    }
}

/// Passes each number on; performing `ask` (if set) asks for the drain.
struct Index {
    ask: Option<u64>,
}

impl Actor for Index {
    type In = u64;
    type Out = u64;
    fn perform(&mut self, doc: u64, out: &mut Outbox<'_, u64>) -> Result<(), ActorError> {
        out.send(doc)?;
        if self.ask == Some(doc) {
            out.drain_pipeline();
        }
        Ok(())
    }
}

/// Records what it performs, and at `destroy` how much it had seen; may
/// ask for the drain from `init`.
struct Write {
    seen: Seen,
    drain_in_init: bool,
    at_destroy: Arc<Mutex<Option<usize>>>,
}

impl Actor for Write {
    type In = u64;
    type Out = ();
    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        if self.drain_in_init {
            ctx.outbox::<()>()?.drain_pipeline();
        }
        Ok(())
    }
    fn perform(&mut self, doc: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        self.seen.lock().map_err(|_| "poisoned")?.push(doc);
        Ok(())
    }
    fn destroy(&mut self, _: Reason) {
        let seen = self.seen.lock().map(|s| s.len()).ok();
        *self.at_destroy.lock().unwrap() = seen;
    }
}

fn write(seen: &Seen, drain_in_init: bool) -> priority_executor::actor::StageBuilder<Write> {
    write_counting(seen, drain_in_init, &Arc::default())
}

fn write_counting(
    seen: &Seen,
    drain_in_init: bool,
    at_destroy: &Arc<Mutex<Option<usize>>>,
) -> priority_executor::actor::StageBuilder<Write> {
    let (seen, at_destroy) = (seen.clone(), at_destroy.clone());
    Stage::builder("write", move |_| Write {
        seen: seen.clone(),
        drain_in_init,
        at_destroy: at_destroy.clone(),
    })
}

fn sorted(seen: &Seen) -> Vec<u64> {
    let mut v = seen.lock().unwrap().clone();
    v.sort_unstable();
    v
}

#[test]
fn a_producer_in_init_ends_its_own_pipeline_behind_its_payload() {
    within("producer drains its pipeline", || {
        const N: u64 = 2_000;
        let seen = Seen::default();
        let at_destroy = Arc::default();
        let pipeline = Pipeline::builder(Stage::builder("download", |_| Download { n: N }))
            .then(Stage::builder("index", |_| Index { ask: None }).instances(3))
            .then(write_counting(&seen, false, &at_destroy))
            .spawn()
            .unwrap();
        // Nobody but the producer asks for the end.
        let exits = pipeline.join();
        assert!(
            exits.iter().all(|e| e.reason == Reason::Drained),
            "{exits:?}"
        );
        for e in &exits {
            assert_balanced(&e.metrics);
        }
        // Every document reached Write exactly once, all of them before
        // the marker: Write had seen every one when it was destroyed.
        assert_eq!(sorted(&seen), (0..N).collect::<Vec<_>>());
        assert_eq!(*at_destroy.lock().unwrap(), Some(N as usize));
        assert_eq!(exits[1].metrics.performed, N);
    });
}

#[test]
fn a_stage_inside_the_pipeline_may_ask_for_the_drain() {
    within("middle stage drains its pipeline", || {
        const N: u64 = 500;
        let seen = Seen::default();
        let pipeline = Pipeline::builder(Stage::builder("index", |_| Index { ask: None }))
            .then(Stage::builder("ask", |_| Index { ask: Some(N - 1) }).instances(2))
            .then(write(&seen, false))
            .spawn()
            .unwrap();
        let addr = pipeline.addr();
        for doc in 0..N {
            addr.send(doc).unwrap();
        }
        let exits = pipeline.join();
        assert!(
            exits.iter().all(|e| e.reason == Reason::Drained),
            "{exits:?}"
        );
        assert_eq!(sorted(&seen), (0..N).collect::<Vec<_>>());
        // The first stage's door is closed: a late send is handed back.
        assert!(matches!(addr.send(N), Err(SendError::ShutDown { message, .. }) if message == N));
    });
}

#[test]
fn a_drain_asked_for_before_the_first_stage_exists_still_happens() {
    within("drain asked from the last stage's init", || {
        let seen = Seen::default();
        // Stages spawn last first: Write's init runs before Index exists.
        let pipeline = Pipeline::builder(Stage::builder("index", |_| Index { ask: None }))
            .then(write(&seen, true))
            .spawn()
            .unwrap();
        let addr = pipeline.addr();
        assert!(matches!(addr.send(1), Err(SendError::ShutDown { .. })));
        let exits = pipeline.join();
        assert!(
            exits.iter().all(|e| e.reason == Reason::Drained),
            "{exits:?}"
        );
        assert!(seen.lock().unwrap().is_empty());
    });
}

#[test]
fn a_standalone_stage_drains_itself_and_join_returns() {
    within("standalone self-drain", || {
        let (tx, rx) = std::sync::mpsc::channel();
        let stage = Stage::builder("download", |_| Download { n: 10 })
            .on_output(move |doc, _| tx.send(doc).unwrap())
            .spawn()
            .unwrap();
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(
            rx.try_iter().collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
    });
}

#[test]
fn an_outbox_of_the_wrong_type_fails_init() {
    struct Wrong;
    impl Actor for Wrong {
        type In = u64;
        type Out = u64;
        fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
            ctx.outbox::<String>()?.send("x".to_owned())?;
            Ok(())
        }
        fn perform(&mut self, _: u64, _: &mut Outbox<'_, u64>) -> Result<(), ActorError> {
            Ok(())
        }
    }
    within("wrong outbox type", || {
        let stage = Stage::builder("wrong", |_| Wrong).spawn().unwrap();
        let faults = stage.take_faults();
        assert_eq!(faults.len(), 1);
        assert_eq!(faults[0].phase, Phase::Init);
        assert!(faults[0].error.contains("String"), "{:?}", faults[0].error);
        assert_eq!(stage.join().reason, Reason::FailedInit);
    });
}
