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
