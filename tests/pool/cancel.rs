//! `JobHandle::cancel`: a job that has not started never runs, its handle
//! resolves `Cancelled` at once, and its lane counts it once a worker (or
//! `shutdown_now`, or discard-oldest) meets it; a started, finished or
//! already cancelled job is not cancelled.

use crate::common::hold_worker;
use priority_executor::{
    Capacity, Executor, JobError, JobOutcome, LaneConfig, Priority, RejectionPolicy,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

const HIGH: Priority = Priority(10);
const LOW: Priority = Priority(1);

fn one_worker() -> Executor {
    Executor::builder()
        .name("cancel")
        .core_threads(1)
        .max_threads(1)
        .lane(HIGH, Capacity::Unbounded)
        .lane(LOW, Capacity::Unbounded)
        .build()
        .unwrap()
}

/// Counts its drops: the job's captures are dropped exactly once.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_queued_job_cancelled_never_runs_and_is_counted() {
    let e = one_worker();
    let ran = Arc::new(AtomicUsize::new(0));
    let drops = Arc::new(AtomicUsize::new(0));
    let gate = hold_worker(&e, HIGH);
    let captured = Dropped(drops.clone());
    let counter = ran.clone();
    let job = e
        .enqueue(LOW, move || {
            let _keep = &captured;
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    let after = e.enqueue(LOW, || "after").unwrap();

    assert!(job.cancel());
    assert!(job.is_finished());
    assert!(!job.cancel(), "a second cancel cancels nothing");
    drop(gate);
    assert_eq!(after.join(), Ok("after"));
    assert_eq!(job.join(), Err(JobError::Cancelled));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    e.wait_idle();
    let lane = e.metrics().lane(LOW).unwrap().clone();
    assert_eq!((lane.cancelled, lane.completed, lane.queued), (1, 1, 0));
    assert_eq!(lane.settled(), lane.submitted);
}

#[test]
fn a_running_or_finished_job_is_not_cancelled() {
    let e = one_worker();
    let (started_tx, started) = mpsc::channel();
    let (release, gate) = mpsc::channel::<()>();
    let running = e
        .enqueue(LOW, move || {
            started_tx.send(()).unwrap();
            gate.recv().ok();
            "ran"
        })
        .unwrap();
    started.recv().unwrap();
    assert!(!running.cancel());
    release.send(()).unwrap();
    assert_eq!(running.join(), Ok("ran"));

    let done = e.enqueue(LOW, || 1).unwrap();
    e.wait_idle();
    assert!(done.is_finished());
    assert!(!done.cancel());
    assert_eq!(done.join(), Ok(1));
    assert_eq!(e.metrics().lane(LOW).unwrap().cancelled, 0);
}

#[test]
fn a_cancelled_job_calls_no_hook() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let before = seen.clone();
    let after = seen.clone();
    let e = Executor::builder()
        .name("cancel-hooks")
        .core_threads(1)
        .max_threads(1)
        .lane(HIGH, Capacity::Unbounded)
        .lane(LOW, Capacity::Unbounded)
        .before_execute(move |info| before.lock().unwrap().push(("before", info.priority)))
        .after_execute(move |info, outcome| {
            if outcome == JobOutcome::Completed {
                after.lock().unwrap().push(("after", info.priority));
            }
        })
        .build()
        .unwrap();
    let gate = hold_worker(&e, HIGH);
    let job = e.enqueue(LOW, || ()).unwrap();
    assert!(job.cancel());
    drop(gate);
    e.shutdown();
    // Only the gate job's hooks ran.
    assert_eq!(
        *seen.lock().unwrap(),
        vec![("before", HIGH), ("after", HIGH)]
    );
    assert_eq!(e.metrics().lane(LOW).unwrap().cancelled, 1);
}

#[test]
fn shutdown_now_does_not_hand_back_a_cancelled_job() {
    let e = one_worker();
    let gate = hold_worker(&e, HIGH);
    let kept = e.enqueue(LOW, || "kept").unwrap();
    let cancelled = e.enqueue(LOW, || "cancelled").unwrap();
    assert!(cancelled.cancel());

    let pending = e.shutdown_now();
    drop(gate);
    assert_eq!(pending.len(), 1);
    for job in pending {
        job.run();
    }
    assert_eq!(kept.join(), Ok("kept"));
    assert_eq!(cancelled.join(), Err(JobError::Cancelled));
    let lane = e.metrics().lane(LOW).unwrap().clone();
    assert_eq!((lane.handed_back, lane.cancelled), (1, 1));
    assert_eq!(lane.settled(), lane.submitted);
}

#[test]
fn a_handed_back_job_cancelled_before_it_is_run_does_not_run() {
    let e = one_worker();
    let gate = hold_worker(&e, HIGH);
    let job = e.enqueue(LOW, || unreachable!("cancelled")).unwrap();
    let pending = e.shutdown_now();
    drop(gate);
    assert_eq!(pending.len(), 1);
    // Handed back: the caller holds the job now, and cancelling through
    // the handle is refused (it may still be run or dropped).
    assert!(!job.cancel());
    drop(pending);
    assert_eq!(job.join(), Err(JobError::Cancelled));
}

#[test]
fn discard_oldest_takes_a_cancelled_job_as_the_free_slot() {
    let e = Executor::builder()
        .name("cancel-discard")
        .core_threads(1)
        .max_threads(1)
        .lane(HIGH, Capacity::Unbounded)
        .lane_config(
            LaneConfig::new(LOW)
                .capacity(Capacity::Bounded(2))
                .when_full(RejectionPolicy::DiscardOldest),
        )
        .build()
        .unwrap();
    let gate = hold_worker(&e, HIGH);
    let cancelled = e.enqueue(LOW, || "cancelled").unwrap();
    let second = e.enqueue(LOW, || "second").unwrap();
    assert!(cancelled.cancel());
    // The lane is full; the oldest job is the cancelled one: it goes, and
    // no live job is discarded.
    let third = e.enqueue(LOW, || "third").unwrap();
    drop(gate);
    assert_eq!(second.join(), Ok("second"));
    assert_eq!(third.join(), Ok("third"));
    assert_eq!(cancelled.join(), Err(JobError::Cancelled));
    e.wait_idle();
    let lane = e.metrics().lane(LOW).unwrap().clone();
    assert_eq!((lane.discarded, lane.cancelled, lane.completed), (0, 1, 2));
    assert_eq!(lane.settled(), lane.submitted);
}

#[test]
fn a_future_cannot_be_cancelled() {
    let e = one_worker();
    let gate = hold_worker(&e, HIGH);
    let future = e.spawn_future(LOW, async { 5 }).unwrap();
    assert!(!future.cancel());
    drop(gate);
    assert_eq!(future.join(), Ok(5));
}

/// Cancels race the worker: each job either ran or was cancelled, never
/// both, never neither; the counters agree.
#[test]
fn cancels_racing_the_workers_are_exact() {
    const JOBS: usize = 2_000;
    let e = Executor::builder()
        .name("cancel-race")
        .core_threads(2)
        .max_threads(2)
        .lane(LOW, Capacity::Unbounded)
        .build()
        .unwrap();
    let ran: Arc<Vec<AtomicUsize>> = Arc::new((0..JOBS).map(|_| AtomicUsize::new(0)).collect());
    let handles: Vec<_> = (0..JOBS)
        .map(|i| {
            let ran = ran.clone();
            e.enqueue(LOW, move || {
                ran[i].fetch_add(1, Ordering::SeqCst);
            })
            .unwrap()
        })
        .collect();
    let cancelled: Vec<bool> = handles.iter().map(|h| h.cancel()).collect();
    let mut count = 0;
    for ((handle, was_cancelled), ran) in handles.into_iter().zip(&cancelled).zip(ran.iter()) {
        let result = handle.join();
        let runs = ran.load(Ordering::SeqCst);
        if *was_cancelled {
            count += 1;
            assert_eq!((result, runs), (Err(JobError::Cancelled), 0));
        } else {
            assert_eq!((result, runs), (Ok(()), 1));
        }
    }
    e.wait_idle();
    let lane = e.metrics().lane(LOW).unwrap().clone();
    assert_eq!(lane.cancelled, count);
    assert_eq!(lane.completed, JOBS as u64 - count);
    assert_eq!(lane.settled(), lane.submitted);
}
