//! A pipeline drains in order: every message sent before `drain()` reaches
//! the sink; each stage's `destroy` comes after its last `perform` and
//! after the upstream stage's; a send after the drain is refused with the
//! message.

use super::support::{assert_balanced, within};
use priority_executor::actor::{Actor, ActorError, Outbox, Pipeline, Reason, SendError, Stage};
use priority_executor::{Priority, SendOptions};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Perform,
    Destroy,
}

type Log = Arc<Mutex<Vec<(usize, Kind)>>>;

struct Step {
    stage: usize,
    log: Log,
}

impl Actor for Step {
    type In = u64;
    type Out = u64;
    fn perform(&mut self, n: u64, out: &mut Outbox<'_, u64>) -> Result<(), ActorError> {
        self.log
            .lock()
            .map_err(|_| "poisoned")?
            .push((self.stage, Kind::Perform));
        out.send(n + 1).map_err(|e| e.to_string())?;
        Ok(())
    }

    fn destroy(&mut self, reason: Reason) {
        assert_eq!(reason, Reason::Drained);
        if let Ok(mut log) = self.log.lock() {
            log.push((self.stage, Kind::Destroy));
        }
    }
}

fn step(stage: usize, log: &Log, instances: usize) -> priority_executor::actor::StageBuilder<Step> {
    let log = log.clone();
    Stage::builder(format!("step{stage}"), move |_| Step {
        stage,
        log: log.clone(),
    })
    .instances(instances)
}

#[test]
fn every_message_reaches_the_sink_and_stages_end_in_order() {
    within("pipeline drain", || {
        let log: Log = Arc::default();
        let sink = Arc::new(Mutex::new(Vec::new()));
        let out = sink.clone();
        let pipeline = Pipeline::builder(step(0, &log, 1))
            .then(step(1, &log, 2))
            .then(step(2, &log, 1))
            .on_output(move |n, p| out.lock().unwrap().push((n, p)))
            .spawn()
            .expect("spawn");
        let addr = pipeline.addr();
        for n in 0..3000u64 {
            let p = if n % 3 == 0 {
                Priority::HIGH
            } else {
                Priority::LOW
            };
            pipeline
                .addr()
                .send_with(n * 10, SendOptions::new().priority(p))
                .unwrap();
        }
        let exits = pipeline.drain();
        assert_eq!(exits.len(), 3);
        for exit in &exits {
            assert_eq!(exit.reason, Reason::Drained);
            assert_balanced(&exit.metrics);
            assert_eq!(exit.metrics.performed, 3000);
        }
        let mut got = sink.lock().unwrap().clone();
        assert_eq!(got.len(), 3000, "every message reached the sink");
        assert!(
            got.iter()
                .all(|&(n, p)| (p == Priority::HIGH) == ((n - 3) / 10 % 3 == 0)),
            "outputs keep their input's priority"
        );
        got.sort_unstable();
        let expected: Vec<u64> = (0..3000).map(|n| n * 10 + 3).collect();
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), expected);

        let log = log.lock().unwrap();
        for stage in 0..3 {
            let last_perform = log
                .iter()
                .rposition(|&(s, k)| s == stage && k == Kind::Perform)
                .unwrap();
            let destroys: Vec<usize> = log
                .iter()
                .enumerate()
                .filter(|(_, (s, k))| *s == stage && *k == Kind::Destroy)
                .map(|(i, _)| i)
                .collect();
            let instances = if stage == 1 { 2 } else { 1 };
            assert_eq!(
                destroys.len(),
                instances,
                "stage {stage} destroyed once per instance"
            );
            assert!(
                destroys.iter().all(|&d| d > last_perform),
                "stage {stage}: destroy after its last perform"
            );
            if stage > 0 {
                let upstream_last_destroy = log
                    .iter()
                    .rposition(|&(s, k)| s == stage - 1 && k == Kind::Destroy)
                    .unwrap();
                assert!(
                    destroys.iter().all(|&d| d > upstream_last_destroy),
                    "stage {stage}: destroy after the upstream stage's"
                );
            }
        }

        let err = addr.send(7).unwrap_err();
        assert!(matches!(err, SendError::ShutDown { .. }));
        assert_eq!(
            err.into_inner(),
            7,
            "a send after the drain is refused with the message"
        );
    });
}

#[test]
fn a_pipeline_dropped_without_drain_still_drains() {
    within("pipeline drop", || {
        let log: Log = Arc::default();
        let pipeline = Pipeline::builder(step(0, &log, 1))
            .then(step(1, &log, 1))
            .spawn()
            .expect("spawn");
        for n in 0..100 {
            pipeline.addr().send(n).unwrap();
        }
        drop(pipeline);
        let log = log.lock().unwrap();
        assert_eq!(log.iter().filter(|(_, k)| *k == Kind::Perform).count(), 200);
        assert_eq!(log.iter().filter(|(_, k)| *k == Kind::Destroy).count(), 2);
    });
}
