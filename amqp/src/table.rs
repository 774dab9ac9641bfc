//! Broker priority (0-255, an AMQP message property) to executor lane.

use priority_executor::Priority;
use std::collections::BTreeMap;
use std::ops::RangeInclusive;

/// Which lane a broker priority goes to.
///
/// A message without a priority property counts as broker priority 0, as
/// RabbitMQ treats it. A broker priority the table does not map goes to the
/// [`unmapped`](PriorityTable::unmapped) lane (by default the executor's
/// lowest lane) and is counted in
/// [`ConsumerMetrics::unmapped`](crate::ConsumerMetrics::unmapped): it is
/// never dropped.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
/// use priority_executor_amqp::PriorityTable;
///
/// let table = PriorityTable::new()
///     .map(0..=4, Priority(1))
///     .map(5..=9, Priority(10));
/// assert_eq!(table.lane_for(Some(7)), Some(Priority(10)));
/// assert_eq!(table.lane_for(None), Some(Priority(1))); // no property: 0
/// assert_eq!(table.lane_for(Some(200)), None); // unmapped
/// // The other way, for publishing: the highest broker priority of a lane.
/// assert_eq!(table.broker_priority(Priority(10)), Some(9));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PriorityTable {
    map: BTreeMap<u8, Priority>,
    unmapped: Option<Priority>,
}

impl PriorityTable {
    /// An empty table: every message goes to the unmapped lane.
    ///
    /// # Examples
    ///
    /// See [`PriorityTable`].
    pub fn new() -> Self {
        PriorityTable::default()
    }

    /// Sends the broker priorities in `range` to the lane `lane`; a later
    /// call overrides an earlier one where they overlap.
    ///
    /// # Examples
    ///
    /// See [`PriorityTable`].
    pub fn map(mut self, range: RangeInclusive<u8>, lane: Priority) -> Self {
        for p in range {
            self.map.insert(p, lane);
        }
        self
    }

    /// The lane for broker priorities the table does not map. Default: the
    /// executor's lowest lane.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Priority;
    /// use priority_executor_amqp::PriorityTable;
    ///
    /// let table = PriorityTable::new().map(9..=9, Priority(10)).unmapped(Priority(5));
    /// assert_eq!(table.unmapped_lane(), Some(Priority(5)));
    /// ```
    pub fn unmapped(mut self, lane: Priority) -> Self {
        self.unmapped = Some(lane);
        self
    }

    /// The lane set with [`unmapped`](PriorityTable::unmapped), if any.
    ///
    /// # Examples
    ///
    /// See [`unmapped`](PriorityTable::unmapped).
    pub fn unmapped_lane(&self) -> Option<Priority> {
        self.unmapped
    }

    /// The mapped lane of a message's broker priority (`None` as a
    /// property counts as 0); `None` if the table does not map it.
    ///
    /// # Examples
    ///
    /// See [`PriorityTable`].
    pub fn lane_for(&self, broker_priority: Option<u8>) -> Option<Priority> {
        self.map.get(&broker_priority.unwrap_or(0)).copied()
    }

    /// The highest broker priority mapped to `lane`: the priority to
    /// publish a message with so that it lands in that lane.
    ///
    /// # Examples
    ///
    /// See [`PriorityTable`].
    pub fn broker_priority(&self, lane: Priority) -> Option<u8> {
        self.map
            .iter()
            .rev()
            .find(|(_, l)| **l == lane)
            .map(|(p, _)| *p)
    }

    /// Every lane the table names, the unmapped one included.
    pub(crate) fn lanes(&self) -> Vec<Priority> {
        let mut lanes: Vec<Priority> = self.map.values().copied().collect();
        lanes.extend(self.unmapped);
        lanes.sort();
        lanes.dedup();
        lanes
    }
}
