//! A stage sized by its mailbox's depth (rule 27 of
//! src/actor/README.md): a `Resizer` grows it by one on a backlog, up to
//! its maximum, and shrinks it by one after an idle check, down to its
//! minimum.

use super::support::{assert_balanced, within};
use super::workers::{Job, shared, workers};
use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Reason, Resizer, Stage};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

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
            "resizer min = 0 is not allowed (expected 1 to 1024)"
        );
        let err = workers("bad", &shared)
            .resizer(Resizer::new(3, 2))
            .spawn()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "resizer max = 2 is not allowed (expected 3 to 1024)"
        );
        let stage = workers("clamped", &shared)
            .instances(5)
            .resizer(Resizer::new(1, 2).every(Duration::from_secs(3600)))
            .spawn()
            .expect("spawn");
        assert_eq!(stage.metrics().instances, 2);
        assert_eq!(stage.drain().reason, Reason::Drained);
    });
}

/// Tells a channel when it is dropped.
struct OnDrop(mpsc::Sender<()>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

struct Pass;

impl Actor for Pass {
    type In = u32;
    type Out = u32;
    fn perform(&mut self, n: u32, out: &mut Outbox<'_, u32>) -> Result<(), ActorError> {
        let _ = out.send(n);
        Ok(())
    }
}

#[test]
fn a_pipeline_drain_returns_once_its_stages_resizers_dropped_their_factory() {
    within("pipeline resizer joined", || {
        let (tx, rx) = mpsc::channel();
        let token = OnDrop(tx);
        let sized = Stage::builder("sized", move |_| {
            let _ = &token;
            Pass
        })
        // No check comes before the end: the end itself wakes the checks.
        .resizer(Resizer::new(1, 2).every(Duration::from_secs(3600)));
        let pipeline = Pipeline::builder(Stage::builder("first", |_| Pass))
            .then(sized)
            .spawn()
            .expect("spawn");
        for n in 0..10 {
            pipeline.addr().send(n).unwrap();
        }
        assert_eq!(rx.try_recv(), Err(mpsc::TryRecvError::Empty));
        let exits = pipeline.drain();
        assert!(exits.iter().all(|e| e.reason == Reason::Drained));
        assert_eq!(
            rx.try_recv(),
            Ok(()),
            "the factory is dropped before the drain returns"
        );
    });
}
