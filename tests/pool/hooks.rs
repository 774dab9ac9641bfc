//! Before/after-execute hooks run on the worker thread and see the
//! priority, the wait and the outcome; a panicking hook harms nothing.

use priority_executor::{Capacity, Executor, Priority};
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
