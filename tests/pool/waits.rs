//! The lanes' wait histograms (`LaneMetrics::waits`): one wait per attempt
//! started, by a worker or on the caller's thread, kept after the workers
//! exit, none when `record_waits(false)`. No timing is asserted: only
//! which waits were counted, and that the percentiles are ordered.

use crate::common::hold_worker;
use priority_executor::{Capacity, Executor, Priority, RejectionPolicy, RetryPolicy};

fn exec(record_waits: bool) -> Executor {
    Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .record_waits(record_waits)
        .lane(Priority(10), Capacity::Unbounded)
        .lane_config(
            priority_executor::LaneConfig::new(Priority(1))
                .capacity(Capacity::Bounded(1))
                .when_full(RejectionPolicy::CallerRuns),
        )
        .build()
        .unwrap()
}

#[test]
fn every_attempt_started_counts_one_wait_in_its_lane() {
    let e = exec(true);
    let handles: Vec<_> = (0..50)
        .map(|i| e.enqueue(Priority(10), move || i).unwrap())
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let retried = e
        .enqueue_retrying(
            Priority(10),
            |a| if a.number < 3 { Err("again") } else { Ok(()) },
            RetryPolicy::new(5),
        )
        .unwrap();
    retried.join().unwrap();
    let m = e.metrics();
    let high = &m.lane(Priority(10)).unwrap().waits;
    assert_eq!(high.count(), 50 + 3);
    let (p50, p99, max) = (
        high.percentile(50.0).unwrap(),
        high.percentile(99.0).unwrap(),
        high.max().unwrap(),
    );
    assert!(p50 <= p99 && p99 <= max, "{high:?}");
    let low = &m.lane(Priority(1)).unwrap().waits;
    assert_eq!((low.count(), low.percentile(50.0)), (0, None));
    assert!(m.to_string().contains("; waited p50 "), "{m}");
}

#[test]
fn a_job_run_on_the_callers_thread_counts_too() {
    let e = exec(true);
    let gate = hold_worker(&e, Priority(10));
    let queued = e.enqueue(Priority(1), || ()).unwrap();
    let inline = e.enqueue(Priority(1), || ()).unwrap();
    assert!(inline.is_finished());
    let low = e.metrics().lane(Priority(1)).unwrap().clone();
    assert_eq!((low.caller_ran, low.waits.count()), (1, 1));
    drop(gate);
    queued.join().unwrap();
    assert_eq!(e.metrics().lane(Priority(1)).unwrap().waits.count(), 2);
}

#[test]
fn the_waits_of_workers_that_exited_are_kept() {
    let e = exec(true);
    for _ in 0..20 {
        e.enqueue(Priority(10), || ()).unwrap().join().unwrap();
    }
    e.shutdown();
    assert_eq!(e.metrics().threads.live, 0);
    assert_eq!(e.metrics().lane(Priority(10)).unwrap().waits.count(), 20);
}

#[test]
fn with_record_waits_off_nothing_is_counted() {
    let e = exec(false);
    for _ in 0..20 {
        e.enqueue(Priority(10), || ()).unwrap().join().unwrap();
    }
    let m = e.metrics();
    assert_eq!(m.lane(Priority(10)).unwrap().waits.count(), 0);
    assert!(!m.to_string().contains("waited"), "{m}");
}
