//! Every wrong setting is a `BuildError` naming the setting.

use priority_executor::{BuildError, Capacity, Executor, LaneConfig, Priority};

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
            base().lane_config(LaneConfig::new(Priority(4)).weight(0)),
            BuildError::ZeroWeight {
                priority: Priority(4),
            },
            "lane 4: weight",
        ),
        (
            base().lane(Priority(2), Capacity::Bounded(0)),
            BuildError::ZeroCapacity {
                priority: Priority(2),
            },
            "capacity must be at least 1",
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
            Executor::builder()
                .core_threads(0)
                .max_threads(0)
                .lane(Priority(1), Capacity::Unbounded),
            BuildError::ZeroMaxThreads,
            "max_threads must be at least 1",
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
