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

/// Two workers, two jobs in two lanes: `wait_idle` returns once both
/// ran, whichever worker finishes last (each clears its own mark; the
/// last one to go to sleep must see the waiter).
#[test]
#[ignore = "did not finish in 40 minutes since rule 8 added the pool-waiter marks; run by hand with --ignored"]
fn wait_idle_sees_both_workers_finish() {
    // Bound 1 (10 000 interleavings, seconds): three threads and two
    // lanes; bound 2 ran past 10 minutes on 2 shared cores.
    // `LOOM_MAX_PREEMPTIONS=2` runs that deeper search.
    model_with_bound(1, || {
        let exec = executor(2);
        assert_eq!(exec.prestart_core_threads(), 2);
        let runs = Runs::new(2);
        let _high = exec.enqueue(HIGH, runs.job(0)).unwrap();
        let _low = exec.enqueue(LOW, runs.job(1)).unwrap();
        exec.wait_idle();
        assert_eq!((runs.get(0), runs.get(1)), (1, 1));
        exec.shutdown();
    });
}

/// Rule 8: two jobs, one per worker, each wait for idle. Each ignores
/// the other (it waits on the pool too) and returns; with each waiting
/// for the other, loom reports the deadlock (it never times a wait out).
#[test]
#[ignore = "about 10 minutes on 2 cores, past CI's budget; run by hand with --ignored"]
fn two_jobs_waiting_for_idle_both_return() {
    // Bound 1, as for the two workers above: about a million
    // interleavings (two jobs each through the waiter's side and the
    // worker's, and the shutdown); tens of minutes on 2 loaded cores.
    model_with_bound(1, || {
        let exec = executor(2);
        assert_eq!(exec.prestart_core_threads(), 2);
        let jobs: Vec<_> = [HIGH, LOW]
            .into_iter()
            .map(|priority| {
                let handle = exec.clone();
                exec.enqueue(priority, move || handle.wait_idle()).unwrap()
            })
            .collect();
        for job in jobs {
            assert_eq!(job.join(), Ok(()));
        }
        exec.shutdown();
    });
}
