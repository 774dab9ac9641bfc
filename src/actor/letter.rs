//! A user message as the lanes hold it ([`Letter`]): at the bottom of the
//! mailbox, read by its lanes, the dispatch and the strategies.

use crate::priority::Priority;

/// A user message in a lane, with what the strategies track.
pub(crate) struct Letter<M> {
    pub(crate) msg: M,
    pub(crate) priority: Priority,
    /// Times a strategy sent it back.
    pub(crate) sent_back: u32,
    /// The TTL strategy's count, once it has looked at the message.
    pub(crate) ttl: Option<u32>,
}
