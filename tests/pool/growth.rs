//! Threads grow from core to max while jobs wait, and shrink back to core
//! after the keep-alive. Observed through metrics; synchronised with
//! channels, never with sleeps.

use crate::common::wait_until;
use priority_executor::{Capacity, Executor, Priority};
use std::sync::{Arc, Barrier};
use std::time::Duration;

#[test]
fn grows_to_max_while_jobs_wait_then_shrinks_to_core() {
    let exec = Executor::builder()
        .name("grow")
        .core_threads(1)
        .max_threads(3)
        .keep_alive(Duration::from_millis(20))
        .lane(Priority(10), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    // Three jobs that can only finish together: they need three threads at
    // once, which exist only if the pool grew past core while they waited.
    let all_running = Arc::new(Barrier::new(4));
    let handles: Vec<_> = (0..3)
        .map(|i| {
            let b = all_running.clone();
            let p = if i == 0 { Priority(1) } else { Priority(10) };
            exec.enqueue(p, move || {
                b.wait();
                std::thread::current().name().map(str::to_owned)
            })
            .unwrap()
        })
        .collect();
    all_running.wait();
    let names: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().unwrap().unwrap())
        .collect();
    assert!(names.iter().all(|n| n.starts_with("grow-")), "{names:?}");
    let m = exec.metrics();
    assert_eq!(m.threads.peak, 3);
    assert!(m.threads.live <= 3);
    // Idle threads above core exit after the keep-alive; core stays.
    wait_until("pool back to core size", || {
        exec.metrics().threads.live == 1
    });
    assert_eq!(exec.metrics().threads.peak, 3);
    // And it still runs jobs (and can grow again).
    assert_eq!(exec.enqueue(Priority(1), || 5).unwrap().join(), Ok(5));
}

#[test]
fn never_grows_past_max() {
    let exec = Executor::builder()
        .core_threads(0)
        .max_threads(2)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    let handles: Vec<_> = (0..200)
        .map(|_| exec.enqueue(Priority(1), std::thread::yield_now).unwrap())
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert!(exec.metrics().threads.peak <= 2);
    assert!(exec.metrics().threads.peak >= 1);
}

#[test]
fn core_threads_time_out_when_allowed() {
    let exec = Executor::builder()
        .core_threads(2)
        .max_threads(2)
        .keep_alive(Duration::from_millis(10))
        .allow_core_timeout(true)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    assert_eq!(exec.prestart_core_threads(), 2);
    wait_until("all threads retired", || exec.metrics().threads.live == 0);
    // A job after that starts a thread again and runs.
    assert_eq!(exec.enqueue(Priority(1), || 3).unwrap().join(), Ok(3));
}

#[test]
fn prestart_starts_core_threads_only() {
    let exec = Executor::builder()
        .core_threads(2)
        .max_threads(4)
        .lane(Priority(1), Capacity::Unbounded)
        .build()
        .unwrap();
    assert_eq!(exec.metrics().threads.live, 0);
    assert_eq!(exec.prestart_core_threads(), 2);
    assert_eq!(exec.prestart_core_threads(), 0);
    assert_eq!(exec.metrics().threads.live, 2);
}
