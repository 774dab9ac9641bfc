//! `ExecutorHandle`: a cheap clonable handle that enqueues, reads metrics
//! and shuts down through `&self`, also from inside the executor's own
//! jobs; the `Executor` stays the owner and its drop stays graceful.

use crate::common::{Gate, hold_worker, watchdog};
use priority_executor::{Capacity, EnqueueError, Executor, ExecutorHandle, Priority};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

const P: Priority = Priority(1);

fn exec(core: usize, max: usize) -> Executor {
    Executor::builder()
        .name("handle")
        .core_threads(core)
        .max_threads(max)
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap()
}

fn counting_job(ran: &Arc<AtomicUsize>) -> impl FnOnce() + Send + 'static {
    let ran = Arc::clone(ran);
    move || {
        ran.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_handle_is_clone_send_and_sync() {
    fn assert_traits<H: Clone + Send + Sync + 'static>() {}
    assert_traits::<ExecutorHandle>();
}

#[test]
fn handles_on_other_threads_enqueue_and_read_metrics() {
    let e = exec(2, 2);
    let ran = Arc::new(AtomicUsize::new(0));
    let producers: Vec<_> = (0..4)
        .map(|_| {
            let handle = e.handle();
            let ran = Arc::clone(&ran);
            std::thread::spawn(move || {
                for _ in 0..50 {
                    handle
                        .enqueue(P, counting_job(&ran))
                        .unwrap()
                        .join()
                        .unwrap();
                }
                handle.metrics().lane(P).unwrap().completed
            })
        })
        .collect();
    for producer in producers {
        assert!(producer.join().unwrap() >= 50);
    }
    assert_eq!(ran.load(Ordering::SeqCst), 200);
    assert_eq!(e.handle().name(), "handle");
}

#[test]
fn shutdown_through_a_shared_reference_drains_the_queue() {
    // An executor shared in an Arc can stop gracefully without being the
    // last reference.
    let e = Arc::new(exec(1, 1));
    let gate = hold_worker(&e, P);
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let _detached = e.enqueue(P, counting_job(&ran));
    }
    let other = Arc::clone(&e);
    let stopper = std::thread::spawn(move || other.shutdown());
    // The shutdown is waiting for the held worker; new jobs are refused.
    crate::common::wait_until("the executor closes", || e.is_shut_down());
    assert!(matches!(
        e.enqueue(P, || ()).unwrap_err(),
        EnqueueError::ShutDown { .. }
    ));
    drop(gate);
    stopper.join().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 100);
    assert!(e.is_terminated());
}

#[test]
fn shutdown_from_inside_a_job_returns_and_the_executor_terminates() {
    for (core, max) in [(1, 1), (2, 2)] {
        let (ran, terminated) = watchdog("a job shutting down its own executor", move || {
            let e = exec(core, max);
            let ran = Arc::new(AtomicUsize::new(0));
            let start = Gate::default();
            let handle = e.handle();
            let opened = start.clone();
            let stopper = e
                .enqueue(P, move || {
                    opened.wait();
                    handle.shutdown(); // must not wait for this very thread
                    "returned"
                })
                .unwrap();
            // Queued behind the stopping job: they still run.
            for _ in 0..10 {
                let _detached = e.enqueue(P, counting_job(&ran));
            }
            start.open();
            assert_eq!(stopper.join(), Ok("returned"));
            let terminated = e.await_termination(Duration::from_secs(30));
            (ran.load(Ordering::SeqCst), terminated)
        });
        assert_eq!(ran, 10, "core {core}");
        assert!(terminated, "core {core}");
    }
}

#[test]
fn dropping_the_executor_shuts_down_gracefully_whatever_handles_remain() {
    let e = exec(1, 1);
    let handle = e.handle();
    let gate = hold_worker(&e, P);
    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..20 {
        let _detached = handle.enqueue(P, counting_job(&ran));
    }
    let (dropped_tx, dropped) = mpsc::channel();
    let owner = std::thread::spawn(move || {
        drop(e);
        dropped_tx.send(()).unwrap();
    });
    crate::common::wait_until("the drop closes the executor", || handle.is_shut_down());
    drop(gate);
    dropped.recv().unwrap();
    owner.join().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 20);
    assert!(handle.is_terminated());
    // The handle outlives the executor: it refuses, handing the job back.
    let err = handle.enqueue(P, || 7).unwrap_err();
    assert!(matches!(err, EnqueueError::ShutDown { .. }));
    assert_eq!(err.into_inner()(), 7);
}

#[test]
fn is_terminated_only_once_every_worker_has_exited() {
    let e = exec(1, 1);
    let release = hold_worker(&e, P);
    assert!(!e.is_terminated());
    let pending = e.shutdown_now();
    assert!(pending.is_empty());
    assert!(e.is_shut_down());
    assert!(!e.is_terminated(), "the held job is still running");
    drop(release);
    assert!(e.await_termination(Duration::from_secs(30)));
    assert!(e.is_terminated());
}
