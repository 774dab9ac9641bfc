//! Aging: with `promote_after`, a low lane's head job is dispatched ahead
//! of the weighted order once it has waited that long, whatever the
//! weights.

use crate::common::hold_worker;
use priority_executor::{Executor, LaneConfig, Picker, Priority};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Runs 300 high jobs of ~1 ms each and one low job queued behind them, on
/// one worker with weights 1000:1 (classic: the low job's turn comes after
/// 1000 high ones). Returns how many high jobs ran before the low one.
fn high_jobs_before_low(promote_after: Option<Duration>) -> usize {
    let mut low = LaneConfig::new(Priority(1)).weight(1);
    if let Some(after) = promote_after {
        low = low.promote_after(after);
    }
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .picker(Picker::Classic)
        .lane_config(LaneConfig::new(Priority(10)).weight(1000))
        .lane_config(low)
        .build()
        .unwrap();
    let gate = hold_worker(&exec, Priority(10));
    let order = Arc::new(Mutex::new(Vec::new()));
    for _ in 0..300 {
        let order = order.clone();
        let _detached = exec.enqueue(Priority(10), move || {
            // Work, not synchronisation: each high job takes a while.
            std::thread::sleep(Duration::from_millis(1));
            order.lock().unwrap().push(10);
        });
    }
    let order2 = order.clone();
    let _detached = exec.enqueue(Priority(1), move || order2.lock().unwrap().push(1));
    drop(gate);
    exec.shutdown();
    let order = order.lock().unwrap();
    order.iter().position(|&p| p == 1).unwrap()
}

#[test]
fn without_aging_the_low_job_waits_for_its_turn() {
    assert_eq!(high_jobs_before_low(None), 300);
}

#[test]
fn aging_bounds_the_wait_of_the_low_job() {
    // Each high job takes at least 1 ms, so 100 of them take at least
    // 100 ms: far beyond the 5 ms threshold, on any machine.
    let before = high_jobs_before_low(Some(Duration::from_millis(5)));
    assert!(before < 100, "low job waited behind {before} high jobs");
}

#[test]
fn promotions_are_counted() {
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane_config(LaneConfig::new(Priority(10)).weight(1000))
        .lane_config(
            LaneConfig::new(Priority(1))
                .weight(1)
                .promote_after(Duration::from_nanos(1)),
        )
        .build()
        .unwrap();
    let gate = hold_worker(&exec, Priority(10));
    for _ in 0..10 {
        let _detached = exec.enqueue(Priority(10), || {
            std::thread::sleep(Duration::from_micros(50))
        });
    }
    let low = exec.enqueue(Priority(1), || ()).unwrap();
    drop(gate);
    low.join().unwrap();
    assert!(exec.metrics().lane(Priority(1)).unwrap().promoted >= 1);
}
