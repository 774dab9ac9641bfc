//! Regressions found by the stress test: a job refused after
//! `shutdown_now` left an empty placeholder (a tombstone) in its lane, which
//! nothing would ever claim. It showed as a phantom queued job in the
//! metrics, and in a bounded lane it kept the slot, so the next refusal
//! said `Full` (and counted a rejection) instead of `ShutDown`.

use crate::common::{no_wait, wait_at_most};
use priority_executor::{Capacity, EnqueueError, Executor, Priority};

const HIGH: Priority = Priority(2);
const LOW: Priority = Priority(1);

fn executor(capacity: Capacity) -> Executor {
    Executor::builder()
        .name("refused")
        .core_threads(1)
        .max_threads(1)
        .lane(HIGH, capacity)
        .lane(LOW, capacity)
        .build()
        .unwrap()
}

#[test]
fn refused_after_shutdown_now_leaves_no_phantom_queued_job() {
    let exec = executor(Capacity::Unbounded);
    assert!(exec.shutdown_now().is_empty());
    for _ in 0..3 {
        assert!(matches!(
            exec.enqueue(HIGH, || ()).unwrap_err(),
            EnqueueError::ShutDown { .. }
        ));
        assert!(matches!(
            exec.enqueue_with(LOW, || (), no_wait()).unwrap_err(),
            EnqueueError::ShutDown { .. }
        ));
    }
    let m = exec.metrics();
    for lane in &m.lanes {
        assert_eq!(lane.queued, 0, "{lane:?}");
        assert_eq!(lane.submitted, 0, "{lane:?}");
    }
    assert_eq!(m.queued(), 0);
}

#[test]
fn refused_after_shutdown_now_says_shut_down_not_full() {
    let exec = executor(Capacity::Bounded(1));
    assert!(exec.shutdown_now().is_empty());
    for attempt in 0..3 {
        let err = exec.enqueue_with(HIGH, || (), no_wait()).unwrap_err();
        assert!(
            matches!(err, EnqueueError::ShutDown { .. }),
            "attempt {attempt}: {err:?}"
        );
        let err = exec
            .enqueue_with(
                LOW,
                || (),
                wait_at_most(std::time::Duration::from_millis(1)),
            )
            .unwrap_err();
        assert!(
            matches!(err, EnqueueError::ShutDown { .. }),
            "attempt {attempt}: {err:?}"
        );
    }
    for lane in exec.metrics().lanes {
        assert_eq!(lane.rejected, 0, "{lane:?}");
        assert_eq!(lane.queued, 0, "{lane:?}");
    }
}
