//! The broker for real consumer pools: waiting until it is quiet, which
//! letters a cycle handed to whom, a round robin that passes over busy
//! consumers, an async join, and consumers of different types. Consumers
//! are held on gates; nothing sleeps to synchronise.

use super::common::Gate;
use super::support::{LIMIT, within};
use priority_executor::actor::{
    Actor, ActorError, Batch, Broker, BrokerBuilder, Outbox, Reason, Strategy,
};
use priority_executor::{Priority, SendOptions};
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, mpsc};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

/// A wait that is meant to run out: the broker is not quiet.
const NOT_QUIET: Duration = Duration::from_millis(50);

/// Sends `(name, letter)` for each letter it performs; the first letter
/// it performs waits for its gate, if it has one (and says so first).
struct Worker {
    name: &'static str,
    gate: Option<(Gate, mpsc::Sender<()>)>,
    destroyed: Option<mpsc::Sender<Reason>>,
}

fn worker(name: &'static str) -> Worker {
    Worker {
        name,
        gate: None,
        destroyed: None,
    }
}

/// A worker held on its first letter: the gate, and the signal that it
/// holds a letter.
fn held(name: &'static str) -> (Worker, Gate, mpsc::Receiver<()>) {
    let gate = Gate::default();
    let (tx, rx) = mpsc::channel();
    let w = Worker {
        name,
        gate: Some((gate.clone(), tx)),
        destroyed: None,
    };
    (w, gate, rx)
}

impl Actor for Worker {
    type In = u32;
    type Out = (&'static str, u32);
    fn perform(&mut self, n: u32, out: &mut Outbox<'_, Self::Out>) -> Result<(), ActorError> {
        if let Some((gate, holding)) = self.gate.take() {
            holding.send(()).ok();
            gate.wait();
        }
        out.send((self.name, n)).ok();
        Ok(())
    }
    fn destroy(&mut self, reason: Reason) {
        if let Some(tx) = &self.destroyed {
            tx.send(reason).ok();
        }
    }
}

type Outputs = mpsc::Receiver<(&'static str, u32)>;

/// Manual cycles, batches of one, outputs to the receiver.
fn pool(skip_busy: bool) -> (BrokerBuilder<Worker>, Outputs) {
    let (tx, rx) = mpsc::channel();
    let builder = Broker::builder("pool")
        .manual_cycles()
        .batch(1)
        .skip_busy(skip_busy)
        .on_output(move |out, _| tx.send(out).unwrap());
    (builder, rx)
}

fn broker(skip_busy: bool) -> (Broker<Worker>, Outputs) {
    let (builder, rx) = pool(skip_busy);
    (builder.spawn().unwrap(), rx)
}

#[test]
fn wait_quiet_waits_for_the_batch_handed_out() {
    within("wait_quiet and a held batch", || {
        let (broker, out) = broker(false);
        let (w, gate, holding) = held("a");
        broker.register(w, Strategy::always()).unwrap();
        broker.addr().send(1).unwrap();
        assert_eq!(broker.tick().unwrap().len(), 1);
        holding.recv_timeout(LIMIT).unwrap();
        // Handed out, not settled.
        assert!(!broker.wait_quiet(NOT_QUIET));
        let broker = Arc::new(broker);
        let waiter = {
            let broker = broker.clone();
            std::thread::spawn(move || broker.wait_quiet(LIMIT))
        };
        gate.open();
        // The settling batch wakes the waiter.
        assert!(waiter.join().unwrap());
        assert_eq!(out.try_recv(), Ok(("a", 1)));
        assert_eq!(broker.metrics().performed, 1);
    });
}

#[test]
fn wait_quiet_counts_queued_and_sent_back_letters() {
    /// Sends every letter back once, and says so.
    struct Bouncer(mpsc::Sender<u32>);
    impl Actor for Bouncer {
        type In = u32;
        type Out = ();
        fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
            Ok(())
        }
        fn perform_batch(&mut self, batch: &mut Batch<'_, u32, ()>) -> Result<(), ActorError> {
            while let Some(n) = batch.next_letter() {
                if batch.outbox().letter().sent_back == 0 {
                    batch.send_back(n).ok();
                    self.0.send(n).ok();
                }
            }
            Ok(())
        }
    }
    within("wait_quiet and queued letters", || {
        let broker = Broker::builder("bounce").manual_cycles().spawn().unwrap();
        let (bounced_tx, bounced) = mpsc::channel();
        broker
            .register(Bouncer(bounced_tx), Strategy::always())
            .unwrap();
        // A fresh broker is quiet.
        assert!(broker.wait_quiet(LIMIT));
        broker.addr().send(7).unwrap();
        // Queued: nobody ticks.
        assert!(!broker.wait_quiet(NOT_QUIET));
        assert_eq!(broker.tick().unwrap().len(), 1);
        // Sent back: queued again, before and after the batch settles.
        assert_eq!(bounced.recv_timeout(LIMIT), Ok(7));
        assert!(!broker.wait_quiet(NOT_QUIET));
        assert_eq!(broker.metrics().sent_back, 1);
        assert_eq!(broker.tick().unwrap().len(), 1);
        assert!(broker.wait_quiet(LIMIT));
        assert_eq!(broker.metrics().performed, 1);
    });
}

#[test]
fn wait_quiet_with_cycles_of_its_own_and_after_the_end() {
    within("wait_quiet with a cycle thread", || {
        let (tx, out) = mpsc::channel();
        let broker = Broker::builder("cycling")
            .cycle(Duration::from_millis(1))
            .batch(3)
            .on_output(move |o, _| tx.send(o).unwrap())
            .spawn()
            .unwrap();
        for name in ["a", "b", "c"] {
            broker.register(worker(name), Strategy::always()).unwrap();
        }
        for n in 0..200 {
            broker.addr().send(n).unwrap();
        }
        assert!(broker.wait_quiet(LIMIT));
        let mut seen: Vec<u32> = out.try_iter().map(|(_, n)| n).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..200).collect::<Vec<_>>());
        broker.addr().stop().unwrap();
        assert_eq!(broker.join().reason, Reason::Stopped);
    });
}

#[test]
fn tick_report_names_each_batch_and_its_priorities() {
    within("tick_report", || {
        let (tx, _out) = mpsc::channel();
        let broker = Broker::builder("report")
            .manual_cycles()
            .batch(2)
            .on_output(move |o, _| tx.send(o).unwrap())
            .spawn()
            .unwrap();
        let a = broker.register(worker("a"), Strategy::always()).unwrap();
        let b = broker.register(worker("b"), Strategy::always()).unwrap();
        let at = |p| SendOptions::new().priority(p);
        broker.addr().send_with(1, at(Priority::LOW)).unwrap();
        broker.addr().send_with(2, at(Priority::HIGH)).unwrap();
        broker.addr().send_with(3, at(Priority::MEDIUM)).unwrap();
        broker.addr().send_with(4, at(Priority::HIGH)).unwrap();
        broker.addr().send_with(5, at(Priority::LOW)).unwrap();
        let report = broker.tick_report().unwrap();
        assert_eq!(
            report,
            vec![
                (a, vec![Priority::HIGH, Priority::HIGH]),
                (b, vec![Priority::MEDIUM, Priority::LOW]),
            ]
        );
        // The next cycle goes on from `a`, as tick's does.
        assert_eq!(
            broker.tick_report().unwrap(),
            vec![(a, vec![Priority::LOW])]
        );
        assert!(broker.wait_quiet(LIMIT));
        assert!(broker.tick_report().unwrap().is_empty());
        broker.addr().stop().unwrap();
        assert_eq!(broker.tick_report(), Err(Reason::Stopped));
        // Ended: quiet for good.
        assert!(broker.wait_quiet(LIMIT));
    });
}

#[test]
fn strict_rotation_hands_a_busy_consumer_its_turn() {
    within("strict rotation", || {
        let (broker, out) = broker(false);
        let (slow, gate, holding) = held("slow");
        let slow = broker.register(slow, Strategy::always()).unwrap();
        let fast = broker.register(worker("fast"), Strategy::always()).unwrap();
        broker.addr().send(1).unwrap();
        assert_eq!(broker.tick(), Ok(vec![(slow, 1)]));
        holding.recv_timeout(LIMIT).unwrap();
        broker.addr().send(2).unwrap();
        broker.addr().send(3).unwrap();
        // Seed 002's rotation: letter 3 waits behind letter 1.
        assert_eq!(broker.tick(), Ok(vec![(fast, 1), (slow, 1)]));
        assert_eq!(out.recv_timeout(LIMIT), Ok(("fast", 2)));
        gate.open();
        assert!(broker.wait_quiet(LIMIT));
        let mut rest: Vec<_> = out.try_iter().collect();
        rest.sort_unstable();
        assert_eq!(rest, [("slow", 1), ("slow", 3)]);
    });
}

#[test]
fn skip_busy_passes_over_a_busy_consumer_which_keeps_its_place() {
    within("skip_busy, by hand", || {
        let (broker, out) = broker(true);
        let (slow, gate, holding) = held("slow");
        let slow = broker.register(slow, Strategy::always()).unwrap();
        let fast = broker.register(worker("fast"), Strategy::always()).unwrap();
        broker.addr().send(1).unwrap();
        assert_eq!(broker.tick(), Ok(vec![(slow, 1)]));
        holding.recv_timeout(LIMIT).unwrap();
        broker.addr().send(2).unwrap();
        broker.addr().send(3).unwrap();
        // A cycle comes to each consumer once: letter 3 stays queued.
        assert_eq!(broker.tick(), Ok(vec![(fast, 1)]));
        // Slow, passed over, is next.
        assert_eq!(broker.consumers(), vec![slow, fast]);
        assert_eq!(out.recv_timeout(LIMIT), Ok(("fast", 2)));
        assert!(!broker.wait_quiet(NOT_QUIET), "letter 1 is held, 3 queued");
        gate.open();
        let exit = broker.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(exit.metrics.performed, 3);
        let mut rest: Vec<_> = out.try_iter().map(|(_, n)| n).collect();
        rest.sort_unstable();
        assert_eq!(rest, [1, 3]);
    });
}

#[test]
fn skip_busy_gives_the_free_consumer_everything_while_the_slow_one_works() {
    within("skip_busy under join", || {
        let (tx, out) = mpsc::channel();
        let broker = Broker::builder("pool")
            .manual_cycles()
            .batch(1)
            .skip_busy(true)
            .end_after(2)
            .on_output(move |o, _| tx.send(o).unwrap())
            .spawn()
            .unwrap();
        let (slow, gate, holding) = held("slow");
        broker.register(slow, Strategy::always()).unwrap();
        broker.register(worker("fast"), Strategy::always()).unwrap();
        broker.addr().send(0).unwrap();
        assert_eq!(broker.tick().unwrap().len(), 1);
        holding.recv_timeout(LIMIT).unwrap();
        for n in 1..=20 {
            broker.addr().send(n).unwrap();
        }
        // `join` runs the cycles: each waits for a consumer to be free.
        let joined = std::thread::spawn(move || broker.join());
        // Strict rotation would queue every other letter behind the held
        // one, and these would never all come.
        let fast: Vec<_> = (1..=20).map(|_| out.recv_timeout(LIMIT).unwrap()).collect();
        assert_eq!(fast, (1..=20).map(|n| ("fast", n)).collect::<Vec<_>>());
        gate.open();
        let exit = joined.join().unwrap();
        assert_eq!(exit.reason, Reason::Idle);
        assert_eq!(exit.metrics.performed, 21);
        assert_eq!(out.try_iter().collect::<Vec<_>>(), [("slow", 0)]);
    });
}

/// Wakes a parked thread.
struct Unpark(std::thread::Thread);
impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

#[test]
fn join_async_completes_with_the_exit() {
    within("join_async", || {
        let (builder, out) = pool(false);
        let broker = builder.end_after(2).spawn().unwrap();
        let (w, gate, holding) = held("a");
        broker.register(w, Strategy::always()).unwrap();
        broker.addr().send(1).unwrap();
        broker.tick().unwrap();
        holding.recv_timeout(LIMIT).unwrap();
        broker.addr().send(2).unwrap();
        let mut joining = Box::pin(broker.join_async());
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        // Held: the join cannot end yet.
        assert!(
            joining
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        gate.open();
        let exit = block_on(joining);
        assert_eq!(exit.reason, Reason::Idle);
        assert_eq!(exit.metrics.performed, 2);
        assert_eq!(out.try_iter().count(), 2);
    });
}

#[test]
fn join_async_dropped_leaves_the_join_running() {
    within("join_async dropped", || {
        let (builder, out) = pool(false);
        let broker = builder.end_after(2).spawn().unwrap();
        let (mut w, gate, holding) = held("a");
        let (destroyed_tx, destroyed) = mpsc::channel();
        w.destroyed = Some(destroyed_tx);
        broker.register(w, Strategy::always()).unwrap();
        broker.addr().send(1).unwrap();
        broker.tick().unwrap();
        holding.recv_timeout(LIMIT).unwrap();
        broker.addr().send(2).unwrap();
        let mut joining = Box::pin(broker.join_async());
        let waker = Waker::noop();
        assert!(
            joining
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_pending()
        );
        drop(joining);
        gate.open();
        // The join goes on: letter 2 is handed out, quiet cycles end it.
        assert_eq!(destroyed.recv_timeout(LIMIT), Ok(Reason::Idle));
        assert_eq!(out.recv_timeout(LIMIT), Ok(("a", 1)));
        assert_eq!(out.recv_timeout(LIMIT), Ok(("a", 2)));
    });
}

#[test]
fn join_async_dropped_unpolled_drains_the_broker_elsewhere() {
    within("join_async dropped unpolled", || {
        let (broker, out) = broker(false);
        let (mut w, gate, holding) = held("a");
        let (destroyed_tx, destroyed) = mpsc::channel();
        w.destroyed = Some(destroyed_tx);
        broker.register(w, Strategy::always()).unwrap();
        broker.addr().send(1).unwrap();
        broker.tick().unwrap();
        holding.recv_timeout(LIMIT).unwrap();
        broker.addr().send(2).unwrap();
        // The drain waits for the held letter: not on this thread.
        drop(broker.join_async());
        gate.open();
        assert_eq!(destroyed.recv_timeout(LIMIT), Ok(Reason::Drained));
        assert_eq!(out.try_iter().collect::<Vec<_>>(), [("a", 1), ("a", 2)]);
    });
}

#[test]
fn consumers_of_different_types_share_a_broker() {
    /// Sends back the odd letters it is handed first, once.
    struct Careful(mpsc::Sender<Reason>);
    impl Actor for Careful {
        type In = u32;
        type Out = (&'static str, u32);
        fn perform(&mut self, n: u32, out: &mut Outbox<'_, Self::Out>) -> Result<(), ActorError> {
            out.send(("careful", n)).ok();
            Ok(())
        }
        fn perform_batch(
            &mut self,
            batch: &mut Batch<'_, u32, Self::Out>,
        ) -> Result<(), ActorError> {
            while let Some(n) = batch.next_letter() {
                if n % 2 == 1 && batch.outbox().letter().sent_back == 0 {
                    batch.send_back(n).ok();
                } else {
                    self.perform(n, batch.outbox())?;
                }
            }
            Ok(())
        }
        fn destroy(&mut self, reason: Reason) {
            self.0.send(reason).ok();
        }
    }
    type Consumer = Box<dyn Actor<In = u32, Out = (&'static str, u32)>>;
    within("boxed consumers", || {
        let (tx, out) = mpsc::channel();
        let broker = Broker::<Consumer>::builder("mixed")
            .manual_cycles()
            .batch(2)
            .end_after(2)
            .on_output(move |o, _| tx.send(o).unwrap())
            .spawn()
            .unwrap();
        let (destroyed_tx, destroyed) = mpsc::channel();
        let careful = broker
            .register(Box::new(Careful(destroyed_tx)), Strategy::always())
            .unwrap();
        let fast = broker
            .register(Box::new(worker("fast")), Strategy::always())
            .unwrap();
        for n in 1..=4 {
            broker.addr().send(n).unwrap();
        }
        assert_eq!(broker.tick(), Ok(vec![(careful, 2), (fast, 2)]));
        let exit = broker.join();
        assert_eq!(exit.reason, Reason::Idle);
        assert_eq!(exit.metrics.performed, 4);
        assert_eq!(exit.metrics.sent_back, 1);
        assert_eq!(destroyed.try_recv(), Ok(Reason::Idle));
        let mut said: Vec<_> = out.try_iter().collect();
        said.sort_unstable();
        // Letter 1 went back once; the next cycle began with the careful
        // one, which took it this time.
        assert_eq!(
            said,
            [("careful", 1), ("careful", 2), ("fast", 3), ("fast", 4)]
        );
    });
}
