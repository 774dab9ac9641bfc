//! Before/after-execute hooks run on the worker thread and see the
//! priority, the wait, the executor, the attempt and the outcome; a
//! panicking hook harms nothing.

use priority_executor::{Capacity, Executor, JobOutcome, Priority, RetryPolicy};
use std::sync::{Arc, Mutex};

#[test]
fn hooks_see_priority_wait_and_outcome() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (before_log, after_log) = (log.clone(), log.clone());
    let exec = Executor::builder()
        .name("hooked")
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .before_execute(move |info| {
            let on_worker = std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with("hooked-"));
            before_log
                .lock()
                .unwrap()
                .push(format!("before {} {on_worker}", info.priority));
        })
        .after_execute(move |info, outcome| {
            after_log
                .lock()
                .unwrap()
                .push(format!("after {} {outcome:?}", info.priority));
        })
        .build()
        .unwrap();
    exec.enqueue(Priority(10), || ()).unwrap().join().unwrap();
    exec.enqueue(Priority(1), || panic!("x"))
        .unwrap()
        .join()
        .unwrap_err();
    exec.shutdown();
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            "before 10 true",
            "after 10 Completed",
            "before 1 true",
            "after 1 Panicked"
        ]
    );
}

#[test]
fn a_panicking_hook_does_not_hurt_the_job_or_the_worker() {
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(1), Capacity::Unbounded)
        .before_execute(|_| panic!("hook bug"))
        .after_execute(|_, _| panic!("hook bug"))
        .build()
        .unwrap();
    for i in 0..3 {
        assert_eq!(exec.enqueue(Priority(1), move || i).unwrap().join(), Ok(i));
    }
    assert_eq!(exec.metrics().threads.peak, 1);
}

#[test]
fn hooks_see_the_executor_and_each_attempt() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (before_log, after_log) = (log.clone(), log.clone());
    let exec = Executor::builder()
        .name("visa")
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .before_execute(move |info| {
            let seen = (info.executor.to_owned(), info.priority, info.attempt, None);
            before_log.lock().unwrap().push(seen);
        })
        .after_execute(move |info, outcome| {
            let seen = (
                info.executor.to_owned(),
                info.priority,
                info.attempt,
                Some(outcome),
            );
            after_log.lock().unwrap().push(seen);
        })
        .build()
        .unwrap();
    let handle = exec
        .enqueue_retrying(
            Priority(1),
            |attempt| {
                if attempt.number < 3 {
                    Err("not yet")
                } else {
                    Ok(())
                }
            },
            RetryPolicy::new(3).retry_at(Priority(10)),
        )
        .unwrap();
    assert_eq!(handle.join(), Ok(()));
    exec.enqueue(Priority(1), || ()).unwrap().join().unwrap();
    exec.shutdown();
    let visa = |p: u32, attempt: u32, outcome: Option<JobOutcome>| {
        ("visa".to_owned(), Priority(p), attempt, outcome)
    };
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            visa(1, 1, None),
            visa(1, 1, Some(JobOutcome::Retrying)),
            // Retries go to the lane of priority 10.
            visa(10, 2, None),
            visa(10, 2, Some(JobOutcome::Retrying)),
            visa(10, 3, None),
            visa(10, 3, Some(JobOutcome::Completed)),
            // A job that is not retried makes one attempt.
            visa(1, 1, None),
            visa(1, 1, Some(JobOutcome::Completed)),
        ]
    );
}

#[test]
fn a_retry_waits_from_when_it_was_queued_again() {
    use std::time::{Duration, Instant};
    let waits = Arc::new(Mutex::new(Vec::new()));
    let seen = waits.clone();
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(1)
        .lane(Priority(1), Capacity::Unbounded)
        .before_execute(move |info| seen.lock().unwrap().push((info.attempt, info.waited)))
        .build()
        .unwrap();
    // The first attempt takes 200 ms, then fails; its retry is queued
    // after that and starts at `second`.
    let first = Duration::from_millis(200);
    let enqueued = Instant::now();
    let handle = exec
        .enqueue_retrying(
            Priority(1),
            move |attempt| {
                if attempt.number == 1 {
                    std::thread::sleep(first);
                    Err("slow failure")
                } else {
                    Ok(Instant::now())
                }
            },
            RetryPolicy::new(1),
        )
        .unwrap();
    let second = handle.join().unwrap();
    let waits = waits.lock().unwrap();
    assert_eq!(waits.len(), 2);
    assert_eq!(waits[1].0, 2);
    // Counted from the retry's queueing, not from the first enqueue.
    let bound = second - enqueued - first;
    assert!(
        waits[1].1 <= bound,
        "the retry waited {:?} (at most {bound:?})",
        waits[1].1
    );
}
