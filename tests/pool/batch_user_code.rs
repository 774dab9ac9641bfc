//! `enqueue_batch` calling back into the caller's iterator: each job is
//! published (and a worker woken) before the iterator is asked for the
//! next, so the iterator may wait for the jobs before it or enqueue into
//! the same lane; an iterator that panics leaves the lane's capacity as it
//! was, with the jobs it yielded before queued.

use crate::common::{hold_worker, quiet_panics, watchdog};
use crate::common::{no_wait, wait_at_most};
use priority_executor::{Capacity, Executor, LaneConfig, Priority, RejectionPolicy};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

const HIGH: Priority = Priority(10);
const P: Priority = Priority(1);
const DELIBERATE: &str = "batch: deliberate panic";

/// One worker; `P` is bounded to `capacity` and rejects when full.
fn exec(capacity: usize) -> Executor {
    Executor::builder()
        .name("batch-user")
        .core_threads(1)
        .max_threads(1)
        .lane(HIGH, Capacity::Unbounded)
        .lane_config(
            LaneConfig::new(P)
                .capacity(Capacity::Bounded(capacity))
                .when_full(RejectionPolicy::Reject),
        )
        .build()
        .unwrap()
}

/// An iterator yields `before` jobs, then panics; the panic reaches the
/// caller, the jobs yielded run, and the lane takes `capacity` jobs again.
fn panic_after(before: usize) {
    quiet_panics(DELIBERATE);
    let (ran, fits) = watchdog("a batch whose iterator panics", move || {
        let e = exec(4);
        let gate = hold_worker(&e, HIGH);
        let ran = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&ran);
        let jobs = (0..100).map(move |i| {
            assert!(i < before, "{DELIBERATE}");
            let ran = Arc::clone(&counted);
            move || {
                ran.fetch_add(1, Ordering::SeqCst);
            }
        });
        let outcome = catch_unwind(AssertUnwindSafe(|| e.enqueue_batch(P, jobs)));
        assert!(outcome.is_err(), "the iterator's panic reaches the caller");
        drop(gate);
        e.wait_idle();
        let ran = ran.load(Ordering::SeqCst);
        // The whole capacity is there again: with the worker held, the
        // lane takes 4 jobs and refuses the fifth.
        let gate = hold_worker(&e, HIGH);
        let fits = (0..5)
            .take_while(|_| e.enqueue_with(P, || (), no_wait()).is_ok())
            .count();
        drop(gate);
        (ran, fits)
    });
    assert_eq!(ran, before, "the jobs yielded before the panic ran");
    assert_eq!(fits, 4, "the lane's capacity after the panic");
}

#[test]
fn an_iterator_panicking_after_one_job_leaks_no_capacity() {
    panic_after(1);
}

#[test]
fn an_iterator_panicking_after_filling_the_lane_leaks_no_capacity() {
    panic_after(4);
}

/// A lazy iterator that yields its second job only once the first one has
/// run: the first must be published and a worker woken before the
/// iterator is asked again.
#[test]
fn a_lazy_iterator_waiting_for_its_first_job_sees_it_run() {
    let results = watchdog("a lazy batch waiting on its own first job", || {
        let e = Executor::builder()
            .name("batch-lazy")
            .core_threads(1)
            .max_threads(1)
            .lane(P, Capacity::Unbounded)
            .build()
            .unwrap();
        let (first_tx, first) = mpsc::channel();
        let mut step = 0;
        let mut first_tx = Some(first_tx);
        let jobs = std::iter::from_fn(move || {
            step += 1;
            match step {
                1 => {
                    let tx = first_tx.take().unwrap();
                    let job: Box<dyn FnOnce() -> u32 + Send> = Box::new(move || {
                        tx.send(1).unwrap();
                        1
                    });
                    Some(job)
                }
                2 => {
                    // Generous: a hang detector, not a timing assertion.
                    let got = first.recv_timeout(Duration::from_secs(10));
                    assert_eq!(got, Ok(1), "the first job never ran");
                    Some(Box::new(|| 2))
                }
                _ => None,
            }
        });
        let handles = e.enqueue_batch(P, jobs).unwrap();
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    assert_eq!(results, [Ok(1), Ok(2)]);
}

/// An iterator that enqueues into the same bounded lane, full of the
/// batch's own jobs: they are published, so the worker frees the slots.
#[test]
fn an_iterator_enqueueing_into_the_same_bounded_lane_finds_room() {
    let inner = watchdog("a batch's iterator enqueueing into its lane", || {
        let e = Executor::builder()
            .name("batch-same-lane")
            .core_threads(1)
            .max_threads(1)
            .lane(P, Capacity::Bounded(2))
            .build()
            .unwrap();
        let handle = e.clone();
        let mut step = 0;
        let mut inner = None;
        let jobs = std::iter::from_fn(|| {
            step += 1;
            match step {
                1 | 2 => Some(|| ()),
                3 => {
                    // The lane holds the batch's two jobs: room comes only
                    // once the worker has run them.
                    let queued =
                        handle.enqueue_with(P, || "inner", wait_at_most(Duration::from_secs(10)));
                    inner = Some(queued.map_err(|e| e.to_string()));
                    None
                }
                _ => None,
            }
        });
        let handles = e.enqueue_batch(P, jobs).unwrap();
        assert_eq!(handles.len(), 2);
        inner.unwrap().map(|h| h.join())
    });
    assert_eq!(inner, Ok(Ok("inner")));
}
