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

/// A waker that counts its wake-ups (outside the model: it is read after
/// the threads are joined).
#[derive(Default)]
struct Count(std::sync::atomic::AtomicUsize);

impl std::task::Wake for Count {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A slot frees (a permit dropped) while a future waits for it and a
/// producer that does not wait tries the lane: the slot is granted to the
/// future before it is woken, so the producer either took it first (the
/// future then is not woken and still waits) or is refused (the future,
/// woken, finds the slot its own). A woken future that finds its slot
/// taken is the barged permit this rules out. The lane is paused, so no
/// worker frees the slot again.
#[test]
fn a_woken_futures_slot_is_kept_from_a_producer_that_does_not_wait() {
    model(|| {
        let (exec, held) = full_lane();
        exec.pause_lane(LANE).unwrap();
        let count = std::sync::Arc::new(Count::default());
        let waker = Waker::from(std::sync::Arc::clone(&count));
        let mut waiting = Box::pin(exec.reserve(LANE));
        let mut cx = Context::from_waker(&waker);
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        let freer = loom::thread::spawn(move || drop(held));
        let options = priority_executor::JobOptions::new().wait_at_most(std::time::Duration::ZERO);
        let barged = exec.enqueue_with(LANE, || (), options).is_ok();
        freer.join().unwrap();
        let woken = count.0.load(std::sync::atomic::Ordering::SeqCst);
        let ready = waiting.as_mut().poll(&mut cx);
        if barged {
            assert_eq!(woken, 0, "the producer took the slot before the grant");
            assert!(ready.is_pending());
        } else {
            assert_eq!(woken, 1, "the freed slot was granted");
            assert!(matches!(ready, std::task::Poll::Ready(Ok(_))));
        }
        drop(waiting);
        exec.shutdown();
    });
}
