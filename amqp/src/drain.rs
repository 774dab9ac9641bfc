//! The drain marker of pipelines across processes: what it carries and how
//! it is recognised.
//!
//! A marker is an empty message at broker priority 0 (the lowest, so every
//! message published before it, of any priority, is ahead of it) with
//! four headers: the drain's epoch, this marker's index, how many
//! markers were sent, and when (microseconds since the Unix epoch). The upstream sends one marker per consumer of the
//! queue; each consumer takes exactly one (it stops consuming on its first
//! and hands back any other delivery), finishes what it has in hand, and
//! reports to the holder of marker 0 through the stage's control queue.
//!
//! The upstream counts the consumers before it sends the markers, so a
//! consumer counted started before they were sent. A marker sent before
//! the consumer started (left in the queue by an earlier run, whose
//! process died before taking it) belongs to a drain it was not counted
//! in: it is acked and dropped, and the consumer waits for its own.

use crate::delivery::header_text;
use crate::outgoing::Outgoing;
use lapin::types::FieldTable;
use std::time::{SystemTime, UNIX_EPOCH};

/// The drain's epoch: the same in every marker and report of one drain.
pub(crate) const EPOCH_HEADER: &str = "x-pe-drain";
/// This marker's index, from 0.
pub(crate) const INDEX_HEADER: &str = "x-pe-drain-index";
/// How many markers the upstream sent to this queue.
pub(crate) const COUNT_HEADER: &str = "x-pe-drain-count";
/// When the marker was sent, in microseconds since the Unix epoch.
pub(crate) const SENT_HEADER: &str = "x-pe-drain-sent";

/// A drain marker taken from a queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Marker {
    pub(crate) epoch: String,
    pub(crate) index: u32,
    pub(crate) count: u32,
}

impl Marker {
    /// The marker in these headers, if they carry one.
    pub(crate) fn from_headers(headers: Option<&FieldTable>) -> Option<Marker> {
        let headers = headers?;
        let get = |name: &str| {
            headers
                .inner()
                .iter()
                .find(|(k, _)| k.as_str() == name)
                .and_then(|(_, v)| header_text(v))
        };
        Some(Marker {
            epoch: get(EPOCH_HEADER)?,
            index: get(INDEX_HEADER)?.parse().ok()?,
            count: get(COUNT_HEADER)?.parse().ok()?,
        })
    }

    /// The message that carries this marker to `queue`, sent now.
    pub(crate) fn outgoing(&self, queue: &str) -> Outgoing {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Outgoing::to_queue(queue, Vec::new())
            .priority(0)
            .header(EPOCH_HEADER, &self.epoch)
            .header(INDEX_HEADER, self.index)
            .header(COUNT_HEADER, self.count)
            .header(SENT_HEADER, now)
    }
}

/// When the marker in these headers was sent (microseconds since the Unix
/// epoch), if it says.
pub(crate) fn sent_us(headers: Option<&FieldTable>) -> Option<u64> {
    headers?
        .inner()
        .iter()
        .find(|(k, _)| k.as_str() == SENT_HEADER)
        .and_then(|(_, v)| header_text(v))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lapin::types::{AMQPValue, LongString};

    #[test]
    fn a_marker_round_trips_through_its_headers_and_others_are_not_markers() {
        let marker = Marker {
            epoch: "e1".to_owned(),
            index: 2,
            count: 3,
        };
        let msg = marker.outgoing("q");
        assert_eq!(msg.broker_priority(), Some(0));
        assert_eq!(Marker::from_headers(Some(msg.headers())), Some(marker));
        assert!(
            sent_us(Some(msg.headers())).is_some_and(|t| t > 0),
            "stamped"
        );
        let mut other = FieldTable::default();
        other.insert(
            EPOCH_HEADER.into(),
            AMQPValue::LongString(LongString::from(b"e1".to_vec())),
        );
        assert_eq!(
            Marker::from_headers(Some(&other)),
            None,
            "index and count missing"
        );
        assert_eq!(Marker::from_headers(None), None);
    }
}
