//! Model: futures awaiting room in a full bounded lane while a slot frees
//! (`lane/space.rs`: `poll_space`, `cancel_space`, `release_slot`). The
//! slot is held by a permit that another thread drops, which frees it as a
//! worker's pop does (`release_slot`), without a worker in the model. A
//! lost wake-up leaves a future waiting for ever (loom: deadlock).
use crate::support::model;
use loom::future::block_on;
use priority_executor::{Capacity, Executor, Permit, Priority};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};

const LANE: Priority = Priority(1);

/// A lane of one slot, and the permit that holds it.
fn full_lane() -> (Executor, Permit) {
    let exec = Executor::builder()
        .name("loom")
        .core_threads(0)
        .max_threads(1)
        .lane(LANE, Capacity::Bounded(1))
        .build()
        .unwrap();
    let permit = block_on(exec.reserve(LANE)).unwrap();
    (exec, permit)
}

/// The future registers while the other thread frees the slot: it sees
/// the free slot, or the freeing thread sees it waiting and wakes it.
#[test]
fn a_future_waiting_for_a_slot_wakes_when_one_frees() {
    model(|| {
        let (exec, held) = full_lane();
        let freer = loom::thread::spawn(move || drop(held));
        let permit = block_on(exec.reserve(LANE)).unwrap();
        assert_eq!(permit.priority(), LANE);
        freer.join().unwrap();
        drop(permit);
        exec.shutdown();
    });
}

/// A future woken for a freed slot is dropped before it looks again,
/// racing the drop of the slot's permit: the wake-up passes to the next
/// future in line, which gets the slot.
#[test]
fn a_woken_future_dropped_passes_its_slot_to_the_next() {
    model(|| {
        let (exec, held) = full_lane();
        // The first in line: polled once, so it waits, then dropped.
        let mut first = Box::pin(exec.reserve(LANE));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(first.as_mut().poll(&mut cx).is_pending());
        let freer = loom::thread::spawn(move || drop(held));
        let dropper = loom::thread::spawn(move || drop(first));
        // The second in line gets the slot whichever way the drops fall.
        let mut second = pin!(exec.reserve(LANE));
        let permit = block_on(async { std::future::poll_fn(|cx| second.as_mut().poll(cx)).await });
        assert!(permit.is_ok());
        freer.join().unwrap();
        dropper.join().unwrap();
        drop(permit);
        exec.shutdown();
    });
}
