//! Seed 002's broker: batches round robin over the consumers registered
//! (exact, driven by manual cycles), registration while it runs, the end
//! after N quiet cycles or N cycles without consumers, send-back from
//! inside a batch, and every letter performed exactly once under load.

use super::support::{assert_balanced, within};
use priority_executor::actor::{
    Actor, ActorError, Batch, Broker, DeadReason, Outbox, Reason, Strategy,
};
use priority_executor::{Priority, SendOptions};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    /// Consumer, letters in the batch.
    Batch(usize, usize),
    Performed(usize, u64),
    Destroyed(usize, Reason),
}

#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<Event>>>);

impl Log {
    fn push(&self, e: Event) {
        self.0.lock().unwrap().push(e);
    }
    fn events(&self) -> Vec<Event> {
        self.0.lock().unwrap().clone()
    }
    /// How often each message was performed.
    fn performed(&self) -> HashMap<u64, usize> {
        let mut seen = HashMap::new();
        for e in self.events() {
            if let Event::Performed(_, n) = e {
                *seen.entry(n).or_default() += 1;
            }
        }
        seen
    }
}

/// Logs its batches and performs; sends back a message once if it is a
/// multiple of `send_back_every`; fails message `fail`.
struct Consumer {
    log: Log,
    send_back_every: u64,
    fail: Option<u64>,
}

fn consumer(log: &Log) -> Consumer {
    Consumer {
        log: log.clone(),
        send_back_every: 0,
        fail: None,
    }
}

impl Actor for Consumer {
    type In = u64;
    type Out = ();
    fn perform(&mut self, n: u64, out: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        if self.fail == Some(n) {
            return Err(format!("cannot do {n}").into());
        }
        self.log.push(Event::Performed(out.instance(), n));
        Ok(())
    }
    fn perform_batch(&mut self, batch: &mut Batch<'_, u64, ()>) -> Result<(), ActorError> {
        self.log
            .push(Event::Batch(batch.outbox().instance(), batch.len()));
        while let Some(n) = batch.next_letter() {
            let back = self.send_back_every != 0
                && n.is_multiple_of(self.send_back_every)
                && batch.outbox().letter().sent_back == 0;
            if back {
                assert!(batch.send_back(n).is_ok());
                // Nothing held any more: a second send-back is refused.
                assert_eq!(batch.send_back(n), Err(n));
            } else {
                self.perform(n, batch.outbox())?;
            }
        }
        Ok(())
    }
    fn destroy(&mut self, reason: Reason) {
        // The instance number is not known here; the log says who by order.
        self.log.push(Event::Destroyed(usize::MAX, reason));
    }
}

fn manual(batch: usize) -> priority_executor::actor::BrokerBuilder<Consumer> {
    Broker::builder("broker").manual_cycles().batch(batch)
}

fn send(broker: &Broker<Consumer>, range: std::ops::Range<u64>) {
    for n in range {
        broker.addr().send(n).unwrap();
    }
}

#[test]
fn batches_go_round_robin_each_consumer_every_kth() {
    within("round robin", || {
        let log = Log::default();
        let broker = manual(2).spawn().unwrap();
        let ids: Vec<usize> = (0..3)
            .map(|_| broker.register(consumer(&log), Strategy::always()).unwrap())
            .collect();
        // 7 batches of 2 and one of 1.
        send(&broker, 0..15);
        let mut handed = Vec::new();
        for _ in 0..3 {
            handed.extend(broker.tick().unwrap());
        }
        let to: Vec<usize> = handed.iter().map(|(c, _)| *c).collect();
        let sizes: Vec<usize> = handed.iter().map(|(_, n)| *n).collect();
        assert_eq!(sizes, vec![2, 2, 2, 2, 2, 2, 2, 1]);
        // With k = 3 registered, batch j went to consumer j mod 3.
        let expected: Vec<usize> = (0..8).map(|j| ids[j % 3]).collect();
        assert_eq!(to, expected);
        // The round robin goes on where it stopped: the next batch is
        // the third consumer's (ids[8 % 3]).
        assert_eq!(broker.consumers(), vec![ids[2], ids[0], ids[1]]);
        send(&broker, 100..101);
        assert_eq!(broker.tick().unwrap(), vec![(ids[2], 1)]);
        let exit = broker.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        let performed = log.performed();
        assert_eq!(performed.len(), 16);
        assert!(performed.values().all(|&n| n == 1));
    });
}

#[test]
fn consumers_register_and_unregister_while_it_runs() {
    within("registration", || {
        let log = Log::default();
        let broker = manual(1).spawn().unwrap();
        let a = broker.register(consumer(&log), Strategy::always()).unwrap();
        let b = broker.register(consumer(&log), Strategy::always()).unwrap();
        send(&broker, 0..2);
        assert_eq!(broker.tick().unwrap(), vec![(a, 1), (b, 1)]);
        // A newcomer takes its turn last.
        let c = broker.register(consumer(&log), Strategy::always()).unwrap();
        send(&broker, 2..5);
        assert_eq!(broker.tick().unwrap(), vec![(a, 1), (b, 1), (c, 1)]);
        // b leaves: destroyed before unregister returns, after its batches.
        let destroyed = |log: &Log| {
            log.events()
                .iter()
                .filter(|e| matches!(e, Event::Destroyed(_, Reason::Unregistered)))
                .count()
        };
        assert!(broker.unregister(b));
        assert!(!broker.unregister(b));
        assert_eq!(destroyed(&log), 1);
        send(&broker, 5..9);
        // One batch per consumer per cycle.
        assert_eq!(broker.tick().unwrap(), vec![(a, 1), (c, 1)]);
        assert_eq!(broker.tick().unwrap(), vec![(a, 1), (c, 1)]);
        let exit = broker.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.performed, 9);
        assert!(log.performed().values().all(|&n| n == 1));
        // Every batch b received was performed before it was destroyed.
        let events = log.events();
        let gone = events
            .iter()
            .position(|e| matches!(e, Event::Destroyed(_, Reason::Unregistered)))
            .unwrap();
        assert!(
            events[gone..]
                .iter()
                .all(|e| !matches!(e, Event::Performed(who, _) if *who == b))
        );
    });
}

#[test]
fn it_ends_after_n_quiet_cycles() {
    within("quiet cycles", || {
        let log = Log::default();
        let broker = manual(4).end_after(3).spawn().unwrap();
        broker.register(consumer(&log), Strategy::always()).unwrap();
        send(&broker, 0..4);
        assert_eq!(broker.tick().unwrap().len(), 1);
        // The consumer may still be performing; join ticks until three
        // cycles in a row found nothing to do.
        let exit = broker.join();
        assert_eq!(exit.reason, Reason::Idle);
        assert_eq!(exit.metrics.performed, 4);
        assert!(
            log.events()
                .contains(&Event::Destroyed(usize::MAX, Reason::Idle))
        );

        // Counted exactly: two quiet cycles do not end it, the third does.
        let broker = manual(4).end_after(3).spawn().unwrap();
        broker.register(consumer(&log), Strategy::always()).unwrap();
        assert_eq!(broker.tick(), Ok(vec![]));
        assert_eq!(broker.tick(), Ok(vec![]));
        assert_eq!(broker.finished(), None);
        assert_eq!(broker.tick(), Err(Reason::Idle));
        assert_eq!(broker.finished(), Some(Reason::Idle));
        assert_eq!(broker.tick(), Err(Reason::Idle));
        // A late send is handed back.
        assert!(broker.addr().send(1).is_err());
    });
}

#[test]
fn it_ends_after_n_cycles_without_consumers_and_reports_its_letters() {
    within("lonely cycles", || {
        let log = Log::default();
        let broker = manual(4).end_after(2).spawn().unwrap();
        let a = broker.register(consumer(&log), Strategy::always()).unwrap();
        assert!(broker.unregister(a));
        broker
            .addr()
            .send_with(1, SendOptions::new().priority(Priority::HIGH))
            .unwrap();
        broker
            .addr()
            .send_with(2, SendOptions::new().priority(Priority::LOW))
            .unwrap();
        assert_eq!(broker.tick(), Ok(vec![]));
        // A consumer registering in time resets the count...
        let b = broker.register(consumer(&log), Strategy::always()).unwrap();
        assert_eq!(broker.tick().unwrap(), vec![(b, 2)]);
        assert!(broker.unregister(b));
        send(&broker, 3..5);
        assert_eq!(broker.tick(), Ok(vec![]));
        assert_eq!(broker.tick(), Err(Reason::NoConsumers));
        let dead = broker.take_dead_letters();
        let mut messages: Vec<u64> = dead.iter().map(|d| d.message).collect();
        messages.sort_unstable();
        assert_eq!(messages, vec![3, 4]);
        assert!(
            dead.iter()
                .all(|d| d.reason == DeadReason::NoConsumers
                    && d.info.priority == Priority::MEDIUM)
        );
        assert_eq!(broker.register(consumer(&log), Strategy::always()), None);
        let exit = broker.join();
        assert_eq!(exit.reason, Reason::NoConsumers);
        assert_balanced(&exit.metrics);
    });
}

#[test]
fn a_batch_sends_back_and_fails_without_losing_a_letter() {
    within("send back inside a batch", || {
        let log = Log::default();
        let broker = manual(5).spawn().unwrap();
        for _ in 0..2 {
            let c = Consumer {
                log: log.clone(),
                send_back_every: 3,
                fail: Some(7),
            };
            broker.register(c, Strategy::always()).unwrap();
        }
        send(&broker, 0..20);
        let exit = broker.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        // The second consumer's first batch is 5..10: 6 is sent back, 7
        // fails (a fault), and 8 and 9, not taken, go back one hop more;
        // so 9 is not sent back again by the consumer (it sends back a
        // letter with no hop only). Sent back: 0, 3, 6, 12, 15, 18, and
        // the untaken 8 and 9.
        assert_eq!(exit.metrics.sent_back, 8);
        assert_eq!((exit.metrics.faulted, exit.metrics.performed), (1, 19));
        let performed = log.performed();
        assert_eq!(performed.len(), 19);
        assert!(performed.values().all(|&n| n == 1));
        assert!(!performed.contains_key(&7));
    });
}

#[test]
fn under_load_with_consumers_coming_and_going_every_letter_is_performed_once() {
    within("broker stress", || {
        const PRODUCERS: u64 = 3;
        const EACH: u64 = 2_000;
        let log = Log::default();
        let broker = Broker::builder("stress")
            .cycle(std::time::Duration::from_micros(200))
            .batch(16)
            .spawn()
            .unwrap();
        let first = broker.register(consumer(&log), Strategy::always()).unwrap();
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let addr = broker.addr();
                std::thread::spawn(move || {
                    for n in p * EACH..(p + 1) * EACH {
                        let priority = Priority(100 + (n % 3) as u32 * 100);
                        addr.send_with(n, SendOptions::new().priority(priority))
                            .unwrap();
                    }
                })
            })
            .collect();
        let mut ids = vec![first];
        for round in 0..20 {
            ids.push(broker.register(consumer(&log), Strategy::always()).unwrap());
            if round % 2 == 1 {
                assert!(broker.unregister(ids.remove(0)));
            }
        }
        for p in producers {
            p.join().unwrap();
        }
        let exit = broker.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        let performed = log.performed();
        assert_eq!(performed.len() as u64, PRODUCERS * EACH);
        assert!(performed.values().all(|&n| n == 1));
    });
}

#[test]
fn a_strategy_that_panics_faults_its_letter_and_the_batch_goes_on() {
    within("panicking predicate in a batch", || {
        let log = Log::default();
        let broker = manual(10).spawn().unwrap();
        let strategy = Strategy::predicate(
            |n: &u64| {
                assert_ne!(*n, 3, "the predicate refuses to look at 3");
                true
            },
            1,
        );
        broker.register(consumer(&log), strategy).unwrap();
        send(&broker, 0..6);
        assert_eq!(broker.tick().unwrap().len(), 1);
        let exit = broker.drain();
        assert_balanced(&exit.metrics);
        assert_eq!((exit.metrics.performed, exit.metrics.faulted), (5, 1));
        assert!(!log.performed().contains_key(&3));
    });
}

/// Fails `init`, or asks its broker to drain when it performs 99.
struct Edge {
    fail_init: bool,
}

impl Actor for Edge {
    type In = u64;
    type Out = ();
    fn init(&mut self, _: &priority_executor::actor::StageContext<'_>) -> Result<(), ActorError> {
        if self.fail_init {
            return Err("no connection".into());
        }
        Ok(())
    }
    fn perform(&mut self, n: u64, out: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        if n == 99 {
            out.drain_pipeline();
        }
        Ok(())
    }
}

#[test]
fn a_consumer_whose_init_fails_is_not_registered() {
    within("failed consumer init", || {
        let broker = Broker::builder("edge").manual_cycles().spawn().unwrap();
        assert_eq!(
            broker.register(Edge { fail_init: true }, Strategy::always()),
            None
        );
        let faults = broker.take_faults();
        assert_eq!(faults.len(), 1);
        assert_eq!(faults[0].error, "no connection");
        assert!(broker.consumers().is_empty());
        let ok = broker.register(Edge { fail_init: false }, Strategy::always());
        assert_eq!(broker.consumers(), vec![ok.unwrap()]);
    });
}

#[test]
fn stop_and_a_consumers_drain_end_the_broker_as_they_end_a_stage() {
    within("broker stop and self-drain", || {
        let broker = Broker::builder("edge")
            .manual_cycles()
            .batch(2)
            .spawn()
            .unwrap();
        broker
            .register(Edge { fail_init: false }, Strategy::always())
            .unwrap();
        for n in [1, 2, 99, 3] {
            broker.addr().send(n).unwrap();
        }
        // 99 asks for the drain: everything accepted before is performed.
        let exit = broker.join();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(exit.metrics.performed, 4);

        let broker = Broker::builder("edge").manual_cycles().spawn().unwrap();
        broker
            .register(Edge { fail_init: false }, Strategy::always())
            .unwrap();
        broker
            .addr()
            .send_with(1, SendOptions::new().priority(Priority::LOW))
            .unwrap();
        broker.addr().stop().unwrap(); // HIGH: ahead of the LOW letter
        let exit = broker.join();
        assert_eq!(exit.reason, Reason::Stopped);
        assert_eq!((exit.metrics.performed, exit.metrics.dead_lettered), (0, 1));
    });
}

#[test]
fn wrong_settings_are_refused_by_name() {
    use priority_executor::actor::SpawnError;
    let setting = |r: Result<Broker<Consumer>, SpawnError>| match r {
        Err(SpawnError::Invalid(invalid)) => invalid.setting,
        other => panic!("expected an invalid setting, got {other:?}"),
    };
    assert_eq!(setting(Broker::builder("b").batch(0).spawn()), "batch");
    assert_eq!(
        setting(Broker::builder("b").end_after(0).spawn()),
        "end_after"
    );
    let zero = Broker::builder("b")
        .cycle(std::time::Duration::ZERO)
        .spawn();
    assert_eq!(setting(zero), "cycle");
}

#[test]
fn a_priority_strategy_with_step_zero_is_not_registered() {
    let broker = manual(1).spawn().unwrap();
    let log = Log::default();
    let zero = Strategy::priority_threshold(Priority::HIGH).step(0);
    assert_eq!(broker.register(consumer(&log), zero), None);
    assert_eq!(broker.consumers(), Vec::<usize>::new());
    let one = Strategy::priority_threshold(Priority::HIGH).step(1);
    let id = broker.register(consumer(&log), one).unwrap();
    assert_eq!(broker.consumers(), vec![id]);
}

/// Seed 002: a priority-based consumer sends a message it could not
/// process back with a decremented priority, as a failed perform.
#[test]
fn a_priority_consumer_sends_back_one_step_lower() {
    within("send back one step lower", || {
        let log = Log::default();
        let broker = manual(1).spawn().unwrap();
        let c = Consumer {
            send_back_every: 1,
            ..consumer(&log)
        };
        let strategy = Strategy::priority_threshold(Priority(280)).step(50);
        broker.register(c, strategy).unwrap();
        let at = SendOptions::new().priority(Priority(300));
        broker.addr().send_with(7, at).unwrap();
        let exit = broker.drain();
        // Sent back by the consumer to 250, below the threshold; so sent
        // back by the strategy, one step higher, to 300; then performed.
        assert_eq!((exit.metrics.sent_back, exit.metrics.performed), (2, 1));
        assert_balanced(&exit.metrics);
        assert_eq!(log.performed().get(&7), Some(&1));
    });
}

/// Takes nothing it is handed.
struct Lazy;

impl Actor for Lazy {
    type In = u64;
    type Out = ();
    fn perform(&mut self, _: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
    fn perform_batch(&mut self, _: &mut Batch<'_, u64, ()>) -> Result<(), ActorError> {
        Ok(())
    }
}

#[test]
fn letters_a_consumer_never_takes_end_at_the_hop_limit() {
    within("lazy consumer", || {
        let broker = Broker::builder("lazy")
            .manual_cycles()
            .batch(3)
            .spawn()
            .unwrap();
        broker
            .register(Lazy, Strategy::always().hop_limit(4))
            .unwrap();
        for n in 0..5 {
            broker.addr().send(n).unwrap();
        }
        let exit = broker.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.dead_lettered, 5);
        assert_eq!(exit.metrics.sent_back, 5 * 4);
    });
}

/// Rule 23: the round goes in registration order from where the last
/// cycle stopped, so a consumer registering in the middle of a round
/// gets its first batch right after the consumer registered before it,
/// ahead of those that had their turn in this round already.
#[test]
fn a_consumer_registered_mid_round_gets_its_first_batch_after_the_last_registered() {
    within("newcomer's first batch", || {
        let log = Log::default();
        let broker = manual(1).spawn().unwrap();
        let ids: Vec<usize> = (0..3)
            .map(|_| broker.register(consumer(&log), Strategy::always()).unwrap())
            .collect();
        let (a, b, c) = (ids[0], ids[1], ids[2]);
        // One letter: a's batch, and the cycle stops with b next.
        send(&broker, 0..1);
        assert_eq!(broker.tick().unwrap(), vec![(a, 1)]);
        assert_eq!(broker.consumers(), vec![b, c, a]);
        let d = broker.register(consumer(&log), Strategy::always()).unwrap();
        // After c, the consumer registered last; before a, whose turn in
        // this round is over.
        assert_eq!(broker.consumers(), vec![b, c, d, a]);
        send(&broker, 1..5);
        assert_eq!(broker.tick().unwrap(), vec![(b, 1), (c, 1), (d, 1), (a, 1)]);
        let exit = broker.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_eq!(exit.metrics.performed, 5);
    });
}

/// Turns every letter away (the predicate never holds).
struct Refuses;

impl Actor for Refuses {
    type In = u64;
    type Out = ();
    fn perform(&mut self, _: u64, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
}

/// A dead letter reports the predicate runs that sent it back, as it
/// reports the priority and TTL it was queued at: the run that found the
/// hop limit reached sent nothing back.
#[test]
fn a_predicate_consumers_dead_letter_counts_the_runs_that_sent_it_back() {
    within("predicate runs at the hop limit", || {
        let (tx, dead) = std::sync::mpsc::channel();
        let broker = Broker::builder("predicate-runs")
            .manual_cycles()
            .batch(1)
            .on_dead_letter(move |d| tx.send(d).unwrap())
            .spawn()
            .unwrap();
        let refuses = Strategy::predicate(|_: &u64| false, 10).hop_limit(3);
        broker.register(Refuses, refuses).unwrap();
        broker.addr().send(7).unwrap();
        let exit = broker.drain();
        assert_eq!(exit.reason, Reason::Drained);
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.sent_back, 3);
        let dead: Vec<_> = dead.try_iter().collect();
        assert_eq!(dead.len(), 1);
        let info = dead[0].info;
        assert_eq!((dead[0].message, dead[0].reason), (7, DeadReason::HopLimit));
        assert_eq!(
            (info.sent_back, info.predicate_runs, info.hops_left),
            (3, 3, 0),
            "one predicate run per send-back"
        );
    });
}

/// A letter of 512 KiB: room for a full batch of 65,536 of them would be
/// 32 GiB.
type Big = [u8; 512 * 1024];

/// Sends each letter back once (under the priority strategy, one step
/// lower), then performs it, and counts what it performed.
struct Bulky(Arc<Mutex<usize>>);

impl Actor for Bulky {
    type In = Big;
    type Out = ();
    fn perform(&mut self, big: Big, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        assert_eq!(big[big.len() - 1], 7);
        *self.0.lock().unwrap() += 1;
        Ok(())
    }
    fn perform_batch(&mut self, batch: &mut Batch<'_, Big, ()>) -> Result<(), ActorError> {
        while let Some(big) = batch.next_letter() {
            if batch.outbox().letter().sent_back == 0 {
                assert!(batch.send_back(big).is_ok());
            } else {
                self.perform(big, batch.outbox())?;
            }
        }
        Ok(())
    }
}

/// Sends one big letter through a broker with batches of 65,536; returns
/// the letters performed and sent back.
fn one_big_letter(broker: Broker<Bulky>, manual: bool) -> (usize, u64) {
    let taken = Arc::new(Mutex::new(0));
    let strategy = Strategy::priority_threshold(Priority::LOW);
    let id = broker.register(Bulky(taken.clone()), strategy).unwrap();
    let mut big = Box::new([0u8; 512 * 1024]);
    big[512 * 1024 - 1] = 7;
    broker.addr().send(*big).unwrap();
    if manual {
        assert_eq!(broker.tick(), Ok(vec![(id, 1)]));
    }
    let exit = broker.drain();
    assert_eq!(exit.reason, Reason::Drained);
    assert_balanced(&exit.metrics);
    let performed = *taken.lock().unwrap();
    assert_eq!(exit.metrics.performed, performed as u64);
    (performed, exit.metrics.sent_back)
}

/// A cycle makes room for the letters it takes, not for a full batch:
/// one big letter under `batch(65_536)` is handed out (room for the
/// batch alone would fail to allocate and abort the process), sent back
/// and performed, by manual cycles and by the cycle thread.
#[test]
fn a_cycle_makes_room_for_the_letters_it_takes_not_a_full_batch() {
    within("big letters, big batch", || {
        // The letters are moved by value: room for a few on the stack.
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(|| {
                let manual = Broker::builder("big letters")
                    .manual_cycles()
                    .batch(65_536)
                    .spawn()
                    .unwrap();
                assert_eq!(one_big_letter(manual, true), (1, 1));
                let cycling = Broker::builder("big letters, cycle thread")
                    .cycle(std::time::Duration::from_millis(1))
                    .batch(65_536)
                    .spawn()
                    .unwrap();
                assert_eq!(one_big_letter(cycling, false), (1, 1));
            })
            .unwrap()
            .join()
            .unwrap();
    });
}
