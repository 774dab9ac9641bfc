//! The channel idioms over the one submission path: `try_enqueue` (a
//! wait of zero), `EnqueueError::is_full` / `is_shut_down`, and
//! `set_core_threads` / `set_max_threads` beside `set_threads`, each
//! applied as one change.

use crate::common::{hold_worker, within};
use priority_executor::{
    BuildError, Capacity, EnqueueError, Executor, LaneConfig, MaxRunning, Priority, RejectionPolicy,
};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// One worker, a bounded lane at 10 under `when_full`, an open lane at 1.
fn one_worker(when_full: RejectionPolicy) -> Executor {
    Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane_config(
            LaneConfig::new(Priority(10))
                .capacity(Capacity::Bounded(1))
                .when_full(when_full),
        )
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap()
}

#[test]
fn try_enqueue_refuses_a_full_lane_at_once_with_the_job_under_every_policy() {
    for when_full in [
        RejectionPolicy::Block,
        RejectionPolicy::Reject,
        RejectionPolicy::CallerRuns,
        RejectionPolicy::DiscardOldest,
    ] {
        within("try_enqueue on a full lane", LIMIT, move || {
            let exec = one_worker(when_full);
            let gate = hold_worker(&exec, Priority(1));
            let first = exec.try_enqueue(Priority(10), || 1).unwrap();
            let err = exec.try_enqueue(Priority(10), || 2).unwrap_err();
            assert!(err.is_full(), "{when_full:?}: {err:?}");
            assert!(!err.is_shut_down(), "{when_full:?}");
            assert!(matches!(err, EnqueueError::Full { .. }));
            assert_eq!(err.into_inner()(), 2, "{when_full:?}: handed back unrun");
            drop(gate);
            // The queued job was neither pushed out nor replaced.
            assert_eq!(first.join(), Ok(1), "{when_full:?}");
        });
    }
}

#[test]
fn try_enqueue_gives_the_handle_enqueue_gives() {
    let exec = one_worker(RejectionPolicy::Block);
    let handle: priority_executor::JobHandle<&str> =
        exec.try_enqueue(Priority(10), || "ran").unwrap();
    assert_eq!(handle.join(), Ok("ran"));
}

#[test]
fn after_shutdown_try_enqueue_is_shut_down_with_the_job() {
    let exec = one_worker(RejectionPolicy::Block);
    exec.shutdown();
    let err = exec.try_enqueue(Priority(10), || 3).unwrap_err();
    assert!(err.is_shut_down(), "{err:?}");
    assert!(!err.is_full());
    assert_eq!(err.into_inner()(), 3);
    // The same for enqueue, which also goes through the one path.
    let err = exec.enqueue(Priority(1), || 4).unwrap_err();
    assert!(err.is_shut_down() && !err.is_full());
}

#[test]
fn an_unknown_priority_is_neither_full_nor_shut_down() {
    let exec = one_worker(RejectionPolicy::Block);
    let err = exec.try_enqueue(Priority(5), || 5).unwrap_err();
    assert!(matches!(err, EnqueueError::UnknownPriority { .. }));
    assert!(!err.is_full() && !err.is_shut_down());
    assert_eq!(err.into_inner()(), 5);
}

fn threads(exec: &Executor) -> (usize, usize) {
    let config = exec.config();
    (config.core_threads, config.max_threads)
}

fn pool(core: usize, max: usize) -> Executor {
    Executor::builder()
        .core_threads(core)
        .max_threads(max)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap()
}

#[test]
fn set_core_threads_above_max_is_refused_and_changes_nothing() {
    let exec = pool(1, 4);
    assert_eq!(
        exec.set_core_threads(5),
        Err(BuildError::CoreExceedsMax { core: 5, max: 4 })
    );
    assert_eq!(threads(&exec), (1, 4));
    exec.set_core_threads(4).unwrap();
    assert_eq!(threads(&exec), (4, 4));
    exec.set_core_threads(0).unwrap();
    assert_eq!(threads(&exec), (0, 4));
}

#[test]
fn set_max_threads_below_core_or_zero_is_refused_and_changes_nothing() {
    let exec = pool(2, 4);
    assert_eq!(
        exec.set_max_threads(1),
        Err(BuildError::CoreExceedsMax { core: 2, max: 1 })
    );
    assert!(matches!(
        exec.set_max_threads(0),
        Err(BuildError::Invalid(_))
    ));
    assert_eq!(threads(&exec), (2, 4));
    exec.set_max_threads(2).unwrap();
    assert_eq!(threads(&exec), (2, 2));
    // The pair can then move only through set_threads, or in order.
    assert!(exec.set_core_threads(3).is_err());
    exec.set_max_threads(3).unwrap();
    exec.set_core_threads(3).unwrap();
    assert_eq!(threads(&exec), (3, 3));
}

#[test]
fn set_core_threads_starts_threads_as_set_threads_does() {
    let exec = pool(0, 4);
    exec.set_core_threads(3).unwrap();
    assert_eq!(exec.prestart_core_threads(), 3);
}

#[test]
fn racing_set_core_threads_and_set_max_threads_both_apply() {
    within("racing setters", LIMIT, || {
        let exec = Arc::new(pool(1, 4));
        let rounds = 1000;
        // Each round: back to (1, 4), then both setters at once.
        let start = Arc::new(Barrier::new(3));
        let end = Arc::new(Barrier::new(3));
        let setter = |set: fn(&Executor) -> Result<(), BuildError>| {
            let (exec, start, end) = (exec.clone(), start.clone(), end.clone());
            std::thread::spawn(move || {
                for _ in 0..rounds {
                    start.wait();
                    set(&exec).unwrap();
                    end.wait();
                }
            })
        };
        let core = setter(|exec| exec.set_core_threads(2));
        let max = setter(|exec| exec.set_max_threads(8));
        for round in 0..rounds {
            exec.set_threads(1, 4).unwrap();
            start.wait();
            end.wait();
            assert_eq!(threads(&exec), (2, 8), "round {round}");
        }
        core.join().unwrap();
        max.join().unwrap();
    });
}

#[test]
fn the_single_setters_resolve_a_share_cap_as_set_threads_does() {
    // Half the threads: 1 of 2, then 4 of 8 once the max alone is raised;
    // a change of the core alone leaves it.
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(2)
        .lane_config(LaneConfig::new(Priority(1)).max_running(MaxRunning::Percent(50)))
        .build()
        .unwrap();
    let cap = |exec: &Executor| exec.metrics().lane(Priority(1)).unwrap().max_running;
    assert_eq!(cap(&exec), Some(1));
    exec.set_max_threads(8).unwrap();
    assert_eq!(cap(&exec), Some(4));
    exec.set_core_threads(8).unwrap();
    assert_eq!(cap(&exec), Some(4));
    // Refused: nothing changes, the cap included.
    assert!(exec.set_max_threads(2).is_err());
    assert_eq!((threads(&exec), cap(&exec)), ((8, 8), Some(4)));
}
