//! A worker thread that cannot start never strands a job silently: core
//! threads that cannot start are a build error; a thread that cannot be
//! added later is counted, and when no worker is alive at all the enqueue
//! that needed it gets its job back.

use crate::common::within;
use priority_executor::{BuildError, Capacity, EnqueueError, Executor, Priority};
use std::time::Duration;

const P: Priority = Priority(1);
/// More than any address space gives a thread's stack: no thread with it
/// can start.
const HUGE_STACK: usize = 1 << 46;
/// A hang detector, not a timing assertion.
const LIMIT: Duration = Duration::from_secs(20);

#[test]
fn core_threads_that_cannot_start_are_a_build_error() {
    let err = Executor::builder()
        .core_threads(1)
        .max_threads(2)
        .stack_size(HUGE_STACK)
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap_err();
    match &err {
        BuildError::CannotStartThread { stack_size, .. } => {
            assert_eq!(*stack_size, Some(HUGE_STACK));
        }
        other => panic!("expected CannotStartThread, got {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("stack_size"), "{text}");
    assert!(text.contains("core_threads"), "{text}");
}

#[test]
fn an_enqueue_with_no_worker_and_no_thread_to_be_had_gets_its_job_back() {
    let (refused, failures, queued) =
        within("an enqueue that cannot start a worker", LIMIT, || {
            // No core thread: the build has nothing to start, the first job
            // needs a thread.
            let e = Executor::builder()
                .core_threads(0)
                .max_threads(2)
                .stack_size(HUGE_STACK)
                .lane(P, Capacity::Unbounded)
                .build()
                .unwrap();
            let err = e.enqueue(P, || 7).unwrap_err();
            let refused = match err {
                EnqueueError::NoThread { priority, job, .. } => {
                    assert_eq!(priority, P);
                    job()
                }
                other => panic!("expected NoThread, got {other}"),
            };
            let m = e.metrics();
            (refused, m.threads.spawn_failures, m.queued())
        });
    assert_eq!(refused, 7, "the job comes back unrun");
    assert!(failures >= 1, "the failed start is counted");
    assert_eq!(queued, 0, "nothing is left queued for nobody");
}
