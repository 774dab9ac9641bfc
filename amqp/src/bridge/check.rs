//! A queue's settings checked against the executor it feeds.

use crate::config::ConsumerConfig;
use crate::error::BridgeError;
use priority_executor::{Capacity, Executor, InvalidSetting, Priority};

/// Checks a queue's settings against the executor; returns the unmapped
/// lane.
pub(super) fn check_config(
    config: &ConsumerConfig,
    executor: &Executor,
) -> Result<Priority, BridgeError> {
    let queue = config.queue.clone();
    let metrics = executor.metrics();
    let lanes: Vec<Priority> = executor
        .config()
        .lanes
        .iter()
        .map(|lane| lane.priority)
        .collect();
    let lane_list = lanes
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    // An executor is never built without lanes.
    let lowest = lanes.last().copied().unwrap_or(Priority::LOW);
    let unmapped = config.table.unmapped_lane().unwrap_or(lowest);
    let mut used = config.table.lanes();
    used.push(unmapped);
    used.sort();
    used.dedup();
    for lane in &used {
        if !lanes.contains(lane) {
            return Err(BridgeError::UnknownLane {
                queue,
                lane: *lane,
                executor: executor.name().to_owned(),
                lanes: lane_list,
            });
        }
    }
    if config.prefetch == 0 {
        return Err(BridgeError::Invalid {
            queue,
            setting: InvalidSetting::new(
                "prefetch",
                0,
                "at least 1, about the executor's threads: 0 means no limit to RabbitMQ, which makes broker priority useless",
            ),
        });
    }
    for lane in &used {
        if let Some(m) = metrics.lane(*lane)
            && let Capacity::Bounded(capacity) = m.capacity
        {
            let free = capacity.saturating_sub(m.queued);
            if usize::from(config.prefetch) > free {
                return Err(BridgeError::Invalid {
                    queue,
                    setting: InvalidSetting::of_lane(
                        *lane,
                        "prefetch",
                        config.prefetch,
                        format!(
                            "at most {free}: the lane has {free} of {capacity} places free, and more deliveries would wait outside the lanes; lower the prefetch or raise the lane's capacity"
                        ),
                    ),
                });
            }
        }
    }
    Ok(unmapped)
}
