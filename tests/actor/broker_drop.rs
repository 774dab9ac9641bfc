//! A broker dropped by one of its own consumers drains by itself, also
//! with manual cycles, which nobody can tick once the broker is dropped.

use super::support::LIMIT;
use priority_executor::actor::{Actor, ActorError, Batch, Broker, Outbox, Reason, Strategy};
use std::sync::{Arc, Mutex, mpsc};

type Slot = Arc<Mutex<Option<Broker<Dropper>>>>;

/// Takes its batch, then drops the broker it finds in `slot`; reports its
/// `destroy`.
struct Dropper {
    slot: Slot,
    performed: mpsc::Sender<u64>,
    destroyed: mpsc::Sender<Reason>,
}

impl Actor for Dropper {
    type In = u64;
    type Out = ();
    fn perform(&mut self, n: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        self.performed.send(n)?;
        Ok(())
    }
    fn perform_batch(&mut self, batch: &mut Batch<'_, u64, ()>) -> Result<(), ActorError> {
        while let Some(n) = batch.next_letter() {
            self.performed.send(n)?;
        }
        let broker = self.slot.lock().map_err(|_| "slot lock")?.take();
        drop(broker);
        Ok(())
    }
    fn destroy(&mut self, reason: Reason) {
        let _ = self.destroyed.send(reason);
    }
}

#[test]
fn a_broker_with_manual_cycles_dropped_by_its_consumer_drains() {
    let slot: Slot = Arc::default();
    let (performed_tx, performed) = mpsc::channel();
    let (destroyed_tx, destroyed) = mpsc::channel();
    let broker = Broker::builder("dropped-by-consumer")
        .manual_cycles()
        .spawn()
        .expect("spawn");
    broker
        .register(
            Dropper {
                slot: slot.clone(),
                performed: performed_tx,
                destroyed: destroyed_tx,
            },
            Strategy::always(),
        )
        .expect("registered");
    for n in 0..3 {
        broker.addr().send(n).expect("accepted");
    }
    {
        // The consumer takes the broker only once it is in the slot.
        let mut held = slot.lock().unwrap();
        assert!(!broker.tick().expect("running").is_empty());
        *held = Some(broker);
    }
    let reason = destroyed
        .recv_timeout(LIMIT)
        .expect("the consumer is destroyed: the drain ran to its end");
    assert_eq!(reason, Reason::Drained);
    let mut seen: Vec<u64> = performed.try_iter().collect();
    seen.sort_unstable();
    assert_eq!(seen, [0, 1, 2]);
}
