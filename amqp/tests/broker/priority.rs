//! Broker priority and lane weights compose; prefetch bounds what is in
//! hand; the table maps priorities and counts the unmapped ones.

use crate::common::{executor, unique, wait_until};
use priority_executor::Priority;
use priority_executor_amqp::{Bridge, ConsumerConfig, Outgoing, PriorityTable};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn table() -> PriorityTable {
    PriorityTable::new()
        .map(0..=4, Priority(1))
        .map(5..=10, Priority(10))
}

/// Preload 1,000 low and 100 high, consume with 2 threads and prefetch P:
/// at most about P low messages finish before the last high one, and the
/// deliveries in hand never exceed P.
#[test]
fn high_priority_waits_behind_at_most_prefetch_low_ones() {
    let publisher = crate::broker_or_skip!();
    const PREFETCH: u16 = 4;
    let queue = unique("prefetch");
    let config = ConsumerConfig::new(&queue)
        .max_priority(10)
        .priorities(table())
        .prefetch(PREFETCH);
    publisher.declare(&config).expect("declare");
    // Interleaved, lows first: only the broker's priority puts highs first.
    let messages = (0..1100).map(|i| {
        let high = i % 11 == 10;
        Outgoing::to_queue(&queue, if high { "high" } else { "low" })
            .priority(if high { 9 } else { 0 })
            .message_id(i.to_string())
    });
    assert_eq!(publisher.publish_all(messages).expect("publish"), 1100);

    let exec = executor(2);
    let order = Arc::new(Mutex::new(Vec::with_capacity(1100)));
    let o = order.clone();
    let bridge = Bridge::builder(crate::common::uri(), exec.clone())
        .consume(config, move |msg| {
            std::thread::sleep(Duration::from_micros(200));
            o.lock().unwrap().push(msg.body_str()? == "high");
            Ok(())
        })
        .start()
        .expect("start");
    wait_until(Duration::from_secs(120), "1100 messages", || {
        order.lock().unwrap().len() == 1100
    });
    let metrics = bridge.stop();
    let order = order.lock().unwrap();
    let last_high = order.iter().rposition(|h| *h).expect("a high one");
    let low_before = order[..last_high].iter().filter(|h| !**h).count();
    eprintln!(
        "prefetch {PREFETCH}: {low_before} low finished before the last high (at {last_high}); max in hand {}",
        metrics[0].max_in_hand,
    );
    assert!(
        low_before <= usize::from(PREFETCH),
        "{low_before} low messages finished before the last high one, prefetch {PREFETCH}"
    );
    assert!(
        metrics[0].max_in_hand <= usize::from(PREFETCH),
        "{metrics:?}"
    );
    assert_eq!(metrics[0].acked, 1100);
    assert_eq!(publisher.queue_len(&queue).expect("len"), 0);
    publisher.delete_queue(&queue).expect("delete");
}

/// Seen from the broker: with every job held, exactly `prefetch` messages
/// leave the queue, and exactly those reach the executor.
#[test]
fn broker_hands_out_no_more_than_prefetch() {
    let publisher = crate::broker_or_skip!();
    const PREFETCH: u16 = 3;
    let queue = unique("in-hand");
    let config = ConsumerConfig::new(&queue)
        .max_priority(10)
        .prefetch(PREFETCH);
    publisher.declare(&config).expect("declare");
    publisher
        .publish_all((0..50).map(|i| Outgoing::to_queue(&queue, i.to_string())))
        .expect("publish");
    let exec = executor(2);
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let started = Arc::new(AtomicUsize::new(0));
    let (g, st) = (gate.clone(), started.clone());
    let bridge = Bridge::builder(crate::common::uri(), exec.clone())
        .consume(config, move |_| {
            st.fetch_add(1, Ordering::SeqCst);
            let (open, cv) = &*g;
            let mut open = open.lock().unwrap();
            while !*open {
                open = cv.wait(open).unwrap();
            }
            Ok(())
        })
        .start()
        .expect("start");
    wait_until(Duration::from_secs(30), "2 jobs running", || {
        started.load(Ordering::SeqCst) == 2
    });
    std::thread::sleep(Duration::from_millis(500)); // time to overshoot, if it would
    let ready = publisher.queue_len(&queue).expect("len");
    let submitted = exec.metrics().submitted();
    {
        let (open, cv) = &*gate;
        *open.lock().unwrap() = true;
        cv.notify_all();
    }
    wait_until(Duration::from_secs(30), "50 messages", || {
        started.load(Ordering::SeqCst) == 50
    });
    let metrics = bridge.stop();
    assert_eq!(
        ready,
        50 - u32::from(PREFETCH),
        "messages still ready in the broker"
    );
    assert_eq!(
        submitted,
        u64::from(PREFETCH),
        "jobs handed to the executor"
    );
    assert_eq!(metrics[0].max_in_hand, usize::from(PREFETCH));
    assert_eq!(metrics[0].acked, 50);
    publisher.delete_queue(&queue).expect("delete");
}

/// A broker priority survives publish -> consume -> lane; the table maps
/// it; an unmapped one runs in the lowest lane and is counted.
#[test]
fn table_maps_broker_priority_to_lanes_and_counts_unmapped() {
    let publisher = crate::broker_or_skip!();
    let queue = unique("table");
    let table = PriorityTable::new()
        .map(0..=4, Priority(1))
        .map(9..=9, Priority(10));
    let config = ConsumerConfig::new(&queue)
        .max_priority(10)
        .priorities(table)
        .prefetch(4);
    publisher.declare(&config).expect("declare");
    // id -> broker priority (None: no property)
    let sent: Vec<(String, Option<u8>)> = (0..40)
        .map(|i| {
            let p = match i % 4 {
                0 => Some(9),
                1 => Some(2),
                2 => Some(7), // not in the table
                _ => None,
            };
            (format!("m{i}"), p)
        })
        .collect();
    let messages = sent.iter().map(|(id, p)| {
        let m = Outgoing::to_queue(&queue, "x").message_id(id);
        match p {
            Some(p) => m.priority(*p),
            None => m,
        }
    });
    publisher.publish_all(messages).expect("publish");

    let exec = executor(2);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let bridge = Bridge::builder(crate::common::uri(), exec.clone())
        .consume(config, move |msg| {
            s.lock().unwrap().push((
                msg.message_id().unwrap_or("").to_owned(),
                msg.broker_priority(),
                msg.lane(),
                msg.mapped(),
            ));
            Ok(())
        })
        .start()
        .expect("start");
    wait_until(Duration::from_secs(60), "40 messages", || {
        seen.lock().unwrap().len() == 40
    });
    let metrics = bridge.stop();
    let seen = seen.lock().unwrap();
    for (id, p) in &sent {
        let (_, got, lane, mapped) = seen.iter().find(|s| &s.0 == id).expect("every id ran");
        assert_eq!(got, p, "{id}: the broker priority arrives as published");
        let expected = match p {
            Some(9) => (Priority(10), true),
            Some(7) => (Priority(1), false), // unmapped: the lowest lane
            _ => (Priority(1), true),        // 2, or none (= 0)
        };
        assert_eq!((*lane, *mapped), expected, "{id} (priority {p:?})");
    }
    assert_eq!(metrics[0].unmapped, 10);
    assert_eq!(metrics[0].acked, 40);
    let m = exec.metrics();
    assert_eq!(m.lane(Priority(10)).unwrap().completed, 10);
    assert_eq!(m.lane(Priority(1)).unwrap().completed, 30);
    publisher.delete_queue(&queue).expect("delete");
}
