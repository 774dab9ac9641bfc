//! Graceful shutdown: accepts nothing new, runs everything queued, joins
//! every thread; `shutdown_timeout` reports what was still pending.

use crate::common::hold_worker;
use priority_executor::{Capacity, Executor, Priority, ShutdownTimeout};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn exec(core: usize, max: usize) -> Executor {
    Executor::builder()
        .name("shut")
        .core_threads(core)
        .max_threads(max)
        .lane(Priority(10), Capacity::Bounded(1000))
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap()
}

#[test]
fn shutdown_runs_every_queued_job() {
    let e = exec(1, 1);
    let gate = hold_worker(&e, Priority(1));
    let ran = Arc::new(AtomicUsize::new(0));
    for i in 0..500 {
        let ran = ran.clone();
        let p = if i % 2 == 0 {
            Priority(10)
        } else {
            Priority(1)
        };
        let _detached = e.enqueue(p, move || ran.fetch_add(1, Ordering::SeqCst));
    }
    drop(gate);
    e.shutdown();
    assert_eq!(ran.load(Ordering::SeqCst), 500);
}

#[test]
fn drop_is_a_graceful_shutdown() {
    let ran = Arc::new(AtomicUsize::new(0));
    {
        let e = exec(0, 2);
        for _ in 0..100 {
            let ran = ran.clone();
            let _detached = e.enqueue(Priority(1), move || ran.fetch_add(1, Ordering::SeqCst));
        }
    }
    assert_eq!(ran.load(Ordering::SeqCst), 100);
}

#[test]
fn shutdown_timeout_reports_pending_work_and_loses_none() {
    let e = exec(1, 1);
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let (started_tx, started) = std::sync::mpsc::channel();
    let _blocker = e
        .enqueue(Priority(1), move || {
            started_tx.send(()).unwrap();
            gate.recv().ok();
        })
        .unwrap();
    started.recv().unwrap();
    let last = e.enqueue(Priority(10), || "ran after all").unwrap();
    let err = e.shutdown_timeout(Duration::from_millis(10)).unwrap_err();
    assert_eq!(
        err,
        ShutdownTimeout {
            queued: 1,
            running: 1
        }
    );
    // The threads drain in the background: the queued job still runs.
    release.send(()).unwrap();
    assert_eq!(last.join(), Ok("ran after all"));
}

#[test]
fn shutdown_with_no_thread_started_runs_the_queue() {
    // core 0 and a job queued: shutdown must still find a thread for it.
    let e = exec(0, 1);
    let h = e.enqueue(Priority(1), || 1).unwrap();
    e.shutdown();
    assert_eq!(h.join(), Ok(1));
}

#[test]
fn dropping_the_last_reference_inside_a_job_does_not_deadlock() {
    let e = Arc::new(exec(1, 1));
    let inner = e.clone();
    let (done_tx, done) = std::sync::mpsc::channel();
    let _detached = e.enqueue(Priority(1), move || {
        // This job may hold the last reference; dropping it here must not
        // wait for this very thread.
        drop(inner);
        done_tx.send(()).unwrap();
    });
    drop(e);
    done.recv().unwrap();
}
