//! Consumers of different types on one broker: a boxed actor is an actor.

use super::batch::Batch;
use crate::actor::actor::{Actor, ActorError, StageContext};
use crate::actor::addr::Outbox;
use crate::actor::reason::Reason;

/// A boxed actor is an actor, each call going to the one in the box: a
/// `Broker<Box<dyn Actor<In = M, Out = O>>>` takes consumers of any type
/// with those messages, so a "fast" and a "careful" consumer share one
/// broker (each with its own [`Strategy`](crate::actor::Strategy)). A
/// stage's instances may be boxed the same way.
///
/// # Examples
///
/// ```
/// use priority_executor::actor::{Actor, ActorError, Batch, Broker, Outbox, Strategy};
///
/// type Consumer = Box<dyn Actor<In = u32, Out = String>>;
///
/// /// Performs one letter after another.
/// struct Fast;
/// impl Actor for Fast {
///     type In = u32;
///     type Out = String;
///     fn perform(&mut self, n: u32, out: &mut Outbox<'_, String>) -> Result<(), ActorError> {
///         out.send(format!("fast {n}")).ok();
///         Ok(())
///     }
/// }
///
/// /// Looks at the whole batch first, then answers for it at once.
/// struct Careful;
/// impl Actor for Careful {
///     type In = u32;
///     type Out = String;
///     fn perform(&mut self, n: u32, out: &mut Outbox<'_, String>) -> Result<(), ActorError> {
///         out.send(format!("careful {n}")).ok();
///         Ok(())
///     }
///     fn perform_batch(&mut self, batch: &mut Batch<'_, u32, String>) -> Result<(), ActorError> {
///         let mut seen = Vec::new();
///         while let Some(n) = batch.next_letter() {
///             seen.push(n);
///         }
///         batch.outbox().send(format!("careful {seen:?}")).ok();
///         Ok(())
///     }
/// }
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// let broker = Broker::<Consumer>::builder("mixed")
///     .manual_cycles()
///     .batch(2)
///     .on_output(move |s, _| tx.send(s).unwrap())
///     .spawn()?;
/// let fast = broker.register(Box::new(Fast), Strategy::always()).unwrap();
/// let careful = broker.register(Box::new(Careful), Strategy::always()).unwrap();
/// for n in 1..=4 {
///     broker.addr().send(n).unwrap();
/// }
/// assert_eq!(broker.tick(), Ok(vec![(fast, 2), (careful, 2)]));
/// broker.drain();
/// let mut said: Vec<String> = rx.try_iter().collect();
/// said.sort();
/// assert_eq!(said, ["careful [3, 4]", "fast 1", "fast 2"]);
/// # Ok::<(), priority_executor::actor::SpawnError>(())
/// ```
impl<M: Send + 'static, O: Send + 'static> Actor for Box<dyn Actor<In = M, Out = O>> {
    type In = M;
    type Out = O;

    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        (**self).init(ctx)
    }

    fn perform(&mut self, msg: M, out: &mut Outbox<'_, O>) -> Result<(), ActorError> {
        (**self).perform(msg, out)
    }

    fn perform_batch(&mut self, batch: &mut Batch<'_, M, O>) -> Result<(), ActorError> {
        (**self).perform_batch(batch)
    }

    fn destroy(&mut self, reason: Reason) {
        (**self).destroy(reason);
    }
}
