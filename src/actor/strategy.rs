//! The consumer strategies of seed 002, as stage policies: decide, before
//! `perform`, whether a letter is performed, sent back (re-queued at the
//! back of its lane, maybe at another priority) or dead-lettered.

use super::error::SpawnError;
use super::letter::Letter;
use super::letters::DeadReason;
use crate::error::InvalidSetting;
use crate::priority::Priority;
use std::fmt;
use std::ops::RangeInclusive;
use std::sync::Arc;

/// The hop limit unless set (`Strategy::DEFAULT_HOP_LIMIT`).
const DEFAULT_HOPS: u16 = 100;

type Predicate<M> = Arc<dyn Fn(&M) -> bool + Send + Sync>;
type TtlOf<M> = Arc<dyn Fn(&M) -> u32 + Send + Sync>;

enum Kind<M> {
    Always,
    Predicate {
        holds: Predicate<M>,
        after: u32,
    },
    Priority {
        threshold: Priority,
        step: u32,
        copy: fn(&M) -> M,
    },
    Ttl {
        min: u32,
        max: u32,
        ttl_of: TtlOf<M>,
    },
}

/// A stage's consumer strategy (seed 002), with an optional hop limit.
///
/// | seed | here |
/// |---|---|
/// | predicate-based | [`predicate`](Strategy::predicate): perform if it holds or it did not hold `n` times already (the letter's [`predicate_runs`](super::LetterInfo::predicate_runs)), else send it back |
/// | priority-based | [`priority_threshold`](Strategy::priority_threshold): perform at or above the threshold, else send back one `step` higher; a failed perform, or a letter a broker's consumer sends back ([`Batch::send_back`](super::Batch::send_back)), is sent back one `step` lower |
/// | TTL-based | [`ttl_range`](Strategy::ttl_range): below the range a dead letter (`Expired`), above it sent back with TTL - 1 |
/// | broker stops after N idle cycles | [`BrokerBuilder::end_after`](super::BrokerBuilder::end_after) (a stage ends after a quiet time instead: [`StageBuilder::idle_after`](super::StageBuilder::idle_after)) |
///
/// Every strategy has a hop limit: a letter that would be sent back more
/// than [`hop_limit`](Strategy::hop_limit) times
/// ([`DEFAULT_HOP_LIMIT`](Strategy::DEFAULT_HOP_LIMIT), 100, unless set)
/// becomes a dead letter ([`DeadReason::HopLimit`]) instead, reported at
/// the priority it was last queued at. So every letter ends, performed or
/// dead, whatever the strategy decides and however often its perform
/// fails.
///
/// # Examples
///
/// ```
/// use priority_executor::Priority;
/// use priority_executor::actor::Strategy;
///
/// // Only even numbers, unless a number was already sent back twice.
/// let s = Strategy::predicate(|n: &u64| n % 2 == 0, 2);
/// // Priority aging by whole levels, at most 5 hops.
/// let p = Strategy::<String>::priority_threshold(Priority::HIGH).hop_limit(5);
/// // Messages whose TTL is within 1..=3; the TTL comes from the message.
/// let t = Strategy::ttl_range(1..=3, |m: &(u32, &str)| m.0);
/// # let _ = (s, p, t);
/// ```
pub struct Strategy<M> {
    kind: Kind<M>,
    /// At most `u16::MAX`, the range of a letter's count of send-backs.
    hop_limit: u16,
}

/// What the strategy decided for one letter.
pub(crate) enum Decision {
    Perform,
    SendBack {
        priority: Priority,
        ttl: Option<u32>,
    },
    Dead(DeadReason),
}

impl<M> Strategy<M> {
    /// How often a letter may be sent back unless
    /// [`hop_limit`](Strategy::hop_limit) says otherwise: 100. Past it the
    /// letter becomes a dead letter ([`DeadReason::HopLimit`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::Strategy;
    ///
    /// assert_eq!(Strategy::<u64>::DEFAULT_HOP_LIMIT, 100);
    /// ```
    pub const DEFAULT_HOP_LIMIT: u32 = DEFAULT_HOPS as u32;

    /// Perform every letter (the default).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::Strategy;
    ///
    /// let s = Strategy::<u64>::always();
    /// # let _ = s;
    /// ```
    pub fn always() -> Self {
        Strategy {
            kind: Kind::Always,
            hop_limit: DEFAULT_HOPS,
        }
    }

    /// Perform a letter if `holds` says so or `holds` already ran against
    /// it `after` times without holding (its
    /// [`predicate_runs`](super::LetterInfo::predicate_runs), counted at
    /// each such send-back); else send it back (same priority). Under the default
    /// hop limit, a letter that would be sent back a 101st time (`after`
    /// above 100 and `holds` never true) becomes a dead letter
    /// (`HopLimit`); raise [`hop_limit`](Strategy::hop_limit) with `after`
    /// (both count up to 65,535: an `after` above that is reached by the
    /// hop limit first).
    ///
    /// # Examples
    ///
    /// See [`Strategy`].
    pub fn predicate(holds: impl Fn(&M) -> bool + Send + Sync + 'static, after: u32) -> Self {
        Strategy {
            kind: Kind::Predicate {
                holds: Arc::new(holds),
                after,
            },
            hop_limit: DEFAULT_HOPS,
        }
    }

    /// Perform a letter at or above `threshold`; send a lower one back one
    /// step higher (aging); send a letter whose perform failed (after the
    /// retries), or that a broker's consumer could not process
    /// ([`Batch::send_back`](super::Batch::send_back)), back one step
    /// lower. The step is one level
    /// ([`Priority::LOW`]`.0`, 100) unless set. Needs `M: Clone`: the
    /// stage keeps a copy to send back after a failure.
    ///
    /// A letter whose perform keeps failing goes down and back up for
    /// ever without a hop limit: under the default one it is sent back
    /// 100 times, then becomes a dead letter (`HopLimit`) at the priority
    /// it was queued at. Aging by a small step from far below the
    /// threshold counts every step as a hop: set
    /// [`hop_limit`](Strategy::hop_limit) above the steps it needs.
    ///
    /// # Examples
    ///
    /// See [`Strategy`].
    pub fn priority_threshold(threshold: Priority) -> Self
    where
        M: Clone,
    {
        Strategy {
            kind: Kind::Priority {
                threshold,
                step: Priority::LOW.0,
                copy: M::clone,
            },
            hop_limit: DEFAULT_HOPS,
        }
    }

    /// The priority strategy's step (at least 1: a stage's spawn and a
    /// broker's `register` refuse 0); no effect on the others.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::Priority;
    /// use priority_executor::actor::Strategy;
    ///
    /// let s = Strategy::<u64>::priority_threshold(Priority(10)).step(1);
    /// # let _ = s;
    /// ```
    pub fn step(mut self, step: u32) -> Self {
        if let Kind::Priority { step: s, .. } = &mut self.kind {
            *s = step;
        }
        self
    }

    /// Perform a letter whose TTL is within `range`; below it the letter
    /// is dead (`Expired`), above it it is sent back with its TTL lowered
    /// by one. `ttl_of` reads the TTL the producer set, once; the letter
    /// carries the count from then on. Each send-back is a hop: under the
    /// default hop limit a TTL more than 100 above the range ends as a
    /// dead letter (`HopLimit`), not after billions of hops.
    ///
    /// # Examples
    ///
    /// See [`Strategy`].
    pub fn ttl_range(
        range: RangeInclusive<u32>,
        ttl_of: impl Fn(&M) -> u32 + Send + Sync + 'static,
    ) -> Self {
        Strategy {
            kind: Kind::Ttl {
                min: *range.start(),
                max: *range.end(),
                ttl_of: Arc::new(ttl_of),
            },
            hop_limit: DEFAULT_HOPS,
        }
    }

    /// A letter that would be sent back more than `hops` times becomes a
    /// dead letter (`HopLimit`), at the priority it was last queued at.
    /// Default [`DEFAULT_HOP_LIMIT`](Strategy::DEFAULT_HOP_LIMIT) (100);
    /// `hop_limit(0)` sends nothing back. At most 65,535: a larger limit
    /// counts as 65,535.
    ///
    /// # Examples
    ///
    /// See [`Strategy`].
    pub fn hop_limit(mut self, hops: u32) -> Self {
        self.hop_limit = u16::try_from(hops).unwrap_or(u16::MAX);
        self
    }

    /// The hop limit.
    pub(crate) fn hops(&self) -> u32 {
        self.hop_limit.into()
    }

    /// Does it perform every letter (no decision to make)?
    #[inline]
    pub(crate) fn is_always(&self) -> bool {
        matches!(self.kind, Kind::Always)
    }

    pub(crate) fn check(&self) -> Result<(), SpawnError> {
        match self.kind {
            Kind::Priority { step: 0, .. } => {
                Err(InvalidSetting::new("step", 0, "at least 1").into())
            }
            _ => Ok(()),
        }
    }

    /// Decides for a letter about to be performed.
    pub(crate) fn decide(&self, letter: &mut Letter<M>) -> Decision {
        match &self.kind {
            Kind::Always => Decision::Perform,
            Kind::Predicate { holds, after } => {
                if u32::from(letter.predicate_runs) >= *after || holds(&letter.msg) {
                    Decision::Perform
                } else {
                    // A run counts when it sends the letter back: at the
                    // hop limit it sends nothing back, and the dead letter
                    // reports the runs that did (one per send-back), as it
                    // reports the priority and TTL it was queued at.
                    if self.may_send_back(letter.sent_back) {
                        letter.predicate_runs = letter.predicate_runs.saturating_add(1);
                    }
                    Decision::SendBack {
                        priority: letter.priority,
                        ttl: letter.ttl,
                    }
                }
            }
            Kind::Priority {
                threshold, step, ..
            } => {
                if letter.priority >= *threshold {
                    Decision::Perform
                } else {
                    Decision::SendBack {
                        priority: Priority(letter.priority.0.saturating_add(*step)),
                        ttl: letter.ttl,
                    }
                }
            }
            Kind::Ttl { min, max, ttl_of } => {
                let ttl = match letter.ttl {
                    Some(t) => t,
                    None => ttl_of(&letter.msg),
                };
                letter.ttl = Some(ttl);
                if ttl < *min {
                    Decision::Dead(DeadReason::Expired)
                } else if ttl > *max {
                    Decision::SendBack {
                        priority: letter.priority,
                        ttl: Some(ttl - 1),
                    }
                } else {
                    Decision::Perform
                }
            }
        }
    }

    /// The priority to send a failed letter back at, and how to copy it,
    /// if the strategy sends failures back.
    pub(crate) fn after_failure(&self, priority: Priority) -> Option<Priority> {
        match self.kind {
            Kind::Priority { step, .. } => Some(Priority(priority.0.saturating_sub(step))),
            _ => None,
        }
    }

    /// How to copy a message before performing it, if the strategy needs a
    /// copy.
    pub(crate) fn copier(&self) -> Option<fn(&M) -> M> {
        match self.kind {
            Kind::Priority { copy, .. } => Some(copy),
            _ => None,
        }
    }

    /// May a letter sent back `sent_back` times so far go back once more?
    pub(crate) fn may_send_back(&self, sent_back: u16) -> bool {
        sent_back < self.hop_limit
    }
}

impl<M> Default for Strategy<M> {
    fn default() -> Self {
        Strategy::always()
    }
}

impl<M> fmt::Debug for Strategy<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::Always => "always".to_owned(),
            Kind::Predicate { after, .. } => format!("predicate (after {after} sends back)"),
            Kind::Priority {
                threshold, step, ..
            } => format!("priority >= {threshold} (step {step})"),
            Kind::Ttl { min, max, .. } => format!("ttl in {min}..={max}"),
        };
        f.debug_struct("Strategy")
            .field("kind", &kind)
            .field("hop_limit", &self.hop_limit)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Strategy;

    /// A letter counts its send-backs in a `u16`, so a hop limit above
    /// `u16::MAX` counts as `u16::MAX`, and a letter at that count goes
    /// back no more: it can never circulate past its count's range.
    #[test]
    fn a_hop_limit_past_the_letters_count_is_capped_at_it() {
        let strategy = Strategy::<u64>::always().hop_limit(100_000);
        assert_eq!(strategy.hops(), u32::from(u16::MAX));
        assert!(strategy.may_send_back(u16::MAX - 1));
        assert!(!strategy.may_send_back(u16::MAX));
        let default = Strategy::<u64>::always();
        assert_eq!(default.hops(), Strategy::<u64>::DEFAULT_HOP_LIMIT);
    }
}
