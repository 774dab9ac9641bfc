//! Reading an executor's configuration back: thread settings, picker and
//! every lane's settings, defaults filled in.

use priority_executor::{
    Capacity, Executor, LaneConfig, MaxRunning, Picker, Priority, RejectionPolicy,
};
use std::time::Duration;

#[test]
fn config_returns_every_setting_given() {
    let high = LaneConfig::new(Priority(10))
        .weight(4)
        .capacity(Capacity::Bounded(50))
        .when_full(RejectionPolicy::DiscardOldest);
    let low = LaneConfig::new(Priority(1))
        .max_running(MaxRunning::Percent(25))
        .promote_after(Duration::from_millis(1500));
    let exec = Executor::builder()
        .name("readback")
        .core_threads(1)
        .max_threads(4)
        .keep_alive(Duration::from_secs(9))
        .allow_core_timeout(true)
        .picker(Picker::Strict)
        .lane_config(low.clone())
        .lane_config(high.clone())
        .build()
        .unwrap();
    let config = exec.config();
    assert_eq!(config.name, "readback");
    assert_eq!(config.core_threads, 1);
    assert_eq!(config.max_threads, 4);
    assert_eq!(config.keep_alive, Duration::from_secs(9));
    assert!(config.allow_core_timeout);
    assert_eq!(config.picker, Picker::Strict);
    // Highest priority first, whatever order they were declared in.
    assert_eq!(config.lanes, vec![high, low]);
    let low = &config.lanes[1];
    assert_eq!(low.priority, Priority(1));
    assert_eq!(low.weight, 1);
    assert_eq!(low.capacity, Capacity::Unbounded);
    assert_eq!(low.max_running, Some(MaxRunning::Percent(25)));
    assert_eq!(low.promote_after, Some(Duration::from_millis(1500)));
    assert_eq!(low.when_full, RejectionPolicy::Block);
    // The same through a handle.
    assert_eq!(exec.clone().config(), config);
}

#[test]
fn config_shows_the_defaults_filled_in() {
    let exec = Executor::builder()
        .max_threads(1)
        .lane(Priority(3), Capacity::Unbounded)
        .build()
        .unwrap();
    let config = exec.config();
    assert_eq!(config.name, "priority-executor");
    // The default core fits the explicit max on any machine.
    assert_eq!((config.core_threads, config.max_threads), (1, 1));
    assert_eq!(config.keep_alive, Duration::from_secs(60));
    assert!(!config.allow_core_timeout);
    assert_eq!(config.picker, Picker::Smooth);
    assert_eq!(config.lanes, vec![LaneConfig::new(Priority(3))]);
}

#[test]
fn a_config_read_back_builds_the_same_executor() {
    let exec = Executor::builder()
        .core_threads(2)
        .max_threads(3)
        .lane(Priority(5), Capacity::Bounded(7))
        .lane_config(LaneConfig::new(Priority(2)).weight(1))
        .build()
        .unwrap();
    let config = exec.config();
    let mut builder = Executor::builder()
        .name(config.name.clone())
        .core_threads(config.core_threads)
        .max_threads(config.max_threads)
        .keep_alive(config.keep_alive)
        .allow_core_timeout(config.allow_core_timeout)
        .picker(config.picker);
    for lane in &config.lanes {
        builder = builder.lane_config(lane.clone());
    }
    assert_eq!(builder.build().unwrap().config(), config);
}
