//! Nothing is lost: with several producers and a graceful shutdown, every
//! accepted job runs exactly once and the counters add up.

use priority_executor::{Capacity, Executor, Priority};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

#[test]
fn every_job_runs_exactly_once_under_several_producers() {
    const PRODUCERS: usize = 4;
    const PER_PRODUCER: usize = 5_000;
    let exec = Executor::builder()
        .core_threads(2)
        .max_threads(4)
        .lane(Priority(10), Capacity::Bounded(64))
        .lane(Priority(5), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Bounded(16))
        .build()
        .unwrap();
    let runs: Arc<Vec<AtomicU32>> = Arc::new(
        (0..PRODUCERS * PER_PRODUCER)
            .map(|_| AtomicU32::new(0))
            .collect(),
    );
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let exec = exec.clone();
            let runs = runs.clone();
            std::thread::spawn(move || {
                for i in 0..PER_PRODUCER {
                    let id = p * PER_PRODUCER + i;
                    let prio = [Priority(10), Priority(5), Priority(1)][id % 3];
                    let runs = runs.clone();
                    let job = move || {
                        runs[id].fetch_add(1, Ordering::Relaxed);
                        if id.is_multiple_of(997) {
                            panic!("planned failure {id}");
                        }
                    };
                    // Blocking enqueue: bounded lanes apply backpressure.
                    let _detached = exec.enqueue(prio, job).unwrap();
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    let m = {
        // Shut down, then read the final counters through a fresh metrics
        // call made just before the executor goes away.
        let pending = exec.shutdown_now();
        for job in pending {
            job.run();
        }
        assert!(
            exec.await_termination(std::time::Duration::from_secs(60))
                .is_ok()
        );
        let m = exec.metrics();
        drop(exec);
        m
    };
    assert_eq!(m.submitted(), (PRODUCERS * PER_PRODUCER) as u64);
    for (id, r) in runs.iter().enumerate() {
        assert_eq!(r.load(Ordering::Relaxed), 1, "job {id}");
    }
    let mut panicked = 0;
    for lane in &m.lanes {
        assert_eq!(
            lane.submitted,
            lane.settled(),
            "lane {}: {lane:?}",
            lane.priority
        );
        panicked += lane.panicked;
    }
    // Panics of handed-back jobs run here are not counted by the pool.
    assert!(panicked <= ((PRODUCERS * PER_PRODUCER) / 997 + 1) as u64);
}

#[test]
fn counters_add_up_once_every_handle_has_resolved() {
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(2)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let ran = Arc::new(AtomicU32::new(0));
    let handles: Vec<_> = (0..10_000u32)
        .map(|i| {
            let ran = ran.clone();
            let p = if i % 2 == 0 {
                Priority(10)
            } else {
                Priority(1)
            };
            exec.enqueue(p, move || {
                ran.fetch_add(1, Ordering::Relaxed);
                assert!(i % 1000 != 999, "planned failure");
            })
            .unwrap()
        })
        .collect();
    let failed = handles
        .into_iter()
        .map(|h| h.join())
        .filter(Result::is_err)
        .count();
    assert_eq!(failed, 10);
    assert_eq!(ran.load(Ordering::Relaxed), 10_000);
    let m = exec.metrics();
    for lane in &m.lanes {
        assert_eq!(lane.submitted, 5_000);
        assert_eq!(lane.dispatched, 5_000);
        assert_eq!(lane.completed + lane.panicked, 5_000, "{lane:?}");
    }
    assert_eq!(m.lanes.iter().map(|l| l.panicked).sum::<u64>(), 10);
    let handle = exec.clone();
    exec.shutdown_timeout(std::time::Duration::from_secs(60))
        .unwrap();
    // Each worker kept its own count of the jobs it dispatched and
    // completed, and folded it into the lane's as it exited: the same
    // totals, counted once.
    let after = handle.metrics();
    assert_eq!(after.threads.live, 0);
    for (lane, before) in after.lanes.iter().zip(&m.lanes) {
        assert_eq!(lane.dispatched, before.dispatched, "{lane:?}");
        assert_eq!(lane.completed, before.completed, "{lane:?}");
        assert_eq!(lane.submitted, 5_000);
    }
}
