//! Sending to a stage: [`Addr`] from outside, [`Outbox`] from inside a
//! `perform` to the next stage.

use super::error::{SendError, StageShutDown};
use super::head::Head;
use super::info::LetterInfo;
use super::mailbox::Mailbox;
use crate::SendOptions;
use crate::priority::Priority;
use crate::sync::Wait;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The address of a stage: cheap to clone, `Send` and `Sync`. Sending
/// never drops a message: a refused one comes back in the [`SendError`].
///
/// The message's priority comes from the stage's generator, or the
/// mailbox's default priority; [`send_with`](Addr::send_with) and
/// [`SendOptions::priority`] set it. [`send`](Addr::send) waits for room
/// in a full lane as long as it takes; [`SendOptions::wait_at_most`] bounds
/// the wait (`Duration::ZERO`: never blocks, as [`try_send`](Addr::try_send)).
///
/// # Examples
///
/// ```
/// use priority_executor::SendOptions;
/// use priority_executor::actor::{Actor, ActorError, Outbox, Stage};
/// use std::time::Duration;
///
/// struct Count(u64);
/// impl Actor for Count {
///     type In = u64;
///     type Out = ();
///     fn perform(&mut self, n: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
///         self.0 += n;
///         Ok(())
///     }
/// }
///
/// let stage = Stage::builder("count", |_| Count(0)).spawn()?;
/// let addr = stage.addr();
/// addr.send(1).unwrap(); // blocks while the lane is full
/// let no_wait = SendOptions::new().wait_at_most(Duration::ZERO);
/// addr.send_with(2, no_wait).unwrap(); // never blocks
/// let a_second = SendOptions::new().wait_at_most(Duration::from_secs(1));
/// addr.send_with(3, a_second).unwrap(); // waits at most 1 s
/// let exit = stage.drain();
/// assert_eq!(exit.metrics.performed, 3);
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
pub struct Addr<M> {
    pub(crate) mb: Arc<Mailbox<M>>,
}

impl<M> Addr<M> {
    /// Sends `msg`; blocks while its lane is full (backpressure), except
    /// when called by one of the stage's own instances (a `perform`
    /// sending to its own stage): the slot it would wait for is freed only
    /// by the instances, so it is refused at once instead (rule 16 of
    /// `src/actor/README.md`).
    ///
    /// # Errors
    ///
    /// [`SendError::ShutDown`] once the stage accepts nothing (also when
    /// that happens while this call waits), [`SendError::UnknownPriority`]
    /// under [`Unlisted::Refuse`](super::Unlisted::Refuse),
    /// [`SendError::Full`] from one of the stage's own instances when the
    /// lane is full. The message is in the error.
    ///
    /// # Examples
    ///
    /// See [`Addr`].
    #[inline]
    pub fn send(&self, msg: M) -> Result<(), SendError<M>> {
        self.mb.send(msg, None, Wait::Forever)
    }

    /// Sends `msg` with `options`: at [`SendOptions::priority`] if set,
    /// whatever the generator says, and waiting for room in a full lane at
    /// most [`SendOptions::wait_at_most`] if set (`Duration::ZERO`: not at
    /// all), else as long as it takes. From one of the stage's own
    /// instances it never waits, as [`send`](Addr::send).
    /// `send_with(msg, SendOptions::new())` is `send(msg)`.
    ///
    /// # Errors
    ///
    /// As [`send`](Addr::send), and [`SendError::Full`] if the lane is
    /// still full once the wait allowed ran out.
    ///
    /// # Examples
    ///
    /// See [`Addr`], and [`SendError::UnknownPriority`] for a priority.
    #[inline]
    pub fn send_with(&self, msg: M, options: SendOptions) -> Result<(), SendError<M>> {
        self.mb.send(msg, options.priority, options.wait_mode())
    }

    /// Sends `msg` if its lane has room now, else hands it back at once
    /// (crossbeam-channel's, flume's and tokio's `try_send`):
    /// `send_with(msg, SendOptions::new().wait_at_most(Duration::ZERO))`,
    /// at the priority [`send`](Addr::send) gives it. Never waits.
    ///
    /// # Errors
    ///
    /// As [`send_with`](Addr::send_with): [`SendError::Full`]
    /// ([`is_full`](SendError::is_full)) at once when the lane is full,
    /// [`SendError::ShutDown`] ([`is_shut_down`](SendError::is_shut_down))
    /// once the stage accepts nothing. The message is in the error.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, MailboxConfig, Outbox, Stage};
    /// use priority_executor::{Capacity, Priority};
    /// use std::sync::mpsc;
    ///
    /// /// Says it started each message, then waits for a go-ahead.
    /// struct Gated(mpsc::Sender<u32>, mpsc::Receiver<()>);
    /// impl Actor for Gated {
    ///     type In = u32;
    ///     type Out = ();
    ///     fn perform(&mut self, n: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
    ///         let _ = self.0.send(n);
    ///         let _ = self.1.recv();
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let (started_tx, started) = mpsc::channel();
    /// let (go, gate) = mpsc::channel();
    /// let mut ends = Some((started_tx, gate));
    /// let stage = Stage::builder("gated", move |_| {
    ///     let (started_tx, gate) = ends.take().unwrap();
    ///     Gated(started_tx, gate)
    /// })
    /// .mailbox(MailboxConfig::new().lane(Priority::MEDIUM, Capacity::Bounded(1)))
    /// .spawn()?;
    /// let addr = stage.addr();
    /// addr.try_send(1).unwrap();
    /// assert_eq!(started.recv(), Ok(1)); // the instance holds it, the lane is empty
    /// addr.try_send(2).unwrap(); // fills the lane
    /// let err = addr.try_send(3).unwrap_err(); // at once, never waiting
    /// assert!(err.is_full() && !err.is_shut_down());
    /// assert_eq!(err.into_inner(), 3);
    /// drop(go); // no more waiting in `perform`
    /// assert_eq!(stage.drain().metrics.performed, 2);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    #[inline]
    pub fn try_send(&self, msg: M) -> Result<(), SendError<M>> {
        self.send_with(msg, SendOptions::new().wait_at_most(Duration::ZERO))
    }

    /// Queues a graceful stop (Akka's `PoisonPill`) at the mailbox's stop
    /// priority. When dispatched, the stage stops accepting, letters at or
    /// below that priority become dead letters, those above still run,
    /// then the instances are destroyed with `Reason::Stopped`.
    ///
    /// # Errors
    ///
    /// [`StageShutDown`] if the stage no longer accepts messages.
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
    /// assert_eq!(stage.join().reason, Reason::Stopped);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn stop(&self) -> Result<(), StageShutDown> {
        self.control(false, self.mb.stop_priority)
    }

    /// Queues a kill (Akka's `Kill`) at the mailbox's kill priority. When
    /// dispatched, every letter still queued becomes a dead letter, and
    /// once the performs already running finish, the instances are
    /// destroyed with `Reason::Killed`.
    ///
    /// # Errors
    ///
    /// [`StageShutDown`] if the stage no longer accepts messages.
    ///
    /// # Examples
    ///
    /// See `tests/actor/kill_overtakes_stop.rs`.
    pub fn kill(&self) -> Result<(), StageShutDown> {
        self.control(true, self.mb.kill_priority)
    }

    fn control(&self, kill: bool, priority: Priority) -> Result<(), StageShutDown> {
        if self.mb.control(kill, priority) {
            Ok(())
        } else {
            Err(StageShutDown {
                stage: self.mb.name.clone(),
            })
        }
    }

    /// Has the stage shut down: does it refuse messages now (after a
    /// stop, a kill, a drain, idleness, or when no instance survived
    /// `init`)?
    ///
    /// # Examples
    ///
    /// See [`Addr::stop`].
    pub fn is_shut_down(&self) -> bool {
        self.mb.is_closed()
    }

    /// The stage's name.
    ///
    /// # Examples
    ///
    /// See [`Addr`].
    pub fn name(&self) -> &str {
        &self.mb.name
    }
}

impl<M> Clone for Addr<M> {
    fn clone(&self) -> Self {
        Addr {
            mb: self.mb.clone(),
        }
    }
}

impl<M> fmt::Debug for Addr<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Addr")
            .field("stage", &self.mb.name)
            .field("closed", &self.mb.is_closed())
            .finish()
    }
}

/// A callback receiving outputs with their priority.
pub(crate) type OutputFn<O> = Arc<dyn Fn(O, Priority) + Send + Sync>;

/// Where a stage's outputs go.
pub(crate) enum Downstream<O> {
    /// The next stage of a pipeline.
    Stage(Addr<O>),
    /// A callback (a stage's or pipeline's `on_output`).
    Output(OutputFn<O>),
    /// Nowhere: outputs are dropped.
    Discard,
}

/// What a `perform` sends its outputs through (Kabuki's outbox, `-o`),
/// and reads the letter it performs from; `init` gets one from its
/// [`StageContext`](super::StageContext).
///
/// Outputs keep the priority of the message being performed unless sent
/// with [`send_with`](Outbox::send_with) and a
/// [`SendOptions::priority`]. In a pipeline `send` blocks while the next
/// stage's lane is full: that is how backpressure travels upstream.
///
/// # Examples
///
/// See [`Actor`](super::Actor).
pub struct Outbox<'a, O> {
    pub(crate) down: &'a Downstream<O>,
    /// The letter performed; in `init`, a fresh letter's.
    pub(crate) letter: LetterInfo,
    /// `false` in `init`: there is no input whose priority outputs keep.
    pub(crate) performing: bool,
    pub(crate) stage: &'a str,
    pub(crate) instance: usize,
    pub(crate) head: &'a Head,
}

impl<O> Outbox<'_, O> {
    /// Sends an output at the input's priority. From `init`, where there
    /// is no input, at the priority the next stage gives it (its
    /// generator, else its mailbox's default); to an `on_output` sink, at
    /// this stage's default priority.
    ///
    /// # Errors
    ///
    /// The next stage refused it (it was killed or stopped); the output
    /// is in the error.
    ///
    /// # Examples
    ///
    /// See [`Actor`](super::Actor).
    #[inline]
    pub fn send(&mut self, out: O) -> Result<(), SendError<O>> {
        self.send_with(out, SendOptions::new())
    }

    /// Sends an output with `options`: at [`SendOptions::priority`] if
    /// set, else at the priority [`send`](Outbox::send) gives it.
    ///
    /// To the next stage of a pipeline, a full lane is waited on for at
    /// most [`SendOptions::wait_at_most`] if set (`Duration::ZERO`: not at
    /// all), else as long as it takes. An `on_output` sink never waits: it
    /// is called at once, with the output and its priority, whatever the
    /// wait allowed; with no downstream the output is dropped at once.
    ///
    /// # Errors
    ///
    /// As [`send`](Outbox::send), and [`SendError::Full`] if the next
    /// stage's lane is still full once the wait allowed ran out.
    ///
    /// # Examples
    ///
    /// ```
    /// use priority_executor::{Priority, SendOptions};
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Stage};
    ///
    /// /// Passes even numbers on at their own priority, odd ones raised.
    /// struct Raise;
    /// impl Actor for Raise {
    ///     type In = u32;
    ///     type Out = u32;
    ///     fn perform(&mut self, n: u32, out: &mut Outbox<'_, u32>) -> Result<(), ActorError> {
    ///         let _ = if n % 2 == 0 {
    ///             out.send(n)
    ///         } else {
    ///             let raised = Priority(out.letter().priority.0 + 1);
    ///             out.send_with(n, SendOptions::new().priority(raised))
    ///         };
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let stage = Stage::builder("raise", |_| Raise)
    ///     .on_output(move |n, priority| tx.send((n, priority)).unwrap())
    ///     .spawn()?;
    /// let at = |p| SendOptions::new().priority(p);
    /// stage.addr().send_with(2, at(Priority::MEDIUM)).unwrap();
    /// stage.addr().send_with(3, at(Priority::MEDIUM)).unwrap();
    /// stage.drain();
    /// let outputs: Vec<_> = rx.try_iter().collect();
    /// let raised = Priority(Priority::MEDIUM.0 + 1);
    /// assert_eq!(outputs, [(2, Priority::MEDIUM), (3, raised)]);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    #[inline]
    pub fn send_with(&mut self, out: O, options: SendOptions) -> Result<(), SendError<O>> {
        // Without a priority of its own, an output keeps its input's; from
        // `init`, where there is no input, the next stage gives it one.
        let priority = options
            .priority
            .or(self.performing.then_some(self.letter.priority));
        match self.down {
            Downstream::Stage(addr) => addr.mb.send(out, priority, options.wait_mode()),
            // A sink is a call, not a lane: nothing to wait for.
            Downstream::Output(f) => {
                f(out, priority.unwrap_or(self.letter.priority));
                Ok(())
            }
            Downstream::Discard => Ok(()),
        }
    }

    /// The control information of the letter being performed (seed
    /// 002): its priority, send-backs, predicate runs, TTL and hops left.
    /// In `init`, where there is no letter, a fresh letter's: this stage's
    /// default priority, nothing counted, no TTL, every hop left.
    ///
    /// # Examples
    ///
    /// See [`LetterInfo`].
    pub fn letter(&self) -> LetterInfo {
        self.letter
    }

    /// Asks this actor's pipeline to drain (Kabuki's `shutdown()`): the
    /// drain marker starts at the pipeline's first stage (this stage,
    /// outside a pipeline), so it travels behind everything this actor has
    /// sent so far, and every stage performs what it accepted before its
    /// instances are destroyed with `Reason::Drained`. Returns at once;
    /// the stage's owner learns of the end from
    /// [`Pipeline::join`](super::Pipeline::join) or
    /// [`Stage::join`](super::Stage::join). Asking again, or once the
    /// pipeline is ending, does nothing.
    ///
    /// # Examples
    ///
    /// See [`StageContext::outbox`](super::StageContext::outbox).
    pub fn drain_pipeline(&self) {
        self.head.drain();
    }

    /// The instance performing, from 0.
    ///
    /// # Examples
    ///
    /// See [`Actor`](super::Actor).
    pub fn instance(&self) -> usize {
        self.instance
    }

    /// The stage's name.
    ///
    /// # Examples
    ///
    /// See [`Actor`](super::Actor).
    pub fn stage(&self) -> &str {
        self.stage
    }
}

impl<O> fmt::Debug for Outbox<'_, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outbox")
            .field("stage", &self.stage)
            .field("instance", &self.instance)
            .field("letter", &self.letter)
            .finish_non_exhaustive()
    }
}
