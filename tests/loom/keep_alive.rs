//! Model: a worker whose keep-alive ran out, retiring while a producer
//! publishes (sleep/README.md, rules 3 and 4). The job must still run.
//!
//! loom never fires a condition variable's timeout, but a keep-alive of
//! zero makes an idle worker allowed to time out retire at once, which is
//! the race rule 4 is about.
use crate::support::{self, HIGH, LOW};
use crate::support::{Runs, model};
use priority_executor::ExecutorBuilder;
use std::time::Duration;

/// The two lanes, and idle workers retiring at once.
fn two_lanes() -> ExecutorBuilder {
    support::two_lanes().keep_alive(Duration::ZERO)
}

/// No core threads: the only worker retires as soon as it is idle, racing
/// the second job's publication.
#[test]
fn job_published_while_the_last_worker_retires_still_runs() {
    model(|| {
        let exec = two_lanes()
            .core_threads(0)
            .max_threads(1)
            .allow_core_timeout(true)
            .build()
            .unwrap();
        let runs = Runs::new(2);
        let first = exec.enqueue(HIGH, runs.job(0)).unwrap();
        assert_eq!(first.join(), Ok(()));
        // The worker is now on its way to retiring (or gone).
        let second = exec.enqueue(LOW, runs.job(1)).unwrap();
        assert_eq!(second.join(), Ok(()));
        assert_eq!((runs.get(0), runs.get(1)), (1, 1));
        exec.shutdown();
    });
}

/// Core threads may time out too: a core thread already running when the
/// job is published retires (keep-alive zero) while the producer decides
/// whether to start a thread.
#[test]
fn core_thread_timing_out_races_a_new_job() {
    model(|| {
        let exec = two_lanes()
            .core_threads(1)
            .max_threads(1)
            .allow_core_timeout(true)
            .build()
            .unwrap();
        assert_eq!(exec.prestart_core_threads(), 1);
        let runs = Runs::new(1);
        let job = exec.enqueue(HIGH, runs.job(0)).unwrap();
        assert_eq!(job.join(), Ok(()));
        assert_eq!(runs.get(0), 1);
        exec.shutdown();
    });
}
