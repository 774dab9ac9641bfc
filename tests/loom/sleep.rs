//! Model: a producer publishing while workers go to sleep (sleep/README.md,
//! rules 1 to 3). Every job must run without a shutdown to wake anyone.
use crate::support::{HIGH, LOW, two_lanes};
use crate::support::{Runs, model, model_with_bound};

/// One worker, started before the jobs, races to sleep while the main
/// thread publishes a job in each lane. The pool is at `max`, so only the
/// sleep protocol can get the jobs run.
#[test]
fn enqueue_racing_sleep_runs_every_job() {
    // Bound 2 (212 666 interleavings, 18 s; bound 3 took over three
    // minutes). `LOOM_MAX_PREEMPTIONS=3` runs the deeper search.
    model_with_bound(2, || {
        let exec = two_lanes().core_threads(1).max_threads(1).build().unwrap();
        assert_eq!(exec.prestart_core_threads(), 1);
        let runs = Runs::new(2);
        let high = exec.enqueue(HIGH, runs.job(0)).unwrap();
        let low = exec.enqueue(LOW, runs.job(1)).unwrap();
        // Joined before shutdown, which wakes every sleeper and would hide a
        // lost wake-up: with one lost, every thread blocks and loom reports
        // the deadlock.
        assert_eq!(high.join(), Ok(()));
        assert_eq!(low.join(), Ok(()));
        assert_eq!((runs.get(0), runs.get(1)), (1, 1));
        exec.shutdown();
    });
}

/// Two workers race to sleep while the main thread publishes one job: the
/// job must wake (or be found by) one of them, whichever sleeps first; the
/// other may stay asleep (one job, one wake-up).
#[test]
fn enqueue_racing_two_sleepers_runs_the_job() {
    // Bound 1 (228 000 interleavings, under a minute): three threads make
    // this the largest model; 2 took 2.5 minutes before the scheduling
    // policies landed and over 5 since. `LOOM_MAX_PREEMPTIONS=2` runs the
    // deeper search.
    model_with_bound(1, || {
        let exec = two_lanes().core_threads(2).max_threads(2).build().unwrap();
        assert_eq!(exec.prestart_core_threads(), 2);
        let runs = Runs::new(1);
        let job = exec.enqueue(LOW, runs.job(0)).unwrap();
        assert_eq!(job.join(), Ok(()));
        assert_eq!(runs.get(0), 1);
        exec.shutdown();
    });
}

/// A batch of two jobs (`enqueue_batch`, each published and a worker
/// woken before the next is taken) while the only worker races to sleep:
/// both run.
#[test]
fn batch_racing_sleep_runs_every_job() {
    model(|| {
        let exec = two_lanes().core_threads(1).max_threads(1).build().unwrap();
        assert_eq!(exec.prestart_core_threads(), 1);
        let runs = Runs::new(2);
        let handles = exec.enqueue_batch(LOW, [runs.job(0), runs.job(1)]).unwrap();
        for handle in handles {
            assert_eq!(handle.join(), Ok(()));
        }
        assert_eq!((runs.get(0), runs.get(1)), (1, 1));
        exec.shutdown();
    });
}
