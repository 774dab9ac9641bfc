//! `shutdown_now` hands back exactly the jobs that never started, highest
//! priority first, and each can still be run or dropped.

use crate::common::{hold_worker, single_worker};
use priority_executor::{Capacity, EnqueueError, Executor, JobError, Picker, Priority};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn hands_back_exactly_the_never_started_jobs() {
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(5), Capacity::Bounded(100))
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let gate = hold_worker(&exec, Priority(1));
    let ran = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for i in 0..30u32 {
        let p = [Priority(1), Priority(5), Priority(10)][i as usize % 3];
        let ran = ran.clone();
        handles.push((
            p,
            exec.enqueue(p, move || {
                ran.fetch_add(1, Ordering::SeqCst);
                i
            })
            .unwrap(),
        ));
    }
    let pending = exec.shutdown_now();
    assert!(exec.is_shut_down());
    drop(gate);
    assert_eq!(pending.len(), 30);
    let priorities: Vec<Priority> = pending.iter().map(|p| p.priority()).collect();
    let mut sorted = priorities.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(priorities, sorted, "highest priority first");
    assert_eq!(
        priorities.iter().filter(|&&p| p == Priority(10)).count(),
        10
    );
    // Nothing of it ran on the pool.
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    // Run the high ones here, drop the rest: handles tell which.
    for job in pending {
        if job.priority() == Priority(10) {
            job.run();
        }
    }
    for (p, h) in handles {
        let r = h.join();
        if p == Priority(10) {
            assert!(r.is_ok());
        } else {
            assert_eq!(r, Err(JobError::Cancelled));
        }
    }
    assert_eq!(ran.load(Ordering::SeqCst), 10);
    let m = exec.metrics();
    for lane in &m.lanes {
        assert_eq!(lane.handed_back, 10, "lane {}", lane.priority);
        assert_eq!(lane.queued, 0);
    }
    // New work is refused with the job handed back.
    let err = exec.enqueue(Priority(10), || 1).unwrap_err();
    assert!(matches!(err, EnqueueError::ShutDown { .. }));
    assert_eq!(err.into_inner()(), 1);
}

#[test]
fn running_jobs_finish_and_are_not_handed_back() {
    let exec = single_worker(&[(1, 1)], Picker::Smooth);
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let (started_tx, started) = std::sync::mpsc::channel();
    let running = exec
        .enqueue(Priority(1), move || {
            started_tx.send(()).unwrap();
            gate.recv().unwrap();
            "finished"
        })
        .unwrap();
    started.recv().unwrap();
    let queued = exec.enqueue(Priority(1), || "never").unwrap();
    let pending = exec.shutdown_now();
    assert_eq!(pending.len(), 1);
    release.send(()).unwrap();
    assert_eq!(running.join(), Ok("finished"));
    drop(pending);
    assert_eq!(queued.join(), Err(JobError::Cancelled));
    drop(exec); // joins the worker
}
