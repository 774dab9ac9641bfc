//! A stage: N instances of one actor sharing one mailbox, each instance
//! one long job of the stage's own executor. The handle; the builder is
//! in `builder.rs`, what they share with the instances in `shared.rs`.

use super::actor::Actor;
use super::addr::Addr;
use super::letters::{DeadLetter, Fault};
use super::metrics::StageMetrics;
use super::monitor::StageMonitor;
use super::reason::Reason;
use super::shared::{Core, Exit};
use crate::executor::Executor;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A running stage. Dropping it drains it (as [`drain`](Stage::drain));
/// dropped by one of its own instances, it begins the drain without
/// waiting (see its `Drop`).
///
/// # Examples
///
/// See [`Actor`] and [`StageBuilder`](super::StageBuilder).
pub struct Stage<A: Actor> {
    core: Arc<Core<A::In>>,
    exec: Option<Executor>,
    _actor: PhantomData<fn() -> A>,
}

impl<A: Actor> Stage<A> {
    /// The handle of a stage `spawn` started.
    pub(super) fn spawned(core: Arc<Core<A::In>>, exec: Executor) -> Stage<A> {
        Stage {
            core,
            exec: Some(exec),
            _actor: PhantomData,
        }
    }

    /// The stage's address (Kabuki's inbox, `-i`).
    ///
    /// # Examples
    ///
    /// See [`Addr`].
    pub fn addr(&self) -> Addr<A::In> {
        Addr {
            mb: self.core.mb.clone(),
        }
    }

    /// The stage's name.
    ///
    /// # Examples
    ///
    /// See [`Addr`].
    pub fn name(&self) -> &str {
        &self.core.mb.name
    }

    /// A snapshot of the counters.
    ///
    /// # Examples
    ///
    /// See [`StageMetrics`].
    pub fn metrics(&self) -> StageMetrics {
        self.core.metrics()
    }

    /// A cloneable view of the stage that does not own it: counters,
    /// latest faults and dead letters, and a drain begun without waiting.
    ///
    /// # Examples
    ///
    /// See [`StageMonitor`].
    pub fn monitor(&self) -> StageMonitor {
        StageMonitor::new(self.core.clone())
    }

    /// The dead letters kept so far (none if `on_dead_letter` is set), in
    /// the order they were turned away.
    ///
    /// # Examples
    ///
    /// See `tests/actor/strict_order.rs`.
    pub fn take_dead_letters(&self) -> Vec<DeadLetter<A::In>> {
        self.core.dead.take()
    }

    /// The faults kept so far (none if `on_fault` is set).
    ///
    /// # Examples
    ///
    /// See `tests/actor/panics.rs`.
    pub fn take_faults(&self) -> Vec<Fault<A::In>> {
        self.core.faults.take()
    }

    /// Has the stage ended, and why?
    ///
    /// # Examples
    ///
    /// See [`Addr::stop`].
    pub fn finished(&self) -> Option<Reason> {
        self.core.finished()
    }

    /// Drains the stage (Kabuki's shutdown message): it stops accepting,
    /// performs everything it accepted, destroys its instances with
    /// `Reason::Drained`, and returns. A stage that had already ended
    /// returns its reason.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Reason, Stage};
    ///
    /// struct Nop;
    /// impl Actor for Nop {
    ///     type In = ();
    ///     type Out = ();
    ///     fn perform(&mut self, _: (), _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
    ///         Ok(())
    ///     }
    /// }
    /// let stage = Stage::builder("nop", |_| Nop).spawn()?;
    /// stage.addr().send(()).unwrap();
    /// let exit = stage.drain();
    /// assert_eq!((exit.reason, exit.metrics.performed), (Reason::Drained, 1));
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn drain(mut self) -> Exit {
        self.core.mb.begin_drain();
        self.finish()
    }

    /// Waits until the stage ends by itself (`stop`, `kill`, idleness).
    ///
    /// # Examples
    ///
    /// See [`Addr::stop`].
    pub fn join(mut self) -> Exit {
        self.finish()
    }

    fn finish(&mut self) -> Exit {
        assert!(
            !self.core.mb.is_own_thread(),
            "Stage::drain or Stage::join called by one of stage {:?}'s own instances: \
             it would wait for itself; drop the stage instead",
            self.core.mb.name
        );
        let reason = self.core.wait_done();
        drop(self.exec.take());
        Exit {
            reason,
            metrics: self.core.metrics(),
        }
    }
}

/// Dropping a stage drains it and waits for its end, as
/// [`drain`](Stage::drain). Dropped by one of its own instances (inside
/// `perform`, `destroy`, or an actor's own drop), it cannot wait for the
/// thread doing it (rule 19 of `src/actor/README.md`): it begins the same
/// drain and returns at once; the stage performs what it accepted and
/// destroys its instances once that perform returns, and its last
/// instance shuts the executor down. `drain` and `join` from there
/// panic with that advice instead of waiting for ever.
impl<A: Actor> Drop for Stage<A> {
    fn drop(&mut self) {
        let Some(exec) = self.exec.take() else {
            return;
        };
        self.core.mb.begin_drain();
        if self.core.mb.is_own_thread() {
            self.core.hand_over(exec);
        } else {
            self.core.wait_done();
            drop(exec);
        }
    }
}

impl<A: Actor> fmt::Debug for Stage<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stage")
            .field("name", &self.core.mb.name)
            .field("instances", &self.core.instances)
            .field("finished", &self.core.finished())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
impl<A: Actor> Stage<A> {
    /// Wakes the instances waiting out a quiet period, after a test moved
    /// their clock.
    pub(crate) fn wake(&self) {
        self.core.mb.ready.notify_all();
    }

    /// Instances waiting for a letter or a change.
    pub(crate) fn waiting(&self) -> usize {
        self.core.mb.ready.waiting()
    }
}
