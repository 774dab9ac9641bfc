//! Every counter moves where the executor's own lane counter does: a
//! rejection, a discard, an expiry, a retry and its dead letter, jobs
//! handed back, a job cancelled through its handle.

use crate::common::hold_worker;
use crate::support::*;
use priority_executor::{
    Capacity, EnqueueError, Executor, JobError, JobOptions, LaneConfig, Priority, RejectionPolicy,
    RetryPolicy,
};
use std::time::{Duration, Instant};

#[test]
fn every_counter_matches_the_lane_counters() {
    let (_turn, snapshotter) = recorder();
    let exec = Executor::builder()
        .name("every-counter")
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane_config(
            LaneConfig::new(Priority(5))
                .capacity(Capacity::Bounded(1))
                .when_full(RejectionPolicy::Reject),
        )
        .lane_config(
            LaneConfig::new(Priority(3))
                .capacity(Capacity::Bounded(1))
                .when_full(RejectionPolicy::DiscardOldest),
        )
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();

    let release = hold_worker(&exec, Priority(10));
    let kept = exec.enqueue(Priority(5), || ()).unwrap();
    assert!(matches!(
        exec.enqueue(Priority(5), || ()).unwrap_err(),
        EnqueueError::Full { .. }
    ));
    let old = exec.enqueue(Priority(3), || ()).unwrap();
    let new = exec.enqueue(Priority(3), || ()).unwrap();
    let late = exec
        .enqueue_with(
            Priority(1),
            || (),
            JobOptions::new().deadline(Instant::now()),
        )
        .unwrap();
    let retrying = exec
        .enqueue_retrying(
            Priority(1),
            |_| Err::<(), _>("backend down"),
            RetryPolicy::new(1),
        )
        .unwrap();
    release.send(()).unwrap();
    assert_eq!(kept.join(), Ok(()));
    assert_eq!(old.join(), Err(JobError::Discarded));
    assert_eq!(new.join(), Ok(()));
    assert_eq!(late.join(), Err(JobError::Expired));
    assert!(matches!(
        retrying.join(),
        Err(JobError::Failed { attempts: 2, .. })
    ));

    let release = hold_worker(&exec, Priority(10));
    let unrun: Vec<_> = (0..3)
        .map(|_| exec.enqueue(Priority(1), || ()).unwrap())
        .collect();
    assert!(unrun[0].cancel());
    assert_eq!(exec.shutdown_now().len(), 2);
    release.send(()).unwrap();
    assert!(exec.await_termination(Duration::from_secs(30)).is_ok());
    let own = exec.metrics();
    drop(exec);

    let s = Series::of(snapshotter, "every-counter");
    let expected: [(u32, [u64; 10]); 4] = [
        // submitted, completed, panicked, rejected, expired, discarded,
        // retried, dead-lettered, handed back, cancelled
        (10, [2, 2, 0, 0, 0, 0, 0, 0, 0, 0]),
        (5, [1, 1, 0, 1, 0, 0, 0, 0, 0, 0]),
        (3, [2, 1, 0, 0, 0, 1, 0, 0, 0, 0]),
        (1, [5, 0, 0, 0, 1, 0, 1, 1, 2, 1]),
    ];
    for (priority, counts) in expected {
        let lane = own.lane(Priority(priority)).unwrap();
        let theirs = [
            lane.submitted,
            lane.completed,
            lane.panicked,
            lane.rejected,
            lane.expired,
            lane.discarded,
            lane.retried,
            lane.dead_lettered,
            lane.handed_back,
            lane.cancelled,
        ];
        let exported = COUNTERS.map(|name| s.counter(name, priority));
        assert_eq!(exported, counts, "exported, priority {priority}");
        assert_eq!(theirs, counts, "lane counters, priority {priority}");
    }
    // One wait and one run per attempt that started: the expired job never
    // did, the retrying one twice.
    assert_eq!(s.histogram(WAIT, 1).len(), 2);
    assert_eq!(s.histogram(RUN, 1).len(), 2);
    assert_eq!(s.histogram(WAIT, 3).len(), 1);
    assert_eq!(s.gauge(QUEUED, Some(1)), 0.0);
    assert_eq!(s.gauge(LIVE, None), 0.0);
}
