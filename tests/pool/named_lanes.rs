//! Named lanes in code: found by name, an unknown name lists the names
//! there are, and a name given to two lanes is a build error.

use priority_executor::{BuildError, Executor, LaneConfig, Priority};

#[test]
fn a_lane_is_found_by_its_name_and_an_unknown_name_lists_the_names() {
    let exec = Executor::builder()
        .lane_config(LaneConfig::new(Priority(1)).name("batch"))
        .lane_config(LaneConfig::new(Priority(10)).name("interactive"))
        .lane_config(LaneConfig::new(Priority(5)))
        .build()
        .unwrap();
    assert_eq!(exec.lane_priority("interactive"), Ok(Priority(10)));
    assert_eq!(exec.lane_priority("batch"), Ok(Priority(1)));
    let err = exec.lane_priority("Batch").unwrap_err();
    // Highest priority first; the unnamed lane is not listed.
    assert_eq!(err.name, "Batch");
    assert_eq!(err.known, ["interactive", "batch"]);
    assert_eq!(
        err.to_string(),
        "no lane named \"Batch\" (lanes: interactive, batch)"
    );
}

#[test]
fn a_name_given_to_two_lanes_is_a_build_error() {
    let err = Executor::builder()
        .lane_config(LaneConfig::new(Priority(10)).name("fast"))
        .lane_config(LaneConfig::new(Priority(1)).name("fast"))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        BuildError::DuplicateLaneName {
            name: "fast".to_owned()
        }
    );
}
