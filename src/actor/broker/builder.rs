//! A broker's settings and its spawn.

use super::handle::Broker;
use super::ring::{Settle, Shared};
use crate::actor::actor::Actor;
use crate::actor::addr::{Downstream, OutputFn};
use crate::actor::config::MailboxConfig;
use crate::actor::error::SpawnError;
use crate::actor::letters::{DeadLetter, Fault};
use crate::actor::mailbox::Mailbox;
use crate::actor::priority::PriorityGenerator;
use crate::actor::shared::{Callback, Core};
use crate::actor::strategy::Strategy;
use crate::error::InvalidSetting;
use crate::priority::Priority;
use crate::sync::{Condvar, Mutex};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

/// The largest batch a broker hands out.
const MAX_BATCH: usize = 65_536;

/// Settings of a [`Broker`], checked by [`spawn`](BrokerBuilder::spawn).
///
/// # Examples
///
/// See [`Broker`].
#[must_use = "a builder does nothing until .spawn() is called"]
pub struct BrokerBuilder<A: Actor> {
    name: String,
    cycle: Option<Duration>,
    batch: usize,
    end_after: Option<u32>,
    skip_busy: bool,
    mailbox: MailboxConfig,
    generator: PriorityGenerator<A::In>,
    on_fault: Option<Callback<Fault<A::In>>>,
    on_dead_letter: Option<Callback<DeadLetter<A::In>>>,
    on_output: Option<OutputFn<A::Out>>,
    _actor: PhantomData<fn() -> A>,
}

impl<A: Actor> Broker<A> {
    /// Starts configuring a broker: a cycle of 10 ms, batches of 10, no
    /// end by itself.
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn builder(name: impl Into<String>) -> BrokerBuilder<A> {
        BrokerBuilder {
            name: name.into(),
            cycle: Some(Duration::from_millis(10)),
            batch: 10,
            end_after: None,
            skip_busy: false,
            mailbox: MailboxConfig::new(),
            generator: PriorityGenerator::none(),
            on_fault: None,
            on_dead_letter: None,
            on_output: None,
            _actor: PhantomData,
        }
    }
}

impl<A: Actor> BrokerBuilder<A> {
    /// The cycle's interval (at least 1 µs): a thread of the broker runs a
    /// cycle this often.
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn cycle(mut self, every: Duration) -> Self {
        self.cycle = Some(every);
        self
    }

    /// No cycle thread: cycles run only when [`Broker::tick`] is called
    /// (and while [`Broker::drain`] or [`Broker::join`] waits), so a test
    /// or a caller with its own clock drives them.
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn manual_cycles(mut self) -> Self {
        self.cycle = None;
        self
    }

    /// The most letters in one batch (default 10, 1 to 65 536).
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn batch(mut self, size: usize) -> Self {
        self.batch = size;
        self
    }

    /// Ends the broker after `cycles` cycles in a row that found nothing
    /// to do (nothing queued, nothing being performed:
    /// [`Reason::Idle`](crate::actor::Reason::Idle)), or `cycles` in a
    /// row with no consumer registered
    /// ([`Reason::NoConsumers`](crate::actor::Reason::NoConsumers)). At
    /// least 1.
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn end_after(mut self, cycles: u32) -> Self {
        self.end_after = Some(cycles);
        self
    }

    /// With `true`, the round robin passes over a consumer still busy
    /// with a batch (handed and not yet settled): a slow consumer does not
    /// collect batches while others idle. A consumer passed over keeps its
    /// place: the next cycle comes to it first. A cycle still comes to
    /// each consumer at most once, and one that finds every consumer busy
    /// leaves the letters queued; [`Broker::join`] with manual cycles then
    /// waits for a batch to end. A stop or kill queued meanwhile is taken
    /// once a consumer is free.
    ///
    /// The default, `false`, is seed 002's strict rotation (rule 23):
    /// every batch goes to the next consumer in turn, busy or not, and
    /// waits in its queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Broker, Outbox, Strategy};
    /// use std::sync::mpsc;
    ///
    /// /// Holds its first letter until the test lets it go.
    /// struct Slow(Option<mpsc::Receiver<()>>);
    /// impl Actor for Slow {
    ///     type In = u32;
    ///     type Out = ();
    ///     fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
    ///         if let Some(gate) = self.0.take() {
    ///             gate.recv().ok();
    ///         }
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let broker = Broker::builder("pool").manual_cycles().batch(1).skip_busy(true).spawn()?;
    /// let (open, gate) = mpsc::channel();
    /// let slow = broker.register(Slow(Some(gate)), Strategy::always()).unwrap();
    /// let fast = broker.register(Slow(None), Strategy::always()).unwrap();
    /// broker.addr().send(1).unwrap();
    /// assert_eq!(broker.tick(), Ok(vec![(slow, 1)])); // slow holds letter 1
    /// broker.addr().send(2).unwrap();
    /// broker.addr().send(3).unwrap();
    /// // Strict rotation: [(fast, 1), (slow, 1)], letter 3 queued behind 1.
    /// assert_eq!(broker.tick(), Ok(vec![(fast, 1)]));
    /// open.send(()).unwrap();
    /// assert_eq!(broker.drain().metrics.performed, 3);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn skip_busy(mut self, skip: bool) -> Self {
        self.skip_busy = skip;
        self
    }

    /// The mailbox's lanes and control priorities, as a stage's.
    ///
    /// # Examples
    ///
    /// See [`MailboxConfig`].
    pub fn mailbox(mut self, config: MailboxConfig) -> Self {
        self.mailbox = config;
        self
    }

    /// How a message's priority is found, as a stage's.
    ///
    /// # Examples
    ///
    /// See [`PriorityGenerator`].
    pub fn generator(mut self, generator: PriorityGenerator<A::In>) -> Self {
        self.generator = generator;
        self
    }

    /// Receives every [`Fault`] (else kept for [`Broker::take_faults`]).
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn on_fault(mut self, sink: impl Fn(Fault<A::In>) + Send + Sync + 'static) -> Self {
        self.on_fault = Some(Arc::new(sink));
        self
    }

    /// Receives every [`DeadLetter`] (else kept for
    /// [`Broker::take_dead_letters`]).
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn on_dead_letter(
        mut self,
        sink: impl Fn(DeadLetter<A::In>) + Send + Sync + 'static,
    ) -> Self {
        self.on_dead_letter = Some(Arc::new(sink));
        self
    }

    /// Receives the consumers' outputs with their priority (else dropped).
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn on_output(mut self, sink: impl Fn(A::Out, Priority) + Send + Sync + 'static) -> Self {
        self.on_output = Some(Arc::new(sink));
        self
    }

    /// Checks the settings and starts the broker (and its cycle thread,
    /// unless [`manual_cycles`](BrokerBuilder::manual_cycles)), with no
    /// consumer yet.
    ///
    /// # Errors
    ///
    /// A [`SpawnError`] naming the first wrong setting: the mailbox's, a
    /// batch size out of 1 to 65 536, a cycle under 1 µs, `end_after(0)`,
    /// a name with a NUL byte.
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn spawn(self) -> Result<Broker<A>, SpawnError> {
        if !(1..=MAX_BATCH).contains(&self.batch) {
            return Err(InvalidSetting::range("batch", self.batch, 1, MAX_BATCH).into());
        }
        if self.end_after == Some(0) {
            return Err(InvalidSetting::range("end_after", 0, 1, u32::MAX).into());
        }
        if let Some(cycle) = self.cycle.filter(|d| d.as_micros() == 0) {
            // Cycles back to back would keep a core busy for nothing.
            let value = format!("{cycle:?}");
            return Err(InvalidSetting::new("cycle", value, "at least 1µs").into());
        }
        if self.name.contains('\0') {
            return Err(SpawnError::InvalidName { name: self.name });
        }
        self.mailbox.check()?;
        let mb = Arc::new(Mailbox::new(
            self.name,
            &self.mailbox,
            self.generator,
            // The end of the last letter in flight is a change a caller
            // driving the cycles looks at, when quiet cycles end it.
            self.end_after.is_some(),
            Strategy::<A::In>::DEFAULT_HOP_LIMIT,
        ));
        let core = Core::new(
            mb,
            0,
            self.on_fault,
            self.on_dead_letter,
            None,
            Arc::default(),
        );
        core.head.set(&core.mb);
        let down = match self.on_output {
            Some(f) => Downstream::Output(f),
            None => Downstream::Discard,
        };
        let shared = Arc::new(Shared {
            core,
            performed: Default::default(),
            down,
            batch: self.batch,
            end_after: self.end_after,
            skip_busy: self.skip_busy,
            ring: Mutex::default(),
            end: Mutex::new(None),
            ended: Condvar::new(),
            settle: Settle::default(),
        });
        Broker::start(shared, self.cycle)
    }
}

impl<A: Actor> fmt::Debug for BrokerBuilder<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BrokerBuilder")
            .field("name", &self.name)
            .field("cycle", &self.cycle)
            .field("batch", &self.batch)
            .field("end_after", &self.end_after)
            .field("skip_busy", &self.skip_busy)
            .field("mailbox", &self.mailbox)
            .finish_non_exhaustive()
    }
}
