//! The `Actor` trait: Kabuki's `init` / `perform` / `destroy`, typed.

use super::addr::Outbox;
use super::reason::Reason;

/// What `init` and `perform` return on failure: any error (Kabuki's
/// `throws Exception`). `?` converts into it.
pub type ActorError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What `init` is told: which stage and instance it is.
///
/// # Examples
///
/// See [`Actor`].
#[derive(Clone, Copy, Debug)]
pub struct StageContext<'a> {
    pub(crate) stage: &'a str,
    pub(crate) instance: usize,
}

impl StageContext<'_> {
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

/// An actor with Kabuki's lifecycle, one instance of a stage.
///
/// - [`init`](Actor::init) runs once, on the instance's thread, before its
///   first message; every instance of the stage has finished `init` before
///   any instance performs.
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

    /// Releases what `init` acquired.
    fn destroy(&mut self, reason: Reason) {
        let _ = reason;
    }
}
