//! Every wrong setting is a `BuildError` naming the setting.

use priority_executor::{BuildError, Capacity, Executor, LaneConfig, MaxRunning, Priority};
use std::time::Duration;

#[test]
fn each_wrong_setting_has_its_error() {
    let base = || Executor::builder().core_threads(1).max_threads(2);
    let cases: Vec<(priority_executor::ExecutorBuilder, BuildError, &str)> = vec![
        (base(), BuildError::NoLanes, "no lanes"),
        (
            base()
                .lane(Priority(3), Capacity::Unbounded)
                .lane(Priority(3), Capacity::Bounded(4)),
            BuildError::DuplicateLane {
                priority: Priority(3),
            },
            "lane 3 is declared twice",
        ),
        (
            Executor::builder()
                .core_threads(3)
                .max_threads(2)
                .lane(Priority(1), Capacity::Unbounded),
            BuildError::CoreExceedsMax { core: 3, max: 2 },
            "core_threads (3) must not exceed max_threads (2)",
        ),
        (
            base().lane(Priority(70_000), Capacity::Unbounded),
            BuildError::WeightsTooLarge {
                sum: 70_000,
                limit: 65_536,
            },
            "explicit smaller weights",
        ),
    ];
    for (builder, expected, text) in cases {
        let err = builder.build().unwrap_err();
        assert_eq!(err, expected);
        assert!(err.to_string().contains(text), "{err}");
    }
}

#[test]
fn each_invalid_value_names_its_lane_setting_and_what_is_allowed() {
    let base = || Executor::builder().core_threads(1).max_threads(2);
    let lane = |config: LaneConfig| base().lane_config(config);
    let cases = [
        (
            lane(LaneConfig::new(Priority(4)).weight(0)),
            "lane 4: weight = 0 is not allowed (expected at least 1)",
        ),
        (
            base().lane(Priority(2), Capacity::Bounded(0)),
            "lane 2: capacity = 0 is not allowed (expected at least 1, or Capacity::Unbounded \
             for no limit)",
        ),
        (
            lane(LaneConfig::new(Priority(1)).max_running(MaxRunning::Threads(0))),
            "lane 1: max_running = 0 threads is not allowed (expected at least 1 thread)",
        ),
        (
            lane(LaneConfig::new(Priority(1)).max_running(MaxRunning::Percent(150))),
            "lane 1: max_running = 150% is not allowed (expected 1 to 100 percent of \
             max_threads)",
        ),
        (
            lane(LaneConfig::new(Priority(1)).promote_after(Duration::ZERO)),
            "lane 1: promote_after = 0s is not allowed (expected longer than zero)",
        ),
        (
            Executor::builder()
                .core_threads(0)
                .max_threads(0)
                .lane(Priority(1), Capacity::Unbounded),
            "max_threads = 0 is not allowed (expected at least 1)",
        ),
    ];
    for (builder, text) in cases {
        let err = builder.build().unwrap_err();
        assert!(matches!(err, BuildError::Invalid(_)), "{err:?}");
        assert_eq!(err.to_string(), text);
    }
}

#[test]
fn a_priority_of_zero_shares_with_weight_one() {
    // Synapse let priority 0 starve everything; here it gets weight 1.
    let exec = Executor::builder()
        .lane(Priority(0), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    assert_eq!(exec.config().lanes[1].weight, 1);
    assert_eq!(exec.enqueue(Priority(0), || 0).unwrap().join(), Ok(0));
}
