//! The known run: 30 jobs at priority 10 and 3 at priority 1, one
//! of which panics.

use crate::common::quiet_panics;
use crate::support::*;
use priority_executor::{Capacity, Executor, Priority};

#[test]
fn counters_histograms_and_gauges_after_a_known_run() {
    let (_turn, snapshotter) = recorder();
    quiet_panics("metrics test:");
    let exec = Executor::builder()
        .name("known-run")
        .core_threads(2)
        .max_threads(2)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Bounded(10))
        .build()
        .unwrap();
    let mut handles = Vec::new();
    for _ in 0..30 {
        handles.push(exec.enqueue(Priority(10), || ()).unwrap());
    }
    for i in 0..3 {
        handles.push(
            exec.enqueue(Priority(1), move || {
                assert!(i != 1, "metrics test: job {i} panics");
            })
            .unwrap(),
        );
    }
    let failed = handles.into_iter().filter_map(|h| h.join().err()).count();
    assert_eq!(failed, 1);
    exec.shutdown();

    let s = Series::of(snapshotter, "known-run");
    // 10 counters, 2 histograms and the queued and paused gauges per
    // lane; 3 thread gauges for the executor.
    assert_eq!(s.len(), 2 * (10 + 2 + 2) + 3);
    assert_eq!(s.counter(SUBMITTED, 10), 30);
    assert_eq!(s.counter(SUBMITTED, 1), 3);
    assert_eq!(s.counter(COMPLETED, 10), 30);
    assert_eq!(s.counter(COMPLETED, 1), 2);
    assert_eq!(s.counter(PANICKED, 10), 0);
    assert_eq!(s.counter(PANICKED, 1), 1);
    for name in [
        REJECTED,
        EXPIRED,
        DISCARDED,
        RETRIED,
        DEAD_LETTERED,
        HANDED_BACK,
        CANCELLED,
    ] {
        for priority in [10, 1] {
            assert_eq!(s.counter(name, priority), 0, "{name} {priority}");
        }
    }
    let (high, low) = (s.histogram(WAIT, 10), s.histogram(WAIT, 1));
    assert_eq!(high.len() + low.len(), 33);
    assert_eq!((high.len(), low.len()), (30, 3));
    assert!(high.iter().chain(&low).all(|w| (0.0..60.0).contains(w)));
    assert_eq!(s.histogram(RUN, 10).len(), 30);
    assert_eq!(s.histogram(RUN, 1).len(), 3);
    // Shut down: nothing queued, no thread left.
    assert_eq!(s.gauge(QUEUED, Some(10)), 0.0);
    assert_eq!(s.gauge(QUEUED, Some(1)), 0.0);
    assert_eq!(s.gauge(RUNNING, None), 0.0);
    assert_eq!(s.gauge(LIVE, None), 0.0);
    assert_eq!(s.gauge(IDLE, None), 0.0);
    // Described, with units.
    assert_eq!(s.described[WAIT].0, Some(metrics::Unit::Seconds));
    assert_eq!(s.described[SUBMITTED].0, Some(metrics::Unit::Count));
    assert!(s.described[QUEUED].1.contains("waiting"));
}

#[test]
fn thread_gauges_follow_the_workers() {
    let (_turn, snapshotter) = recorder();
    let exec = Executor::builder()
        .name("thread-gauges")
        .core_threads(2)
        .max_threads(2)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let gate = crate::common::Gate::default();
    let (started_tx, started) = std::sync::mpsc::channel();
    let busy = {
        let gate = gate.clone();
        exec.enqueue(Priority(1), move || {
            started_tx.send(()).unwrap();
            gate.wait();
        })
        .unwrap()
    };
    started.recv().unwrap();
    exec.prestart_core_threads();
    // The idle worker moves its gauges before it looks for work, so once
    // it sleeps they are current (one snapshot: reading a gauge drains it).
    crate::common::wait_until("two workers alive, one asleep", || {
        let t = exec.metrics().threads;
        t.live == 2 && t.sleeping == 1
    });
    let s = Series::of(snapshotter, "thread-gauges");
    assert_eq!(s.gauge(LIVE, None), 2.0);
    assert_eq!(s.gauge(IDLE, None), 1.0);
    assert_eq!(s.gauge(RUNNING, None), 1.0);
    gate.open();
    busy.join().unwrap();
}
