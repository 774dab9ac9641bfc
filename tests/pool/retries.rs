//! Retries: a failing job is queued again up to `max_retries`, with
//! backoff and at another priority if asked, then dead-lettered. Nothing is
//! dropped silently.

use crate::common::wait_until;
use priority_executor::{Capacity, Executor, JobError, Priority, RetryPolicy};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn exec_with_dead_letters() -> (Executor, mpsc::Receiver<priority_executor::DeadJob>) {
    let (tx, rx) = mpsc::channel();
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(2)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Bounded(2))
        .on_dead_letter(move |d| tx.send(d).unwrap())
        .build()
        .unwrap();
    (exec, rx)
}

#[test]
fn succeeds_on_a_later_attempt() {
    let (exec, dead) = exec_with_dead_letters();
    let h = exec
        .enqueue_retrying(
            Priority(1),
            |a| {
                if a.number < 4 {
                    Err(format!("attempt {} failed", a.number))
                } else {
                    Ok(a.number)
                }
            },
            RetryPolicy::new(5),
        )
        .unwrap();
    assert_eq!(h.join(), Ok(4));
    let lane = exec.metrics().lane(Priority(1)).unwrap().clone();
    assert_eq!((lane.submitted, lane.retried, lane.completed), (1, 3, 1));
    assert_eq!(lane.dispatched, 4);
    assert_eq!(lane.settled(), lane.submitted);
    drop(exec);
    assert!(dead.try_recv().is_err());
}

#[test]
fn exhausted_retries_go_to_the_dead_letters() {
    let (exec, dead) = exec_with_dead_letters();
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let seen = attempts.clone();
    let h = exec
        .enqueue_retrying(
            Priority(1),
            move |a| {
                seen.lock().unwrap().push((a.number, a.last));
                Err::<(), _>("still broken")
            },
            RetryPolicy::new(2).backoff(Duration::from_millis(1), 2.0),
        )
        .unwrap();
    assert_eq!(
        h.join(),
        Err(JobError::Failed {
            attempts: 3,
            message: "still broken".into()
        })
    );
    assert_eq!(
        *attempts.lock().unwrap(),
        vec![(1, false), (2, false), (3, true)]
    );
    let letter = dead.recv().unwrap();
    assert_eq!((letter.priority, letter.attempts), (Priority(1), 3));
    let lane = exec.metrics().lane(Priority(1)).unwrap().clone();
    assert_eq!(
        (lane.retried, lane.dead_lettered, lane.completed),
        (2, 1, 0)
    );
    assert_eq!(lane.settled(), lane.submitted);
}

#[test]
fn panics_count_as_failed_attempts_and_retries_can_escalate() {
    let (exec, _dead) = exec_with_dead_letters();
    let h = exec
        .enqueue_retrying(
            Priority(1),
            |a| {
                if a.number == 1 {
                    panic!("flaky");
                }
                Ok::<_, String>("recovered")
            },
            RetryPolicy::new(1).retry_at(Priority(10)),
        )
        .unwrap();
    assert_eq!(h.join(), Ok("recovered"));
    let m = exec.metrics();
    assert_eq!(m.lane(Priority(1)).unwrap().retried, 1);
    // The retry ran in the high lane.
    assert_eq!(m.lane(Priority(10)).unwrap().dispatched, 1);
    assert_eq!(m.lane(Priority(10)).unwrap().completed, 1);
    // Counted as submitted in the lane it entered, completed in the lane it
    // finished: over the executor it adds up.
    let submitted: u64 = m.lanes.iter().map(|l| l.submitted).sum();
    let settled: u64 = m.lanes.iter().map(|l| l.settled()).sum();
    assert_eq!(submitted, settled);
}

/// Queues a job whose first attempt fails and whose retry waits an hour,
/// and returns once that retry is waiting on the timer.
fn parked_retry(exec: &Executor) -> priority_executor::JobHandle<u32> {
    let h = exec
        .enqueue_retrying(
            Priority(1),
            |a| {
                if a.number == 1 {
                    Err("later")
                } else {
                    Ok(a.number)
                }
            },
            RetryPolicy::new(1).backoff(Duration::from_secs(3600), 1.0),
        )
        .unwrap();
    wait_until("the first attempt failed", || {
        exec.metrics().lane(Priority(1)).unwrap().retried == 1
    });
    h
}

#[test]
fn retries_waiting_on_backoff_run_at_graceful_shutdown() {
    let (exec, _dead) = exec_with_dead_letters();
    let h = parked_retry(&exec);
    // The retry waits an hour; shutdown does not.
    exec.shutdown();
    assert_eq!(h.join(), Ok(2));
}

#[test]
fn retries_waiting_on_backoff_are_handed_back_by_shutdown_now() {
    let (exec, _dead) = exec_with_dead_letters();
    let h = parked_retry(&exec);
    let pending = exec.shutdown_now();
    assert_eq!(pending.len(), 1);
    for job in pending {
        job.run();
    }
    assert_eq!(h.join(), Ok(2));
}
