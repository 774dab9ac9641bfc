//! A stage's settings and its spawn: checks every setting, then starts
//! the instances, one long job each of the stage's own executor. The
//! handle is in `stage.rs`; what it shares with the instances is in
//! `shared.rs`.

use super::actor::Actor;
use super::addr::{Downstream, OutputFn};
use super::config::MailboxConfig;
use super::error::SpawnError;
use super::head::Head;
use super::idle::Clock;
use super::instance::{self, Retry, Settings};
use super::letters::{DeadLetter, Fault};
use super::mailbox::Mailbox;
use super::priority::PriorityGenerator;
use super::resize::{Factory, Grow, MAX_INSTANCES, Spawned};
use super::resizer::Resizer;
use super::shared::{Callback, Core, Link};
use super::stage::Stage;
use super::strategy::Strategy;
use crate::error::BuildError;
use crate::error::InvalidSetting;
use crate::executor::Executor;
use crate::job::RetryPolicy;
use crate::priority::{Capacity, Priority};
use crate::util::{drop_quietly, panic_message};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

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
    factory: Factory<A>,
    instances: usize,
    mailbox: MailboxConfig,
    generator: PriorityGenerator<A::In>,
    retry: Retry<A::In>,
    strategy: Strategy<A::In>,
    idle_after: Option<Duration>,
    idle_clock: Clock,
    resizer: Option<Resizer>,
    on_fault: Option<Callback<Fault<A::In>>>,
    on_dead_letter: Option<Callback<DeadLetter<A::In>>>,
    on_output: Option<OutputFn<A::Out>>,
}

impl<A: Actor> Stage<A> {
    /// Starts configuring a stage; `factory(i)` makes instance `i` (Kabuki's
    /// `-a`), on the thread that calls `spawn`. The stage keeps it to make
    /// the instances [`resize`](Stage::resize) adds, on the thread calling
    /// that.
    ///
    /// # Examples
    ///
    /// See [`StageBuilder`].
    pub fn builder(
        name: impl Into<String>,
        factory: impl FnMut(usize) -> A + Send + 'static,
    ) -> StageBuilder<A> {
        StageBuilder::new(name.into(), Box::new(factory))
    }
}

impl<A: Actor> StageBuilder<A> {
    /// The default settings ([`Stage::builder`]).
    pub(super) fn new(name: String, factory: Factory<A>) -> Self {
        StageBuilder {
            name,
            factory,
            instances: 1,
            mailbox: MailboxConfig::new(),
            generator: PriorityGenerator::none(),
            retry: None,
            strategy: Strategy::always(),
            idle_after: None,
            idle_clock: Clock::Real,
            resizer: None,
            on_fault: None,
            on_dead_letter: None,
            on_output: None,
        }
    }

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
    /// is at the mailbox's default priority). Messages that give their own
    /// priority ([`Prioritized`](super::Prioritized)) take
    /// [`PriorityGenerator::prioritized()`].
    ///
    /// # Examples
    ///
    /// See [`PriorityGenerator`].
    pub fn generator(mut self, generator: PriorityGenerator<A::In>) -> Self {
        self.generator = generator;
        self
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

    /// Sizes the stage by its mailbox's depth while it runs, between the
    /// resizer's minimum and maximum (rule 27 of `src/actor/README.md`);
    /// the stage starts with [`instances`](StageBuilder::instances)
    /// brought into that range.
    ///
    /// # Examples
    ///
    /// See [`Resizer`].
    pub fn resizer(mut self, resizer: Resizer) -> Self {
        self.resizer = Some(resizer);
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
        let spawned = self.spawn_into(output, None, Arc::default(), true)?;
        Ok(Stage::spawned(spawned))
    }

    /// Spawns with outputs going to `down`; `next` gets the drain marker;
    /// `head` is where a drain its instances ask for begins, which is this
    /// stage if it is `first` (of its pipeline, or on its own).
    pub(crate) fn spawn_into(
        mut self,
        down: Downstream<A::Out>,
        next: Option<Arc<dyn Link>>,
        head: Arc<Head>,
        first: bool,
    ) -> Result<Spawned<A>, SpawnError> {
        // Every size is checked before anything is allocated for it.
        if let Some(resizer) = &self.resizer {
            resizer.check()?;
            self.instances = resizer.start(self.instances);
        }
        if !(1..=MAX_INSTANCES).contains(&self.instances) {
            let instances = InvalidSetting::range("instances", self.instances, 1, MAX_INSTANCES);
            return Err(instances.into());
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
                // The settings were checked above: what is left is the
                // system refusing a thread, returned, never a panic.
                other => SpawnError::Threads(other),
            })?;
        let mb = Arc::new(Mailbox::new(
            self.name,
            &self.mailbox,
            self.generator,
            self.idle_after.is_some(),
            self.strategy.hops(),
        ));
        let core = Arc::new(Core::new(
            mb,
            n,
            self.on_fault,
            self.on_dead_letter,
            next,
            head,
        ));
        if first {
            // Before any instance starts: its `init` may ask for the drain.
            core.head.set(&core.mb);
        }
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
            instance::start(&core, &settings, &exec, actor, i);
        }
        core.wait_inits();
        let grow = Arc::new(Grow::new(self.factory, settings));
        let resizer = self
            .resizer
            .and_then(|r| r.watch(core.clone(), grow.clone(), exec.clone()));
        Ok(Spawned {
            core,
            exec,
            grow,
            resizer,
        })
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
            .field("resizer", &self.resizer)
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
