//! A stage: N instances of one actor sharing one mailbox, each instance
//! one long job of the stage's own executor. The builder and the handle;
//! what they share with the instances is in `shared.rs`.

use super::actor::{Actor, Reason};
use super::addr::{Addr, Downstream, OutputFn};
use super::config::MailboxConfig;
use super::error::SpawnError;
use super::idle::Clock;
use super::instance::{self, Retry, Settings};
use super::letters::{DeadLetter, Fault};
use super::mailbox::Mailbox;
use super::metrics::StageMetrics;
use super::priority::{Prioritized, PriorityGenerator};
use super::shared::{Callback, Core, Exit, Life, Link, PerInstance, Sink};
use super::strategy::Strategy;
use crate::error::BuildError;
use crate::executor::Executor;
use crate::job::RetryPolicy;
use crate::priority::{Capacity, Priority};
use crate::sync::{Condvar, Mutex};
use crate::util::{drop_quietly, panic_message};
use std::fmt;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

/// The most instances a stage has: each is a thread of the stage's own
/// executor.
pub const MAX_INSTANCES: usize = 1024;

/// A spawned stage: what its instances share, and its executor.
pub(crate) type Spawned<I> = (Arc<Core<I>>, Executor);

/// Settings of a stage, checked by [`spawn`](StageBuilder::spawn).
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, MailboxConfig, Outbox, Stage, Strategy};
/// use priority_executor::{Priority, RetryPolicy};
/// use std::time::Duration;
///
/// struct Index;
/// impl Actor for Index {
///     type In = String;
///     type Out = String;
///     fn perform(&mut self, s: String, out: &mut Outbox<'_, String>) -> Result<(), ActorError> {
///         let _ = out.send(s.replace("Download", "Index"));
///         Ok(())
///     }
/// }
///
/// let stage = Stage::builder("index", |_instance| Index)
///     .instances(2)                                         // Kabuki's tier of IndexActors
///     .mailbox(MailboxConfig::new().stop_priority(Priority::LOW))
///     .retry(RetryPolicy::new(2))                           // String: Clone
///     .strategy(Strategy::predicate(|s: &String| !s.is_empty(), 3))
///     .idle_after(Duration::from_secs(60))
///     .on_fault(|fault| eprintln!("{}: {}", fault.stage, fault.error))
///     .spawn()?;
/// stage.drain();
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
#[must_use = "a builder does nothing until .spawn() is called"]
pub struct StageBuilder<A: Actor> {
    name: String,
    factory: Box<dyn FnMut(usize) -> A>,
    instances: usize,
    mailbox: MailboxConfig,
    generator: PriorityGenerator<A::In>,
    retry: Retry<A::In>,
    strategy: Strategy<A::In>,
    idle_after: Option<Duration>,
    idle_clock: Clock,
    on_fault: Option<Callback<Fault<A::In>>>,
    on_dead_letter: Option<Callback<DeadLetter<A::In>>>,
    on_output: Option<OutputFn<A::Out>>,
}

impl<A: Actor> StageBuilder<A> {
    /// Instances sharing the mailbox (Kabuki's several processes on one
    /// inbox); default 1, at most [`MAX_INSTANCES`] (checked by
    /// [`spawn`](StageBuilder::spawn)).
    ///
    /// # Examples
    ///
    /// See [`StageBuilder`].
    pub fn instances(mut self, n: usize) -> Self {
        self.instances = n;
        self
    }

    /// The mailbox's lanes, picker and control priorities.
    ///
    /// # Examples
    ///
    /// See [`MailboxConfig`].
    pub fn mailbox(mut self, config: MailboxConfig) -> Self {
        self.mailbox = config;
        self
    }

    /// How a message's priority is found (default: none, so every message
    /// is at the mailbox's default priority).
    ///
    /// # Examples
    ///
    /// See [`PriorityGenerator`].
    pub fn generator(mut self, generator: PriorityGenerator<A::In>) -> Self {
        self.generator = generator;
        self
    }

    /// Messages give their own priority ([`Prioritized`]).
    ///
    /// # Examples
    ///
    /// See `examples/mailbox.rs`.
    pub fn prioritized(self) -> Self
    where
        A::In: Prioritized,
    {
        self.generator(PriorityGenerator::prioritized())
    }

    /// Retries a failed perform in place (the instance waits out the
    /// backoff; `retry_at` is not used), then reports it to the fault sink
    /// with a copy of the message. A `kill` ends the backoff and starts no
    /// further attempt (the letter becomes a dead letter, `Killed`); a
    /// `stop` or a drain ends it and runs the remaining attempts at once
    /// (rule 15 of `src/actor/README.md`).
    ///
    /// # Examples
    ///
    /// See [`StageBuilder`].
    pub fn retry(mut self, policy: RetryPolicy) -> Self
    where
        A::In: Clone,
    {
        self.retry = Some((policy, <A::In as Clone>::clone));
        self
    }

    /// A consumer strategy of seed 002.
    ///
    /// # Examples
    ///
    /// See [`Strategy`].
    pub fn strategy(mut self, strategy: Strategy<A::In>) -> Self {
        self.strategy = strategy;
        self
    }

    /// Ends the stage (`Reason::Idle`) after this long with nothing to do
    /// and no message arriving, counted from the last send accepted or
    /// the end of the last perform, whichever came later (with several
    /// instances too).
    ///
    /// # Examples
    ///
    /// See [`StageBuilder`].
    pub fn idle_after(mut self, quiet: Duration) -> Self {
        self.idle_after = Some(quiet);
        self
    }

    /// Receives every [`Fault`] (else they are kept for
    /// [`Stage::take_faults`]). Runs on the instance's thread; a panic in
    /// it is caught and ignored.
    ///
    /// # Examples
    ///
    /// See [`StageBuilder`].
    pub fn on_fault(mut self, sink: impl Fn(Fault<A::In>) + Send + Sync + 'static) -> Self {
        self.on_fault = Some(Arc::new(sink));
        self
    }

    /// Receives every [`DeadLetter`], in order (else they are kept for
    /// [`Stage::take_dead_letters`]).
    ///
    /// # Examples
    ///
    /// See `tests/actor/strict_order.rs`.
    pub fn on_dead_letter(
        mut self,
        sink: impl Fn(DeadLetter<A::In>) + Send + Sync + 'static,
    ) -> Self {
        self.on_dead_letter = Some(Arc::new(sink));
        self
    }

    /// Receives the stage's outputs with their priority (outside a
    /// pipeline; in one, the last stage's). Without it, outputs are dropped.
    ///
    /// # Examples
    ///
    /// See [`Actor`].
    pub fn on_output(mut self, sink: impl Fn(A::Out, Priority) + Send + Sync + 'static) -> Self {
        self.on_output = Some(Arc::new(sink));
        self
    }

    /// Checks the settings, starts the instances, and returns once every
    /// `init` has run.
    ///
    /// # Errors
    ///
    /// A [`SpawnError`] naming the first wrong setting, checked before
    /// anything is allocated: `instances` must be 1 to [`MAX_INSTANCES`],
    /// a bounded capacity 1 to [`MAX_CAPACITY`](super::MAX_CAPACITY).
    ///
    /// [`SpawnError::FactoryPanicked`] if the factory panics: the panic
    /// does not propagate. The instances it made before were started:
    /// each one's `init` runs, then its `destroy(Reason::FailedInit)`,
    /// and `spawn` returns once they are gone; none takes a letter.
    ///
    /// A failing `init` is not an error here: it goes to the fault sink
    /// (see `Reason::FailedInit`).
    ///
    /// # Examples
    ///
    /// See [`StageBuilder`].
    pub fn spawn(self) -> Result<Stage<A>, SpawnError> {
        let output = match self.on_output.clone() {
            Some(f) => Downstream::Output(f),
            None => Downstream::Discard,
        };
        let (core, exec) = self.spawn_into(output, None)?;
        Ok(Stage {
            core,
            exec: Some(exec),
            _actor: PhantomData,
        })
    }

    /// Spawns with outputs going to `down`; `next` gets the drain marker.
    pub(crate) fn spawn_into(
        mut self,
        down: Downstream<A::Out>,
        next: Option<Arc<dyn Link>>,
    ) -> Result<Spawned<A::In>, SpawnError> {
        // Every size is checked before anything is allocated for it.
        if self.instances == 0 {
            return Err(SpawnError::NoInstances);
        }
        if self.instances > MAX_INSTANCES {
            return Err(SpawnError::OutOfRange {
                setting: "instances".to_owned(),
                value: self.instances,
                min: 1,
                max: MAX_INSTANCES,
            });
        }
        self.mailbox.check()?;
        self.strategy.check()?;
        let n = self.instances;
        let exec = Executor::builder()
            .name(self.name.clone())
            .core_threads(n)
            .max_threads(n)
            .lane(Priority(1), Capacity::Unbounded)
            .build()
            .map_err(|e| match e {
                BuildError::InvalidName { name } => SpawnError::InvalidName { name },
                _ => SpawnError::NoInstances,
            })?;
        let mb = Arc::new(Mailbox::new(
            self.name,
            &self.mailbox,
            self.generator,
            self.idle_after.is_some(),
        ));
        let core = Arc::new(Core {
            mb,
            faults: Sink::new(self.on_fault),
            dead: Sink::new(self.on_dead_letter),
            instances: n,
            performed: PerInstance::new(n),
            life: Mutex::new(Life::new(n)),
            changed: Condvar::new(),
            next,
        });
        let settings = Arc::new(Settings {
            retry: self.retry,
            strategy: self.strategy,
            idle_after: self.idle_after,
            idle_clock: self.idle_clock,
            down,
        });
        for i in 0..n {
            let factory = &mut self.factory;
            let actor = match catch_unwind(AssertUnwindSafe(|| factory(i))) {
                Ok(actor) => actor,
                Err(payload) => {
                    let message = panic_message(payload.as_ref());
                    drop_quietly(payload);
                    // The instances already started see the spawn fail
                    // once their `init` is done, and are destroyed.
                    core.abort_spawn(i);
                    if i > 0 {
                        core.wait_done();
                    }
                    drop(exec);
                    return Err(SpawnError::FactoryPanicked {
                        instance: i,
                        message,
                    });
                }
            };
            let job_core = core.clone();
            let settings = settings.clone();
            let started = exec.enqueue(Priority(1), move || {
                instance::run(&job_core, &settings, actor, i);
            });
            if let Err(refused) = started {
                // Cannot happen on a fresh executor; if it did, the
                // instance counts as failed so nothing waits for it.
                drop(refused.into_inner());
                core.init_done(false);
                core.exited(Reason::FailedInit);
            }
        }
        core.wait_inits();
        Ok((core, exec))
    }
}

impl<A: Actor> fmt::Debug for StageBuilder<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StageBuilder")
            .field("name", &self.name)
            .field("instances", &self.instances)
            .field("mailbox", &self.mailbox)
            .field("strategy", &self.strategy)
            .field("retry", &self.retry.as_ref().map(|(p, _)| p))
            .field("idle_after", &self.idle_after)
            .finish_non_exhaustive()
    }
}

/// A running stage. Dropping it drains it (as [`drain`](Stage::drain));
/// dropped by one of its own instances, it begins the drain without
/// waiting (see its `Drop`).
///
/// # Examples
///
/// See [`Actor`] and [`StageBuilder`].
pub struct Stage<A: Actor> {
    core: Arc<Core<A::In>>,
    exec: Option<Executor>,
    _actor: PhantomData<fn() -> A>,
}

impl<A: Actor> Stage<A> {
    /// Starts configuring a stage; `factory(i)` makes instance `i` (Kabuki's
    /// `-a`), on the thread that calls `spawn`.
    ///
    /// # Examples
    ///
    /// See [`StageBuilder`].
    pub fn builder(
        name: impl Into<String>,
        factory: impl FnMut(usize) -> A + 'static,
    ) -> StageBuilder<A> {
        StageBuilder {
            name: name.into(),
            factory: Box::new(factory),
            instances: 1,
            mailbox: MailboxConfig::new(),
            generator: PriorityGenerator::none(),
            retry: None,
            strategy: Strategy::always(),
            idle_after: None,
            idle_clock: Clock::Real,
            on_fault: None,
            on_dead_letter: None,
            on_output: None,
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
impl<A: Actor> StageBuilder<A> {
    /// Measures the quiet period of [`idle_after`](Self::idle_after) by
    /// `clock`.
    pub(crate) fn idle_clock(mut self, clock: Clock) -> Self {
        self.idle_clock = clock;
        self
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
