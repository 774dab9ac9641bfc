//! A stage: N instances of one actor sharing one mailbox, each instance
//! one long job of the stage's own executor. The handle; the builder is
//! in `builder.rs`, what they share with the instances in `shared.rs`.

use super::actor::Actor;
use super::addr::Addr;
use super::error::ResizeError;
use super::letters::{DeadLetter, Fault};
use super::metrics::StageMetrics;
use super::monitor::StageMonitor;
use super::reason::Reason;
use super::resize::{Grow, Spawned};
use super::shared::{Core, Exit};
use crate::executor::Executor;
use crate::sync::ending::{Begun, Ending};
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::thread::JoinHandle;

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
    grow: Arc<Grow<A>>,
    /// The resizer's checks (rule 27), which end with the stage.
    resizer: Option<JoinHandle<()>>,
    _actor: PhantomData<fn() -> A>,
}

impl<A: Actor> Stage<A> {
    /// The handle of a stage `spawn` started.
    pub(super) fn spawned(spawned: Spawned<A>) -> Stage<A> {
        Stage {
            core: spawned.core,
            exec: Some(spawned.exec),
            grow: spawned.grow,
            resizer: spawned.resizer,
            _actor: PhantomData,
        }
    }

    /// Waits for the resizer's checks to end (they end with the stage).
    fn join_resizer(&mut self) {
        if let Some(checks) = self.resizer.take() {
            let _ = checks.join();
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

    /// Makes the running stage `n` instances (Akka's resizer; rule 26 of
    /// `src/actor/README.md`), and returns its size then: `n`, or fewer
    /// if the factory or `init` failed for a new instance (each such
    /// failure is a [`Fault`] of phase `Init`; the stage serves on).
    ///
    /// - **Growing**: removals asked for and not yet taken are taken back
    ///   first (those instances stay); then the factory makes each new
    ///   instance on this thread, with the lowest index free (the indices
    ///   of instances gone are taken again, then the next ones); the
    ///   instance's `init` runs on its own thread before its first
    ///   perform, and `resize` returns once every new `init` has run.
    /// - **Shrinking**: `resize` asks the surplus to leave and returns at
    ///   once. Each leaving instance is whichever instance next finishes
    ///   its letter or waits for one: it finishes the letter it performs
    ///   (retries included), takes no other, and runs
    ///   `destroy(Reason::Removed)`, while the others keep dispatching
    ///   everything queued. No letter is lost or performed twice.
    ///
    /// [`StageMetrics::instances`] shows the size. A resize restarts the
    /// quiet period of [`idle_after`](super::StageBuilder::idle_after), as
    /// the end of the last perform does. Resizes run one at a time.
    ///
    /// # Errors
    ///
    /// [`ResizeError::Invalid`] for 0 or above
    /// [`MAX_INSTANCES`](super::MAX_INSTANCES);
    /// [`ResizeError::Ending`] once the stage's door has closed (`stop`
    /// or `kill` dispatched, a drain begun, idle), once it has ended, or
    /// when adding to a stage none of whose instances serves or will (every
    /// `init` failed); [`ResizeError::Reentrant`] from the stage's factory,
    /// or from the `init` of an instance a resize of the stage waits for
    /// (and its fault sink then), which would wait for itself. Nothing
    /// changes then.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Reason, Stage};
    /// use std::sync::mpsc;
    ///
    /// enum Life {
    ///     Made(usize),
    ///     Gone(usize, Reason),
    /// }
    /// struct Worker(usize, mpsc::Sender<Life>);
    /// impl Actor for Worker {
    ///     type In = u32;
    ///     type Out = ();
    ///     fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
    ///         Ok(())
    ///     }
    ///     fn destroy(&mut self, reason: Reason) {
    ///         let _ = self.1.send(Life::Gone(self.0, reason));
    ///     }
    /// }
    ///
    /// let (tx, rx) = mpsc::channel();
    /// let stage = Stage::builder("workers", move |i| {
    ///     let _ = tx.send(Life::Made(i));
    ///     Worker(i, tx.clone())
    /// })
    /// .instances(2)
    /// .spawn()?;
    /// let addr = stage.addr();
    /// for n in 0..100 {
    ///     addr.send(n).unwrap();
    /// }
    /// assert_eq!(stage.resize(4), Ok(4)); // instances 2 and 3 join
    /// assert_eq!(stage.metrics().instances, 4);
    /// assert_eq!(stage.resize(1), Ok(1)); // three leave after their letter
    /// let (mut made, mut removed) = (0, 0);
    /// while removed < 3 {
    ///     match rx.recv().unwrap() {
    ///         Life::Made(_) => made += 1,
    ///         Life::Gone(_, reason) => {
    ///             assert_eq!(reason, Reason::Removed);
    ///             removed += 1;
    ///         }
    ///     }
    /// }
    /// let exit = stage.drain();
    /// assert_eq!(exit.metrics.performed, 100); // the one left drained the rest
    /// for life in rx.try_iter() {
    ///     match life {
    ///         Life::Made(_) => made += 1,
    ///         Life::Gone(_, reason) => assert_eq!(reason, Reason::Drained),
    ///     }
    /// }
    /// assert_eq!(made, 4);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn resize(&self, n: usize) -> Result<usize, ResizeError> {
        let Some(exec) = &self.exec else {
            return Err(ResizeError::Ending {
                stage: self.core.mb.name.clone(),
            });
        };
        self.grow.resize(&self.core, exec, n)
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

    /// [`drain`](Stage::drain) as a future, for async code: any runtime
    /// can poll it, and it needs none. Its first poll begins the drain
    /// (the stage stops accepting then) and starts the wait for the
    /// stage's end on a thread of its own, named `{stage}-drain`; it
    /// resolves to the [`Exit`] `drain` returns. The future is `'static`,
    /// `Send` and `Unpin`.
    ///
    /// Cancel-safe: dropping the future leaves the drain running on its
    /// thread. One dropped before its first poll drops the stage there,
    /// which drains it (as dropping the stage does): the thread dropping
    /// the future never waits.
    ///
    /// # Panics
    ///
    /// On its first poll by one of the stage's own instances, as `drain`
    /// does there: it would wait for itself; drop the stage instead.
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
    /// // In an async fn or block, on any runtime (futures' block_on here):
    /// let exit = futures::executor::block_on(stage.drain_async());
    /// assert_eq!((exit.reason, exit.metrics.performed), (Reason::Drained, 1));
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn drain_async(self) -> impl Future<Output = Exit> + Send + Unpin + 'static {
        self.end_async("drain", |stage| {
            stage.core.mb.begin_drain();
        })
    }

    /// [`join`](Stage::join) as a future: waits until the stage ends by
    /// itself (`stop`, `kill`, idleness), on a thread of its own named
    /// `{stage}-join` that its first poll starts, and resolves to the
    /// [`Exit`] `join` returns. Any runtime can poll it, and it needs
    /// none; it is `'static`, `Send` and `Unpin`.
    ///
    /// Cancel-safe as [`drain_async`](Stage::drain_async): dropped once
    /// polled, its thread goes on waiting and then drops the stage (which
    /// drains it, as dropping the stage does); dropped before its first
    /// poll, the stage is dropped on a thread of its own.
    ///
    /// # Panics
    ///
    /// On its first poll by one of the stage's own instances, as `join`
    /// does there.
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
    /// stage.addr().stop().unwrap();
    /// // In an async fn or block, on any runtime (futures' block_on here):
    /// let exit = futures::executor::block_on(stage.join_async());
    /// assert_eq!(exit.reason, Reason::Stopped);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn join_async(self) -> impl Future<Output = Exit> + Send + Unpin + 'static {
        self.end_async("join", |_| {})
    }

    /// The stage's end as a future: on the first poll the checks of the
    /// blocking forms and `begin` run on the polling thread, the wait on a
    /// thread named `{stage}-{what}`.
    fn end_async(self, what: &str, begin: fn(&Stage<A>)) -> Ending<Exit> {
        let thread = std::thread::Builder::new().name(format!("{}-{what}", self.core.mb.name));
        Ending::owning(thread, move || {
            let mut stage = self;
            stage.assert_not_own("drain_async or Stage::join_async");
            begin(&stage);
            Begun::Wait(Box::new(move || stage.finish()))
        })
    }

    /// The blocking ends' rule: one of the stage's own instances may not
    /// wait for the stage.
    fn assert_not_own(&self, forms: &str) {
        assert!(
            !self.core.mb.is_own_thread(),
            "Stage::{forms} called by one of stage {:?}'s own instances: \
             it would wait for itself; drop the stage instead",
            self.core.mb.name
        );
    }

    fn finish(&mut self) -> Exit {
        self.assert_not_own("drain or Stage::join");
        let reason = self.core.wait_done();
        self.join_resizer();
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
            self.join_resizer();
            drop(exec);
        }
    }
}

impl<A: Actor> fmt::Debug for Stage<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stage")
            .field("name", &self.core.mb.name)
            .field("instances", &self.core.size())
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
