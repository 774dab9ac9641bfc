//! Deadlines: a job not started by its deadline is not run; its handle
//! says so, the lane counts it, the hook hears of it, and a lane full of
//! expired jobs does not stall the others.

use crate::common::hold_worker;
use crate::common::no_wait;
use priority_executor::{Capacity, EnqueueError, Executor, JobError, JobOptions, Priority};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn expired_jobs_are_not_run_and_are_reported() {
    let (tx, expired) = mpsc::channel();
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .on_expired(move |job| tx.send(job.priority).unwrap())
        .build()
        .unwrap();
    let gate = hold_worker(&exec, Priority(10));
    let ran = Arc::new(AtomicUsize::new(0));
    // Deadlines already in the past: by the time the worker is free they
    // have certainly passed.
    let past = Instant::now();
    let mut doomed = Vec::new();
    for _ in 0..1000 {
        let ran = ran.clone();
        doomed.push(
            exec.enqueue_with(
                Priority(1),
                move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                },
                JobOptions::new().deadline(past),
            )
            .unwrap(),
        );
    }
    let fine = exec
        .enqueue_with(
            Priority(10),
            || "ran",
            JobOptions::new().ttl(Duration::from_secs(3600)),
        )
        .unwrap();
    drop(gate);
    assert_eq!(fine.join(), Ok("ran"));
    for h in doomed {
        assert_eq!(h.join(), Err(JobError::Expired));
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    let lane = exec.metrics().lane(Priority(1)).unwrap().clone();
    assert_eq!(lane.expired, 1000);
    assert_eq!(lane.completed, 0);
    assert_eq!(lane.settled(), lane.submitted);
    assert_eq!(expired.try_iter().count(), 1000);
}

#[test]
fn a_time_to_live_counts_from_each_submission_not_from_the_options() {
    let exec = Executor::builder()
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let ttl = Duration::from_secs(1);
    let kept = JobOptions::new().ttl(ttl);
    assert_eq!(
        exec.enqueue_with(Priority(1), || 1, kept).unwrap().join(),
        Ok(1)
    );
    // The options outlive their time to live (a wait on the clock, not a
    // synchronisation): a job given them now still has all of it.
    let built = Instant::now();
    while built.elapsed() <= ttl {
        std::thread::sleep(ttl / 10);
    }
    assert_eq!(
        exec.enqueue_with(Priority(1), || 2, kept).unwrap().join(),
        Ok(2)
    );
    assert_eq!(exec.metrics().lane(Priority(1)).unwrap().expired, 0);
}

#[test]
fn a_job_without_options_never_expires() {
    let exec = Executor::builder()
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let h = exec
        .enqueue_with(Priority(1), || 5, JobOptions::new())
        .unwrap();
    assert_eq!(h.join(), Ok(5));
    assert_eq!(exec.metrics().lanes[0].expired, 0);
}

#[test]
fn try_enqueue_value_with_expires_and_hands_the_value_back_when_full() {
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(1), Capacity::Bounded(1))
        .build()
        .unwrap();
    let gate = hold_worker(&exec, Priority(1));
    let doomed = exec
        .enqueue_value(
            Priority(1),
            String::from("late"),
            |s: String| s.len(),
            JobOptions::new()
                .deadline(Instant::now())
                .wait_at_most(Duration::ZERO),
        )
        .unwrap();
    // The lane (capacity 1) is full now: refused at once, value handed back.
    let err = exec
        .enqueue_value(
            Priority(1),
            String::from("kept"),
            |s: String| s.len(),
            no_wait(),
        )
        .unwrap_err();
    assert!(matches!(err, EnqueueError::Full { .. }));
    assert_eq!(err.into_inner(), "kept");
    drop(gate);
    assert_eq!(doomed.join(), Err(JobError::Expired));
    let lane = exec.metrics().lane(Priority(1)).unwrap().clone();
    assert_eq!((lane.expired, lane.rejected), (1, 1));
}
