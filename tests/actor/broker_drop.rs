//! A broker's consumers acting on the broker itself: one that drops it
//! starts a drain that runs to its end, also with manual cycles, which
//! nobody can tick once the broker is dropped; two that unregister each
//! other do not wait for each other; one whose own tick ends the broker
//! loses none of the letters its batch still held.

use super::support::LIMIT;
use priority_executor::actor::{Actor, ActorError, Batch, Broker, Outbox, Reason, Strategy};
use std::sync::{Arc, Barrier, Mutex, mpsc};

/// The broker a test shares with its consumers, from inside a batch.
fn held<A: Actor>(slot: &Mutex<Option<Arc<Broker<A>>>>) -> Result<Arc<Broker<A>>, ActorError> {
    let broker = slot.lock().map_err(|_| "slot lock")?.clone();
    Ok(broker.ok_or("no broker in the slot")?)
}

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

type Shared = Arc<Mutex<Option<Arc<Broker<Unregisterer>>>>>;

/// Takes its letter, meets the other consumer, then unregisters it.
struct Unregisterer {
    broker: Shared,
    ids: Arc<Mutex<Vec<usize>>>,
    met: Arc<Barrier>,
    destroyed: mpsc::Sender<(usize, Reason)>,
    me: usize,
}

impl Actor for Unregisterer {
    type In = u64;
    type Out = ();
    fn perform(&mut self, _: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
    fn perform_batch(&mut self, batch: &mut Batch<'_, u64, ()>) -> Result<(), ActorError> {
        self.me = batch.outbox().instance();
        while batch.next_letter().is_some() {}
        self.met.wait();
        let other = *self
            .ids
            .lock()
            .map_err(|_| "ids")?
            .iter()
            .find(|&&id| id != self.me)
            .ok_or("no other")?;
        let broker = held(&self.broker)?;
        broker.unregister(other);
        Ok(())
    }
    fn destroy(&mut self, reason: Reason) {
        let _ = self.destroyed.send((self.me, reason));
    }
}

#[test]
fn two_consumers_unregistering_each_other_do_not_wait_for_each_other() {
    let slot: Shared = Arc::default();
    let ids = Arc::new(Mutex::new(Vec::new()));
    let met = Arc::new(Barrier::new(2));
    let (destroyed_tx, destroyed) = mpsc::channel();
    let broker = Arc::new(
        Broker::builder("unregister-each-other")
            .manual_cycles()
            .batch(1)
            .spawn()
            .expect("spawn"),
    );
    for _ in 0..2 {
        let consumer = Unregisterer {
            broker: slot.clone(),
            ids: ids.clone(),
            met: met.clone(),
            destroyed: destroyed_tx.clone(),
            me: usize::MAX,
        };
        let id = broker
            .register(consumer, Strategy::always())
            .expect("registered");
        ids.lock().unwrap().push(id);
    }
    *slot.lock().unwrap() = Some(broker.clone());
    broker.addr().send(1).expect("accepted");
    broker.addr().send(2).expect("accepted");
    assert_eq!(broker.tick().expect("running").len(), 2, "a batch each");
    for _ in 0..2 {
        let (_, reason) = destroyed
            .recv_timeout(LIMIT)
            .expect("both consumers leave: neither waits for the other");
        assert_eq!(reason, Reason::Unregistered);
    }
    slot.lock().unwrap().take();
    let Ok(broker) = Arc::try_unwrap(broker) else {
        panic!("the consumers let go of the broker");
    };
    let exit = broker.drain();
    assert_eq!(exit.metrics.performed, 2);
}

type Ending = Arc<Mutex<Option<Arc<Broker<Ender>>>>>;

/// Takes one letter of its batch, queues a kill and ticks: its own cycle
/// ends the broker while the batch still holds its other letter.
struct Ender {
    broker: Ending,
    destroyed: mpsc::Sender<Reason>,
}

impl Actor for Ender {
    type In = u64;
    type Out = ();
    fn perform(&mut self, _: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
    fn perform_batch(&mut self, batch: &mut Batch<'_, u64, ()>) -> Result<(), ActorError> {
        batch.next_letter().ok_or("a letter")?;
        let broker = held(&self.broker)?;
        broker.addr().kill()?;
        // Checked by the test from the exit: a failed assert here would
        // only be a fault.
        let _ = broker.tick();
        Ok(())
    }
    fn destroy(&mut self, reason: Reason) {
        let _ = self.destroyed.send(reason);
    }
}

#[test]
fn a_letter_left_in_a_batch_whose_own_tick_ended_the_broker_is_a_dead_letter() {
    let slot: Ending = Arc::default();
    let (destroyed_tx, destroyed) = mpsc::channel();
    let broker = Arc::new(
        Broker::builder("ended-from-inside")
            .manual_cycles()
            .batch(2)
            .spawn()
            .expect("spawn"),
    );
    let ender = Ender {
        broker: slot.clone(),
        destroyed: destroyed_tx,
    };
    broker
        .register(ender, Strategy::always())
        .expect("registered");
    *slot.lock().unwrap() = Some(broker.clone());
    broker.addr().send(1).expect("accepted");
    broker.addr().send(2).expect("accepted");
    assert_eq!(broker.tick().expect("running").len(), 1, "one batch of 2");
    let reason = destroyed.recv_timeout(LIMIT).expect("destroyed");
    assert_eq!(reason, Reason::Killed);
    slot.lock().unwrap().take();
    let Ok(broker) = Arc::try_unwrap(broker) else {
        panic!("the consumer let go of the broker");
    };
    let exit = broker.join();
    assert_eq!(exit.reason, Reason::Killed);
    assert_eq!(exit.metrics.performed, 1);
    assert_eq!(exit.metrics.dead_lettered, 1, "the letter left untaken");
    assert!(exit.metrics.is_balanced(), "{:?}", exit.metrics);
}
