//! A stage that sizes itself between a minimum and a maximum by its
//! mailbox's depth (rule 27 of `README.md`): the rule ([`Resizer`]) and
//! the thread that applies it at every check.

use super::actor::Actor;
use super::error::SpawnError;
use super::resize::{Grow, MAX_INSTANCES};
use super::shared::Core;
use crate::error::InvalidSetting;
use crate::executor::Executor;
use crate::sync::{deadline_after, lock, wait_until};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Resizes a running stage between `min` and `max` instances by its
/// mailbox's depth (Akka's resizer; rule 27 of `src/actor/README.md`).
/// Set with [`StageBuilder::resizer`](super::StageBuilder::resizer).
///
/// At every check (every [`every`](Resizer::every), 100 ms unless set):
///
/// - **grow by one** if more than [`backlog`](Resizer::backlog) letters
///   per instance are queued (1 unless set) and the stage has fewer than
///   `max` instances;
/// - else **shrink by one** if the check is idle (nothing queued, nothing
///   performing, and nothing dispatched since the check before) and the
///   stage has more than `min` instances.
///
/// Each step is a [`Stage::resize`](super::Stage::resize) by one, with
/// its rules (rule 26). The stage starts with its
/// [`instances`](super::StageBuilder::instances) brought into
/// `min..=max`. A resize by hand is allowed too; the checks go on from
/// the size it set. The checks end when the stage's door closes.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, Outbox, Reason, Resizer, Stage};
/// use std::time::Duration;
///
/// struct Nop;
/// impl Actor for Nop {
///     type In = u32;
///     type Out = ();
///     fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
///         Ok(())
///     }
/// }
/// let stage = Stage::builder("elastic", |_| Nop)
///     .resizer(Resizer::new(1, 4).every(Duration::from_millis(10)).backlog(8))
///     .spawn()?;
/// assert_eq!(stage.metrics().instances, 1);
/// for n in 0..1000 {
///     stage.addr().send(n).unwrap();
/// }
/// let exit = stage.drain();
/// assert_eq!((exit.reason, exit.metrics.performed), (Reason::Drained, 1000));
/// assert!((1..=4).contains(&exit.metrics.instances));
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resizer {
    min: usize,
    max: usize,
    every: Duration,
    backlog: usize,
}

impl Resizer {
    /// Between `min` and `max` instances (checked by `spawn`: 1 <= `min`
    /// <= `max` <= [`MAX_INSTANCES`]).
    ///
    /// # Examples
    ///
    /// See [`Resizer`].
    pub fn new(min: usize, max: usize) -> Resizer {
        Resizer {
            min,
            max,
            every: Duration::from_millis(100),
            backlog: 1,
        }
    }

    /// The time between two checks (default 100 ms; at least 1 µs).
    ///
    /// # Examples
    ///
    /// See [`Resizer`].
    pub fn every(mut self, interval: Duration) -> Resizer {
        self.every = interval;
        self
    }

    /// The letters queued per instance above which a check grows the
    /// stage (default 1; 0 grows it whenever a letter waits).
    ///
    /// # Examples
    ///
    /// See [`Resizer`].
    pub fn backlog(mut self, per_instance: usize) -> Resizer {
        self.backlog = per_instance;
        self
    }

    /// The settings' ranges.
    pub(crate) fn check(&self) -> Result<(), SpawnError> {
        if !(1..=MAX_INSTANCES).contains(&self.min) {
            return Err(InvalidSetting::range("resizer min", self.min, 1, MAX_INSTANCES).into());
        }
        if !(self.min..=MAX_INSTANCES).contains(&self.max) {
            let max = InvalidSetting::range("resizer max", self.max, self.min, MAX_INSTANCES);
            return Err(max.into());
        }
        if self.every.is_zero() {
            let every = InvalidSetting::new("resizer every", "0s", "longer than zero");
            return Err(every.into());
        }
        Ok(())
    }

    /// The size a stage starts with, asked for `instances`.
    pub(crate) fn start(&self, instances: usize) -> usize {
        instances.clamp(self.min, self.max)
    }

    /// The size a check moves the stage to, from `size` with `queued`
    /// letters waiting; `idle`: nothing performing and nothing dispatched
    /// since the check before.
    fn next(&self, size: usize, queued: usize, idle: bool) -> usize {
        if size < self.max && queued > self.backlog.saturating_mul(size) {
            size + 1
        } else if size > self.min && idle && queued == 0 {
            size - 1
        } else {
            size
        }
    }

    /// Starts the checks on a thread of their own, which ends once the
    /// stage's door closes (or its end). `None` if the system refuses a
    /// thread: the stage then keeps the size it has.
    pub(crate) fn watch<A: Actor>(
        self,
        core: Arc<Core<A::In>>,
        grow: Arc<Grow<A>>,
        exec: Executor,
    ) -> Option<JoinHandle<()>> {
        let name = format!("{}-resizer", core.mb.name);
        std::thread::Builder::new()
            .name(name)
            .spawn(move || self.run(&core, &grow, &exec))
            .ok()
    }

    fn run<A: Actor>(&self, core: &Arc<Core<A::In>>, grow: &Grow<A>, exec: &Executor) {
        let dispatched = || core.mb.lanes().map(|l| l.dispatched()).sum::<u64>();
        let mut seen = dispatched();
        loop {
            // A wait with a deadline, on the signal the stage's end gives.
            let deadline = deadline_after(self.every);
            let mut life = lock(&core.life);
            while !life.ended() {
                match wait_until(&core.changed, life, deadline) {
                    Ok(g) => life = g,
                    Err(g) => {
                        life = g;
                        break;
                    }
                }
            }
            if life.ended() || core.mb.is_closed() {
                return;
            }
            drop(life);
            let queued = core.mb.lanes().map(|l| l.queued()).sum();
            let now = dispatched();
            let idle = now == seen && core.mb.in_flight() == 0;
            seen = now;
            // The step is taken from the size read under the resize's
            // lock: a resize by hand just before is not undone.
            let step = |size| self.next(size, queued, idle);
            if grow.resize_by(core, exec, step).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Resizer;

    #[test]
    fn a_check_grows_on_a_backlog_and_shrinks_when_idle() {
        let r = Resizer::new(2, 4).backlog(3);
        assert_eq!(r.next(2, 7, false), 3, "7 > 3 per instance x 2");
        assert_eq!(r.next(2, 6, false), 2);
        assert_eq!(r.next(4, 100, false), 4, "at max");
        assert_eq!(r.next(3, 0, true), 2);
        assert_eq!(r.next(3, 0, false), 3, "busy");
        assert_eq!(r.next(2, 0, true), 2, "at min");
        assert_eq!(r.start(1), 2);
        assert_eq!(r.start(9), 4);
        assert!(Resizer::new(0, 1).check().is_err());
        assert!(Resizer::new(3, 2).check().is_err());
        assert!(
            Resizer::new(1, 1)
                .every(std::time::Duration::ZERO)
                .check()
                .is_err()
        );
        assert!(Resizer::new(1, 1).check().is_ok());
    }
}
