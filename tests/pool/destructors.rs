//! Every job closure is dropped exactly once, whatever became of it: run,
//! panicked, handed back by `shutdown_now` (then run or dropped), or
//! refused (full lane, unknown priority, shut down) and returned.
//!
//! Each closure captures a guard that counts its own drop; after each
//! scenario every guard must have been dropped once: not zero times (a
//! leak, or a job still held somewhere) and not twice.

use crate::common::{no_wait, wait_at_most};
use priority_executor::{Capacity, EnqueueError, Executor, JobError, Priority};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

const HIGH: Priority = Priority(2);
const LOW: Priority = Priority(1);
const PANIC_MESSAGE: &str = "destructors: deliberate panic";

/// Drop counts, one per job id.
struct Drops(Vec<AtomicUsize>);

struct Guard {
    id: usize,
    drops: Arc<Drops>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.drops.0[self.id].fetch_add(1, Ordering::SeqCst);
    }
}

impl Drops {
    fn new(n: usize) -> Arc<Drops> {
        Arc::new(Drops((0..n).map(|_| AtomicUsize::new(0)).collect()))
    }

    /// A job owning a guard; it returns its id, or panics if asked to.
    fn job(self: &Arc<Self>, id: usize, panics: bool) -> impl FnOnce() -> usize + Send + 'static {
        let guard = Guard {
            id,
            drops: Arc::clone(self),
        };
        move || {
            let guard = guard;
            if panics {
                panic!("{PANIC_MESSAGE}");
            }
            guard.id
        }
    }

    fn of(&self, id: usize) -> usize {
        self.0[id].load(Ordering::SeqCst)
    }

    #[track_caller]
    fn assert_each_once(&self) {
        let counts: Vec<usize> = (0..self.0.len()).map(|i| self.of(i)).collect();
        assert!(
            counts.iter().all(|&c| c == 1),
            "drops per job (each must be 1): {counts:?}"
        );
    }
}

/// A one-worker executor whose worker is held inside a job until the
/// returned sender is dropped or sent to, so the lanes fill up.
fn held_executor(capacity: Capacity) -> (Executor, mpsc::Sender<()>) {
    let exec = Executor::builder()
        .name("drops")
        .core_threads(1)
        .max_threads(1)
        .lane(HIGH, capacity)
        .lane(LOW, capacity)
        .build()
        .unwrap();
    let (started_tx, started) = mpsc::channel();
    let (release, gate) = mpsc::channel::<()>();
    let _detached = exec
        .enqueue(HIGH, move || {
            started_tx.send(()).unwrap();
            let _ = gate.recv();
        })
        .unwrap();
    started.recv().unwrap();
    (exec, release)
}

#[test]
fn jobs_that_ran_are_dropped_once() {
    crate::common::quiet_panics(PANIC_MESSAGE);
    let drops = Drops::new(40);
    let exec = Executor::builder()
        .name("drops")
        .core_threads(2)
        .max_threads(4)
        .lane(HIGH, Capacity::Bounded(4))
        .lane(LOW, Capacity::Unbounded)
        .build()
        .unwrap();
    let mut handles = Vec::new();
    for id in 0..40 {
        let lane = if id % 2 == 0 { HIGH } else { LOW };
        handles.push((id, exec.enqueue(lane, drops.job(id, id % 5 == 0)).unwrap()));
    }
    for (id, handle) in handles {
        match handle.join() {
            Ok(v) => assert_eq!(v, id),
            Err(JobError::Panicked { message }) => {
                assert_eq!(id % 5, 0);
                assert_eq!(message, PANIC_MESSAGE);
            }
            Err(e) => panic!("job {id}: {e:?}"),
        }
        // The closure is gone once its result is in: it was consumed by
        // the call (or dropped while unwinding).
        assert_eq!(drops.of(id), 1, "job {id}");
    }
    exec.shutdown();
    drops.assert_each_once();
}

#[test]
fn detached_and_drained_jobs_are_dropped_once() {
    let drops = Drops::new(10);
    let (exec, release) = held_executor(Capacity::Unbounded);
    for id in 0..10 {
        // Handles dropped at once: the jobs still run, at shutdown.
        let _detached = exec.enqueue(LOW, drops.job(id, false)).unwrap();
    }
    drop(release);
    exec.shutdown();
    drops.assert_each_once();
}

#[test]
fn handed_back_jobs_are_dropped_once_whether_run_or_dropped() {
    let drops = Drops::new(8);
    let (exec, release) = held_executor(Capacity::Unbounded);
    let handles: Vec<_> = (0..8)
        .map(|id| {
            let lane = if id < 4 { HIGH } else { LOW };
            exec.enqueue(lane, drops.job(id, id == 5)).unwrap()
        })
        .collect();
    let pending = exec.shutdown_now();
    assert_eq!(pending.len(), 8);
    let mut run = 0;
    for (i, job) in pending.into_iter().enumerate() {
        if i % 2 == 0 {
            let _ = catch_unwind(AssertUnwindSafe(|| job.run()));
            run += 1;
        } else {
            drop(job);
        }
    }
    // Highest priority first: ids 0..4 then 4..8, in FIFO order.
    for (id, handle) in handles.into_iter().enumerate() {
        let result = handle.join();
        assert_eq!(drops.of(id), 1, "job {id}: {result:?}");
        if id % 2 == 0 {
            assert!(result != Err(JobError::Cancelled), "job {id} was run");
        } else {
            assert_eq!(result, Err(JobError::Cancelled), "job {id} was dropped");
        }
    }
    assert_eq!(run, 4);
    drop(release);
    exec.shutdown();
    drops.assert_each_once();
}

#[test]
fn refused_jobs_are_returned_and_dropped_once() {
    crate::common::quiet_panics(PANIC_MESSAGE);
    let drops = Drops::new(7);
    let (exec, release) = held_executor(Capacity::Bounded(1));
    let _queued = exec.enqueue(HIGH, drops.job(0, false)).unwrap();

    // Full, with no wait and with a wait that ran out: dropped with the error.
    let full = exec
        .enqueue_with(HIGH, drops.job(1, false), no_wait())
        .unwrap_err();
    assert!(matches!(full, EnqueueError::Full { .. }));
    drop(full);
    assert_eq!(drops.of(1), 1);
    let full = exec
        .enqueue_with(
            HIGH,
            drops.job(2, false),
            wait_at_most(Duration::from_millis(1)),
        )
        .unwrap_err();
    assert!(matches!(full, EnqueueError::Full { .. }));
    // Returned, then called: the guard goes with the call.
    assert_eq!((full.into_inner())(), 2);
    assert_eq!(drops.of(2), 1);

    // Unknown priority: returned, called, and it panics.
    let unknown = exec.enqueue(Priority(9), drops.job(3, true)).unwrap_err();
    assert!(matches!(unknown, EnqueueError::UnknownPriority { .. }));
    let job = unknown.into_inner();
    assert!(catch_unwind(AssertUnwindSafe(job)).is_err());
    assert_eq!(drops.of(3), 1);

    // A producer blocked on the full lane, then shut down: refused. It may
    // not have reached the wait yet when shutdown_now runs; the outcome is
    // the same either way.
    let blocked = {
        let exec = exec.clone();
        let job = drops.job(4, false);
        thread::spawn(move || match exec.enqueue(HIGH, job) {
            Err(e @ EnqueueError::ShutDown { .. }) => drop(e),
            other => panic!("expected ShutDown, got {:?}", other.map(|_| ())),
        })
    };
    let pending = exec.shutdown_now();
    blocked.join().unwrap();
    assert_eq!(drops.of(4), 1);
    assert_eq!(pending.len(), 1, "job 0 handed back");
    drop(pending);
    assert_eq!(drops.of(0), 1);

    // After shutdown: refused at once, from every entry point.
    drop(
        exec.enqueue_with(LOW, drops.job(5, false), no_wait())
            .unwrap_err(),
    );
    drop(exec.enqueue(LOW, drops.job(6, false)).unwrap_err());

    drop(release);
    exec.shutdown();
    drops.assert_each_once();
}
