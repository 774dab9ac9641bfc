//! Reserved workers: a lane capped with `max_running` can never occupy
//! every worker, so a high-priority job starts as soon as it is queued.

use crate::common::wait_until;
use priority_executor::{Capacity, Executor, LaneConfig, MaxRunning, Priority};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

#[test]
fn capped_low_lane_leaves_workers_for_high_jobs() {
    let exec = Executor::builder()
        .core_threads(4)
        .max_threads(4)
        .lane(Priority(10), Capacity::Unbounded)
        .lane_config(
            LaneConfig::new(Priority(1))
                .weight(1)
                .max_running(MaxRunning::Threads(2)),
        )
        .build()
        .unwrap();
    exec.prestart_core_threads();
    // A flood of long low jobs: each waits on a gate we hold.
    let gates: Arc<Mutex<Vec<mpsc::Sender<()>>>> = Arc::new(Mutex::new(Vec::new()));
    let (started_tx, started) = mpsc::channel();
    let mut low = Vec::new();
    for _ in 0..20 {
        let (release, gate) = mpsc::channel::<()>();
        gates.lock().unwrap().push(release);
        let started_tx = started_tx.clone();
        low.push(
            exec.enqueue(Priority(1), move || {
                started_tx.send(()).unwrap();
                gate.recv().ok();
            })
            .unwrap(),
        );
    }
    // Two low jobs start (the cap), no more.
    started.recv().unwrap();
    started.recv().unwrap();
    let m = exec.metrics();
    let lane = m.lane(Priority(1)).unwrap();
    assert_eq!(lane.running, Some(2));
    assert_eq!(lane.max_running, Some(2));
    assert_eq!(lane.queued, 18);
    // High jobs run now, while 18 low jobs wait and every low job started
    // so far is still blocked: they can only run on the free workers.
    for i in 0..10 {
        assert_eq!(exec.enqueue(Priority(10), move || i).unwrap().join(), Ok(i));
    }
    assert_eq!(exec.metrics().lane(Priority(1)).unwrap().running, Some(2));
    // Release the flood; everything finishes.
    for _ in 0..20 {
        let gate = gates.lock().unwrap().remove(0);
        gate.send(()).unwrap();
    }
    for h in low {
        h.join().unwrap();
    }
    let m = exec.metrics();
    assert_eq!(m.lane(Priority(1)).unwrap().completed, 20);
    // The gauge drops once each worker is back from its job.
    wait_until("no low job running", || {
        exec.metrics().lane(Priority(1)).unwrap().running == Some(0)
    });
}

#[test]
fn share_of_max_threads_rounds_up() {
    let exec = Executor::builder()
        .core_threads(1)
        .max_threads(10)
        .lane_config(LaneConfig::new(Priority(1)).max_running(MaxRunning::Percent(15)))
        .build()
        .unwrap();
    assert_eq!(exec.metrics().lanes[0].max_running, Some(2));
}

#[test]
fn bad_caps_are_build_errors() {
    let err = Executor::builder()
        .lane_config(LaneConfig::new(Priority(1)).max_running(MaxRunning::Threads(0)))
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("max_running = 0 threads is not allowed"),
        "{err}"
    );
    let err = Executor::builder()
        .lane_config(LaneConfig::new(Priority(1)).max_running(MaxRunning::Percent(120)))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("1 to 100 percent"), "{err}");
}

/// A job of a capped lane shuts its executor down while another job of
/// that lane waits for the cap: the idle worker beside it neither spins
/// nor holds the shutdown up; the job's own worker runs the waiting one
/// once its job returns.
#[test]
fn a_capped_lanes_job_shutting_down_its_executor_returns() {
    let exec = Executor::builder()
        .core_threads(2)
        .max_threads(2)
        .lane_config(LaneConfig::new(Priority(1)).max_running(MaxRunning::Threads(1)))
        .build()
        .unwrap();
    exec.prestart_core_threads();
    let (started_tx, started) = mpsc::channel();
    let (release, gate) = mpsc::channel::<()>();
    let inner = exec.clone();
    let first = exec
        .enqueue(Priority(1), move || {
            started_tx.send(()).unwrap();
            gate.recv().unwrap();
            inner.shutdown();
        })
        .unwrap();
    started.recv().unwrap();
    let second = exec.enqueue(Priority(1), || "second").unwrap();
    release.send(()).unwrap();
    let (first, second) = crate::common::watchdog("the shutdown from inside", move || {
        (first.join(), second.join())
    });
    assert_eq!((first, second), (Ok(()), Ok("second")));
    // The last worker may still be on its way out: wait for it.
    exec.shutdown();
    assert!(exec.is_terminated());
}
