//! Publishing downstream from a job before its input is acked; a full lane
//! holds deliveries in hand without losing them.

use crate::common::{executor, unique, uri, wait_until};
use priority_executor::{Capacity, Executor, Priority};
use priority_executor_amqp::{Bridge, ConsumerConfig, Outgoing, PriorityTable, Publisher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

#[test]
fn a_job_publishes_downstream_with_the_priority_of_its_lane_before_its_input_is_acked() {
    let publisher = crate::broker_or_skip!();
    let input = unique("stage-in");
    let output = unique("stage-out");
    let table = PriorityTable::new()
        .map(0..=4, Priority(1))
        .map(5..=9, Priority(10));
    let in_config = ConsumerConfig::new(&input)
        .max_priority(9)
        .priorities(table.clone());
    let out_config = ConsumerConfig::new(&output)
        .max_priority(9)
        .priorities(table.clone());
    publisher.declare(&in_config).expect("declare");
    publisher.declare(&out_config).expect("declare");
    publisher
        .publish_all((0..30usize).map(|i| {
            Outgoing::to_queue(&input, format!("doc {i}"))
                .message_id(i.to_string())
                .priority(if i.is_multiple_of(3) { 9 } else { 0 })
        }))
        .expect("publish");
    let downstream = Arc::new(Publisher::connect(uri()).expect("downstream publisher"));
    let (out, t) = (output.clone(), table.clone());
    let stage = Bridge::builder(uri(), executor(2))
        .consume(in_config, move |msg| {
            let indexed = msg.body_str()?.replace("doc", "indexed");
            // Confirmed by the broker before this returns, so before the
            // input's ack.
            downstream.publish(
                &Outgoing::to_queue(&out, indexed)
                    .message_id(msg.message_id().unwrap_or(""))
                    .lane(&t, msg.lane()),
            )?;
            Ok(())
        })
        .start()
        .expect("stage");
    wait_until(Duration::from_secs(30), "the stage", || {
        stage.metrics()[0].acked == 30
    });
    stage.stop();
    assert_eq!(publisher.queue_len(&output).expect("len"), 30);

    let (tx, rx) = mpsc::channel();
    let sink = Bridge::builder(uri(), executor(1))
        .consume(out_config, move |msg| {
            tx.send((
                msg.message_id().unwrap_or("").to_owned(),
                msg.broker_priority(),
                msg.lane(),
                msg.body_str()?.to_owned(),
            ))
            .map_err(priority_executor_amqp::Failure::retry)
        })
        .start()
        .expect("sink");
    let got: Vec<_> = (0..30)
        .map(|_| rx.recv_timeout(Duration::from_secs(30)).expect("a result"))
        .collect();
    sink.stop();
    for (id, priority, lane, body) in &got {
        let i: usize = id.parse().expect("id");
        let high = i.is_multiple_of(3);
        assert_eq!(body, &format!("indexed {i}"));
        assert_eq!(
            *priority,
            Some(if high { 9 } else { 4 }),
            "{id}: the lane's broker priority"
        );
        assert_eq!(*lane, if high { Priority(10) } else { Priority(1) });
    }
    for q in [&input, &output] {
        publisher.delete_queue(q).expect("delete");
    }
}

#[test]
fn a_full_lane_keeps_deliveries_in_hand_and_loses_none() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("full-lane");
    let config = ConsumerConfig::new(&queue).prefetch(4);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all((0..40).map(|i| Outgoing::to_queue(&queue, "x").message_id(i.to_string())))
        .expect("publish");
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(1), Capacity::Bounded(4))
        .build()
        .expect("executor");
    // Another producer fills the lane first: one job holds the thread,
    // four wait.
    let (release, gate) = mpsc::channel::<()>();
    let gate = Arc::new(std::sync::Mutex::new(gate));
    let mut held = Vec::new();
    for _ in 0..5 {
        let g = gate.clone();
        held.push(
            exec.enqueue(Priority(1), move || {
                let _ = g.lock().unwrap().recv_timeout(Duration::from_secs(30));
            })
            .expect("enqueue"),
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let bridge = Bridge::builder(uri(), exec.clone())
        .consume(config.prefetch(4), move |_| {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .start();
    // Starting checks the prefetch against the lane's free capacity.
    let err = bridge.expect_err("the lane is full at start");
    assert!(
        err.to_string().contains("the lane has 0 of 4 places free"),
        "{err}"
    );
    // Once the lane has room the bridge starts; then fill it again.
    for _ in 0..5 {
        release.send(()).expect("release");
    }
    for h in held.drain(..) {
        h.join().expect("held job");
    }
    let config = ConsumerConfig::new(&queue).prefetch(4);
    let r = ran.clone();
    let bridge = Bridge::builder(uri(), exec.clone())
        .consume(config, move |_| {
            r.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(2));
            Ok(())
        })
        .start()
        .expect("start");
    for _ in 0..5 {
        let g = gate.clone();
        // Competes with the bridge for the 4 slots: the bridge's deliveries
        // wait in hand while the lane is full.
        let _ = exec.enqueue(Priority(1), move || {
            let _ = g.lock().unwrap().recv_timeout(Duration::from_millis(200));
        });
    }
    wait_until(Duration::from_secs(60), "every message", || {
        ran.load(Ordering::SeqCst) == 40
    });
    let m = bridge.stop().remove(0);
    assert_eq!((m.acked, m.requeued, m.max_in_hand), (40, 0, 4), "{m:?}");
    assert!(m.lane_full > 0, "the lane was full at times: {m:?}");
    assert_eq!(publisher.queue_len(&queue).expect("len"), 0);
    publisher.delete_queue(&queue).expect("delete");
}
