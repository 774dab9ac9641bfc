//! A broker's consumers and sinks acting on the broker itself: a consumer
//! that drops it, or calls `drain` on it, starts a drain that runs to its
//! end, also with manual cycles, which nobody can tick once the broker is
//! dropped; two that unregister each other do not wait for each other;
//! one whose own tick ends the broker loses none of the letters its batch
//! still held; a dead-letter sink, on the thread running the end or on
//! the cycle thread, may tick the broker or drop it (a `drain` there is
//! refused, and drops it), and every letter still reaches it, its hops
//! counted under the consumers' hop limit.

use super::support::{LIMIT, within};
use priority_executor::actor::{
    Actor, ActorError, Batch, Broker, DeadLetter, DeadReason, Outbox, Reason, Strategy,
};
use std::sync::{Arc, Barrier, Mutex, mpsc};
use std::time::Duration;

/// The broker a test shares with its consumers, from inside a batch.
fn held<A: Actor>(slot: &Mutex<Option<Arc<Broker<A>>>>) -> Result<Arc<Broker<A>>, ActorError> {
    let broker = slot.lock().map_err(|_| "slot lock")?.clone();
    Ok(broker.ok_or("no broker in the slot")?)
}

type Slot = Arc<Mutex<Option<Broker<Dropper>>>>;

/// Takes its batch, then drops the broker it finds in `slot` (or, if
/// `drains`, calls `drain` on it, which a consumer may not); reports its
/// `destroy`.
struct Dropper {
    slot: Slot,
    drains: bool,
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
        match broker {
            // Panics (a consumer would wait for itself); the unwinding
            // drops the broker.
            Some(broker) if self.drains => drop(broker.drain()),
            broker => drop(broker),
        }
        Ok(())
    }
    fn destroy(&mut self, reason: Reason) {
        let _ = self.destroyed.send(reason);
    }
}

/// A broker with manual cycles whose consumer, in its first batch, drops
/// it (or calls `drain` on it): the consumer's reason for its `destroy`,
/// the letters performed, and the faults' texts.
fn dropped_by_its_consumer(drains: bool) -> (Reason, Vec<u64>, Vec<String>) {
    let slot: Slot = Arc::default();
    let (performed_tx, performed) = mpsc::channel();
    let (destroyed_tx, destroyed) = mpsc::channel();
    let (faults_tx, faults) = mpsc::channel();
    let broker = Broker::builder("dropped-by-consumer")
        .manual_cycles()
        .on_fault(move |f| drop(faults_tx.send(f.error)))
        .spawn()
        .expect("spawn");
    let dropper = Dropper {
        slot: slot.clone(),
        drains,
        performed: performed_tx,
        destroyed: destroyed_tx,
    };
    broker
        .register(dropper, Strategy::always())
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
    let mut seen: Vec<u64> = performed.try_iter().collect();
    seen.sort_unstable();
    (reason, seen, faults.try_iter().collect())
}

#[test]
fn a_broker_with_manual_cycles_dropped_by_its_consumer_drains() {
    let (reason, seen, faults) = dropped_by_its_consumer(false);
    assert_eq!(reason, Reason::Drained);
    assert_eq!(seen, [0, 1, 2]);
    assert_eq!(faults, Vec::<String>::new());
}

/// `drain` (or `join`) called by a consumer is refused with a panic, and
/// the broker that panic drops is drained as any broker its consumer
/// drops.
#[test]
fn a_consumer_calling_drain_on_its_broker_is_refused_and_the_drop_drains_it() {
    let (reason, seen, faults) = dropped_by_its_consumer(true);
    assert_eq!(reason, Reason::Drained);
    assert_eq!(seen, [0, 1, 2]);
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(faults[0].contains("it would wait for itself"), "{faults:?}");
}

/// A broker its own consumers or sinks can reach (and take, to drop it).
type Held<A> = Arc<Mutex<Option<Arc<Broker<A>>>>>;

/// Takes its letter, meets the other consumer, then unregisters it.
struct Unregisterer {
    broker: Held<Unregisterer>,
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
    let slot: Held<Unregisterer> = Arc::default();
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

/// Performs every letter; what the sink tests need is its type.
struct Plain;

impl Actor for Plain {
    type In = u64;
    type Out = ();
    fn perform(&mut self, _: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
}

#[test]
fn a_dead_letter_sink_the_end_calls_may_tick_the_broker() {
    within("a tick from the end's own sink", || {
        let slot: Held<Plain> = Arc::default();
        let in_sink = slot.clone();
        let (ticked_tx, ticked) = mpsc::channel();
        let broker = Broker::builder("ticked-by-sink")
            .manual_cycles()
            .on_dead_letter(move |dead: DeadLetter<u64>| {
                let broker = in_sink.lock().map(|s| s.clone()).ok().flatten();
                let _ = ticked_tx.send((dead.message, broker.map(|b| b.tick())));
            })
            .spawn()
            .expect("spawn");
        let broker = Arc::new(broker);
        *slot.lock().unwrap() = Some(broker.clone());
        for n in 0..2 {
            broker.addr().send(n).expect("accepted");
        }
        broker.addr().stop().expect("running");
        // A stop and no consumer: this cycle ends the broker, its letters
        // are dead letters, and the sink's tick says it has ended.
        assert_eq!(broker.tick(), Err(Reason::NoConsumers));
        slot.lock().unwrap().take();
        let ended = Some(Err(Reason::NoConsumers));
        let seen: Vec<_> = ticked.try_iter().collect();
        assert_eq!(seen, [(0, ended.clone()), (1, ended)]);
        assert_eq!(broker.finished(), Some(Reason::NoConsumers));
        let Ok(broker) = Arc::try_unwrap(broker) else {
            panic!("the sink let go of the broker");
        };
        let exit = broker.join();
        assert_eq!(exit.reason, Reason::NoConsumers);
        assert_eq!(exit.metrics.dead_lettered, 2);
        assert!(exit.metrics.is_balanced(), "{:?}", exit.metrics);
    });
}

/// Says when it is dropped: with the sink that holds it, once the broker
/// is freed.
struct Freed(mpsc::Sender<()>);

impl Drop for Freed {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// A broker with a cycle thread, no consumer and two letters, ended by a
/// stop; the first dead letter's sink drops the broker (or calls `drain`
/// on it, which panics there: it would wait for itself) on the cycle
/// thread that is ending it. Returns once the broker is freed.
fn ended_with_a_sink_that_drops_it(drains: bool) {
    let slot: Arc<Mutex<Option<Broker<Plain>>>> = Arc::default();
    let in_sink = slot.clone();
    let (dead_tx, dead) = mpsc::channel();
    let (freed_tx, freed) = mpsc::channel();
    let freed_tx = Freed(freed_tx);
    let broker = Broker::builder("dropped-by-sink")
        .cycle(Duration::from_millis(1))
        .on_dead_letter(move |d: DeadLetter<u64>| {
            let _ = &freed_tx;
            let _ = dead_tx.send(d.message);
            let broker = in_sink.lock().map(|mut s| s.take()).ok().flatten();
            match broker {
                Some(broker) if drains => drop(broker.drain()),
                broker => drop(broker),
            }
        })
        .spawn()
        .expect("spawn");
    let addr = broker.addr();
    for n in 0..2 {
        addr.send(n).expect("accepted");
    }
    // The sink holds the only handle; no consumer, no end by itself until
    // the stop.
    *slot.lock().unwrap() = Some(broker);
    addr.stop().expect("running");
    freed
        .recv_timeout(LIMIT)
        .expect("the broker ends and is freed");
    assert_eq!(dead.try_iter().collect::<Vec<_>>(), [0, 1]);
    assert!(addr.send(2).is_err(), "the broker has ended");
}

#[test]
fn a_dead_letter_sink_the_end_calls_may_drop_the_last_handle() {
    within("a drop from the end's own sink", || {
        ended_with_a_sink_that_drops_it(false);
    });
}

#[test]
fn a_dead_letter_sink_calling_drain_on_the_cycle_thread_is_refused_and_drops_it() {
    within("a drain from the end's own sink", || {
        ended_with_a_sink_that_drops_it(true);
    });
}

/// Takes its letter and says so; once `gate` opens, sends it back, and
/// holds the batch until `gate` opens again.
struct Holder {
    holding: mpsc::Sender<()>,
    gate: mpsc::Receiver<()>,
    destroyed: mpsc::Sender<Reason>,
}

impl Actor for Holder {
    type In = u64;
    type Out = ();
    fn perform(&mut self, _: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
    fn perform_batch(&mut self, batch: &mut Batch<'_, u64, ()>) -> Result<(), ActorError> {
        let n = batch.next_letter().ok_or("a letter")?;
        self.holding.send(())?;
        self.gate.recv()?;
        batch.send_back(n).map_err(|_| "held")?;
        self.gate.recv()?;
        Ok(())
    }
    fn destroy(&mut self, reason: Reason) {
        let _ = self.destroyed.send(reason);
    }
}

/// A stop turns away a letter sent back while a batch is still being
/// performed: a cycle that does not end the broker hands it to the sink,
/// on the cycle thread, and the sink drops the broker there.
#[test]
fn a_dead_letter_sink_may_drop_the_last_handle_on_the_cycle_thread() {
    within("a drop from a sink on the cycle thread", || {
        let slot: Held<Holder> = Arc::default();
        let in_sink = slot.clone();
        let (dead_tx, dead) = mpsc::channel();
        let (freed_tx, freed) = mpsc::channel();
        let freed_tx = Freed(freed_tx);
        let broker = Broker::builder("dropped-on-cycle-thread")
            .cycle(Duration::from_millis(1))
            .on_dead_letter(move |d: DeadLetter<u64>| {
                let _ = &freed_tx;
                let broker = in_sink.lock().map(|mut s| s.take()).ok().flatten();
                drop(broker);
                let _ = dead_tx.send((d.message, d.reason));
            })
            .spawn()
            .expect("spawn");
        let (holding_tx, holding) = mpsc::channel();
        let (gate, gate_rx) = mpsc::channel();
        let (destroyed_tx, destroyed) = mpsc::channel();
        let holder = Holder {
            holding: holding_tx,
            gate: gate_rx,
            destroyed: destroyed_tx,
        };
        broker
            .register(holder, Strategy::always())
            .expect("registered");
        let addr = broker.addr();
        addr.send(1).expect("accepted");
        holding.recv_timeout(LIMIT).expect("the letter is taken");
        *slot.lock().unwrap() = Some(Arc::new(broker));
        addr.stop().expect("running");
        gate.send(()).expect("the consumer waits");
        let (n, why) = dead.recv_timeout(LIMIT).expect("the sink returns");
        assert_eq!((n, why), (1, DeadReason::Stopped));
        // The batch goes on only now: the cycle that turned the letter
        // away could not have ended the broker.
        gate.send(()).expect("the consumer waits");
        let reason = destroyed.recv_timeout(LIMIT).expect("destroyed");
        assert_eq!(reason, Reason::Stopped);
        freed
            .recv_timeout(LIMIT)
            .expect("the broker ends and is freed");
    });
}

#[test]
fn letters_swept_at_the_end_count_hops_under_the_consumers_limit() {
    within("hops left of swept letters", || {
        let broker = Broker::builder("swept")
            .manual_cycles()
            .spawn()
            .expect("spawn");
        broker
            .register(Plain, Strategy::always().hop_limit(5))
            .expect("registered");
        for n in 0..3 {
            broker.addr().send(n).expect("accepted");
        }
        broker.addr().kill().expect("running");
        assert_eq!(broker.tick(), Err(Reason::Killed));
        let dead = broker.take_dead_letters();
        let hops: Vec<(u64, u32)> = dead.iter().map(|d| (d.message, d.info.hops_left)).collect();
        assert_eq!(hops, [(0, 5), (1, 5), (2, 5)]);
    });
}
