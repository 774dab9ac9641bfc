//! The paused gauge: 1 while a lane is paused, 0 once it is resumed.

use crate::support::*;
use priority_executor::{Capacity, Executor, Priority};

#[test]
fn the_paused_gauge_follows_pause_and_resume() {
    let (_turn, snapshotter) = recorder();
    let exec = Executor::builder()
        .name("paused-gauge")
        .lane(Priority(2), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    exec.pause_lane(Priority(1)).unwrap();
    let s = Series::of(snapshotter, "paused-gauge");
    assert_eq!(s.gauge(PAUSED, Some(1)), 1.0);
    assert_eq!(s.gauge(PAUSED, Some(2)), 0.0);
    exec.resume_lane(Priority(1)).unwrap();
    let s = Series::of(snapshotter, "paused-gauge");
    assert_eq!(s.gauge(PAUSED, Some(1)), 0.0);
    assert!(s.described[PAUSED].1.contains("paused"));
    exec.shutdown();
}

#[test]
fn a_shutdown_resumes_a_paused_lane_and_its_gauge() {
    let (_turn, snapshotter) = recorder();
    let exec = Executor::builder()
        .name("paused-at-shutdown")
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    exec.pause_lane(Priority(1)).unwrap();
    let queued = exec.enqueue(Priority(1), || "ran").unwrap();
    exec.shutdown();
    assert_eq!(queued.join(), Ok("ran"));
    assert!(!exec.is_lane_paused(Priority(1)));
    let s = Series::of(snapshotter, "paused-at-shutdown");
    assert_eq!(s.gauge(PAUSED, Some(1)), 0.0);
}

/// The queued gauge is read again as a lane is paused and after
/// `shutdown_now` empties the lanes, not only as workers take turns.
#[test]
fn the_queued_gauge_follows_a_pause_and_shutdown_now() {
    let (_turn, snapshotter) = recorder();
    let exec = Executor::builder()
        .name("queued-gauge")
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(2), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let gate = crate::common::hold_worker(&exec, Priority(2));
    for _ in 0..3 {
        let _detached = exec.enqueue(Priority(1), || ()).unwrap();
    }
    exec.pause_lane(Priority(1)).unwrap();
    let s = Series::of(snapshotter, "queued-gauge");
    assert_eq!(s.gauge(QUEUED, Some(1)), 3.0);
    let handed_back = exec.shutdown_now();
    assert_eq!(handed_back.len(), 3);
    let s = Series::of(snapshotter, "queued-gauge");
    assert_eq!(s.gauge(QUEUED, Some(1)), 0.0);
    drop(gate);
    exec.shutdown();
}
