//! What a consumer may read of the letter it performs ([`LetterInfo`]):
//! seed 002's transmission-control information, a copy taken from the
//! letter at dispatch (read-only: only the strategies change it).

use crate::priority::Priority;

/// The transmission-control information of a letter (seed 002), as the
/// mailbox keeps it: the priority it was queued at, how often it was sent
/// back, how often the predicate strategy's predicate turned it away, its
/// TTL, and how many more send-backs its stage's hop limit allows.
///
/// A `perform` reads the letter it performs through
/// [`Outbox::letter`](super::Outbox::letter); every
/// [`DeadLetter`](super::DeadLetter) carries the one it had when it was
/// turned away.
///
/// # Examples
///
/// ```
/// use priority_executor::{Priority, SendOptions};
/// use priority_executor::actor::{Actor, ActorError, Outbox, Stage, Strategy};
///
/// /// Reports how often each message was turned away before it ran.
/// struct Report;
/// impl Actor for Report {
///     type In = u32;
///     type Out = (u32, u32);
///     fn perform(&mut self, n: u32, out: &mut Outbox<'_, (u32, u32)>) -> Result<(), ActorError> {
///         let runs = out.letter().predicate_runs;
///         let _ = out.send((n, runs));
///         Ok(())
///     }
/// }
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// let stage = Stage::builder("report", |_| Report)
///     // Odd numbers are turned away twice, then performed.
///     .strategy(Strategy::predicate(|n: &u32| n % 2 == 0, 2))
///     .on_output(move |pair, _| tx.send(pair).unwrap())
///     .spawn()?;
/// stage.addr().send_with(3, SendOptions::new().priority(Priority::HIGH)).unwrap();
/// stage.drain();
/// assert_eq!(rx.recv().unwrap(), (3, 2));
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct LetterInfo {
    /// The priority it was queued at (and dispatched at): a send-back may
    /// have changed the one it was sent with.
    pub priority: Priority,
    /// Times it was sent back to the mailbox, by the strategy or after a
    /// failed perform: its hops, which the hop limit counts.
    pub sent_back: u32,
    /// Times the predicate strategy's predicate ran against it and did not
    /// hold (each one sent it back).
    pub predicate_runs: u32,
    /// Its TTL, once the TTL strategy has read it from the message
    /// (lowered by one at each send-back); `None` before.
    pub ttl: Option<u32>,
    /// How many more times it may be sent back before it becomes a dead
    /// letter (`DeadReason::HopLimit`): the hop limit less its hops.
    pub hops_left: u32,
}
