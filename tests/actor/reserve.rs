//! Awaiting room in a stage's mailbox (`Addr::reserve`): every message
//! queued through a permit is performed once, waiters of one lane are
//! served in the order they came, a full lane never holds up a waiter on
//! another, dropped futures and permits give back what they held, a drain
//! waits for a held permit, and the end of the stage ends every wait.

use super::support::LIMIT;
use priority_executor::actor::{
    Actor, ActorError, Addr, MailboxConfig, Outbox, SendError, Stage, Unlisted,
};
use priority_executor::{Capacity, Priority, SendOptions};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::{Context, Poll, Wake, Waker};

const HIGH: Priority = Priority(10);
const LOW: Priority = Priority(1);

/// A letter is a piece of code the instance runs.
type Job = Box<dyn FnOnce() + Send>;

struct Runner;

impl Actor for Runner {
    type In = Job;
    type Out = ();
    fn perform(&mut self, job: Job, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        job();
        Ok(())
    }
}

fn stage(instances: usize, capacity: usize) -> Stage<Runner> {
    Stage::builder("reserve", |_| Runner)
        .instances(instances)
        .mailbox(
            MailboxConfig::new()
                .lane(HIGH, Capacity::Bounded(capacity))
                .lane(LOW, Capacity::Bounded(capacity))
                .unlisted(Unlisted::Refuse),
        )
        .spawn()
        .unwrap()
}

/// Holds the stage's one instance in a perform until the sender is used
/// or dropped; returns once the instance is inside it.
fn hold_instance(addr: &Addr<Job>) -> mpsc::Sender<()> {
    let (inside_tx, inside) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let job: Job = Box::new(move || {
        inside_tx.send(()).unwrap();
        let _ = released.recv();
    });
    addr.send_with(job, SendOptions::new().priority(HIGH))
        .unwrap();
    inside
        .recv_timeout(LIMIT)
        .expect("the instance takes the hold");
    release
}

/// A waker that reports each wake-up on a channel.
struct Report(Mutex<mpsc::Sender<()>>);

impl Wake for Report {
    fn wake(self: Arc<Self>) {
        let _ = self.0.lock().unwrap().send(());
    }
}

fn waker() -> (mpsc::Receiver<()>, Waker) {
    let (tx, rx) = mpsc::channel();
    (rx, Waker::from(Arc::new(Report(Mutex::new(tx)))))
}

fn poll<F: Future + Unpin>(f: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(waker))
}

/// A job that reports on `ran` when it is performed.
fn reporting(ran: &mpsc::Sender<()>) -> Job {
    let ran = ran.clone();
    Box::new(move || ran.send(()).unwrap())
}

#[test]
fn ten_thousand_reserves_from_four_tasks_perform_every_letter_exactly_once() {
    every_letter_once(4, 0);
}

/// Plain sends and permits share the lanes: an idle instance waits for a
/// permit's push, or peeks at the head entry with a nap while a permit is
/// held (lane rule 13); no letter is lost or run twice either way.
#[test]
fn plain_sends_beside_reserves_perform_every_letter_exactly_once() {
    every_letter_once(2, 2);
}

/// `tasks` tokio tasks reserve and send, and `threads` threads send
/// without a permit (blocking while a lane is full), 2,500 letters each,
/// into two lanes bounded 8 served by 2 instances: each letter is
/// performed exactly once, and the stage's counts agree.
fn every_letter_once(tasks: usize, threads: usize) {
    const PER_SENDER: usize = 2_500;
    let total = (tasks + threads) * PER_SENDER;
    let stage = stage(2, 8);
    let runs: Arc<Vec<AtomicU8>> = Arc::new((0..total).map(|_| AtomicU8::new(0)).collect());
    let letter = |runs: &Arc<Vec<AtomicU8>>, id: usize| -> (Priority, Job) {
        let lane = if id.is_multiple_of(3) { HIGH } else { LOW };
        let runs = Arc::clone(runs);
        (
            lane,
            Box::new(move || {
                runs[id].fetch_add(1, Ordering::SeqCst);
            }),
        )
    };
    let senders: Vec<_> = (tasks..tasks + threads)
        .map(|t| {
            let (addr, runs) = (stage.addr(), Arc::clone(&runs));
            std::thread::spawn(move || {
                for i in 0..PER_SENDER {
                    let (lane, job) = letter(&runs, t * PER_SENDER + i);
                    assert!(
                        addr.send_with(job, SendOptions::new().priority(lane))
                            .is_ok(),
                        "accepted"
                    );
                }
            })
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..tasks)
            .map(|t| {
                let (addr, runs) = (stage.addr(), Arc::clone(&runs));
                tokio::spawn(async move {
                    for i in 0..PER_SENDER {
                        let (lane, job) = letter(&runs, t * PER_SENDER + i);
                        let permit = addr.reserve(lane).await.unwrap();
                        assert_eq!(permit.priority(), lane);
                        permit.send(job);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    for sender in senders {
        sender.join().unwrap();
    }
    let exit = stage.drain();
    assert!(runs.iter().all(|r| r.load(Ordering::SeqCst) == 1));
    assert_eq!(exit.metrics.performed, total as u64);
    assert_eq!(exit.metrics.accepted, total as u64);
    assert_eq!(exit.metrics.dead_lettered, 0);
}

#[test]
fn waiters_on_one_lane_are_served_in_the_order_they_came() {
    let stage = stage(1, 1);
    let addr = stage.addr();
    let release = hold_instance(&addr);
    let (ran_tx, ran) = mpsc::channel();
    addr.send_with(reporting(&ran_tx), SendOptions::new().priority(LOW))
        .unwrap(); // the lane is full
    let (wakes, wakers): (Vec<_>, Vec<_>) = (0..3).map(|_| waker()).unzip();
    let mut waiting: Vec<_> = (0..3).map(|_| addr.reserve(LOW)).collect();
    for (r, w) in waiting.iter_mut().zip(&wakers) {
        assert!(poll(r, w).is_pending());
    }
    // The instance pops the queued letter: one slot frees, and the first
    // waiter alone is woken (before the perform that reports it).
    drop(release);
    ran.recv_timeout(LIMIT).expect("the queued letter runs");
    assert!(wakes[0].try_recv().is_ok());
    assert!(wakes[1].try_recv().is_err() && wakes[2].try_recv().is_err());
    // The later ones, polled first, do not pass it.
    assert!(poll(&mut waiting[2], &wakers[2]).is_pending());
    assert!(poll(&mut waiting[1], &wakers[1]).is_pending());
    let Poll::Ready(Ok(first)) = poll(&mut waiting[0], &wakers[0]) else {
        panic!("the first waiter gets the slot");
    };
    // Its permit dropped unused: the instance passes over the slot, and
    // the slot goes to the next in line.
    drop(first);
    wakes[1].recv_timeout(LIMIT).expect("the slot passes on");
    assert!(poll(&mut waiting[2], &wakers[2]).is_pending());
    let Poll::Ready(Ok(second)) = poll(&mut waiting[1], &wakers[1]) else {
        panic!("the second waiter gets the slot");
    };
    second.send(reporting(&ran_tx));
    ran.recv_timeout(LIMIT).expect("the permit's letter runs");
    drop(waiting);
    let exit = stage.drain();
    // The hold, the queued letter, the second permit's letter: the unused
    // permit's slot is no letter.
    assert_eq!(exit.metrics.performed, 3);
    assert_eq!(exit.metrics.accepted, 3);
}

#[test]
fn a_dropped_waiter_hands_its_granted_slot_to_the_next() {
    let stage = stage(1, 1);
    let addr = stage.addr();
    let release = hold_instance(&addr);
    let (ran_tx, ran) = mpsc::channel();
    addr.send_with(reporting(&ran_tx), SendOptions::new().priority(LOW))
        .unwrap();
    let (first_woken, first_waker) = waker();
    let (second_woken, second_waker) = waker();
    let mut first = addr.reserve(LOW);
    let mut second = addr.reserve(LOW);
    assert!(poll(&mut first, &first_waker).is_pending());
    assert!(poll(&mut second, &second_waker).is_pending());
    drop(release);
    ran.recv_timeout(LIMIT).expect("the queued letter runs");
    assert!(first_woken.try_recv().is_ok());
    // Granted a slot and never looked again: the slot goes back as a
    // permit dropped unused, and once the instance passes over it, to
    // the next in line.
    drop(first);
    second_woken
        .recv_timeout(LIMIT)
        .expect("the slot passes on");
    let Poll::Ready(Ok(permit)) = poll(&mut second, &second_waker) else {
        panic!("the slot passed on");
    };
    permit.send(reporting(&ran_tx));
    ran.recv_timeout(LIMIT).expect("the permit's letter runs");
    assert_eq!(stage.drain().metrics.performed, 3);
}

#[test]
fn a_newcomer_takes_a_free_slot_beside_one_granted_to_a_waiter() {
    // Three slots free up while only `early` waits: the first pop grants
    // it one, the other two stay free. `late` then comes and takes one at
    // once: `early`'s slot is its own already, woken and yet to look.
    let stage = stage(1, 3);
    let addr = stage.addr();
    let release = hold_instance(&addr);
    let (ran_tx, ran) = mpsc::channel();
    for _ in 0..3 {
        addr.send_with(reporting(&ran_tx), SendOptions::new().priority(LOW))
            .unwrap();
    }
    let (early_woken, early_waker) = waker();
    let (_, late_waker) = waker();
    let mut early = addr.reserve(LOW);
    assert!(poll(&mut early, &early_waker).is_pending());
    drop(release);
    for _ in 0..3 {
        ran.recv_timeout(LIMIT).expect("the queued letters run");
    }
    assert!(early_woken.try_recv().is_ok());
    let mut late = addr.reserve(LOW);
    let Poll::Ready(Ok(second)) = poll(&mut late, &late_waker) else {
        panic!("late takes a free slot");
    };
    let Poll::Ready(Ok(first)) = poll(&mut early, &early_waker) else {
        panic!("early finds its slot kept");
    };
    first.send(reporting(&ran_tx));
    second.send(reporting(&ran_tx));
    assert_eq!(stage.drain().metrics.performed, 6);
}

#[test]
fn a_woken_futures_slot_is_kept_from_senders_that_do_not_wait_or_wait_a_while() {
    let stage = stage(1, 1);
    let addr = stage.addr();
    let release = hold_instance(&addr);
    let (ran_tx, ran) = mpsc::channel();
    addr.send_with(reporting(&ran_tx), SendOptions::new().priority(LOW))
        .unwrap(); // the lane is full
    let (woken, w) = waker();
    let mut waiting = addr.reserve(LOW);
    assert!(poll(&mut waiting, &w).is_pending());
    drop(release);
    ran.recv_timeout(LIMIT).expect("the queued letter runs");
    woken
        .recv_timeout(LIMIT)
        .expect("the freed slot is granted");
    for wait in [
        std::time::Duration::ZERO,
        std::time::Duration::from_millis(20),
    ] {
        let options = SendOptions::new().priority(LOW).wait_at_most(wait);
        let refused = addr.send_with(reporting(&ran_tx), options).unwrap_err();
        assert!(
            matches!(refused, SendError::Full { .. }),
            "the woken future keeps its slot: {refused:?}"
        );
    }
    let Poll::Ready(Ok(permit)) = poll(&mut waiting, &w) else {
        panic!("the woken future finds its slot kept");
    };
    permit.send(reporting(&ran_tx));
    ran.recv_timeout(LIMIT).expect("the permit's letter runs");
    assert_eq!(stage.drain().metrics.performed, 3);
}

#[test]
fn a_full_lane_never_holds_up_a_waiter_on_another() {
    let stage = stage(1, 1);
    let addr = stage.addr();
    let release = hold_instance(&addr);
    addr.send_with(Box::new(|| ()), SendOptions::new().priority(LOW))
        .unwrap();
    let (_, w) = waker();
    let mut low = addr.reserve(LOW);
    assert!(poll(&mut low, &w).is_pending());
    let mut high = addr.reserve(HIGH);
    let Poll::Ready(Ok(permit)) = poll(&mut high, &w) else {
        panic!("the high lane has room");
    };
    let (ran_tx, ran) = mpsc::channel();
    permit.send(reporting(&ran_tx));
    drop(release);
    ran.recv_timeout(LIMIT).expect("the high letter runs");
    drop(low);
    assert_eq!(stage.drain().metrics.performed, 3);
}

#[test]
fn a_drain_waits_for_a_held_permit_and_performs_its_letter() {
    let stage = stage(1, 4);
    let addr = stage.addr();
    let (_, w) = waker();
    let Poll::Ready(Ok(permit)) = poll(&mut addr.reserve(LOW), &w) else {
        panic!("an empty lane has room");
    };
    let drained = std::thread::spawn(move || stage.drain());
    // The drain closes the door to new letters; the permit's slot was
    // taken before, so its letter is still accepted.
    super::common::wait_until("the drain closes the door", || addr.is_shut_down());
    let (ran_tx, ran) = mpsc::channel();
    permit.send(reporting(&ran_tx));
    ran.recv_timeout(LIMIT)
        .expect("the permit's letter is performed");
    let exit = drained.join().unwrap();
    assert_eq!(exit.metrics.performed, 1);
    assert_eq!(exit.metrics.dead_lettered, 0);
}

#[test]
fn the_end_of_the_stage_ends_every_wait() {
    let stage = stage(1, 1);
    let addr = stage.addr();
    let release = hold_instance(&addr);
    addr.send_with(Box::new(|| ()), SendOptions::new().priority(LOW))
        .unwrap();
    let (woken, w) = waker();
    let mut waiting = addr.reserve(LOW);
    assert!(poll(&mut waiting, &w).is_pending());
    addr.kill().unwrap();
    drop(release);
    woken
        .recv_timeout(LIMIT)
        .expect("the door wakes the waiter");
    assert!(matches!(
        poll(&mut waiting, &w),
        Poll::Ready(Err(SendError::ShutDown { message: (), .. }))
    ));
    let exit = stage.join();
    assert_eq!(exit.metrics.dead_lettered, 1);
    // A reserve after the end is refused at once.
    assert!(matches!(
        poll(&mut addr.reserve(HIGH), &w),
        Poll::Ready(Err(SendError::ShutDown { .. }))
    ));
}

#[test]
fn a_priority_without_a_lane_is_refused_with_the_lanes_there_are() {
    let stage = stage(1, 1);
    let (_, w) = waker();
    let Poll::Ready(Err(SendError::UnknownPriority {
        priority, lanes, ..
    })) = poll(&mut stage.addr().reserve(Priority(5)), &w)
    else {
        panic!("no lane takes priority 5");
    };
    assert_eq!((priority, lanes), (Priority(5), vec![HIGH, LOW]));
    stage.drain();
}

#[test]
fn a_kill_waits_for_a_held_permit_and_turns_its_letter_away() {
    let stage = stage(1, 4);
    let addr = stage.addr();
    let (_, w) = waker();
    let Poll::Ready(Ok(permit)) = poll(&mut addr.reserve(LOW), &w) else {
        panic!("an empty lane has room");
    };
    addr.kill().unwrap();
    // The kill is dispatched: the door closes, and the sweep waits for the
    // permit's slot.
    super::common::wait_until("the kill closes the door", || addr.is_shut_down());
    let (ran_tx, ran) = mpsc::channel();
    permit.send(reporting(&ran_tx));
    let exit = stage.join();
    assert_eq!(exit.reason, priority_executor::actor::Reason::Killed);
    assert_eq!((exit.metrics.performed, exit.metrics.dead_lettered), (0, 1));
    assert!(
        ran.try_recv().is_err(),
        "a killed stage performs nothing more"
    );
}
