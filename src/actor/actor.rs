//! The `Actor` trait: Kabuki's `init` / `perform` / `destroy`, typed.

use super::addr::{Downstream, Outbox};
use super::broker::Batch;
use super::head::Head;
use super::info::LetterInfo;
use super::reason::Reason;
use std::any::Any;
use std::fmt;

/// What `init` and `perform` return on failure: any error (Kabuki's
/// `throws Exception`). `?` converts into it.
pub type ActorError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What `init` is told: which stage and instance it is, and the outbox
/// it may send through before any input arrives (Kabuki's `WRITE_ONLY`
/// actor, which produces from `init`).
///
/// # Examples
///
/// See [`Actor`] and [`outbox`](StageContext::outbox).
#[derive(Clone, Copy)]
pub struct StageContext<'a> {
    pub(crate) stage: &'a str,
    pub(crate) instance: usize,
    /// The stage's `Downstream<A::Out>`, typed again by `outbox`.
    pub(crate) down: &'a (dyn Any + Send + Sync),
    pub(crate) out_type: &'static str,
    pub(crate) head: &'a Head,
    /// A fresh letter's information, for the outbox.
    pub(crate) fresh: LetterInfo,
}

impl<'a> StageContext<'a> {
    /// The instance's outbox, for `init` to send outputs before any input
    /// arrives, and to ask the pipeline to drain once it has sent them
    /// ([`Outbox::drain_pipeline`]). `O` is the actor's `Out` (inferred
    /// from what is sent). Outputs sent from `init` take the priority the
    /// next stage gives them (its generator, else its default).
    ///
    /// # Errors
    ///
    /// `O` is not the actor's `Out` type. Returned from `init` with `?`,
    /// the error is a failed `init` (reported to the fault sink).
    ///
    /// # Examples
    ///
    /// Kabuki's DownloadActor: it produces its documents in `init`, then
    /// shuts its stage (here, outside a pipeline) down itself.
    ///
    /// ```
    /// use priority_executor::actor::{Actor, ActorError, Outbox, Reason, Stage, StageContext};
    ///
    /// struct Download;
    /// impl Actor for Download {
    ///     type In = ();
    ///     type Out = String;
    ///     fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
    ///         let mut out = ctx.outbox()?;
    ///         for i in 0..3 {
    ///             out.send(format!("Download Document-#:{i}"))?;
    ///         }
    ///         out.drain_pipeline();
    ///         Ok(())
    ///     }
    ///     fn perform(&mut self, _: (), _: &mut Outbox<'_, String>) -> Result<(), ActorError> {
    ///         Ok(())
    ///     }
    /// }
    ///
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let stage = Stage::builder("download", |_| Download)
    ///     .on_output(move |doc, _| tx.send(doc).unwrap())
    ///     .spawn()?;
    /// assert_eq!(stage.join().reason, Reason::Drained);
    /// assert_eq!(rx.try_iter().count(), 3);
    /// # Ok::<(), priority_executor::actor::SpawnError>(())
    /// ```
    pub fn outbox<O: Send + 'static>(&self) -> Result<Outbox<'a, O>, ActorError> {
        let Some(down) = self.down.downcast_ref::<Downstream<O>>() else {
            return Err(format!(
                "outbox of {} asked for; stage {:?} outputs {}",
                std::any::type_name::<O>(),
                self.stage,
                self.out_type
            )
            .into());
        };
        Ok(Outbox {
            down,
            letter: self.fresh,
            performing: false,
            stage: self.stage,
            instance: self.instance,
            head: self.head,
        })
    }

    /// The stage's name.
    ///
    /// # Examples
    ///
    /// See [`Actor`].
    pub fn stage(&self) -> &str {
        self.stage
    }

    /// This instance's number, from 0.
    ///
    /// # Examples
    ///
    /// See [`Actor`].
    pub fn instance(&self) -> usize {
        self.instance
    }
}

impl fmt::Debug for StageContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StageContext")
            .field("stage", &self.stage)
            .field("instance", &self.instance)
            .field("out", &self.out_type)
            .finish_non_exhaustive()
    }
}

/// An actor with Kabuki's lifecycle, one instance of a stage.
///
/// - [`init`](Actor::init) runs once, on the instance's thread, before its
///   first message; every instance of the stage has finished `init` before
///   any instance performs. It may send outputs
///   ([`StageContext::outbox`]): a producer needs no input.
/// - [`perform`](Actor::perform) runs one message at a time per instance,
///   so `&mut self` needs no lock. Outputs go through the [`Outbox`] (to
///   the next stage of a pipeline), at the input's priority unless given
///   another.
/// - [`destroy`](Actor::destroy) runs once, after the stage's last
///   perform, with the [`Reason`].
///
/// Errors and panics in all three are caught and reported to the stage's
/// fault sink; the thread lives on.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, StageContext, Outbox, Reason, Stage};
///
/// /// Kabuki's IndexActor.
/// struct Index {
///     seen: usize,
/// }
///
/// impl Actor for Index {
///     type In = String;
///     type Out = String;
///
///     fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
///         assert_eq!(ctx.stage(), "index");
///         Ok(())
///     }
///
///     fn perform(&mut self, input: String, out: &mut Outbox<'_, String>) -> Result<(), ActorError> {
///         self.seen += 1;
///         let _ = out.send(input.replace("Download", "Index"));
///         Ok(())
///     }
///
///     fn destroy(&mut self, reason: Reason) {
///         assert_eq!(reason, Reason::Drained);
///     }
/// }
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// let stage = Stage::builder("index", |_| Index { seen: 0 })
///     .on_output(move |s: String, _| tx.send(s).unwrap())
///     .spawn()?;
/// stage.addr().send("Download Document-#:1".to_owned()).unwrap();
/// let exit = stage.drain();
/// assert_eq!(exit.reason, Reason::Drained);
/// assert_eq!(rx.recv().unwrap(), "Index Document-#:1");
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
pub trait Actor: Send + 'static {
    /// The messages it performs.
    type In: Send + 'static;
    /// The messages it outputs (`()` for a last stage).
    type Out: Send + 'static;

    /// Acquires what the instance needs (a file, a connection). An error
    /// means this instance takes no message.
    ///
    /// # Errors
    ///
    /// Any error: reported to the fault sink with [`Phase::Init`](super::Phase::Init).
    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        let _ = ctx;
        Ok(())
    }

    /// Performs one message.
    ///
    /// # Errors
    ///
    /// Any error: the stage's retry policy runs it again, then reports it
    /// to the fault sink with [`Phase::Perform`](super::Phase::Perform).
    fn perform(&mut self, msg: Self::In, out: &mut Outbox<'_, Self::Out>)
    -> Result<(), ActorError>;

    /// Performs a batch a [`Broker`](super::Broker) handed this consumer
    /// (seed 002). The default takes the letters one by one and performs
    /// each; an error ends the batch (see [`Batch`]). Override it to work
    /// on the letters together, or to send some back
    /// ([`Batch::send_back`]). Stages never call it.
    ///
    /// # Errors
    ///
    /// Any error: the letter taken last is reported to the fault sink
    /// with [`Phase::Perform`](super::Phase::Perform); the letters not
    /// taken go back to the broker (one hop more).
    fn perform_batch(
        &mut self,
        batch: &mut Batch<'_, Self::In, Self::Out>,
    ) -> Result<(), ActorError> {
        while let Some(msg) = batch.next_letter() {
            self.perform(msg, batch.outbox())?;
        }
        Ok(())
    }

    /// Releases what `init` acquired.
    fn destroy(&mut self, reason: Reason) {
        let _ = reason;
    }
}
