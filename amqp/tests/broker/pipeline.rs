//! Kabuki's pipeline across processes: the drain marker passes two
//! processes of the middle stage in order, and every process exits 0.

use crate::common::{delete_stage_queues, unique, uri, wait_until};
use priority_executor_amqp::Outgoing;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// A stage process of `amqp-pipeline`, its stdout lines sent to `lines`.
fn stage(
    label: &'static str,
    args: &[&str],
    lines: &mpsc::Sender<(&'static str, String)>,
) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_amqp-pipeline"))
        .args(args)
        .args(["--uri", &uri()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start amqp-pipeline");
    let stdout = child.stdout.take().expect("stdout");
    let tx = lines.clone();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send((label, line));
        }
    });
    child
}

#[test]
fn the_drain_crosses_two_middle_processes_after_every_message_before_it() {
    let publisher = crate::broker_or_skip!();
    const N: usize = 300;
    let index = unique("kabuki-index");
    let write = unique("kabuki-write");
    let (tx, rx) = mpsc::channel();
    let mut sink = stage("write", &["-a", "write", "-i", &write], &tx);
    // One fast process with a deep prefetch, one slow one with its
    // message in hand: the fast one tends to get both markers, hands one
    // back, and the slow one's in-hand message must still reach the sink.
    let mut fast = stage(
        "index-fast",
        &["-a", "index", "-i", &index, "-o", &write, "-n", "4"],
        &tx,
    );
    let mut slow = stage(
        "index-slow",
        &[
            "-a",
            "index",
            "-i",
            &index,
            "-o",
            &write,
            "-n",
            "1",
            "--work-us",
            "20000",
        ],
        &tx,
    );
    let mut ready = 0;
    while ready < 3 {
        let (_, line) = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a stage started");
        if line == "ready" {
            ready += 1;
        }
    }
    // A body the index stage cannot decode (not UTF-8): dead-lettered,
    // never lost, and the drain still passes.
    publisher
        .publish(&Outgoing::to_queue(&index, vec![0xff, 0xfe]).priority(5))
        .expect("publish a bad body");
    let mut source = stage(
        "download",
        &[
            "-a",
            "download",
            "-o",
            &index,
            "--documents",
            &N.to_string(),
        ],
        &tx,
    );
    drop(tx);

    let mut wrote = Vec::new();
    let mut drained = Vec::new();
    let mut wrote_before_sink_drained = None;
    while let Ok((label, line)) = rx.recv_timeout(Duration::from_secs(120)) {
        if let Some(doc) = line.strip_prefix("wrote ") {
            wrote.push(doc.to_owned());
        } else if line.starts_with("drained ") {
            if label == "write" {
                wrote_before_sink_drained = Some(wrote.len());
            }
            drained.push((label, line));
        }
    }
    for (label, child) in [
        ("download", &mut source),
        ("index-fast", &mut fast),
        ("index-slow", &mut slow),
        ("write", &mut sink),
    ] {
        let status = child.wait().expect("wait");
        assert!(
            status.success(),
            "{label} exits 0, not {status}; said {drained:?}"
        );
    }
    eprintln!("{drained:#?}");
    let mut expected: Vec<String> = (0..N).map(|i| format!("Write Document-#:{i}")).collect();
    expected.sort();
    let mut got = wrote.clone();
    got.sort();
    got.dedup();
    assert_eq!(
        got, expected,
        "the sink received every document published before the drain"
    );
    assert_eq!(
        wrote_before_sink_drained,
        Some(wrote.len()),
        "the sink drained after its last document"
    );
    assert_eq!(drained.len(), 4, "every process passed the drain");
    let markers: Vec<&str> = drained
        .iter()
        .filter(|(l, _)| l.starts_with("index"))
        .map(|(_, line)| {
            if line.contains("marker 0/2") {
                "0/2"
            } else if line.contains("marker 1/2") {
                "1/2"
            } else {
                "?"
            }
        })
        .collect();
    let mut sorted = markers.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["0/2", "1/2"],
        "each middle process took one marker"
    );
    wait_until(Duration::from_secs(10), "the dead letter", || {
        publisher.queue_len(&format!("{index}.dead")).unwrap_or(0) == 1
    });
    for q in [&index, &write] {
        for name in [q.to_string(), format!("{q}.drain"), format!("{q}.dead")] {
            publisher.delete_queue(&name).expect("delete");
        }
    }
}

/// Kabuki's WriteActor, counting into a channel.
struct Count(mpsc::Sender<String>);

impl priority_executor::actor::Actor for Count {
    type In = String;
    type Out = ();

    fn perform(
        &mut self,
        doc: String,
        _: &mut priority_executor::actor::Outbox<'_, ()>,
    ) -> Result<(), priority_executor::actor::ActorError> {
        self.0.send(doc)?;
        Ok(())
    }
}

/// A consumer takes exactly one marker: the other one, even if it was in
/// its prefetch, stays in the queue for another consumer; the holder of a
/// marker other than 0 reports on the control queue and does not forward.
#[test]
fn a_consumer_takes_one_marker_and_leaves_the_other_in_the_queue() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("one-marker");
    let (tx, rx) = mpsc::channel();
    let stage =
        priority_executor_amqp::StageProcess::builder(uri(), "write", move |_| Count(tx.clone()))
            .inbox(&queue)
            .instances(4) // prefetch 4: both markers may be in hand at once
            .start()
            .expect("start");
    let marker = |index: u32| {
        Outgoing::to_queue(&queue, Vec::new())
            .priority(0)
            .header("x-pe-drain", "epoch-1")
            .header("x-pe-drain-index", index)
            .header("x-pe-drain-count", 2)
    };
    let mut messages: Vec<Outgoing> = (0..5)
        .map(|i| Outgoing::to_queue(&queue, format!("doc {i}")).priority(5))
        .collect();
    messages.push(marker(1));
    messages.push(marker(0));
    publisher.publish_all(messages).expect("publish");
    let report = stage.drain().expect("drain");
    assert_eq!(report.marker, (1, 2), "{report}");
    assert_eq!(report.forwarded, 0);
    let performed: Vec<String> = rx.try_iter().collect();
    assert_eq!(
        performed.len(),
        5,
        "everything before the markers: {performed:?}"
    );
    wait_until(
        Duration::from_secs(10),
        "marker 0 back in the queue",
        || publisher.queue_len(&queue).unwrap_or(0) == 1,
    );
    assert_eq!(
        publisher
            .queue_len(&format!("{queue}.drain"))
            .expect("control queue"),
        1,
        "one report for the holder of marker 0"
    );
    delete_stage_queues(&publisher, &queue);
}

/// A stage with retries: a message whose first attempt fails is retried
/// before the drain marker behind it passes, so the drain still means
/// "everything sent before it has been performed".
#[test]
fn the_drain_waits_for_a_retry_of_a_message_before_it() {
    use priority_executor::actor::{Actor, ActorError, Outbox};
    use priority_executor_amqp::StageProcess;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    struct Sink {
        failed_once: Arc<AtomicBool>,
        performed: Arc<Mutex<Vec<String>>>,
    }
    impl Actor for Sink {
        type In = String;
        type Out = String;
        fn perform(&mut self, msg: String, _: &mut Outbox<'_, String>) -> Result<(), ActorError> {
            if msg == "flaky" && !self.failed_once.swap(true, Ordering::SeqCst) {
                return Err("the first attempt fails".into());
            }
            self.performed.lock().unwrap().push(msg);
            Ok(())
        }
    }

    let publisher = crate::broker_or_skip!();
    let queue = unique("kabuki-retry");
    let failed_once = Arc::new(AtomicBool::new(false));
    let performed: Arc<Mutex<Vec<String>>> = Arc::default();
    let (f, p) = (failed_once.clone(), performed.clone());
    let sink = StageProcess::builder(uri(), "sink", move |_| Sink {
        failed_once: f.clone(),
        performed: p.clone(),
    })
    .inbox(&queue)
    .retries(2)
    .start()
    .expect("start the sink");
    let source = StageProcess::builder(uri(), "source", |_| Source)
        .outbox(&queue)
        .start()
        .expect("start the source");
    for msg in ["a", "b", "flaky"] {
        source.send(msg.to_owned()).expect("send");
    }
    source.drain().expect("the source drains");
    sink.drain().expect("the sink drains");
    assert!(
        failed_once.load(Ordering::SeqCst),
        "the first attempt failed"
    );
    let mut got = performed.lock().unwrap().clone();
    got.sort();
    assert_eq!(got, ["a", "b", "flaky"], "performed before the drain ended");
    delete_stage_queues(&publisher, &queue);
}

/// The holder of marker 0 of two gives up, naming the missing marker,
/// when the other holder never reports (it died with its marker), and
/// sends the drain downstream all the same.
#[test]
fn a_drain_whose_other_marker_holder_never_reports_ends_with_an_error() {
    use priority_executor_amqp::StageProcess;

    let publisher = crate::broker_or_skip!();
    let queue = unique("kabuki-lost-marker");
    let downstream = unique("kabuki-lost-marker-next");
    let sink = StageProcess::builder(uri(), "sink", |_| Discard)
        .inbox(&queue)
        .outbox(&downstream)
        .drain_reports_within(Duration::from_millis(300))
        .start()
        .expect("start the sink");
    // Marker 0 of 2, as an upstream stage with two consumers counted
    // sends it; the holder of marker 1 is gone.
    publisher
        .publish(
            &Outgoing::to_queue(&queue, Vec::new())
                .priority(0)
                .header("x-pe-drain", "lost-epoch")
                .header("x-pe-drain-index", 0)
                .header("x-pe-drain-count", 2),
        )
        .expect("publish the marker");
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(sink.drain());
    });
    let drained = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the drain ends");
    let error = drained.expect_err("marker 1 never reported").to_string();
    assert!(
        error.contains("lost-epoch")
            && error.contains("[1]")
            && error.contains("drain_reports_within"),
        "{error}"
    );
    assert_eq!(
        publisher.queue_len(&downstream).expect("len"),
        1,
        "the marker went downstream all the same"
    );
    for name in [&queue, &downstream] {
        delete_stage_queues(&publisher, name);
    }
}

/// A limit for the reports past the clock's reach is no limit: the drain
/// takes the other holder's report and ends, rather than panicking.
#[test]
fn a_drain_reports_limit_past_the_clocks_reach_is_no_limit() {
    use priority_executor_amqp::StageProcess;

    let publisher = crate::broker_or_skip!();
    let queue = unique("kabuki-no-limit");
    let sink = StageProcess::builder(uri(), "sink", |_| Discard)
        .inbox(&queue)
        .drain_reports_within(Duration::MAX)
        .start()
        .expect("start the sink");
    // Marker 0 of 2, and the report of the holder of marker 1.
    publisher
        .publish_all([
            Outgoing::to_queue(&queue, Vec::new())
                .priority(0)
                .header("x-pe-drain", "far-epoch")
                .header("x-pe-drain-index", 0)
                .header("x-pe-drain-count", 2),
            Outgoing::to_queue(format!("{queue}.drain"), Vec::new())
                .header("x-pe-drain", "far-epoch")
                .header("x-pe-drain-index", 1),
        ])
        .expect("publish the marker and the report");
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(sink.drain().map(|report| report.marker));
    });
    let drained = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the drain ends");
    assert_eq!(drained.expect("the report came"), (0, 2));
    delete_stage_queues(&publisher, &queue);
}

/// Passes each message on (a source stage).
pub(crate) struct Source;

impl priority_executor::actor::Actor for Source {
    type In = String;
    type Out = String;
    fn perform(
        &mut self,
        msg: String,
        out: &mut priority_executor::actor::Outbox<'_, String>,
    ) -> Result<(), priority_executor::actor::ActorError> {
        out.send(msg)?;
        Ok(())
    }
}

/// Performs every message and passes nothing on.
struct Discard;

impl priority_executor::actor::Actor for Discard {
    type In = String;
    type Out = String;
    fn perform(
        &mut self,
        _: String,
        _: &mut priority_executor::actor::Outbox<'_, String>,
    ) -> Result<(), priority_executor::actor::ActorError> {
        Ok(())
    }
}
