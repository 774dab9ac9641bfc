//! Resizing a live pool: `set_threads(core, max)` and
//! `set_keep_alive` take effect without losing a job; the same checks as
//! the builder's refuse a bad size and change nothing.

use crate::common::{wait_until, watchdog};
use priority_executor::{BuildError, Capacity, Executor, Priority};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const P: Priority = Priority(1);

fn exec(core: usize, max: usize) -> Executor {
    Executor::builder()
        .name("resize")
        .core_threads(core)
        .max_threads(max)
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap()
}

/// Jobs that can only finish when `n` of them run at once.
fn together(exec: &Executor, n: usize) -> Vec<priority_executor::JobHandle<()>> {
    let barrier = Arc::new(Barrier::new(n));
    (0..n)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            exec.enqueue(P, move || {
                barrier.wait();
            })
            .unwrap()
        })
        .collect()
}

#[test]
fn bad_sizes_are_refused_with_the_builders_errors_and_change_nothing() {
    let e = exec(2, 4);
    assert_eq!(
        e.set_threads(5, 4),
        Err(BuildError::CoreExceedsMax { core: 5, max: 4 })
    );
    let zero = e.set_threads(2, 0).unwrap_err();
    assert_eq!(
        zero.to_string(),
        "max_threads = 0 is not allowed (expected at least 1)"
    );
    assert_eq!(
        e.set_threads(2, 1),
        Err(BuildError::CoreExceedsMax { core: 2, max: 1 })
    );
    let c = e.config();
    assert_eq!((c.core_threads, c.max_threads), (2, 4));
    e.set_threads(0, 4).unwrap();
    e.set_threads(0, 1).unwrap();
    e.set_keep_alive(Duration::from_millis(1500));
    let c = e.config();
    assert_eq!((c.core_threads, c.max_threads), (0, 1));
    assert_eq!(c.keep_alive, Duration::from_millis(1500));
}

#[test]
fn raising_max_starts_threads_for_jobs_already_waiting() {
    // Three jobs that need three threads at once, queued on a pool of one:
    // only the resize can get them done.
    watchdog("jobs waiting for a larger pool", || {
        let e = exec(1, 1);
        let handles = together(&e, 3);
        e.set_threads(1, 3).unwrap();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(e.metrics().threads.peak, 3);
    });
}

#[test]
fn raising_core_keeps_more_threads() {
    let e = exec(1, 4);
    e.set_threads(3, 4).unwrap();
    assert_eq!(e.prestart_core_threads(), 3);
    assert_eq!(e.metrics().threads.live, 3);
}

#[test]
fn lowering_max_lets_the_extra_workers_exit_once_idle() {
    let e = exec(4, 4);
    for h in together(&e, 4) {
        h.join().unwrap();
    }
    assert_eq!(e.metrics().threads.live, 4);
    e.set_threads(1, 4).unwrap();
    e.set_threads(1, 2).unwrap();
    // Keep-alive is 60 s: they leave because they are above max.
    wait_until("the workers above max exit", || {
        e.metrics().threads.live == 2
    });
    let ran = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..200)
        .map(|_| {
            let ran = Arc::clone(&ran);
            e.enqueue(P, move || {
                ran.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap()
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(ran.load(Ordering::SeqCst), 200);
    assert!(e.metrics().threads.live <= 2);
}

#[test]
fn lowering_max_while_the_workers_head_for_sleep_still_lets_them_exit() {
    // Each round the resize lands just as the workers finish their jobs,
    // while they decide how to sleep: one that read the old limits and
    // registers as a sleeper after the resize's wake-all must still see
    // the change, or it sleeps on (keep-alive 60 s) above the new max.
    let e = exec(4, 4);
    for _ in 0..50 {
        e.set_threads(4, 4).unwrap();
        for h in together(&e, 4) {
            h.join().unwrap();
        }
        e.set_threads(1, 1).unwrap();
        wait_until("the workers above the new max exit", || {
            e.metrics().threads.live == 1
        });
    }
}

#[test]
fn lowering_core_lets_idle_core_workers_time_out() {
    let e = Executor::builder()
        .core_threads(3)
        .max_threads(3)
        .keep_alive(Duration::from_millis(1))
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap();
    assert_eq!(e.prestart_core_threads(), 3);
    // They sleep without a time limit, as core threads; lowering the core
    // must get the two above it to sleep with the keep-alive and leave.
    e.set_threads(1, 3).unwrap();
    wait_until("two workers above the new core exit", || {
        e.metrics().threads.live == 1
    });
    assert_eq!(e.enqueue(P, || 3).unwrap().join(), Ok(3));
}

#[test]
fn a_shorter_keep_alive_applies_to_workers_already_asleep() {
    let e = Executor::builder()
        .core_threads(0)
        .max_threads(2)
        .keep_alive(Duration::from_secs(3600))
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap();
    e.enqueue(P, || ()).unwrap().join().unwrap();
    wait_until("the worker is asleep", || e.metrics().threads.sleeping == 1);
    e.set_keep_alive(Duration::from_millis(1));
    wait_until("the worker times out with the new keep-alive", || {
        e.metrics().threads.live == 0
    });
}

#[test]
fn resizing_while_jobs_flow_loses_none() {
    let e = exec(1, 2);
    let stop = Arc::new(AtomicBool::new(false));
    let resizer = {
        let (e, stop) = (e.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut i = 0usize;
            while !stop.load(Ordering::SeqCst) {
                let max = 1 + i % 4;
                let core = i % 2;
                // Through a size between, one of the two changed first,
                // so that core <= max holds throughout.
                let now = e.config();
                if max >= now.max_threads {
                    e.set_threads(now.core_threads, max).unwrap();
                    e.set_threads(core.min(max), max).unwrap();
                } else {
                    e.set_threads(core.min(max), now.max_threads).unwrap();
                    e.set_threads(core.min(max), max).unwrap();
                }
                i += 1;
                std::thread::yield_now();
            }
        })
    };
    let ran = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..3000)
        .map(|_| {
            let ran = Arc::clone(&ran);
            e.enqueue(P, move || {
                ran.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap()
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    resizer.join().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 3000);
    e.wait_idle();
    let lane = &e.metrics().lanes[0];
    assert_eq!(lane.submitted, lane.settled());
}

#[test]
fn a_cap_given_as_a_share_of_the_threads_follows_a_resize() {
    // Half the threads: 1 of 2 at build, 4 of 8 after the resize, as a
    // fresh build with 8 threads gives. Four jobs that need four threads
    // at once only finish with the new cap.
    watchdog("a share cap after a resize", || {
        let e = Executor::builder()
            .core_threads(2)
            .max_threads(2)
            .lane_config(
                priority_executor::LaneConfig::new(P)
                    .max_running(priority_executor::MaxRunning::Percent(50)),
            )
            .build()
            .unwrap();
        assert_eq!(e.metrics().lane(P).unwrap().max_running, Some(1));
        e.set_threads(8, 8).unwrap();
        assert_eq!(e.metrics().lane(P).unwrap().max_running, Some(4));
        for h in together(&e, 4) {
            h.join().unwrap();
        }
        e.set_threads(1, 2).unwrap();
        assert_eq!(e.metrics().lane(P).unwrap().max_running, Some(1));
        e.shutdown();
    });
}
