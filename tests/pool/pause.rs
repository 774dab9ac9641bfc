//! Pausing a lane: it accepts jobs up to its capacity, the picker skips it
//! and its turns pass to the other lanes at their weights; a resume runs
//! what waited, in order, each job once.

use crate::common::no_wait;
use crate::common::{hold_worker, single_worker, wait_until, watchdog};
use priority_executor::{
    Capacity, EnqueueError, Executor, LaneConfig, PauseError, Picker, Priority,
};
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<(u32, usize)>>>;

/// Enqueues `n` jobs into lane `p` that record `(p, i)` in `log`.
fn fill(exec: &Executor, log: &Log, p: u32, n: usize) {
    for i in 0..n {
        let log = log.clone();
        let _detached = exec
            .enqueue(Priority(p), move || log.lock().unwrap().push((p, i)))
            .unwrap();
    }
}

/// The lanes of `log` in dispatch order.
fn lanes(log: &Log) -> Vec<u32> {
    log.lock().unwrap().iter().map(|&(p, _)| p).collect()
}

/// Each lane's jobs ran once each, in the order they were enqueued.
fn assert_fifo_once(log: &Log, p: u32, n: usize) {
    let ran: Vec<usize> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|&&(q, _)| q == p)
        .map(|&(_, i)| i)
        .collect();
    assert_eq!(ran, (0..n).collect::<Vec<_>>(), "lane {p}");
}

#[test]
fn a_paused_lane_turns_pass_to_the_others_at_their_weights() {
    // A (weight 1) paused; B (weight 2) and C (weight 1) keep their 2:1.
    let exec = single_worker(&[(3, 1), (2, 2), (1, 1)], Picker::Smooth);
    let log: Log = Arc::default();
    let gate = hold_worker(&exec, Priority(1));
    exec.pause_lane(Priority(3)).unwrap();
    fill(&exec, &log, 3, 10);
    fill(&exec, &log, 2, 20);
    fill(&exec, &log, 1, 10);
    drop(gate);
    wait_until("the lanes not paused ran dry", || {
        log.lock().unwrap().len() == 30
    });
    let order = lanes(&log);
    assert!(!order.contains(&3), "a paused lane's job ran: {order:?}");
    // While both are backlogged, every three dispatches are two B, one C.
    for window in order[..27].windows(3) {
        assert_eq!(window.iter().filter(|&&p| p == 2).count(), 2, "{order:?}");
    }
    let metrics = exec.metrics();
    let paused = metrics.lane(Priority(3)).unwrap();
    assert!(paused.paused);
    assert_eq!((paused.queued, paused.dispatched), (10, 0));
    assert!(!metrics.lane(Priority(2)).unwrap().paused);

    exec.resume_lane(Priority(3)).unwrap();
    assert!(!exec.is_lane_paused(Priority(3)));
    exec.shutdown();
    assert_eq!(lanes(&log)[30..], [3; 10]);
    for (p, n) in [(3, 10), (2, 20), (1, 10)] {
        assert_fifo_once(&log, p, n);
    }
}

#[test]
fn a_paused_lane_keeps_its_capacity() {
    let exec = Executor::builder()
        .lane(Priority(2), Capacity::Unbounded)
        .lane(Priority(1), Capacity::Bounded(3))
        .build()
        .unwrap();
    exec.pause_lane(Priority(1)).unwrap();
    let handles: Vec<_> = (0..3)
        .map(|i| {
            exec.enqueue_with(Priority(1), move || i, no_wait())
                .unwrap()
        })
        .collect();
    match exec.enqueue_with(Priority(1), || 3, no_wait()) {
        Err(EnqueueError::Full { capacity: 3, .. }) => {}
        other => panic!("a full paused lane must refuse: {:?}", other.map(|_| ())),
    }
    // The other lane runs on meanwhile.
    assert_eq!(exec.enqueue(Priority(2), || "on").unwrap().join(), Ok("on"));
    let lane = exec.metrics();
    let lane = lane.lane(Priority(1)).unwrap();
    assert_eq!((lane.queued, lane.rejected, lane.paused), (3, 1, true));
    assert!(handles.iter().all(|h| !h.is_finished()));

    exec.resume_lane(Priority(1)).unwrap();
    let ran: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(ran, [0, 1, 2]);
}

#[test]
fn workers_sleep_while_only_a_paused_lane_holds_jobs_and_a_resume_wakes_them() {
    watchdog("resume wakes the sleepers", || {
        let exec = Executor::builder()
            .core_threads(2)
            .max_threads(2)
            .lane(Priority(1), Capacity::Unbounded)
            .build()
            .unwrap();
        assert_eq!(exec.prestart_core_threads(), 2);
        exec.pause_lane(Priority(1)).unwrap();
        let handles: Vec<_> = (0..50)
            .map(|i| exec.enqueue(Priority(1), move || i).unwrap())
            .collect();
        // Every enqueue may wake a worker; each finds nothing it may
        // claim and goes back to sleep instead of spinning.
        wait_until("both workers asleep", || {
            exec.metrics().threads.sleeping == 2
        });
        assert_eq!(exec.metrics().queued(), 50);
        exec.resume_lane(Priority(1)).unwrap();
        for (i, handle) in handles.into_iter().enumerate() {
            assert_eq!(handle.join(), Ok(i));
        }
    });
}

#[test]
fn a_resume_starts_a_worker_when_every_worker_retired() {
    watchdog("resume with no worker alive", || {
        let exec = Executor::builder()
            .core_threads(0)
            .max_threads(2)
            .keep_alive(std::time::Duration::from_millis(1))
            .lane(Priority(1), Capacity::Unbounded)
            .build()
            .unwrap();
        exec.pause_lane(Priority(1)).unwrap();
        let job = exec.enqueue(Priority(1), || "ran").unwrap();
        // The paused lane's job keeps no worker: it retires.
        wait_until("the worker retired", || exec.metrics().threads.live == 0);
        exec.resume_lane(Priority(1)).unwrap();
        assert_eq!(job.join(), Ok("ran"));
    });
}

#[test]
fn shutdown_runs_a_paused_lanes_jobs_and_shutdown_now_hands_them_back() {
    watchdog("shutdown with a paused lane", || {
        let exec = Executor::builder()
            .lane(Priority(1), Capacity::Unbounded)
            .build()
            .unwrap();
        exec.pause_lane(Priority(1)).unwrap();
        let handles: Vec<_> = (0..5)
            .map(|i| exec.enqueue(Priority(1), move || i).unwrap())
            .collect();
        // A graceful shutdown runs every accepted job: it resumes the lane.
        exec.shutdown();
        assert!(!exec.is_lane_paused(Priority(1)));
        let ran: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(ran, [0, 1, 2, 3, 4]);
        assert_eq!(exec.pause_lane(Priority(1)), Err(PauseError::ShutDown));
        assert_eq!(exec.resume_lane(Priority(1)), Ok(()));

        let exec = Executor::builder()
            .lane(Priority(1), Capacity::Unbounded)
            .build()
            .unwrap();
        exec.pause_lane(Priority(1)).unwrap();
        for i in 0..5 {
            let _detached = exec.enqueue(Priority(1), move || i);
        }
        let pending = exec.shutdown_now();
        assert_eq!(pending.len(), 5);
        assert_eq!(exec.metrics().lane(Priority(1)).unwrap().handed_back, 5);
    });
}

#[test]
fn pausing_an_unknown_lane_is_an_error() {
    let exec = Executor::builder()
        .lane_config(LaneConfig::new(Priority(1)))
        .build()
        .unwrap();
    let unknown = PauseError::UnknownPriority {
        priority: Priority(4),
    };
    assert_eq!(exec.pause_lane(Priority(4)), Err(unknown));
    assert_eq!(exec.resume_lane(Priority(4)), Err(unknown));
    assert!(!exec.is_lane_paused(Priority(4)));
    assert_eq!(unknown.to_string(), "no lane for priority 4");
}

#[test]
fn the_strict_picker_skips_a_paused_lane_too() {
    let exec = single_worker(&[(2, 1), (1, 1)], Picker::Strict);
    let log: Log = Arc::default();
    let gate = hold_worker(&exec, Priority(1));
    exec.pause_lane(Priority(2)).unwrap();
    fill(&exec, &log, 2, 3);
    fill(&exec, &log, 1, 3);
    drop(gate);
    wait_until("the low lane ran", || log.lock().unwrap().len() == 3);
    assert_eq!(lanes(&log), [1, 1, 1]);
    exec.resume_lane(Priority(2)).unwrap();
    exec.shutdown();
    assert_eq!(lanes(&log), [1, 1, 1, 2, 2, 2]);
}

/// CPU time this thread has used so far, in ns (Linux's scheduler
/// statistics).
#[cfg(target_os = "linux")]
fn thread_cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    stat.split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .expect("the first field is the time on a CPU, in ns")
}

/// A job of the pool waits for room in a full lane of its own executor,
/// whose slot a paused lane's job (or a permit) holds, for `hold`: its
/// worker must sleep through the wait, not spin. Returns the CPU time the
/// worker used while it waited, against the wall time: a spinning worker
/// used 28% of the wall time on a loaded 2-core machine (a whole core on
/// an idle one), a sleeping one under 1%; the tests allow 5%.
#[cfg(target_os = "linux")]
fn cpu_while_waiting_for_own_lane(
    hold: impl FnOnce(&Executor) -> Box<dyn FnOnce()> + Send + 'static,
) -> (u64, u64) {
    watchdog("a job waiting for room in its own executor", move || {
        const JOB: Priority = Priority(2);
        const FULL: Priority = Priority(1);
        let exec = Executor::builder()
            .core_threads(1)
            .max_threads(1)
            .lane(JOB, Capacity::Unbounded)
            .lane(FULL, Capacity::Bounded(1))
            .build()
            .unwrap();
        let release = hold(&exec);
        let (started_tx, started) = std::sync::mpsc::channel();
        let inner = exec.clone();
        let waiting = exec
            .enqueue(JOB, move || {
                let (cpu, wall) = (thread_cpu_ns(), std::time::Instant::now());
                started_tx.send(()).unwrap();
                let queued = inner.enqueue(FULL, || "queued at last").unwrap();
                let spent = (thread_cpu_ns() - cpu, wall.elapsed().as_nanos() as u64);
                (spent, queued)
            })
            .unwrap();
        started.recv().unwrap();
        // The interval measured: the job waits through it.
        std::thread::sleep(std::time::Duration::from_millis(400));
        release();
        let (spent, queued) = waiting.join().unwrap();
        assert_eq!(queued.join(), Ok("queued at last"));
        exec.shutdown();
        spent
    })
}

#[cfg(target_os = "linux")]
#[test]
fn a_job_waiting_for_room_behind_a_paused_lane_sleeps_until_the_resume() {
    let (cpu, wall) = cpu_while_waiting_for_own_lane(|exec| {
        exec.pause_lane(Priority(1)).unwrap();
        let _queued = exec.enqueue(Priority(1), || "paused").unwrap();
        let exec = exec.clone();
        Box::new(move || exec.resume_lane(Priority(1)).unwrap())
    });
    assert!(
        cpu < wall / 20,
        "the worker spun: {cpu} ns on a CPU in {wall} ns of waiting"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_job_waiting_for_room_held_by_a_permit_sleeps_until_it_is_dropped() {
    let (cpu, wall) = cpu_while_waiting_for_own_lane(|exec| {
        let permit = ready_now(exec.reserve(Priority(1))).unwrap();
        Box::new(move || drop(permit))
    });
    assert!(
        cpu < wall / 20,
        "the worker spun: {cpu} ns on a CPU in {wall} ns of waiting"
    );
}

/// Polls a future that is ready at once (an empty lane's `reserve`).
fn ready_now<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    match f
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => panic!("an empty lane has room at once"),
    }
}
