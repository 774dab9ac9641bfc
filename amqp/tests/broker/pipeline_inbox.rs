//! An inbox stage's edges: instances that take nothing, a drain marker
//! left by an earlier run, and failed performs in the drain report.

use crate::common::{delete_stage_queues, unique, uri};
use crate::pipeline::Source;
use priority_executor::actor::{Actor, ActorError, Outbox, StageContext};
use priority_executor_amqp::StageProcess;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// Records what it performs; fails on `bad`.
struct Sink(Arc<Mutex<Vec<String>>>);

impl Actor for Sink {
    type In = String;
    type Out = String;
    fn perform(&mut self, msg: String, _: &mut Outbox<'_, String>) -> Result<(), ActorError> {
        if msg == "bad" {
            return Err("cannot index bad".into());
        }
        self.0.lock().unwrap().push(msg);
        Ok(())
    }
}

/// Its `init` fails: the instance never takes a message.
struct Broken;

impl Actor for Broken {
    type In = String;
    type Out = String;
    fn init(&mut self, _: &StageContext<'_>) -> Result<(), ActorError> {
        Err("the index is not there".into())
    }
    fn perform(&mut self, _: String, _: &mut Outbox<'_, String>) -> Result<(), ActorError> {
        Ok(())
    }
}

/// Runs a source into `queue`: sends `docs`, then drains (the markers go
/// to the consumers of `queue` counted now).
fn run_source(queue: &str, docs: &[&str]) {
    let source = StageProcess::builder(uri(), "source", |_| Source)
        .outbox(queue)
        .start()
        .expect("start the source");
    for doc in docs {
        source.send((*doc).to_owned()).expect("send");
    }
    source.drain().expect("the source drains");
}

/// `f` on a thread of its own, failing the test if it hangs.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("done within a minute")
}

fn sink(queue: &str) -> (StageProcess<Sink>, Arc<Mutex<Vec<String>>>) {
    let performed: Arc<Mutex<Vec<String>>> = Arc::default();
    let p = performed.clone();
    let stage = StageProcess::builder(uri(), "sink", move |_| Sink(p.clone()))
        .inbox(queue)
        .start()
        .expect("start the sink");
    (stage, performed)
}

fn sorted(performed: &Mutex<Vec<String>>) -> Vec<String> {
    let mut got = performed.lock().unwrap().clone();
    got.sort();
    got
}

/// A stage none of whose instances takes a message (each `init` failed)
/// performs nothing: its deliveries go back to the inbox, not to the dead
/// letters, its consumer stops, and its drain says why. A healthy
/// consumer started later performs them, drained by the next run.
#[test]
fn deliveries_a_stage_cannot_take_go_back_to_the_inbox_not_to_the_dead_letters() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("kabuki-refused");
    let broken = StageProcess::builder(uri(), "broken", |_| Broken)
        .inbox(&queue)
        .start()
        .expect("a failing init is no error at start");
    run_source(&queue, &["a", "b", "c"]);
    let error = within_a_minute(move || broken.drain())
        .expect_err("no instance took the messages")
        .to_string();
    assert!(
        error.contains("no longer accepts messages") && error.contains("the index is not there"),
        "{error}"
    );
    assert_eq!(
        publisher.queue_len(&format!("{queue}.dead")).expect("len"),
        0,
        "nothing dead-lettered"
    );

    let (healthy, performed) = sink(&queue);
    run_source(&queue, &[]);
    let report = within_a_minute(move || healthy.drain()).expect("the healthy sink drains");
    assert_eq!(sorted(&performed), ["a", "b", "c"], "{report}");
    assert_eq!(report.marker, (0, 1), "{report}");
    assert_eq!(
        publisher.queue_len(&format!("{queue}.dead")).expect("len"),
        0,
        "nothing dead-lettered"
    );
    delete_stage_queues(&publisher, &queue);
}

/// A drain marker an earlier run left in the inbox (sent before this
/// consumer started) is dropped: the consumer performs this run's
/// documents and drains on this run's marker.
#[test]
fn a_marker_left_by_an_earlier_run_does_not_drain_the_next_one() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("kabuki-stale");
    // The earlier run: its source drained with no consumer to take the
    // marker.
    run_source(&queue, &[]);
    assert_eq!(publisher.queue_len(&queue).expect("len"), 1, "the marker");

    let (sink, performed) = sink(&queue);
    run_source(&queue, &["a", "b", "c"]);
    let report = within_a_minute(move || sink.drain()).expect("the sink drains");
    assert_eq!(sorted(&performed), ["a", "b", "c"], "{report}");
    assert_eq!(report.marker, (0, 1), "{report}");
    assert_eq!(report.inbox.as_ref().map(|i| i.acked), Some(3), "{report}");
    assert_eq!(
        publisher.queue_len(&queue).expect("len"),
        0,
        "both markers are gone: this run's taken, the earlier one dropped"
    );
    delete_stage_queues(&publisher, &queue);
}

/// A failed perform of an inbox message is a fault of the stage: in the
/// report's faults and counted as faulted, not as performed.
#[test]
fn a_failed_perform_of_an_inbox_message_is_in_the_drain_reports_faults() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("kabuki-faults");
    let (sink, performed) = sink(&queue);
    run_source(&queue, &["a", "bad", "b"]);
    let report = within_a_minute(move || sink.drain()).expect("the sink drains");
    assert_eq!(sorted(&performed), ["a", "b"], "{report}");
    assert_eq!(report.faults.len(), 1, "{:?}", report.faults);
    assert!(
        report.faults[0].contains("cannot index bad"),
        "{:?}",
        report.faults
    );
    let m = &report.exit.metrics;
    assert_eq!((m.performed, m.faulted), (2, 1), "{report}");
    let inbox = report.inbox.as_ref().expect("inbox counters");
    assert_eq!((inbox.acked, inbox.dead_lettered), (2, 1), "{report}");
    delete_stage_queues(&publisher, &queue);
}
