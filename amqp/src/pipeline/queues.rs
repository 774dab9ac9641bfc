//! A stage's queues: their broker priorities, how they are declared, and
//! the control queue beside each inbox.

use crate::config::ConsumerConfig;
use crate::table::PriorityTable;
use priority_executor::Priority;

/// The broker priorities of a stage's queues: 0-3 to
/// [`Priority::LOW`], 4-6 to [`Priority::MEDIUM`], 7-9 to
/// [`Priority::HIGH`], 10 and above to [`Priority::URGENT`] (the actor
/// layer's levels); the queues are declared with `x-max-priority` 10.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
/// use priority_executor_amqp::stage_priorities;
///
/// let table = stage_priorities();
/// assert_eq!(table.lane_for(Some(5)), Some(Priority::MEDIUM));
/// // An output at MEDIUM is published with broker priority 6.
/// assert_eq!(table.broker_priority(Priority::MEDIUM), Some(6));
/// ```
pub fn stage_priorities() -> PriorityTable {
    PriorityTable::new()
        .map(0..=3, Priority::LOW)
        .map(4..=6, Priority::MEDIUM)
        .map(7..=9, Priority::HIGH)
        .map(10..=255, Priority::URGENT)
}

/// The control queue of the stage consuming `inbox`.
pub(super) fn control_queue(inbox: &str) -> String {
    format!("{inbox}.drain")
}

/// How a stage's queue is declared: the same by its consumers and by the
/// stage that publishes into it.
pub(super) fn queue_config(
    queue: &str,
    table: &PriorityTable,
    prefetch: u16,
    retries: u32,
) -> ConsumerConfig {
    ConsumerConfig::new(queue)
        .max_priority(10)
        .priorities(table.clone())
        .prefetch(prefetch)
        .dead_letter_exchange(format!("{queue}.dlx"))
        .dead_letter_queue(format!("{queue}.dead"))
        .retries(retries, std::time::Duration::from_millis(50), 2.0)
}
