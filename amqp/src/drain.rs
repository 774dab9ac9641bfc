//! The drain marker of pipelines across processes: what it carries and how
//! it is recognised.
//!
//! A marker is an empty message at broker priority 0 (the lowest, so every
//! message published before it, of any priority, is ahead of it) with
//! three headers: the drain's epoch, this marker's index and how many
//! markers were sent. The upstream sends one marker per consumer of the
//! queue; each consumer takes exactly one (it stops consuming on its first
//! and hands back any other delivery), finishes what it has in hand, and
//! reports to the holder of marker 0 through the stage's control queue.

use crate::delivery::header_text;
use crate::outgoing::Outgoing;
use lapin::types::FieldTable;

/// The drain's epoch: the same in every marker and report of one drain.
pub(crate) const EPOCH_HEADER: &str = "x-pe-drain";
/// This marker's index, from 0.
pub(crate) const INDEX_HEADER: &str = "x-pe-drain-index";
/// How many markers the upstream sent to this queue.
pub(crate) const COUNT_HEADER: &str = "x-pe-drain-count";

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

    /// The message that carries this marker to `queue`.
    pub(crate) fn outgoing(&self, queue: &str) -> Outgoing {
        Outgoing::to_queue(queue, Vec::new())
            .priority(0)
            .header(EPOCH_HEADER, &self.epoch)
            .header(INDEX_HEADER, self.index)
            .header(COUNT_HEADER, self.count)
    }
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
