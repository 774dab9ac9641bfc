//! Model: pausing and resuming a lane (sleep/README.md, rule 9). A job
//! waiting in a paused lane must run once the lane resumes, whatever the
//! workers were doing; a pause racing a shutdown must not leave the lane
//! paused with its job unrun.
use crate::support::{LOW, two_lanes};
use crate::support::{Runs, model, model_with_bound};
use std::time::Duration;

/// The only worker goes to sleep beside a paused lane holding a job while
/// another thread resumes the lane. The handle is joined before shutdown
/// (which wakes everyone): a lost wake-up is loom's deadlock report.
#[test]
fn resume_racing_the_worker_going_to_sleep_runs_the_job() {
    model(|| {
        let exec = two_lanes().core_threads(1).max_threads(1).build().unwrap();
        assert_eq!(exec.prestart_core_threads(), 1);
        exec.pause_lane(LOW).unwrap();
        let runs = Runs::new(1);
        let job = exec.enqueue(LOW, runs.job(0)).unwrap();
        let resumer = {
            let exec = exec.clone();
            loom::thread::spawn(move || exec.resume_lane(LOW).unwrap())
        };
        assert_eq!(job.join(), Ok(()));
        resumer.join().unwrap();
        assert_eq!(runs.get(0), 1);
        exec.shutdown();
    });
}

/// No core thread and keep-alive zero: the only worker retires beside the
/// paused lane (rule 4 leaves paused lanes out) while the lane resumes;
/// the resume starts a worker, or the worker sees it and stays.
#[test]
fn resume_racing_the_last_worker_retiring_runs_the_job() {
    model(|| {
        let exec = two_lanes()
            .core_threads(0)
            .max_threads(1)
            .keep_alive(Duration::ZERO)
            .allow_core_timeout(true)
            .build()
            .unwrap();
        exec.pause_lane(LOW).unwrap();
        let runs = Runs::new(1);
        let job = exec.enqueue(LOW, runs.job(0)).unwrap();
        exec.resume_lane(LOW).unwrap();
        assert_eq!(job.join(), Ok(()));
        assert_eq!(runs.get(0), 1);
        exec.shutdown();
    });
}

/// `pause_lane` on one thread racing `shutdown` on another: the shutdown
/// returns (a lane left paused would hold its job and the workers forever)
/// with the job run, and the lane is not paused afterwards.
#[test]
fn pause_racing_shutdown_never_leaves_the_lane_paused() {
    // Bound 2: three threads (main, pauser, worker) and a full shutdown.
    model_with_bound(2, || {
        let exec = two_lanes().core_threads(1).max_threads(1).build().unwrap();
        let runs = Runs::new(1);
        let job = exec.enqueue(LOW, runs.job(0)).unwrap();
        let pauser = {
            let exec = exec.clone();
            loom::thread::spawn(move || {
                let _ = exec.pause_lane(LOW);
            })
        };
        exec.shutdown();
        pauser.join().unwrap();
        assert!(!exec.is_lane_paused(LOW));
        assert_eq!(job.join(), Ok(()));
        assert_eq!(runs.get(0), 1);
    });
}
