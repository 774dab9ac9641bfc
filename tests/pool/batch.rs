//! `enqueue_batch`: many jobs of one priority in one call, in order, each
//! published and a worker woken for it as it comes; a full lane is handled
//! job by job as `enqueue` would, and a batch stopped midway loses nothing.

use crate::common::{hold_worker, watchdog};
use priority_executor::{
    BatchError, Capacity, EnqueueError, Executor, ExecutorBuilder, LaneConfig, Priority,
    RejectionPolicy,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};

const P: Priority = Priority(1);

fn builder(core: usize, max: usize) -> ExecutorBuilder {
    Executor::builder()
        .name("batch")
        .core_threads(core)
        .max_threads(max)
}

#[test]
fn a_batch_runs_in_order_and_returns_handles_in_order() {
    let exec = builder(1, 1).lane(P, Capacity::Unbounded).build().unwrap();
    let gate = hold_worker(&exec, P);
    let order = Arc::new(Mutex::new(Vec::new()));
    let jobs = (0..300).map(|i| {
        let order = Arc::clone(&order);
        move || {
            order.lock().unwrap().push(i);
            i * 2
        }
    });
    let handles = exec.enqueue_batch(P, jobs).unwrap();
    assert_eq!(handles.len(), 300);
    drop(gate);
    let results: Vec<i32> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results, (0..300).map(|i| i * 2).collect::<Vec<_>>());
    assert_eq!(*order.lock().unwrap(), (0..300).collect::<Vec<_>>());
    let lane = &exec.metrics().lanes[0];
    assert_eq!((lane.submitted, lane.settled()), (301, 301));
}

#[test]
fn a_batch_wakes_a_sleeper_per_job() {
    // Four workers asleep; four jobs that can only finish together. A
    // batch that woke fewer workers would leave the barrier short.
    let done = watchdog("four jobs of one batch running at once", || {
        let exec = builder(4, 4).lane(P, Capacity::Unbounded).build().unwrap();
        assert_eq!(exec.prestart_core_threads(), 4);
        crate::common::wait_until("all four asleep", || exec.metrics().threads.sleeping == 4);
        let barrier = Arc::new(Barrier::new(4));
        let jobs = (0..4).map(|i| {
            let barrier = Arc::clone(&barrier);
            move || {
                barrier.wait();
                i
            }
        });
        let handles = exec.enqueue_batch(P, jobs).unwrap();
        handles.into_iter().map(|h| h.join().unwrap()).sum::<i32>()
    });
    assert_eq!(done, 6);
}

#[test]
fn a_batch_starts_threads_for_the_jobs_it_queues() {
    let done = watchdog("a batch growing the pool", || {
        let exec = builder(0, 3).lane(P, Capacity::Unbounded).build().unwrap();
        let barrier = Arc::new(Barrier::new(3));
        let jobs = (0..3).map(|_| {
            let barrier = Arc::clone(&barrier);
            move || {
                barrier.wait();
            }
        });
        let handles = exec.enqueue_batch(P, jobs).unwrap();
        handles.into_iter().map(|h| h.join().unwrap()).count()
    });
    assert_eq!(done, 3);
}

#[test]
fn a_batch_larger_than_its_bounded_lane_waits_for_slots() {
    // Its own jobs fill the lane: the batch publishes them before it
    // blocks, so the workers can drain them.
    let ran = watchdog("a batch of 500 through a lane of 10", || {
        let exec = builder(1, 1)
            .lane(P, Capacity::Bounded(10))
            .build()
            .unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let jobs = (0..500).map(|_| {
            let ran = Arc::clone(&ran);
            move || {
                ran.fetch_add(1, Ordering::SeqCst);
            }
        });
        let handles = exec.enqueue_batch(P, jobs).unwrap();
        assert_eq!(handles.len(), 500);
        exec.wait_idle();
        ran.load(Ordering::SeqCst)
    });
    assert_eq!(ran, 500);
}

#[test]
fn a_full_lane_that_rejects_stops_the_batch_and_hands_the_rest_back() {
    let exec = builder(1, 1)
        .lane_config(
            LaneConfig::new(P)
                .capacity(Capacity::Bounded(3))
                .when_full(RejectionPolicy::Reject),
        )
        .build()
        .unwrap();
    let gate = hold_worker(&exec, P);
    let err = exec
        .enqueue_batch(P, (0..10).map(|i| move || i))
        .unwrap_err();
    assert!(matches!(err.error, EnqueueError::Full { .. }), "{err}");
    assert_eq!((err.accepted.len(), err.rest.len()), (3, 6));
    let BatchError {
        error,
        accepted,
        rest,
        ..
    } = err;
    let refused = std::iter::once(error.into_inner()).chain(rest);
    let back: Vec<i32> = refused.map(|job| job()).collect();
    assert_eq!(back, (3..10).collect::<Vec<_>>());
    drop(gate);
    let ran: Vec<i32> = accepted.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(ran, vec![0, 1, 2]);
    assert_eq!(exec.metrics().lanes[0].rejected, 1);
}

#[test]
fn caller_runs_runs_the_overflow_here_and_goes_on() {
    let exec = builder(1, 1)
        .lane_config(
            LaneConfig::new(P)
                .capacity(Capacity::Bounded(1))
                .when_full(RejectionPolicy::CallerRuns),
        )
        .build()
        .unwrap();
    let gate = hold_worker(&exec, P);
    let me = std::thread::current().id();
    let jobs = (0..3).map(|_| move || std::thread::current().id() == me);
    let handles = exec.enqueue_batch(P, jobs).unwrap();
    // The first took the only slot; the other two ran on this thread.
    assert!(handles[1].is_finished() && handles[2].is_finished());
    drop(gate);
    let here: Vec<bool> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(here, vec![false, true, true]);
    assert_eq!(exec.metrics().lanes[0].caller_ran, 2);
}

#[test]
fn a_batch_stopped_by_shutdown_midway_loses_nothing() {
    let exec = builder(1, 1).lane(P, Capacity::Unbounded).build().unwrap();
    let gate = hold_worker(&exec, P);
    let stopper = exec.clone();
    let handed_back = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&handed_back);
    // The batch's own iterator shuts the executor down at job 100.
    let jobs = (0..200).map(move |i| {
        if i == 100 {
            counted.store(stopper.shutdown_now().len(), Ordering::SeqCst);
        }
        move || i
    });
    let err = exec.enqueue_batch(P, jobs).unwrap_err();
    assert!(matches!(err.error, EnqueueError::ShutDown { .. }), "{err}");
    let BatchError {
        error,
        accepted: handles,
        rest,
        ..
    } = err;
    let accepted = handles.len();
    let refused: Vec<_> = std::iter::once(error.into_inner()).chain(rest).collect();
    // Every job is accounted for: queued (then handed back by
    // shutdown_now), or handed back here in order.
    assert_eq!(accepted + refused.len(), 200);
    assert_eq!(handed_back.load(Ordering::SeqCst), accepted);
    let back: Vec<i32> = refused.into_iter().map(|job| job()).collect();
    assert_eq!(back, (accepted as i32..200).collect::<Vec<_>>());
    drop(gate);
    for handle in handles {
        // Handed back by shutdown_now and dropped there: cancelled.
        assert!(handle.join().is_err());
    }
}

#[test]
fn an_unknown_priority_refuses_the_whole_batch_and_an_empty_batch_is_fine() {
    let exec = builder(1, 1).lane(P, Capacity::Unbounded).build().unwrap();
    let err = exec
        .enqueue_batch(Priority(9), (0..5).map(|i| move || i))
        .unwrap_err();
    assert!(matches!(err.error, EnqueueError::UnknownPriority { .. }));
    assert!(err.accepted.is_empty());
    let refused: Vec<_> = std::iter::once(err.error.into_inner())
        .chain(err.rest)
        .collect();
    assert_eq!(refused.len(), 5);
    let none = exec.enqueue_batch(Priority(9), Vec::<fn() -> i32>::new());
    assert!(none.unwrap().is_empty());
}
