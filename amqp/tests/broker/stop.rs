//! Graceful stop acks what it finished and nothing else; jobs handed back
//! by shutdown_now go back to the broker.

use crate::common::{executor, unique, uri, wait_until};
use priority_executor::{Capacity, Executor, Priority};
use priority_executor_amqp::{Bridge, ConsumerConfig, Event, Outgoing};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

#[test]
fn stop_finishes_and_acks_what_is_in_hand_and_nothing_more() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("stop");
    let config = ConsumerConfig::new(&queue).prefetch(4);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all((0..40).map(|i| Outgoing::to_queue(&queue, "x").message_id(i.to_string())))
        .expect("publish");
    let finished = Arc::new(Mutex::new(HashSet::new()));
    let f = finished.clone();
    let bridge = Bridge::builder(uri(), executor(2))
        .consume(config, move |msg| {
            std::thread::sleep(Duration::from_millis(30));
            f.lock()
                .unwrap()
                .insert(msg.message_id().unwrap_or("").to_owned());
            Ok(())
        })
        .start()
        .expect("start");
    wait_until(Duration::from_secs(30), "some done", || {
        finished.lock().unwrap().len() >= 6
    });
    let m = bridge.stop().remove(0);
    let finished = finished.lock().unwrap().len() as u64;
    assert_eq!(m.in_hand, 0);
    assert_eq!(
        m.acked, finished,
        "every finished job acked, no other: {m:?}"
    );
    assert_eq!(
        m.delivered, m.acked,
        "what was in hand at the stop ran too: {m:?}"
    );
    assert_eq!(
        u64::from(publisher.queue_len(&queue).expect("len")),
        40 - finished
    );
    publisher.delete_queue(&queue).expect("delete");
}

#[test]
fn jobs_handed_back_by_shutdown_now_are_requeued() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("shutdown-now");
    let config = ConsumerConfig::new(&queue).prefetch(5);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all((0..10).map(|i| Outgoing::to_queue(&queue, "x").message_id(i.to_string())))
        .expect("publish");
    // One thread: the first job holds it; four wait in the lane.
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(1), Capacity::Bounded(8))
        .build()
        .expect("executor");
    let (release, gate) = mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev = events.clone();
    let bridge = Bridge::builder(uri(), exec.clone())
        .consume(config, move |_| {
            r.fetch_add(1, Ordering::SeqCst);
            let _ = gate.lock().unwrap().recv_timeout(Duration::from_secs(30));
            Ok(())
        })
        .on_event(move |e| ev.lock().unwrap().push(e.clone()))
        .start()
        .expect("start");
    wait_until(Duration::from_secs(30), "5 in hand", || {
        exec.metrics().queued() == 4 && ran.load(Ordering::SeqCst) == 1
    });
    let pending = exec.shutdown_now();
    assert_eq!(pending.len(), 4);
    drop(pending); // their handles resolve Cancelled: the bridge requeues them
    release.send(()).expect("release");
    wait_until(Duration::from_secs(30), "the bridge to notice", || {
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, Event::ExecutorShutDown { .. }))
    });
    let m = bridge.stop().remove(0);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(m.acked, 1, "{m:?}");
    assert!(
        m.requeued >= 4,
        "the four handed back, and any refused after: {m:?}"
    );
    assert_eq!(m.in_hand, 0);
    assert_eq!(publisher.queue_len(&queue).expect("len"), 9, "nothing lost");
    publisher.delete_queue(&queue).expect("delete");
}
