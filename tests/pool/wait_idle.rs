//! Waiting until the executor is idle without shutting it down
//! (`threadpool`'s and `rusty_pool`'s `join`): queued and running jobs and
//! retries waiting out their backoff are all waited for, from any number
//! of threads at once; the executor keeps running afterwards.

use crate::common::{Gate, hold_worker, watchdog};
use priority_executor::{Capacity, Executor, Priority, RetryPolicy};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const P: Priority = Priority(1);

fn exec(threads: usize) -> Executor {
    Executor::builder()
        .name("idle")
        .core_threads(threads)
        .max_threads(threads)
        .lane(Priority(10), Capacity::Unbounded)
        .lane(P, Capacity::Unbounded)
        .build()
        .unwrap()
}

#[test]
fn waiters_on_many_threads_return_once_every_job_has_run() {
    let e = exec(2);
    let gate = Gate::default();
    let done = Arc::new(AtomicUsize::new(0));
    for i in 0..200 {
        let (gate, done) = (gate.clone(), Arc::clone(&done));
        let p = if i % 2 == 0 { Priority(10) } else { P };
        let _detached = e.enqueue(p, move || {
            gate.wait();
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    // Jobs are blocked on the gate: not idle, whatever the time limit.
    assert!(e.wait_idle_timeout(Duration::from_millis(20)).is_err());
    let waiters: Vec<_> = (0..8)
        .map(|_| {
            let (e, done) = (e.clone(), Arc::clone(&done));
            std::thread::spawn(move || {
                e.wait_idle();
                done.load(Ordering::SeqCst)
            })
        })
        .collect();
    gate.open();
    for waiter in waiters {
        assert_eq!(waiter.join().unwrap(), 200);
    }
    // Idle is not shut down: the executor takes more work.
    assert!(!e.is_shut_down());
    assert_eq!(e.enqueue(P, || 5).unwrap().join(), Ok(5));
    assert!(e.wait_idle_timeout(Duration::from_secs(30)).is_ok());
}

#[test]
fn a_retry_waiting_out_its_backoff_is_waited_for() {
    let e = exec(1);
    let attempts = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&attempts);
    let job = e
        .enqueue_retrying(
            P,
            move |attempt| {
                counted.fetch_add(1, Ordering::SeqCst);
                if attempt.number < 3 {
                    Err("not yet")
                } else {
                    Ok(attempt.number)
                }
            },
            // Long enough that the retries sit in the timer, off the lanes
            // and off the workers, while nothing else is queued or running.
            RetryPolicy::new(2).backoff(Duration::from_millis(30), 1.0),
        )
        .unwrap();
    e.wait_idle();
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    assert!(job.is_finished());
    assert_eq!(job.join(), Ok(3));
}

#[test]
fn a_retry_that_lands_after_its_worker_looked_still_lets_the_waiter_out() {
    // Each round: a job that fails once, retried after a moment's backoff,
    // while this thread waits. The timer thread re-queues the retry, then
    // takes it off its pending count; the worker may run it and look for
    // idle-waiters in between, while it still counts. The timer's side
    // must then let the waiter out, or `wait_idle` sleeps for ever.
    let e = exec(1);
    watchdog("wait_idle after retries", move || {
        let retry = RetryPolicy::new(1).backoff(Duration::from_micros(1), 1.0);
        for round in 1..=300u32 {
            let job = e
                .enqueue_retrying(
                    P,
                    move |attempt| {
                        if attempt.number < 2 {
                            Err("once")
                        } else {
                            Ok(round)
                        }
                    },
                    retry,
                )
                .unwrap();
            e.wait_idle();
            assert!(job.is_finished(), "round {round}");
            assert_eq!(job.join(), Ok(round));
        }
    });
}

#[test]
fn a_job_claimed_but_not_yet_counted_busy_is_waited_for() {
    // Each round: one trivial job, then wait_idle must have seen it run.
    // A check of the thread counts alone could return while a worker has
    // claimed the job but not yet marked itself busy.
    let e = exec(2);
    let ran = Arc::new(AtomicUsize::new(0));
    for round in 1..=2000 {
        let ran2 = Arc::clone(&ran);
        let _detached = e.enqueue(P, move || {
            ran2.fetch_add(1, Ordering::SeqCst);
        });
        e.wait_idle();
        assert_eq!(ran.load(Ordering::SeqCst), round);
    }
}

#[test]
fn after_shutdown_now_only_the_running_jobs_are_waited_for() {
    let e = exec(1);
    let release = hold_worker(&e, P);
    let queued = e.enqueue(P, || ()).unwrap();
    let pending = e.shutdown_now();
    assert_eq!(pending.len(), 1);
    assert!(
        e.wait_idle_timeout(Duration::from_millis(10)).is_err(),
        "the held job runs"
    );
    drop(release);
    assert!(e.wait_idle_timeout(Duration::from_secs(30)).is_ok());
    drop(pending);
    assert!(queued.join().is_err());
    // Terminated: returns at once.
    assert!(e.await_termination(Duration::from_secs(30)).is_ok());
    e.wait_idle();
}

#[test]
fn a_job_waiting_for_idle_does_not_wait_for_itself() {
    let done = watchdog("wait_idle from inside a job", || {
        let e = exec(2);
        let handle = e.clone();
        let inner = e
            .enqueue(P, move || {
                handle.wait_idle();
                "returned"
            })
            .unwrap();
        inner.join()
    });
    assert_eq!(done, Ok("returned"));
}

#[test]
fn a_job_waiting_for_idle_is_woken_when_the_other_jobs_finish() {
    // The waiting job's own worker stays busy; the worker that finishes
    // the last other job must still wake it.
    let done = watchdog("wait_idle inside a job while another job runs", || {
        let e = exec(2);
        let gate = Gate::default();
        let held = gate.clone();
        let (started_tx, started) = std::sync::mpsc::channel();
        let other = e
            .enqueue(P, move || {
                started_tx.send(()).unwrap();
                held.wait();
                "other"
            })
            .unwrap();
        started.recv().unwrap();
        let handle = e.clone();
        let (waiting_tx, waiting) = std::sync::mpsc::channel();
        let waiter = e
            .enqueue(P, move || {
                waiting_tx.send(()).unwrap();
                handle.wait_idle();
                "waited"
            })
            .unwrap();
        waiting.recv().unwrap();
        gate.open();
        (other.join(), waiter.join())
    });
    assert_eq!(done, (Ok("other"), Ok("waited")));
}

/// `threadpool`'s `test_join_wavesurfer`, with gates for its clock: four
/// threads wait for idle while a job holds the pool; when it goes idle,
/// each waiter that returns enqueues a job of the next wave, which keeps
/// the pool busy. Every waiter of that idle moment must still return (the
/// idle generation), not go back to sleep behind the next wave. Several
/// rounds, since which waiter wakes first is up to the scheduler.
#[test]
fn every_waiter_of_an_idle_moment_returns_though_the_next_wave_has_begun() {
    const WAITERS: usize = 4;
    const ROUNDS: usize = 20;
    watchdog("the waiters of an idle moment", || {
        for round in 0..ROUNDS {
            let e = exec(WAITERS);
            let this_wave = Gate::default();
            let next_wave = Gate::default();
            let held = this_wave.clone();
            let _detached = e.enqueue(P, move || held.wait()).unwrap();
            let (ready_tx, ready) = std::sync::mpsc::channel();
            let (back_tx, back) = std::sync::mpsc::channel();
            let waiters: Vec<_> = (0..WAITERS)
                .map(|i| {
                    let (e, next_wave) = (e.clone(), next_wave.clone());
                    let (ready_tx, back_tx) = (ready_tx.clone(), back_tx.clone());
                    std::thread::spawn(move || {
                        ready_tx.send(()).unwrap();
                        e.wait_idle();
                        // The next wave: busy again until the test says.
                        let _detached = e.enqueue(P, move || next_wave.wait()).unwrap();
                        back_tx.send(i).unwrap();
                    })
                })
                .collect();
            for _ in 0..WAITERS {
                ready.recv().unwrap();
            }
            // The waiters are on their way into `wait_idle`; nothing in the
            // public API says when a thread is inside it, so give them this
            // wait (the pool is held busy, so it reports busy) to get there.
            // A waiter arriving later would rightly wait for the next wave.
            assert!(e.wait_idle_timeout(Duration::from_millis(100)).is_err());
            this_wave.open();
            let mut returned: Vec<usize> = (0..WAITERS)
                .map(|_| {
                    back.recv_timeout(Duration::from_secs(10))
                        .unwrap_or_else(|_| {
                            panic!("round {round}: a waiter of the idle moment went back to sleep")
                        })
                })
                .collect();
            returned.sort_unstable();
            assert_eq!(returned, (0..WAITERS).collect::<Vec<_>>());
            next_wave.open();
            for waiter in waiters {
                waiter.join().unwrap();
            }
            e.wait_idle();
        }
    });
}
