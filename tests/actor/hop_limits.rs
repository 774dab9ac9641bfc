//! Every strategy ends under its defaults (a default hop limit), and a
//! letter the hop limit turns away is reported at the priority it was
//! queued at.

use super::support::assert_balanced;
use priority_executor::actor::{
    Actor, ActorError, DeadLetter, DeadReason, Outbox, Stage, Strategy,
};
use priority_executor::{Priority, SendOptions};
use std::sync::mpsc;
use std::time::Duration;

/// A hang shows as this; the scenarios finish in well under a second.
const LIMIT: Duration = Duration::from_secs(20);

/// Fails every perform.
struct Fails;

impl Actor for Fails {
    type In = u32;
    type Out = ();
    fn perform(&mut self, n: u32, _: &mut Outbox<'_, ()>) -> Result<(), ActorError> {
        Err(format!("letter {n} always fails").into())
    }
}

/// Drains a stage of [`Fails`] under `strategy` after one letter at
/// `priority`, and returns its dead letters and how often it sent back.
fn run(
    name: &'static str,
    strategy: Strategy<u32>,
    priority: Priority,
) -> (Vec<DeadLetter<u32>>, u64) {
    super::common::within(name, LIMIT, move || {
        let (tx, dead) = mpsc::channel();
        let stage = Stage::builder(name, |_| Fails)
            .strategy(strategy)
            .on_dead_letter(move |d| tx.send(d).expect("dead letter"))
            .spawn()
            .expect("spawn");
        stage
            .addr()
            .send_with(7, SendOptions::new().priority(priority))
            .expect("accepted");
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        (dead.try_iter().collect(), exit.metrics.sent_back)
    })
}

#[test]
fn priority_threshold_with_a_perform_that_always_fails_ends_at_the_default_hop_limit() {
    let (dead, sent_back) = run(
        "threshold-default",
        Strategy::priority_threshold(Priority::HIGH),
        Priority::HIGH,
    );
    assert_eq!(dead.len(), 1, "the failing letter ends as a dead letter");
    assert_eq!((dead[0].message, dead[0].reason), (7, DeadReason::HopLimit));
    assert_eq!(sent_back, u64::from(Strategy::<u32>::DEFAULT_HOP_LIMIT));
}

#[test]
fn predicate_that_never_holds_ends_at_the_default_hop_limit() {
    let (dead, sent_back) = run(
        "predicate-default",
        Strategy::predicate(|_: &u32| false, u32::MAX),
        Priority::MEDIUM,
    );
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].message, dead[0].reason), (7, DeadReason::HopLimit));
    assert_eq!(sent_back, u64::from(Strategy::<u32>::DEFAULT_HOP_LIMIT));
}

#[test]
fn ttl_far_above_the_range_ends_at_the_default_hop_limit() {
    let (dead, sent_back) = run(
        "ttl-default",
        Strategy::ttl_range(1..=3, |_: &u32| u32::MAX),
        Priority::MEDIUM,
    );
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].message, dead[0].reason), (7, DeadReason::HopLimit));
    assert_eq!(sent_back, u64::from(Strategy::<u32>::DEFAULT_HOP_LIMIT));
}

#[test]
fn a_letter_aged_to_the_hop_limit_is_reported_at_the_priority_it_was_queued_at() {
    // LOW is sent back once, at MEDIUM; there the next step (HIGH) would
    // pass the limit: it was queued at MEDIUM.
    let (dead, sent_back) = run(
        "threshold-aged",
        Strategy::priority_threshold(Priority::HIGH).hop_limit(1),
        Priority::LOW,
    );
    assert_eq!(sent_back, 1);
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (dead[0].priority, dead[0].reason),
        (Priority::MEDIUM, DeadReason::HopLimit),
        "reported at the priority it was queued at, not the one it would have been re-queued at"
    );
}

#[test]
fn a_failed_letter_at_the_hop_limit_is_reported_at_the_priority_it_was_queued_at() {
    // Queued at HIGH, it fails; lowering it to MEDIUM would pass the limit.
    let (dead, sent_back) = run(
        "threshold-failed",
        Strategy::priority_threshold(Priority::HIGH).hop_limit(0),
        Priority::HIGH,
    );
    assert_eq!(sent_back, 0);
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (dead[0].priority, dead[0].reason),
        (Priority::HIGH, DeadReason::HopLimit)
    );
}
