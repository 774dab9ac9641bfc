//! The user's actor inside the local stage, and the inbox handler that
//! hands it each delivery and waits for the perform.

use super::envelope::{Done, Envelope, Performed};
use super::wire::Wire;
use crate::delivery::{Failure, Incoming};
use priority_executor::SendOptions;
use priority_executor::actor::{Actor, ActorError, Addr, Outbox, Reason, SendError, StageContext};
use std::cell::RefCell;
use std::sync::mpsc;

thread_local! {
    /// The first output of the current perform that the broker did not
    /// take: the input is then not acked.
    pub(super) static UNPUBLISHED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The user's actor inside the local stage.
pub(super) struct Remote<A> {
    pub(super) inner: A,
}

impl<A: Actor> Actor for Remote<A> {
    type In = Envelope<A::In>;
    type Out = A::Out;

    fn init(&mut self, ctx: &StageContext<'_>) -> Result<(), ActorError> {
        self.inner.init(ctx)
    }

    fn perform(
        &mut self,
        envelope: Envelope<A::In>,
        out: &mut Outbox<'_, A::Out>,
    ) -> Result<(), ActorError> {
        let Envelope { msg, done } = envelope;
        UNPUBLISHED.with(|u| u.borrow_mut().take());
        let result = self
            .inner
            .perform(msg, out)
            .map_err(|e| e.to_string())
            .and_then(|()| match UNPUBLISHED.with(|u| u.borrow_mut().take()) {
                None => Ok(()),
                Some(e) => Err(e),
            });
        match done {
            // The handler hears how it came out; a failure is the stage's
            // fault too (counted as faulted, in the drain report's faults).
            Some(done) => {
                done.finish(match &result {
                    Ok(()) => Performed::Done,
                    Err(e) => Performed::Failed(e.clone()),
                });
                result.map_err(ActorError::from)
            }
            None => result.map_err(ActorError::from),
        }
    }

    fn destroy(&mut self, reason: Reason) {
        self.inner.destroy(reason);
    }
}

/// The inbox handler: decodes the body, hands it to the local stage in the
/// delivery's lane and waits for the perform (and its outputs' confirms).
pub(super) fn perform_remote<A: Actor>(
    addr: &Addr<Envelope<A::In>>,
    msg: &Incoming,
) -> Result<(), Failure>
where
    A::In: Wire,
{
    let value = A::In::from_bytes(msg.body()).map_err(|e| {
        Failure::reject(format!(
            "queue {:?}: the body is not a {}: {e}",
            msg.queue(),
            std::any::type_name::<A::In>()
        ))
    })?;
    let (tx, rx) = mpsc::sync_channel(1);
    let envelope = Envelope {
        msg: value,
        done: Some(Done(Some(tx))),
    };
    // A stage that no longer takes messages (every instance failed its
    // `init`, or the stage ended) never performs this one: it goes back to
    // the inbox, and the consumer stops taking more.
    let refused = || {
        Failure::give_back(format!(
            "stage {}: no longer accepts messages (its instances ended); \
             the deliveries it could not take went back to the queue",
            addr.name()
        ))
    };
    match addr.send_with(envelope, SendOptions::new().priority(msg.lane())) {
        Ok(()) => {}
        Err(SendError::ShutDown { .. }) => return Err(refused()),
        Err(e) => {
            return Err(Failure::retry(format!(
                "stage {}: the message was not taken ({e})",
                addr.name()
            )));
        }
    }
    match rx.recv() {
        Ok(Performed::Done) => Ok(()),
        Ok(Performed::Failed(e)) => Err(Failure::retry(e)),
        Ok(Performed::Panicked) => Err(Failure::reject(format!(
            "stage {}: perform panicked",
            addr.name()
        ))),
        // Turned away by the stage unperformed (it ended meanwhile).
        Ok(Performed::Skipped) | Err(_) => Err(refused()),
    }
}
