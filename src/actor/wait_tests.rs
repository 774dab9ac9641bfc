//! Idle instances and a broker's driver sleep while nothing they could
//! dispatch is queued, even when letters are queued that they never will:
//! a letter sent back below a stop being served, letters at a broker with
//! no consumer. Both once spun, a core each.

use crate::SendOptions;
use crate::actor::{Actor, ActorError, Broker, MailboxConfig, Outbox, Reason, Stage, Strategy};
use crate::priority::{Capacity, Priority};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Waits until `done` holds, failing after a generous limit: a hang
/// detector, not a timing assertion.
fn until(what: &str, done: impl Fn() -> bool) {
    let give_up = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < give_up, "gave up waiting: {what}");
        std::thread::yield_now();
    }
}

const LOW: Priority = Priority(1);

/// What a letter does: `Hold` says it performs, then performs until the
/// receiver hears;
/// `Doubt` is judged by a predicate that blocks until told, then says no.
enum Letter {
    Hold(Arc<Mutex<mpsc::Receiver<()>>>, mpsc::Sender<()>),
    Doubt(Arc<Mutex<mpsc::Receiver<()>>>),
}

struct Runner;

impl Actor for Runner {
    type In = Letter;
    type Out = ();
    fn perform(&mut self, letter: Letter, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        if let Letter::Hold(release, performing) = letter {
            let _ = performing.send(());
            let _ = release.lock().unwrap().recv();
        }
        Ok(())
    }
}

fn gate() -> (mpsc::Sender<()>, Arc<Mutex<mpsc::Receiver<()>>>) {
    let (tx, rx) = mpsc::channel();
    (tx, Arc::new(Mutex::new(rx)))
}

/// Three instances: A performs a held letter, B's predicate holds a
/// doubted one, C dispatches the stop (at the only lane: everything is at
/// or below it). B then sends its letter back, below the stop: it is
/// turned away at once (not after A's perform), and B and C sleep until
/// A is done.
#[test]
fn a_letter_sent_back_below_a_stop_is_turned_away_and_instances_sleep() {
    let (dead_tx, dead) = mpsc::channel();
    let (judging_tx, judging) = mpsc::channel();
    let judging_tx = Mutex::new(judging_tx);
    let strategy = Strategy::predicate(
        move |letter: &Letter| match letter {
            Letter::Hold(..) => true,
            Letter::Doubt(release) => {
                judging_tx.lock().unwrap().send(()).unwrap();
                let _ = release.lock().unwrap().recv();
                false
            }
        },
        u32::MAX,
    );
    let dead_tx = Mutex::new(dead_tx);
    let stage = Stage::builder("stopping", |_| Runner)
        .instances(3)
        .mailbox(
            MailboxConfig::new()
                .lane(LOW, Capacity::Bounded(8))
                .stop_priority(LOW),
        )
        .strategy(strategy)
        .on_dead_letter(move |d| {
            let _ = dead_tx.lock().unwrap().send(d.reason);
        })
        .spawn()
        .expect("spawn");
    let addr = stage.addr();
    let (release_a, held) = gate();
    let (release_b, doubted) = gate();
    let (performing_tx, performing) = mpsc::channel();
    assert!(
        addr.send_with(
            Letter::Hold(held, performing_tx),
            SendOptions::new().priority(LOW)
        )
        .is_ok()
    );
    assert!(
        addr.send_with(Letter::Doubt(doubted), SendOptions::new().priority(LOW))
            .is_ok()
    );
    judging.recv().expect("B judges the doubted letter");
    // A performs, B judges: the third instance dispatches the stop and
    // sleeps, as both letters are in flight.
    performing.recv().expect("A performs the held letter");
    addr.stop().expect("the door is open");
    until("C asleep after the stop", || stage.waiting() == 1);
    release_b.send(()).unwrap();
    let reason = dead
        .recv_timeout(Duration::from_secs(30))
        .expect("the letter sent back below the stop is turned away while A performs");
    assert_eq!(reason, crate::actor::DeadReason::Stopped);
    until("B and C asleep", || stage.waiting() == 2);
    release_a.send(()).unwrap();
    let exit = stage.join();
    assert_eq!(exit.reason, Reason::Stopped);
    assert_eq!(exit.metrics.performed, 1);
    assert_eq!(exit.metrics.dead_lettered, 1);
}

struct Idle;

impl Actor for Idle {
    type In = u32;
    type Out = ();
    fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Ok(())
    }
}

/// A broker with manual cycles, no consumer and no `end_after`, driven by
/// `join` with letters queued: the driver sleeps (nobody can register
/// while it runs), and a kill ends it, the letters dead.
#[test]
fn a_broker_with_no_consumer_sleeps_in_join_until_a_kill() {
    let (dead_tx, dead) = mpsc::channel();
    let dead_tx = Mutex::new(dead_tx);
    let broker = Broker::<Idle>::builder("lonely")
        .manual_cycles()
        .on_dead_letter(move |d| {
            let _ = dead_tx.lock().unwrap().send(d.message);
        })
        .spawn()
        .expect("spawn");
    let addr = broker.addr();
    for n in 0..3 {
        assert!(addr.send(n).is_ok());
    }
    assert_eq!(broker.waiting(), 0);
    let waiting = broker.waiting_probe();
    let joined = std::thread::spawn(move || broker.join());
    until("the driver asleep", || waiting() == 1);
    addr.kill().expect("the door is open");
    let exit = joined.join().expect("join returns");
    assert_eq!(exit.reason, Reason::NoConsumers);
    let mut turned_away: Vec<u32> = dead.try_iter().collect();
    turned_away.sort_unstable();
    assert_eq!(turned_away, [0, 1, 2]);
}
