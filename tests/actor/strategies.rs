//! The consumer strategies of seed 002 as stage policies, the hop limit,
//! and idle shutdown.

use super::support::{assert_balanced, within};
use priority_executor::actor::{
    Actor, ActorError, DeadReason, Outbox, Reason, SendError, Stage, StageBuilder, Strategy,
};
use priority_executor::{Priority, SendOptions};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Records what it performed and at which priority; fails messages whose
/// `fail` flag is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Job {
    id: u32,
    ttl: u32,
    fail: bool,
}

struct Worker {
    done: Done,
}

impl Actor for Worker {
    type In = Job;
    type Out = ();
    fn perform(&mut self, job: Job, out: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        if job.fail {
            return Err(format!("job {} failed", job.id).into());
        }
        self.done
            .lock()
            .map_err(|_| "poisoned")?
            .push((job.id, out.letter().priority));
        Ok(())
    }
}

fn job(id: u32) -> Job {
    Job {
        id,
        ttl: 0,
        fail: false,
    }
}

type Done = Arc<Mutex<Vec<(u32, Priority)>>>;

fn worker(name: &str) -> (StageBuilder<Worker>, Done) {
    let done = Arc::new(Mutex::new(Vec::new()));
    let d = done.clone();
    (
        Stage::builder(name, move |_| Worker { done: d.clone() }),
        done,
    )
}

#[test]
fn predicate_performs_when_it_holds_or_after_n_sends_back() {
    within("predicate", || {
        let (builder, done) = worker("predicate");
        let stage = builder
            .strategy(Strategy::predicate(|j: &Job| j.id.is_multiple_of(2), 3))
            .spawn()
            .expect("spawn");
        for id in 0..10 {
            stage.addr().send(job(id)).unwrap();
        }
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.performed, 10);
        assert_eq!(
            exit.metrics.sent_back,
            5 * 3,
            "each odd job was sent back 3 times"
        );
        assert_eq!(done.lock().unwrap().len(), 10);
    });
}

#[test]
fn priority_threshold_raises_what_is_too_low_and_lowers_what_failed() {
    within("priority threshold", || {
        let (builder, done) = worker("threshold");
        let (tx, dead) = std::sync::mpsc::channel();
        let stage = builder
            .strategy(Strategy::priority_threshold(Priority::HIGH).hop_limit(6))
            .on_dead_letter(move |d| tx.send(d).unwrap())
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        addr.send_with(job(1), SendOptions::new().priority(Priority::LOW))
            .unwrap(); // LOW -> MEDIUM -> HIGH, performed
        addr.send_with(job(2), SendOptions::new().priority(Priority::URGENT))
            .unwrap(); // performed at once
        let failing = Job {
            id: 3,
            ttl: 0,
            fail: true,
        };
        addr.send_with(failing, SendOptions::new().priority(Priority::HIGH))
            .unwrap(); // fails, lowered, raised, ... hop limit
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        let mut done = done.lock().unwrap().clone();
        done.sort_unstable();
        assert_eq!(done, vec![(1, Priority::HIGH), (2, Priority::URGENT)]);
        let dead: Vec<_> = dead.try_iter().collect();
        assert_eq!(dead.len(), 1);
        assert_eq!(
            (dead[0].message, dead[0].reason),
            (failing, DeadReason::HopLimit)
        );
        assert_eq!(exit.metrics.sent_back, 2 + 6);
        assert_eq!(
            exit.metrics.faulted, 0,
            "failures were sent back, not faulted"
        );
    });
}

#[test]
fn ttl_range_rejects_below_and_sends_back_above_with_ttl_lowered() {
    within("ttl", || {
        let (builder, done) = worker("ttl");
        let stage = builder
            .strategy(Strategy::ttl_range(1..=3, |j: &Job| j.ttl))
            .spawn()
            .expect("spawn");
        let addr = stage.addr();
        addr.send(Job {
            id: 1,
            ttl: 0,
            fail: false,
        })
        .unwrap(); // expired: dead
        addr.send(Job {
            id: 2,
            ttl: 2,
            fail: false,
        })
        .unwrap(); // in range
        addr.send(Job {
            id: 3,
            ttl: 6,
            fail: false,
        })
        .unwrap(); // 6 -> 5 -> 4 -> 3
        while stage.metrics().settled() < 3 {
            std::thread::yield_now();
        }
        let dead = stage.take_dead_letters();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.sent_back, 3);
        assert_eq!(dead.len(), 1);
        assert_eq!(
            (dead[0].message.id, dead[0].reason),
            (1, DeadReason::Expired)
        );
        let mut done: Vec<u32> = done.lock().unwrap().iter().map(|d| d.0).collect();
        done.sort_unstable();
        assert_eq!(done, vec![2, 3]);
    });
}

#[test]
fn a_letter_sent_back_past_the_hop_limit_becomes_a_dead_letter() {
    within("hop limit", || {
        let (builder, done) = worker("hops");
        let stage = builder
            .strategy(Strategy::predicate(|_: &Job| false, u32::MAX).hop_limit(4))
            .spawn()
            .expect("spawn");
        stage.addr().send(job(9)).unwrap();
        while stage.metrics().settled() < 1 {
            std::thread::yield_now();
        }
        let dead = stage.take_dead_letters();
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        assert_eq!(exit.metrics.sent_back, 4);
        assert_eq!((dead.len(), dead[0].reason), (1, DeadReason::HopLimit));
        assert!(done.lock().unwrap().is_empty());
    });
}

/// Counts performs and notes why it was destroyed.
struct Quiet {
    performed: Arc<AtomicUsize>,
    destroyed: Arc<Mutex<Option<Reason>>>,
}

impl Actor for Quiet {
    type In = u32;
    type Out = ();
    fn perform(&mut self, _: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        self.performed.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn destroy(&mut self, reason: Reason) {
        if let Ok(mut d) = self.destroyed.lock() {
            *d = Some(reason);
        }
    }
}

/// Rule 11 with real time: the stage ends by itself, and a send racing
/// the end is performed or handed back, never lost. That a message inside
/// the quiet period postpones the stop is shown with a manual clock
/// (`src/actor/idle.rs`), with no timing in the test.
#[test]
fn an_idle_stage_stops_by_itself_and_loses_no_message_sent_around_its_end() {
    within("idle", || {
        let performed = Arc::new(AtomicUsize::new(0));
        let destroyed = Arc::new(Mutex::new(None));
        let (p, d) = (performed.clone(), destroyed.clone());
        let stage = Stage::builder("idle", move |_| Quiet {
            performed: p.clone(),
            destroyed: d.clone(),
        })
        .instances(2)
        .idle_after(Duration::from_millis(5))
        .spawn()
        .expect("spawn");
        let addr = stage.addr();
        // Under load the stage may go idle before a send: then that send
        // and every later one is refused with its message.
        let (mut accepted, mut refused) = (0u64, Vec::new());
        for n in 0..10 {
            match addr.send(n) {
                Ok(()) => accepted += 1,
                Err(err) => {
                    assert!(
                        matches!(err, SendError::ShutDown { .. }),
                        "refused only as stopped: {err:?}"
                    );
                    refused.push(err.into_inner());
                }
            }
        }
        // Nothing more arrives: the stage ends by itself.
        while stage.finished().is_none() {
            std::thread::yield_now();
        }
        let late = addr.send(10).unwrap_err();
        assert!(matches!(late, SendError::ShutDown { .. }));
        assert_eq!(late.into_inner(), 10, "a send after the end is handed back");
        let exit = stage.join();
        assert_eq!(exit.reason, Reason::Idle);
        assert_eq!(*destroyed.lock().unwrap(), Some(Reason::Idle));
        assert_balanced(&exit.metrics);
        assert_eq!(
            performed.load(Ordering::SeqCst) as u64,
            exit.metrics.performed
        );
        let first_refused = 10 - refused.len() as u32;
        assert!(refused.iter().copied().eq(first_refused..10));
        assert_eq!(
            exit.metrics.performed + exit.metrics.dead_lettered,
            accepted,
            "every accepted message was performed or dead-lettered (idle)"
        );
    });
}
