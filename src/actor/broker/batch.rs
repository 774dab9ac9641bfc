//! A batch a broker handed to one consumer ([`Batch`]): the consumer's
//! strategy decides for each letter as it is taken, a letter may be sent
//! back from inside the batch, and what the batch perform never took goes
//! back to the mailbox.

use crate::actor::addr::Outbox;
use crate::actor::letter::Letter;
use crate::actor::letters::Phase;
use crate::actor::outcome::{
    copy_of, count_fault, dead_letter, fault, panicked, perform_fault, send_back,
};
use crate::actor::shared::Core;
use crate::actor::strategy::{Decision, Strategy};
use crate::util::drop_quietly;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};

/// The letter last taken, while the consumer holds its message.
struct Taken<M> {
    /// Its control information, without the message.
    meta: Letter<()>,
    /// A copy, when the strategy sends failures back (priority strategy).
    copy: Option<M>,
}

/// Up to the broker's batch size of letters, handed to one consumer
/// ([`Actor::perform_batch`](crate::actor::Actor::perform_batch)), in
/// dispatch order (highest priority first, FIFO within one).
///
/// [`next_letter`](Batch::next_letter) takes the next letter the
/// consumer's strategy lets through (the others are sent back or turned
/// into dead letters as it decides); [`outbox`](Batch::outbox) sends
/// outputs at the priority of the letter taken last and shows its
/// [`LetterInfo`](crate::actor::LetterInfo); [`send_back`](Batch::send_back)
/// gives the letter taken last back to the broker (under the priority
/// strategy one step lower, as a failed perform's).
///
/// A letter taken counts as performed once the next one is taken, or once
/// the batch perform returns `Ok`; if it returns an error (or panics) the
/// letter taken last is a fault instead (or, under the priority strategy,
/// sent back one step lower). Letters the batch perform did not take go
/// back to the broker, one hop more (past the hop limit, dead letters),
/// for a later batch.
///
/// # Examples
///
/// See [`Broker`](crate::actor::Broker).
pub struct Batch<'a, M, O> {
    pub(crate) letters: std::vec::IntoIter<Letter<M>>,
    current: Option<Taken<M>>,
    pub(crate) out: Outbox<'a, O>,
    strategy: &'a Strategy<M>,
    core: &'a Core<M>,
    performed: &'a AtomicU64,
}

impl<'a, M, O> Batch<'a, M, O> {
    pub(crate) fn new(
        letters: Vec<Letter<M>>,
        out: Outbox<'a, O>,
        strategy: &'a Strategy<M>,
        core: &'a Core<M>,
        performed: &'a AtomicU64,
    ) -> Self {
        Batch {
            letters: letters.into_iter(),
            current: None,
            out,
            strategy,
            core,
            performed,
        }
    }

    /// Takes the next letter the consumer's strategy lets through, or
    /// `None` when the batch is done. The letter taken before counts as
    /// performed.
    ///
    /// # Examples
    ///
    /// See [`Broker`](crate::actor::Broker).
    pub fn next_letter(&mut self) -> Option<M> {
        self.settle_current();
        for mut letter in self.letters.by_ref() {
            let decision = if self.strategy.is_always() {
                Ok(Decision::Perform)
            } else {
                catch_unwind(AssertUnwindSafe(|| self.strategy.decide(&mut letter)))
            };
            let decision = match decision {
                Ok(decision) => decision,
                Err(payload) => {
                    // A strategy that panics (a user predicate) faults the
                    // letter it was deciding for: reported, never lost.
                    let error = format!("strategy {}", panicked(payload));
                    let (instance, priority) = (self.out.instance, letter.priority);
                    perform_fault(self.core, instance, error, 0, priority, Some(letter.msg));
                    continue;
                }
            };
            match decision {
                Decision::Perform => {
                    let copy = match self.strategy.copier().map(|c| copy_of(c, &letter.msg)) {
                        None => None,
                        Some(Ok(copy)) => Some(copy),
                        Some(Err(error)) => {
                            // No copy, no send-back after a failure: the
                            // letter faults, with its message, unperformed.
                            let (instance, priority) = (self.out.instance, letter.priority);
                            perform_fault(
                                self.core,
                                instance,
                                error,
                                0,
                                priority,
                                Some(letter.msg),
                            );
                            continue;
                        }
                    };
                    self.out.letter = letter.info(self.strategy.hops());
                    let (msg, meta) = letter.split();
                    self.current = Some(Taken { meta, copy });
                    return Some(msg);
                }
                Decision::SendBack { priority, ttl } => {
                    send_back(self.core, self.strategy, letter, priority, ttl);
                }
                Decision::Dead(reason) => {
                    dead_letter(self.core, self.strategy.hops(), letter, reason);
                }
            }
        }
        None
    }

    /// The outbox, for outputs of the letter taken last (at its priority)
    /// and its control information ([`Outbox::letter`]).
    ///
    /// # Examples
    ///
    /// See [`Broker`](crate::actor::Broker).
    pub fn outbox(&mut self) -> &mut Outbox<'a, O> {
        &mut self.out
    }

    /// Gives the letter taken last back to the broker (seed 002's
    /// consumer that cannot process a message): it is re-queued at the
    /// back of its lane, one hop more, and may go to any consumer; past
    /// the hop limit it becomes a dead letter (`HopLimit`). Under the
    /// priority strategy it goes back one step lower, as a letter whose
    /// perform failed (the seed's "decremented priority"); under the
    /// others at its own priority.
    ///
    /// # Errors
    ///
    /// `msg` is handed back if no letter is held (none taken yet, or the
    /// one taken last was already sent back).
    ///
    /// # Examples
    ///
    /// See [`Broker`](crate::actor::Broker).
    pub fn send_back(&mut self, msg: M) -> Result<(), M> {
        let Some(Taken { meta, copy }) = self.current.take() else {
            return Err(msg);
        };
        // The copy's destructor is user code.
        drop_quietly(copy);
        let letter = meta.with(msg);
        let (priority, ttl) = (letter.priority, letter.ttl);
        let priority = self.strategy.after_failure(priority).unwrap_or(priority);
        send_back(self.core, self.strategy, letter, priority, ttl);
        Ok(())
    }

    /// Letters not taken yet.
    ///
    /// # Examples
    ///
    /// See [`Broker`](crate::actor::Broker).
    pub fn len(&self) -> usize {
        self.letters.len()
    }

    /// Is every letter taken?
    ///
    /// # Examples
    ///
    /// See [`Broker`](crate::actor::Broker).
    pub fn is_empty(&self) -> bool {
        self.letters.len() == 0
    }

    /// The letter taken last, if still held, is performed.
    fn settle_current(&mut self) {
        if let Some(taken) = self.current.take() {
            // ORDERING: Relaxed, a count: exact once read after the
            // broker ended, the consumers' threads joined (the join
            // orders every add before the read).
            self.performed.fetch_add(1, Ordering::Relaxed);
            // Its copy's destructor is user code, and this may run
            // outside the batch perform's guard (`finish`).
            drop_quietly(taken);
        }
    }

    /// After the batch perform: the letter taken last is performed (`ok`)
    /// or failed with `error`; the letters not taken are re-queued.
    pub(crate) fn finish(mut self, consumer: usize, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => self.settle_current(),
            Err(error) => {
                let taken = self.current.take();
                let priority = taken.as_ref().map(|t| t.meta.priority);
                let lowered = priority.and_then(|p| self.strategy.after_failure(p));
                match (taken, lowered) {
                    (
                        Some(Taken {
                            meta,
                            copy: Some(copy),
                        }),
                        Some(lowered),
                    ) => {
                        let letter = meta.with(copy);
                        let ttl = letter.ttl;
                        send_back(self.core, self.strategy, letter, lowered, ttl);
                    }
                    (taken, _) => {
                        let counted = taken.is_some();
                        let message = taken.and_then(|t| t.copy);
                        fault(
                            self.core,
                            consumer,
                            Phase::Perform,
                            error,
                            1,
                            priority,
                            message,
                        );
                        if counted {
                            count_fault(self.core);
                        }
                    }
                }
            }
        }
        // Not taken: back to the broker, one hop more, so a batch perform
        // that never takes its letters cannot keep them going round for
        // ever (past the hop limit they are dead letters).
        for letter in self.letters.by_ref() {
            let (priority, ttl) = (letter.priority, letter.ttl);
            send_back(self.core, self.strategy, letter, priority, ttl);
        }
    }
}

impl<M, O> fmt::Debug for Batch<'_, M, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("left", &self.letters.len())
            .field("holding", &self.current.is_some())
            .finish_non_exhaustive()
    }
}
