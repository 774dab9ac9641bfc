//! Model: futures awaiting room in a full bounded lane while the worker
//! frees slots (`lane/space.rs`, `poll_space` / `release_slot`). A lost
//! wake-up leaves a future waiting for ever (loom: deadlock).
use crate::support::{Runs, model};
use loom::future::block_on;
use priority_executor::{Capacity, Executor, Priority};

const HIGH: Priority = Priority(1);

/// One worker and a lane of one slot, filled by a job the worker is
/// about to take.
fn full_lane(runs: &std::sync::Arc<Runs>) -> (Executor, priority_executor::JobHandle<()>) {
    let exec = Executor::builder()
        .name("loom")
        .core_threads(1)
        .max_threads(1)
        .lane(HIGH, Capacity::Bounded(1))
        .build()
        .unwrap();
    let first = exec.enqueue(HIGH, runs.job(0)).unwrap();
    (exec, first)
}

/// The future registers while the worker takes the job that filled the
/// lane: it sees the free slot, or the worker sees it waiting.
#[test]
fn a_future_waiting_for_a_slot_wakes_when_the_worker_frees_one() {
    model(|| {
        let runs = Runs::new(2);
        let (exec, first) = full_lane(&runs);
        let permit = block_on(exec.reserve(HIGH)).unwrap();
        let second = permit.enqueue(runs.job(1)).unwrap();
        assert_eq!(first.join(), Ok(()));
        assert_eq!(second.join(), Ok(()));
        assert_eq!((runs.get(0), runs.get(1)), (1, 1));
        exec.shutdown();
    });
}

/// Two futures on two threads wait on the full lane; each slot the
/// worker frees goes to one of them, and both get theirs.
#[test]
fn two_futures_waiting_on_one_lane_both_get_a_slot() {
    crate::support::model_with_bound(2, || {
        let runs = Runs::new(3);
        let (exec, first) = full_lane(&runs);
        let other = {
            let (handle, job) = (exec.clone(), runs.job(2));
            loom::thread::spawn(move || {
                let permit = block_on(handle.reserve(HIGH)).unwrap();
                permit.enqueue(job).unwrap().join()
            })
        };
        let permit = block_on(exec.reserve(HIGH)).unwrap();
        let second = permit.enqueue(runs.job(1)).unwrap();
        assert_eq!(first.join(), Ok(()));
        assert_eq!(second.join(), Ok(()));
        assert_eq!(other.join().unwrap(), Ok(()));
        assert_eq!((runs.get(0), runs.get(1), runs.get(2)), (1, 1, 1));
        exec.shutdown();
    });
}
