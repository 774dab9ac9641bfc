//! Model: a producer blocked on a full bounded lane and a worker freeing a
//! slot (`lane.rs`, `reserve_blocking` / `release_slot`).
use crate::support::{HIGH, LOW};
use crate::support::{Runs, model_with_bound};
use priority_executor::{Capacity, Executor};

/// The first job fills the lane of capacity 1 and starts the worker; the
/// second `enqueue` blocks until the worker has taken the first. A lost
/// notification leaves the producer blocked for ever (loom: deadlock).
#[test]
fn producer_blocked_on_a_full_lane_wakes_when_a_slot_frees() {
    // Bound 2 (274 746 interleavings, 25 s): with the shutdown at the end
    // the bound-3 search takes over five minutes, the longest of all the
    // models. `LOOM_MAX_PREEMPTIONS=3` runs it.
    model_with_bound(2, || {
        let exec = Executor::builder()
            .name("loom")
            .core_threads(1)
            .max_threads(1)
            .lane(HIGH, Capacity::Bounded(1))
            .lane(LOW, Capacity::Bounded(1))
            .build()
            .unwrap();
        let runs = Runs::new(2);
        let first = exec.enqueue(HIGH, runs.job(0)).unwrap();
        let second = exec.enqueue(HIGH, runs.job(1)).unwrap();
        assert_eq!(first.join(), Ok(()));
        assert_eq!(second.join(), Ok(()));
        assert_eq!((runs.get(0), runs.get(1)), (1, 1));
        let m = exec.metrics();
        assert_eq!(m.lanes[0].rejected, 0);
        exec.shutdown();
    });
}
