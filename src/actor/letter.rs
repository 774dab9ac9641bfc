//! A user message as the lanes hold it ([`Letter`]): at the bottom of the
//! mailbox, read by its lanes, the dispatch and the strategies.

use super::info::LetterInfo;
use crate::priority::Priority;

/// A user message in a lane, with what the strategies track.
///
/// Kept to 16 bytes beside the message (a `u64` letter in a lane's ring
/// slot, with its stamp, is 32 bytes: two to a cache line, none across
/// two): the counts are `u16`, as a hop limit is at most `u16::MAX`.
pub(crate) struct Letter<M> {
    pub(crate) msg: M,
    pub(crate) priority: Priority,
    /// Times a strategy sent it back: at most the hop limit.
    pub(crate) sent_back: u16,
    /// Times the predicate strategy's predicate did not hold for it
    /// (saturating; each such run sends it back, so the hop limit ends it
    /// first).
    pub(crate) predicate_runs: u16,
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
            sent_back: self.sent_back.into(),
            predicate_runs: self.predicate_runs.into(),
            ttl: self.ttl,
            hops_left: hop_limit.saturating_sub(self.sent_back.into()),
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

#[cfg(test)]
mod tests {
    use super::Letter;
    use crate::actor::lane::Entry;

    /// A `u64` letter as a lane holds it is 24 bytes, so a ring slot (with
    /// its 8-byte stamp) is 32: two to a cache line, none across two. A
    /// slot across two lines made the sender's write and the instance's
    /// read of neighbouring slots share a line (the pipeline bench ran
    /// about 15% slower).
    #[test]
    fn a_u64_letter_and_its_stamp_fill_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Letter<u64>>(), 24);
        assert_eq!(std::mem::size_of::<Entry<u64>>(), 24);
    }
}
