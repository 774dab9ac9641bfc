//! What `enqueue` does when a bounded lane is full: block (tested in
//! `backpressure.rs`), reject, caller-runs, discard-oldest. Whatever is
//! refused or pushed out is handed back, never dropped silently.

use crate::common::hold_worker;
use crate::common::no_wait;
use priority_executor::{
    Capacity, EnqueueError, Executor, JobError, JobOptions, LaneConfig, Permit, Priority,
    RejectionPolicy,
};
use std::sync::mpsc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

fn exec(policy: RejectionPolicy) -> Executor {
    Executor::builder()
        .name("reject")
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane_config(
            LaneConfig::new(Priority(1))
                .capacity(Capacity::Bounded(2))
                .when_full(policy),
        )
        .build()
        .unwrap()
}

#[test]
fn reject_returns_the_job_at_once() {
    let e = exec(RejectionPolicy::Reject);
    let gate = hold_worker(&e, Priority(10));
    let _a = e.enqueue(Priority(1), || 1).unwrap();
    let _b = e.enqueue(Priority(1), || 2).unwrap();
    let err = e.enqueue(Priority(1), || 3).unwrap_err();
    assert!(matches!(err, EnqueueError::Full { .. }));
    assert_eq!(err.into_inner()(), 3);
    assert_eq!(e.metrics().lane(Priority(1)).unwrap().rejected, 1);
    drop(gate);
}

#[test]
fn caller_runs_runs_the_job_on_the_producer() {
    let e = exec(RejectionPolicy::CallerRuns);
    let gate = hold_worker(&e, Priority(10));
    let _a = e.enqueue(Priority(1), || 1).unwrap();
    let _b = e.enqueue(Priority(1), || 2).unwrap();
    let me = std::thread::current().id();
    let h = e
        .enqueue(Priority(1), move || std::thread::current().id() == me)
        .unwrap();
    // Already done, on this thread, while the only worker is still held.
    assert!(h.is_finished());
    assert_eq!(h.join(), Ok(true));
    let lane = e.metrics().lane(Priority(1)).unwrap().clone();
    assert_eq!((lane.caller_ran, lane.submitted, lane.completed), (1, 3, 1));
    // A submission that does not wait never runs a job inline.
    assert!(matches!(
        e.enqueue_with(Priority(1), || false, no_wait())
            .unwrap_err(),
        EnqueueError::Full { .. }
    ));
    drop(gate);
}

#[test]
fn discard_oldest_hands_the_oldest_back_through_its_handle() {
    let e = exec(RejectionPolicy::DiscardOldest);
    let gate = hold_worker(&e, Priority(10));
    let oldest = e.enqueue(Priority(1), || "oldest").unwrap();
    let middle = e.enqueue(Priority(1), || "middle").unwrap();
    let newest = e.enqueue(Priority(1), || "newest").unwrap();
    assert_eq!(oldest.join(), Err(JobError::Discarded));
    let lane = e.metrics().lane(Priority(1)).unwrap().clone();
    assert_eq!((lane.discarded, lane.queued), (1, 2));
    drop(gate);
    assert_eq!(middle.join(), Ok("middle"));
    assert_eq!(newest.join(), Ok("newest"));
    let lane = e.metrics().lane(Priority(1)).unwrap().clone();
    assert_eq!(lane.settled(), lane.submitted);
}

#[test]
fn policy_names_parse_and_unknown_ones_are_errors() {
    for p in [
        RejectionPolicy::Block,
        RejectionPolicy::Reject,
        RejectionPolicy::CallerRuns,
        RejectionPolicy::DiscardOldest,
    ] {
        assert_eq!(p.as_str().parse(), Ok(p));
    }
    let err = "discard".parse::<RejectionPolicy>().unwrap_err();
    assert!(
        err.contains("block, reject, caller-runs, discard-oldest"),
        "{err}"
    );
}

/// A slot of the low lane, held by a permit until it is used or dropped.
fn permit(e: &Executor) -> Permit {
    let mut reserve = e.reserve(Priority(1));
    match reserve.poll_reserve(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(permit)) => permit,
        _ => panic!("the lane has room"),
    }
}

/// The lane's slots all reserved by permits (nothing queued to push out):
/// discard-oldest waits for room as a blocking lane does, within the
/// producer's wait, instead of spinning until a permit is used.
#[test]
fn discard_oldest_with_every_slot_held_by_permits_waits_within_its_limit() {
    let e = exec(RejectionPolicy::DiscardOldest);
    let (first, second) = (permit(&e), permit(&e));

    // A bounded wait: refused once it is over, the job handed back.
    let (tx, answered) = mpsc::channel();
    let producer = e.clone();
    std::thread::spawn(move || {
        let options = JobOptions::new().wait_at_most(Duration::from_millis(20));
        let refused = producer.enqueue_with(Priority(1), || 7, options);
        let _ = tx.send(refused.map(drop).map_err(|err| err.into_inner()()));
    });
    let refused = answered
        .recv_timeout(Duration::from_secs(20))
        .expect("the producer answered");
    assert_eq!(refused, Err(7));

    // No limit: it waits, and goes in once a permit gives its slot back.
    let (tx, answered) = mpsc::channel();
    let producer = e.clone();
    std::thread::spawn(move || {
        let queued = producer.enqueue(Priority(1), || "late").map(|h| h.join());
        let _ = tx.send(queued.map_err(drop));
    });
    drop(first);
    let late = answered
        .recv_timeout(Duration::from_secs(20))
        .expect("the producer got room");
    assert_eq!(late, Ok(Ok("late")));
    drop(second);
    let lane = e.metrics().lane(Priority(1)).unwrap().clone();
    assert_eq!((lane.discarded, lane.completed), (0, 1));
}

/// A paused discard-oldest lane whose slots are all held by permits: a
/// producer waiting for room pushes out the job a permit queues meanwhile
/// (the lane's oldest then), rather than waiting for a take that a paused
/// lane never makes.
#[test]
fn a_waiting_discard_oldest_producer_pushes_out_a_job_queued_meanwhile() {
    let e = exec(RejectionPolicy::DiscardOldest);
    e.pause_lane(Priority(1)).unwrap();
    let (first, second) = (permit(&e), permit(&e));
    let (tx, answered) = mpsc::channel();
    let producer = e.clone();
    std::thread::spawn(move || {
        let options = JobOptions::new().wait_at_most(Duration::from_secs(30));
        let queued = producer.enqueue_with(Priority(1), || "late", options);
        let _ = tx.send(queued.map_err(drop));
    });
    // Not a synchronisation: whether the producer is still looking or
    // already waiting, the outcome below is the same; this only makes the
    // second case the likely one.
    std::thread::sleep(Duration::from_millis(50));
    let oldest = first.enqueue(|| "permit").unwrap();
    let late = answered
        .recv_timeout(Duration::from_secs(20))
        .expect("the producer got room while the lane is paused")
        .expect("queued");
    assert_eq!(oldest.join(), Err(JobError::Discarded));
    drop(second);
    e.resume_lane(Priority(1)).unwrap();
    assert_eq!(late.join(), Ok("late"));
}
