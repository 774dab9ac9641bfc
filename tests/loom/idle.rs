//! Models: waiting until the pool is idle (sleep/README.md, rule 7). A
//! `wait_idle` must not return while a job is queued, claimed or running,
//! and must not sleep through the moment the last job finishes (a missed
//! notification shows as loom's deadlock report: nothing else would wake
//! the waiter).
use crate::support::{HIGH, LOW};
use crate::support::{Runs, model, model_with_bound};
use priority_executor::{Capacity, Executor};

fn executor(threads: usize) -> Executor {
    Executor::builder()
        .name("loom")
        .core_threads(threads)
        .max_threads(threads)
        .lane(HIGH, Capacity::Unbounded)
        .lane(LOW, Capacity::Unbounded)
        .build()
        .unwrap()
}

/// As [`executor`], with the higher lane only: for the models of two
/// workers, where a second lane only multiplies what loom explores.
fn one_lane(threads: usize) -> Executor {
    Executor::builder()
        .name("loom")
        .core_threads(threads)
        .max_threads(threads)
        .lane(HIGH, Capacity::Unbounded)
        .build()
        .unwrap()
}

/// The producer enqueues one job and waits for idle while the worker,
/// started before, claims and runs it: the wait returns only after the
/// job ran, including when it looks between the worker's claim and the
/// rest of its batch.
#[test]
fn wait_idle_returns_only_after_the_job_ran() {
    model(|| {
        let exec = executor(1);
        assert_eq!(exec.prestart_core_threads(), 1);
        let runs = Runs::new(1);
        let _detached = exec.enqueue(LOW, runs.job(0)).unwrap();
        exec.wait_idle();
        assert_eq!(runs.get(0), 1);
        exec.shutdown();
    });
}

/// Two workers, two jobs: `wait_idle` returns once both ran, whichever
/// worker finishes last (each clears its own mark; the last one to go to
/// sleep must see the waiter).
#[test]
fn wait_idle_sees_both_workers_finish() {
    // One lane, bound 1 (84 408 interleavings, 15 s): three threads. The
    // marks are per worker, not per lane, and a second lane multiplies
    // the interleavings (every look for work or idleness loads both
    // lanes): with two lanes bound 1 ran past 40 minutes.
    // `LOOM_MAX_PREEMPTIONS=2` runs the deeper search.
    model_with_bound(1, || {
        let exec = one_lane(2);
        assert_eq!(exec.prestart_core_threads(), 2);
        let runs = Runs::new(2);
        let _first = exec.enqueue(HIGH, runs.job(0)).unwrap();
        let _second = exec.enqueue(HIGH, runs.job(1)).unwrap();
        exec.wait_idle();
        assert_eq!((runs.get(0), runs.get(1)), (1, 1));
        exec.shutdown();
    });
}

/// Rule 8: two jobs, one per worker, each wait for idle. Neither waits
/// for the other (it waits on the pool too) and both return; with each
/// waiting for the other, loom reports the deadlock (it never times a
/// wait out).
#[test]
fn two_jobs_waiting_for_idle_both_return() {
    // One lane, bound 1 (200 616 interleavings, 40 s): two jobs each
    // through the waiter's side and the worker's, and the shutdown. With
    // two lanes bound 1 took about 10 minutes.
    model_with_bound(1, || {
        let exec = one_lane(2);
        assert_eq!(exec.prestart_core_threads(), 2);
        let jobs: Vec<_> = (0..2)
            .map(|_| {
                let handle = exec.clone();
                exec.enqueue(HIGH, move || handle.wait_idle()).unwrap()
            })
            .collect();
        for job in jobs {
            assert_eq!(job.join(), Ok(()));
        }
        exec.shutdown();
    });
}
