//! A full bounded lane blocks `enqueue` until a worker frees a slot;
//! options that wait at most a time (or not at all) hand the job back instead.

use crate::common::{hold_worker, within};
use crate::common::{no_wait, wait_at_most};
use priority_executor::{Capacity, EnqueueError, Executor, Priority};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

fn one_worker(capacity: usize) -> Executor {
    Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Bounded(capacity))
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap()
}

#[test]
fn full_lane_blocks_enqueue_until_a_slot_frees() {
    let exec = Arc::new(one_worker(2));
    let gate = hold_worker(&exec, Priority(1));
    for i in 0..2 {
        let _detached = exec
            .enqueue_with(Priority(10), move || i, no_wait())
            .unwrap();
    }
    // The lane is full: a producer thread blocks in enqueue.
    let (done_tx, done) = mpsc::channel();
    let producer = {
        let exec = exec.clone();
        std::thread::spawn(move || {
            let handle = exec.enqueue(Priority(10), || "third").unwrap();
            done_tx.send(()).unwrap();
            handle.join()
        })
    };
    // It cannot have returned: no slot is free while the worker is held.
    assert_eq!(
        done.recv_timeout(Duration::from_millis(50)),
        Err(mpsc::RecvTimeoutError::Timeout)
    );
    assert_eq!(exec.metrics().lane(Priority(10)).unwrap().queued, 2);
    // Freeing the worker frees slots; the producer gets in and its job runs.
    drop(gate);
    done.recv().unwrap();
    assert_eq!(producer.join().unwrap(), Ok("third"));
    // Other lanes were never blocked by the full one.
    assert_eq!(exec.enqueue(Priority(1), || 1).unwrap().join(), Ok(1));
}

#[test]
fn try_enqueue_hands_back_the_job_when_full() {
    let exec = one_worker(1);
    let gate = hold_worker(&exec, Priority(1));
    let _first = exec.enqueue_with(Priority(10), || 0, no_wait()).unwrap();
    let err = exec
        .enqueue_with(Priority(10), || 7, no_wait())
        .unwrap_err();
    assert!(matches!(err, EnqueueError::Full { .. }));
    assert_eq!(err.to_string(), "lane 10 is full (capacity 1)");
    assert_eq!(err.into_inner()(), 7);
    assert_eq!(exec.metrics().lane(Priority(10)).unwrap().rejected, 1);
    drop(gate);
}

#[test]
fn enqueue_timeout_gives_up_with_the_job() {
    let exec = one_worker(1);
    let gate = hold_worker(&exec, Priority(1));
    let _first = exec.enqueue_with(Priority(10), || 0, no_wait()).unwrap();
    let err = exec
        .enqueue_with(Priority(10), || 9, wait_at_most(Duration::from_millis(20)))
        .unwrap_err();
    assert!(matches!(err, EnqueueError::Full { .. }));
    assert_eq!(err.into_inner()(), 9);
    drop(gate);
    // With a slot free it goes in.
    let h = exec
        .enqueue_with(Priority(10), || 10, wait_at_most(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(h.join(), Ok(10));
}

#[test]
fn shutdown_wakes_a_blocked_producer_with_its_job() {
    let exec = Arc::new(one_worker(1));
    let gate = hold_worker(&exec, Priority(1));
    let _first = exec.enqueue_with(Priority(10), || 0, no_wait()).unwrap();
    let (blocked_tx, blocked) = mpsc::channel();
    let producer = {
        let exec = exec.clone();
        std::thread::spawn(move || {
            blocked_tx.send(()).unwrap();
            exec.enqueue(Priority(10), || 5)
                .map(drop)
                .map_err(|e| (matches!(e, EnqueueError::ShutDown { .. }), e.into_inner()()))
        })
    };
    blocked.recv().unwrap();
    let pending = exec.shutdown_now();
    // The queued job is handed back; the blocked producer gets its own job
    // back, or got in before the close and then it is in `pending`.
    match producer.join().unwrap() {
        Err((shut_down, value)) => {
            assert!(shut_down);
            assert_eq!(value, 5);
            assert_eq!(pending.len(), 1);
        }
        Ok(()) => assert_eq!(pending.len(), 2),
    }
    drop(gate);
}

/// A job that fills a lane of its own executor and keeps enqueueing into it
/// would wait for a slot only itself could free; instead, the worker runs
/// queued jobs while it waits. One worker, capacity 1: every job runs.
#[test]
fn a_job_enqueueing_into_its_own_full_lane_runs_queued_jobs_meanwhile() {
    let exec = Arc::new(one_worker(1));
    let inner = exec.clone();
    let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = ran.clone();
    let outer = exec
        .enqueue(Priority(1), move || {
            let handles: Vec<_> = (0..5)
                .map(|_| {
                    let counted = counted.clone();
                    inner
                        .enqueue(Priority(10), move || {
                            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        })
                        .expect("accepted")
                })
                .collect();
            handles.len()
        })
        .unwrap();
    let queued = within(
        "a job enqueueing into its own full lane",
        LIMIT,
        move || outer.join(),
    );
    assert_eq!(queued, Ok(5));
    drop(exec);
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 5);
}

const LIMIT: Duration = Duration::from_secs(10);
