//! A user message as the lanes hold it ([`Letter`]): at the bottom of the
//! mailbox, read by its lanes, the dispatch and the strategies.

use super::info::LetterInfo;
use crate::priority::Priority;

/// A user message in a lane, with what the strategies track.
pub(crate) struct Letter<M> {
    pub(crate) msg: M,
    pub(crate) priority: Priority,
    /// Times a strategy sent it back.
    pub(crate) sent_back: u32,
    /// Times the predicate strategy's predicate did not hold for it.
    pub(crate) predicate_runs: u32,
    /// The TTL strategy's count, once it has looked at the message.
    pub(crate) ttl: Option<u32>,
}

impl<M> Letter<M> {
    /// A letter as a send queues it.
    pub(crate) fn new(msg: M, priority: Priority) -> Letter<M> {
        Letter {
            msg,
            priority,
            sent_back: 0,
            predicate_runs: 0,
            ttl: None,
        }
    }

    /// The message, and the letter's information without it.
    pub(crate) fn split(self) -> (M, Letter<()>) {
        let meta = Letter {
            msg: (),
            priority: self.priority,
            sent_back: self.sent_back,
            predicate_runs: self.predicate_runs,
            ttl: self.ttl,
        };
        (self.msg, meta)
    }

    /// Its control information, under a stage's `hop_limit`.
    pub(crate) fn info(&self, hop_limit: u32) -> LetterInfo {
        LetterInfo {
            priority: self.priority,
            sent_back: self.sent_back,
            predicate_runs: self.predicate_runs,
            ttl: self.ttl,
            hops_left: hop_limit.saturating_sub(self.sent_back),
        }
    }
}

impl Letter<()> {
    /// The letter `split` took `msg` from, whole again.
    pub(crate) fn with<M>(self, msg: M) -> Letter<M> {
        Letter {
            msg,
            priority: self.priority,
            sent_back: self.sent_back,
            predicate_runs: self.predicate_runs,
            ttl: self.ttl,
        }
    }
}
