//! Seed 002's transmission-control information in the consumer's hands:
//! a perform reads the priority, send-backs, predicate runs, TTL and hops
//! left of the letter it performs, and every dead letter carries them,
//! with the priority it was queued at.

use super::support::{assert_balanced, within};
use priority_executor::actor::{
    Actor, ActorError, DeadLetter, DeadReason, LetterInfo, Outbox, Stage, Strategy,
};
use priority_executor::{Priority, SendOptions};
use std::sync::mpsc;

/// Hands each message on with the information its perform read; fails
/// messages above 1000.
struct Read;

impl Actor for Read {
    type In = u32;
    type Out = (u32, LetterInfo);
    fn perform(
        &mut self,
        n: u32,
        out: &mut Outbox<'_, (u32, LetterInfo)>,
    ) -> Result<(), ActorError> {
        if n > 1000 {
            return Err("too large".into());
        }
        let info = out.letter();
        let _ = out.send((n, info));
        Ok(())
    }
}

/// Drains a stage of [`Read`] under `strategy` after `sends`; returns
/// what was performed (with its info) and the dead letters.
fn run(
    strategy: Strategy<u32>,
    sends: Vec<(u32, Priority)>,
) -> (Vec<(u32, LetterInfo)>, Vec<DeadLetter<u32>>) {
    within("letter info", move || {
        let (tx, done) = mpsc::channel();
        let (dtx, dead) = mpsc::channel();
        let stage = Stage::builder("read", |_| Read)
            .strategy(strategy)
            .on_output(move |pair, _| tx.send(pair).unwrap())
            .on_dead_letter(move |d| dtx.send(d).unwrap())
            .spawn()
            .unwrap();
        for (n, p) in sends {
            stage
                .addr()
                .send_with(n, SendOptions::new().priority(p))
                .unwrap();
        }
        let exit = stage.drain();
        assert_balanced(&exit.metrics);
        (done.try_iter().collect(), dead.try_iter().collect())
    })
}

#[test]
fn perform_reads_the_predicate_runs_and_send_backs_of_its_letter() {
    let (done, dead) = run(
        Strategy::predicate(|n: &u32| n.is_multiple_of(2), 3).hop_limit(10),
        vec![(1, Priority::MEDIUM), (2, Priority::MEDIUM)],
    );
    assert!(dead.is_empty());
    let odd = done.iter().find(|(n, _)| *n == 1).unwrap().1;
    let even = done.iter().find(|(n, _)| *n == 2).unwrap().1;
    // 1 was turned away three times, then performed.
    assert_eq!(
        (odd.predicate_runs, odd.sent_back, odd.hops_left),
        (3, 3, 7)
    );
    assert_eq!((odd.priority, odd.ttl), (Priority::MEDIUM, None));
    assert_eq!((even.predicate_runs, even.sent_back), (0, 0));
}

#[test]
fn perform_reads_the_ttl_left_and_the_aged_priority() {
    let (done, _) = run(
        Strategy::ttl_range(1..=3, |n: &u32| *n),
        vec![(6, Priority::LOW)],
    );
    // TTL 6 is sent back three times (6, 5, 4), performed at 3.
    assert_eq!(done.len(), 1);
    let info = done[0].1;
    assert_eq!((info.ttl, info.sent_back), (Some(3), 3));

    let (done, _) = run(
        Strategy::priority_threshold(Priority::HIGH),
        vec![(5, Priority::LOW)],
    );
    // Aged LOW -> MEDIUM -> HIGH, performed at HIGH after two hops.
    let info = done[0].1;
    assert_eq!((info.priority, info.sent_back), (Priority::HIGH, 2));
}

#[test]
fn a_dead_letter_carries_its_information_at_the_priority_it_was_queued_at() {
    // Fails every time: HIGH, lowered to MEDIUM, aged to HIGH, lowered...
    // until the hop limit; the dead letter reports where it was queued.
    let (_, dead) = run(
        Strategy::priority_threshold(Priority::HIGH).hop_limit(3),
        vec![(2000, Priority::HIGH)],
    );
    assert_eq!(dead.len(), 1);
    let d = &dead[0];
    assert_eq!(d.reason, DeadReason::HopLimit);
    // Hops: HIGH -fail-> MEDIUM -age-> HIGH -fail-> MEDIUM, then the 4th
    // send-back (aging) is refused: it was queued at MEDIUM.
    assert_eq!(d.priority, Priority::MEDIUM);
    assert_eq!(d.info.priority, Priority::MEDIUM);
    assert_eq!((d.info.sent_back, d.info.hops_left), (3, 0));

    let (_, dead) = run(
        Strategy::ttl_range(5..=9, |n: &u32| *n),
        vec![(2, Priority::URGENT)],
    );
    assert_eq!(dead[0].reason, DeadReason::Expired);
    assert_eq!(dead[0].info.ttl, Some(2));
    assert_eq!(dead[0].info.priority, Priority::URGENT);
}

/// A dead letter reports the predicate runs that sent it back, one per
/// send-back, as it reports the priority and TTL it was queued at: the
/// run that finds the hop limit reached sends nothing back.
#[test]
fn a_predicate_stages_dead_letter_counts_the_runs_that_sent_it_back() {
    for (hops, sent_back) in [(3, 3), (0, 0)] {
        let (done, dead) = run(
            Strategy::predicate(|_: &u32| false, 10).hop_limit(hops),
            vec![(7, Priority::MEDIUM)],
        );
        assert!(done.is_empty());
        assert_eq!(dead.len(), 1);
        let d = &dead[0];
        assert_eq!((d.message, d.reason), (7, DeadReason::HopLimit));
        assert_eq!(
            (d.info.sent_back, d.info.predicate_runs, d.info.hops_left),
            (sent_back, sent_back, 0),
            "one predicate run per send-back (hop limit {hops})"
        );
    }
}
