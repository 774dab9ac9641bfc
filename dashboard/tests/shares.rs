//! Each lane's `weight_share`: the part of the dispatches it gets when
//! every lane is busy, as its executor's picker gives it.

use priority_executor::{Executor, LaneConfig, Picker, Priority};
use priority_executor_dashboard::Dashboard;

fn weight_shares(picker: Picker) -> Vec<f64> {
    let exec = Executor::builder()
        .name("shares")
        .picker(picker)
        .lane_config(LaneConfig::new(Priority(10)).weight(6))
        .lane_config(LaneConfig::new(Priority(5)).weight(3))
        .lane_config(LaneConfig::new(Priority(1)).weight(1))
        .build()
        .unwrap();
    let snapshot = Dashboard::new().executor(&exec).snapshot();
    exec.shutdown();
    let lanes = &snapshot.executors[0].lanes;
    assert_eq!(
        lanes.iter().map(|l| l.priority).collect::<Vec<_>>(),
        [10, 5, 1]
    );
    lanes.iter().map(|l| l.weight_share).collect()
}

#[test]
fn weighted_pickers_share_by_weight() {
    for picker in [Picker::Smooth, Picker::Classic] {
        let shares = weight_shares(picker);
        for (share, want) in shares.iter().zip([0.6, 0.3, 0.1]) {
            assert!((share - want).abs() < 1e-9, "{picker}: {shares:?}");
        }
    }
}

#[test]
fn strict_gives_the_highest_lane_everything() {
    // Strict ignores weights: while every lane has jobs, the highest one
    // is served and the others starve.
    assert_eq!(weight_shares(Picker::Strict), [1.0, 0.0, 0.0]);
}
