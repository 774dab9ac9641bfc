//! The broker's handle: producers' address, consumers' registration,
//! cycles by hand, and its end.

use super::consumer::thread_for;
use super::ring::Shared;
use crate::actor::actor::Actor;
use crate::actor::addr::Addr;
use crate::actor::error::SpawnError;
use crate::actor::lane::PERMIT_NAP_MAX;
use crate::actor::letters::{DeadLetter, Fault};
use crate::actor::metrics::StageMetrics;
use crate::actor::reason::Reason;
use crate::actor::shared::Exit;
use crate::actor::strategy::Strategy;
use crate::priority::Priority;
use crate::sync::{deadline_after, lock, wait_until};
use std::fmt;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Seed 002's broker: one prioritized mailbox that producers send to,
/// and consumers that register and unregister while it runs. Every cycle
/// it hands out batches of up to its batch size, round robin over the
/// consumers registered, one consumer per letter; it ends after N cycles
/// in a row with nothing to do or with no consumer, with its reason. The
/// rules are 23-25 of `src/actor/README.md`.
///
/// Each consumer is an [`Actor`] on its own thread, with its own
/// [`Strategy`]: its `init` runs when it registers, its
/// [`perform_batch`](Actor::perform_batch) gets each batch, its `destroy`
/// runs after its last batch. The mailbox is a stage's: `send`,
/// `send_with`, `stop`, `kill`, lanes, dead letters and faults all work as
/// for a [`Stage`](crate::actor::Stage).
///
/// # Examples
///
/// ```
/// use priority_executor::{Priority, SendOptions};
/// use priority_executor::actor::{
///     Actor, ActorError, Batch, Broker, Outbox, Reason, Strategy,
/// };
///
/// /// Takes what it can and sends the rest back (seed 002's consumer).
/// struct Picky;
/// impl Actor for Picky {
///     type In = u32;
///     type Out = (usize, u32);
///     fn perform(&mut self, n: u32, out: &mut Outbox<'_, (usize, u32)>) -> Result<(), ActorError> {
///         let me = out.instance();
///         let _ = out.send((me, n));
///         Ok(())
///     }
///     fn perform_batch(&mut self, batch: &mut Batch<'_, u32, (usize, u32)>) -> Result<(), ActorError> {
///         while let Some(n) = batch.next_letter() {
///             if n == 7 && batch.outbox().letter().sent_back == 0 {
///                 batch.send_back(n).ok(); // once: another consumer may take it
///             } else {
///                 self.perform(n, batch.outbox())?;
///             }
///         }
///         Ok(())
///     }
/// }
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// let broker = Broker::builder("broker")
///     .manual_cycles() // cycles by tick(): exact and testable
///     .batch(2)
///     .end_after(3)
///     .on_output(move |done, _| tx.send(done).unwrap())
///     .spawn()?;
/// let a = broker.register(Picky, Strategy::always()).unwrap();
/// let b = broker.register(Picky, Strategy::always()).unwrap();
/// for n in 0..8 {
///     broker.addr().send_with(n, SendOptions::new().priority(Priority::MEDIUM)).unwrap();
/// }
/// // One cycle: a batch for each consumer, round robin.
/// assert_eq!(broker.tick(), Ok(vec![(a, 2), (b, 2)]));
/// // Waits for the consumers, ticking; three quiet cycles end it.
/// let exit = broker.join();
/// assert_eq!(exit.reason, Reason::Idle);
/// assert_eq!(exit.metrics.performed, 8);
/// assert_eq!(exit.metrics.sent_back, 1);
/// assert_eq!(rx.try_iter().count(), 8);
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
pub struct Broker<A: Actor> {
    shared: Arc<Shared<A>>,
    /// The cycle thread, unless cycles are manual.
    cycles: Option<JoinHandle<()>>,
    manual: bool,
    done: bool,
}

impl<A: Actor> Broker<A> {
    pub(super) fn start(
        shared: Arc<Shared<A>>,
        every: Option<Duration>,
    ) -> Result<Self, SpawnError> {
        let cycles = match every {
            None => None,
            Some(every) => {
                let s = shared.clone();
                let thread = thread_for::<A::In>(format!("{}-broker", shared.core.mb.name))
                    .spawn(move || run_cycles(&s, every))
                    .map_err(|_| SpawnError::InvalidName {
                        name: shared.core.mb.name.clone(),
                    })?;
                Some(thread)
            }
        };
        Ok(Broker {
            shared,
            cycles,
            manual: every.is_none(),
            done: false,
        })
    }

    /// The broker's address, for producers.
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn addr(&self) -> Addr<A::In> {
        Addr {
            mb: self.shared.core.mb.clone(),
        }
    }

    /// The broker's name.
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn name(&self) -> &str {
        &self.shared.core.mb.name
    }

    /// Registers a consumer with its strategy: its `init` runs on its own
    /// thread, then it joins the round robin in registration order, right
    /// after the consumer registered last (rule 23): in a round under way
    /// it gets its batch after the consumers still to get theirs and
    /// before those that had theirs ([`consumers`](Broker::consumers)
    /// shows the order). Returns its number (its
    /// `StageContext::instance` and `Outbox::instance`; numbers are never
    /// reused), or `None` if its `init` failed (the fault sink says why;
    /// its `destroy(Reason::FailedInit)` ran), if the broker has ended, or
    /// if `strategy` is one a stage's spawn refuses (a priority
    /// strategy's `step(0)`; its `init` does not run).
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn register(&self, consumer: A, strategy: Strategy<A::In>) -> Option<usize> {
        self.shared.register(consumer, strategy)
    }

    /// Unregisters consumer `id`: it gets no further batch, performs the
    /// batches it was handed, and is destroyed (`Reason::Unregistered`)
    /// before this returns; called by one of the consumers, it returns at
    /// once (a consumer never waits for another: two unregistering each
    /// other would wait for ever). `false` if no such consumer is
    /// registered.
    ///
    /// # Examples
    ///
    /// See `tests/actor/broker.rs`.
    pub fn unregister(&self, id: usize) -> bool {
        self.shared.unregister(id)
    }

    /// The consumers registered, in the order the next batches go to.
    ///
    /// # Examples
    ///
    /// See `tests/actor/broker.rs`.
    pub fn consumers(&self) -> Vec<usize> {
        self.shared.consumers()
    }

    /// Runs one cycle now (besides the cycle thread's, if any): returns
    /// the batches handed out, in order, as (consumer, letters).
    ///
    /// # Errors
    ///
    /// The reason the broker ended (in this cycle or before); its
    /// consumers have been destroyed by then, unless this is called by a
    /// sink that the end itself called, on the thread running it: then
    /// it returns at once, and the end goes on once the sink returns.
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn tick(&self) -> Result<Vec<(usize, usize)>, Reason> {
        self.shared.cycle()
    }

    /// Runs one cycle now, as [`tick`](Broker::tick), and says which
    /// letters went to whom: for each batch handed out, in order, the
    /// consumer and the priorities of its letters, in the order it takes
    /// them. `tick` and the cycle thread leave the priorities uncollected.
    ///
    /// # Errors
    ///
    /// As [`tick`](Broker::tick).
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Priority, SendOptions};
    /// use priority_executor::actor::{Actor, ActorError, Broker, Outbox, Strategy};
    ///
    /// struct Quiet;
    /// impl Actor for Quiet {
    ///     type In = &'static str;
    ///     type Out = ();
    ///     fn perform(&mut self, _: &'static str, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let broker = Broker::builder("report").manual_cycles().batch(2).spawn()?;
    /// let a = broker.register(Quiet, Strategy::always()).unwrap();
    /// let b = broker.register(Quiet, Strategy::always()).unwrap();
    /// let send = |msg, p| broker.addr().send_with(msg, SendOptions::new().priority(p)).unwrap();
    /// send("routine", Priority::LOW);
    /// send("alarm", Priority::HIGH);
    /// send("report", Priority::MEDIUM);
    /// let handed = broker.tick_report().unwrap();
    /// assert_eq!(
    ///     handed,
    ///     vec![(a, vec![Priority::HIGH, Priority::MEDIUM]), (b, vec![Priority::LOW])]
    /// );
    /// broker.drain();
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn tick_report(&self) -> Result<Vec<(usize, Vec<Priority>)>, Reason> {
        self.shared.cycle_report()
    }

    /// Waits until the broker is quiet: nothing queued, and nothing handed
    /// out that its consumer has not settled yet (performed, sent back,
    /// faulted or given back); or until the broker has ended. `false` if
    /// `timeout` passed first. For tests and shutdown scripts: it waits
    /// on a signal the consumers give as each batch settles, never by
    /// polling.
    ///
    /// Quiet is a moment, not a state: a producer may send right after.
    /// With manual cycles nobody hands letters out while this waits, so
    /// letters queued (or sent back by a batch) keep it waiting until
    /// someone calls [`tick`](Broker::tick). Called by a consumer while it
    /// holds a batch, it waits for that batch too, so for its `timeout`.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Broker, Outbox, Strategy};
    /// use std::time::Duration;
    ///
    /// struct Double;
    /// impl Actor for Double {
    ///     type In = u64;
    ///     type Out = u64;
    ///     fn perform(&mut self, n: u64, out: &mut Outbox<'_, u64>) -> Result<(), ActorError> {
    ///         out.send(2 * n).ok();
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let broker = Broker::builder("quiet")
    ///     .cycle(Duration::from_millis(1))
    ///     .on_output(move |n, _| tx.send(n).unwrap())
    ///     .spawn()?;
    /// broker.register(Double, Strategy::always()).unwrap();
    /// broker.register(Double, Strategy::always()).unwrap();
    /// for n in 1..=100 {
    ///     broker.addr().send(n).unwrap();
    /// }
    /// assert!(broker.wait_quiet(Duration::from_secs(60)));
    /// // Every letter was performed before the wait returned.
    /// assert_eq!(rx.try_iter().sum::<u64>(), 2 * 5050);
    /// assert_eq!(broker.metrics().performed, 100);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn wait_quiet(&self, timeout: Duration) -> bool {
        let shared = &self.shared;
        shared
            .settle
            .wait(deadline_after(timeout), || shared.is_quiet())
    }

    /// A snapshot of the counters (`instances`: consumers registered).
    ///
    /// # Examples
    ///
    /// See [`StageMetrics`].
    pub fn metrics(&self) -> StageMetrics {
        self.shared.metrics()
    }

    /// The dead letters kept so far (none if `on_dead_letter` is set).
    ///
    /// # Examples
    ///
    /// See `tests/actor/broker.rs`.
    pub fn take_dead_letters(&self) -> Vec<DeadLetter<A::In>> {
        self.shared.core.dead.take()
    }

    /// The faults kept so far (none if `on_fault` is set).
    ///
    /// # Examples
    ///
    /// See `tests/actor/broker.rs`.
    pub fn take_faults(&self) -> Vec<Fault<A::In>> {
        self.shared.core.faults.take()
    }

    /// Has the broker ended (every consumer destroyed), and why?
    ///
    /// # Examples
    ///
    /// See `tests/actor/broker.rs`.
    pub fn finished(&self) -> Option<Reason> {
        self.shared.finished()
    }

    /// Drains the broker: it accepts nothing more, hands out and waits
    /// for every letter it accepted, destroys its consumers and returns
    /// (`Reason::Drained`; `Reason::NoConsumers` if none is registered:
    /// its letters are then dead letters).
    ///
    /// # Panics
    ///
    /// Called by one of the broker's consumers, or by a sink on its cycle
    /// thread: it would wait for itself. The broker is then dropped,
    /// which begins the drain, as its `Drop` says.
    ///
    /// # Examples
    ///
    /// See `examples/priority_messages.rs`.
    pub fn drain(mut self) -> Exit {
        self.finish(true)
    }

    /// Waits until the broker ends by itself (its quiet or lonely cycles,
    /// `stop`, `kill`, or a consumer's `drain_pipeline`). With manual
    /// cycles it runs them itself, waiting between cycles for a change
    /// while letters are being performed.
    ///
    /// # Panics
    ///
    /// As [`drain`](Broker::drain).
    ///
    /// # Examples
    ///
    /// See [`Broker`].
    pub fn join(mut self) -> Exit {
        self.finish(false)
    }

    fn finish(&mut self, drain: bool) -> Exit {
        self.check_not_own();
        let mb = &self.shared.core.mb;
        self.done = true;
        if drain {
            mb.begin_drain();
        }
        let reason = if self.manual {
            drive(&self.shared)
        } else {
            let mut end = lock(&self.shared.end);
            loop {
                if let Some(reason) = *end {
                    break reason;
                }
                end = match self.shared.ended.wait(end) {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
            }
        };
        if let Some(thread) = self.cycles.take() {
            let _ = thread.join();
        }
        self.shared.join_rest();
        Exit {
            reason,
            metrics: self.shared.metrics(),
        }
    }

    /// Panics on one of the broker's consumers or on its cycle thread:
    /// checked before the broker counts as done, so the panic drops it,
    /// and that drop begins the drain.
    pub(super) fn check_not_own(&self) {
        let mb = &self.shared.core.mb;
        assert!(
            !mb.is_own_thread(),
            "Broker::drain or Broker::join called by one of broker {:?}'s consumers: \
             it would wait for itself; drop the broker instead",
            mb.name
        );
        assert!(
            !self.on_cycle_thread(),
            "Broker::drain or Broker::join called on broker {:?}'s cycle thread: \
             it would wait for itself; drop the broker instead",
            mb.name
        );
    }

    /// Is the calling thread the broker's cycle thread (a sink one of its
    /// cycles called)?
    fn on_cycle_thread(&self) -> bool {
        let me = thread::current().id();
        self.cycles.as_ref().is_some_and(|t| t.thread().id() == me)
    }
}

/// Manual cycles, until the end: back to back while they count quiet or
/// lonely cycles towards it, else waiting for a send, a send-back or the
/// end of the last letter being performed.
fn drive<A: Actor>(shared: &Shared<A>) -> Reason {
    let mb = &shared.core.mb;
    loop {
        let seen = mb.generation();
        let fills = mb.holds_permits().then(|| mb.permit_fills());
        match shared.cycle_with(&mut |_, _| {}) {
            Err(reason) => return reason,
            Ok(cycled) if cycled.blocked && cycled.handed == 0 => {
                // Letters wait for a consumer to be free (`skip_busy`):
                // the end of a batch is the change to wait for.
                shared.settle.wait(None, || shared.any_free());
            }
            Ok(cycled) if cycled.handed == 0 => {
                let quiet = mb.in_flight() == 0 && !mb.has_mail();
                let lonely = shared.consumers().is_empty();
                let counting = shared.end_after.is_some() && (quiet || lonely);
                if !counting {
                    // While a permit is held, the wait ends at a nap's
                    // end too (lane rule 13).
                    let nap = fills.and_then(|_| Instant::now().checked_add(PERMIT_NAP_MAX));
                    // With no consumer (none can register while the
                    // driver runs `join`, nor once a consumer dropped
                    // the broker), letters are no reason to
                    // cycle; a stop, kill or drain is (`interrupt`
                    // raises its flag, SeqCst, then notifies).
                    mb.ready.wait(nap, || {
                        let news = if lonely {
                            mb.interrupts() != 0
                        } else {
                            mb.mail_since(fills)
                        };
                        news || mb.generation() != seen
                    });
                }
            }
            Ok(_) => {}
        }
    }
}

/// The cycle thread: a cycle every `every` until the broker ends.
fn run_cycles<A: Actor>(shared: &Shared<A>, every: Duration) {
    loop {
        let deadline = Instant::now().checked_add(every);
        let mut end = lock(&shared.end);
        loop {
            if end.is_some() {
                return;
            }
            end = match wait_until(&shared.ended, end, deadline) {
                Ok(g) => g,
                Err(g) => break drop(g),
            };
        }
        if shared.cycle().is_err() {
            return;
        }
    }
}

/// Dropping a broker drains it, as [`drain`](Broker::drain). Dropped by
/// one of its consumers, it begins the drain and returns at once; with
/// manual cycles, which nobody can tick once it is dropped, a thread of
/// its own then runs them to the end (if the system refuses that thread,
/// the consumers and the letters queued stay where they are, for ever).
/// Dropped by a sink on the cycle thread, it begins the drain and returns
/// at once too: once the sink returns, that thread goes on with the
/// cycle it was running (maybe the broker's end), then the next ones.
impl<A: Actor> Drop for Broker<A> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if self.on_cycle_thread() {
            self.shared.core.mb.begin_drain();
            // The thread cannot join itself; it ends by itself.
            drop(self.cycles.take());
            return;
        }
        if self.shared.core.mb.is_own_thread() {
            self.shared.core.mb.begin_drain();
            if self.manual && self.shared.finished().is_none() {
                let shared = self.shared.clone();
                // If the system refuses the thread, nobody runs the drain's
                // cycles: the consumers and the letters queued stay where
                // they are (the `Drop` docs say so).
                let name = format!("{}-drain", shared.core.mb.name);
                let _ = thread_for::<A::In>(name).spawn(move || {
                    drive(&shared);
                });
            }
            return;
        }
        self.finish(true);
    }
}

impl<A: Actor> fmt::Debug for Broker<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Broker")
            .field("name", &self.shared.core.mb.name)
            .field("consumers", &self.shared.consumers())
            .field("finished", &self.shared.finished())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
impl<A: Actor> Broker<A> {
    /// Threads waiting on the broker's mailbox (its driver, in `join`).
    pub(crate) fn waiting(&self) -> usize {
        self.shared.core.mb.ready.waiting()
    }

    /// A view of that count that outlives the broker, for a test that
    /// hands the broker to `join` on another thread.
    pub(crate) fn waiting_probe(&self) -> impl Fn() -> usize + Send + 'static {
        let shared = Arc::clone(&self.shared);
        move || shared.core.mb.ready.waiting()
    }
}
