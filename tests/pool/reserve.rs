//! Awaiting room in a lane (`reserve`): every job queued through a permit
//! runs once, waiters of one lane are served in the order they came, a
//! full lane never holds up a waiter on another, dropped futures and
//! permits give back what they held, and shutdown ends every wait.

use crate::common::{hold_worker, no_wait, wait_at_most};
use priority_executor::{Capacity, EnqueueError, Executor, Priority};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

const HIGH: Priority = Priority(10);
const LOW: Priority = Priority(1);

fn exec(threads: usize, capacity: usize) -> Executor {
    Executor::builder()
        .core_threads(threads)
        .max_threads(threads)
        .lane(HIGH, Capacity::Bounded(capacity))
        .lane(LOW, Capacity::Bounded(capacity))
        .build()
        .unwrap()
}

/// A waker that counts its wake-ups.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn waker() -> (Arc<Count>, Waker) {
    let count = Arc::new(Count::default());
    (Arc::clone(&count), Waker::from(count))
}

fn poll<F: Future + Unpin>(f: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(waker))
}

#[test]
fn ten_thousand_reserves_from_four_tasks_run_every_job_exactly_once() {
    const TASKS: usize = 4;
    const PER_TASK: usize = 2_500;
    let e = exec(2, 8);
    let runs: Arc<Vec<AtomicU8>> =
        Arc::new((0..TASKS * PER_TASK).map(|_| AtomicU8::new(0)).collect());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|t| {
                let (handle, runs) = (e.clone(), Arc::clone(&runs));
                tokio::spawn(async move {
                    for i in 0..PER_TASK {
                        let id = t * PER_TASK + i;
                        let lane = if id.is_multiple_of(3) { HIGH } else { LOW };
                        let permit = handle.reserve(lane).await.unwrap();
                        let runs = Arc::clone(&runs);
                        let _detached = permit
                            .enqueue(move || {
                                runs[id].fetch_add(1, Ordering::SeqCst);
                            })
                            .unwrap();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    e.wait_idle();
    assert!(runs.iter().all(|r| r.load(Ordering::SeqCst) == 1));
    let m = e.metrics();
    assert_eq!(m.submitted(), (TASKS * PER_TASK) as u64);
    for lane in &m.lanes {
        assert_eq!(lane.settled(), lane.submitted);
    }
}

#[test]
fn waiters_on_one_lane_are_served_in_the_order_they_came() {
    let e = exec(1, 1);
    let gate = hold_worker(&e, HIGH);
    let _queued = e.enqueue(LOW, || ()).unwrap(); // the lane is full
    let (counts, wakers): (Vec<_>, Vec<_>) = (0..3).map(|_| waker()).unzip();
    let mut waiting: Vec<_> = (0..3).map(|_| e.reserve(LOW)).collect();
    for (r, w) in waiting.iter_mut().zip(&wakers) {
        assert!(poll(r, w).is_pending());
    }
    // The worker runs the queued job: one slot frees, and the first
    // waiter alone is woken; the later ones, polled first, do not pass it.
    drop(gate);
    e.wait_idle();
    let woken: Vec<usize> = counts.iter().map(|c| c.0.load(Ordering::SeqCst)).collect();
    assert_eq!(woken, [1, 0, 0]);
    assert!(poll(&mut waiting[2], &wakers[2]).is_pending());
    assert!(poll(&mut waiting[1], &wakers[1]).is_pending());
    let Poll::Ready(Ok(first)) = poll(&mut waiting[0], &wakers[0]) else {
        panic!("the first waiter gets the slot");
    };
    // Its permit dropped unused: the slot goes to the next in line.
    drop(first);
    assert_eq!(counts[1].0.load(Ordering::SeqCst), 1);
    assert!(poll(&mut waiting[2], &wakers[2]).is_pending());
    assert!(matches!(
        poll(&mut waiting[1], &wakers[1]),
        Poll::Ready(Ok(_))
    ));
}

#[test]
fn a_woken_futures_slot_is_kept_from_producers_that_do_not_wait_or_wait_a_while() {
    let e = exec(1, 1);
    let gate = hold_worker(&e, HIGH);
    let Poll::Ready(Ok(held)) = poll(&mut e.reserve(LOW), &waker().1) else {
        panic!("the empty lane has room");
    };
    let (count, w) = waker();
    let mut waiting = e.reserve(LOW);
    assert!(poll(&mut waiting, &w).is_pending());
    // The permit's slot given back goes to the future waiting for it.
    drop(held);
    assert_eq!(count.0.load(Ordering::SeqCst), 1);
    for options in [
        no_wait(),
        wait_at_most(std::time::Duration::from_millis(20)),
    ] {
        let refused = e.enqueue_with(LOW, || "barged", options).unwrap_err();
        assert!(
            matches!(refused, EnqueueError::Full { .. }),
            "the woken future keeps its slot: {refused:?}"
        );
    }
    let Poll::Ready(Ok(permit)) = poll(&mut waiting, &w) else {
        panic!("the woken future finds its slot kept");
    };
    let job = permit.enqueue(|| "kept").unwrap();
    drop(gate);
    assert_eq!(job.join(), Ok("kept"));
    assert_eq!(e.metrics().lane(LOW).unwrap().rejected, 2);
}

#[test]
fn a_woken_future_dropped_gives_its_kept_slot_to_the_next_or_to_producers() {
    let e = exec(1, 1);
    let gate = hold_worker(&e, HIGH);
    let Poll::Ready(Ok(held)) = poll(&mut e.reserve(LOW), &waker().1) else {
        panic!("the empty lane has room");
    };
    let (first_count, first_waker) = waker();
    let (second_count, second_waker) = waker();
    let mut first = e.reserve(LOW);
    let mut second = e.reserve(LOW);
    assert!(poll(&mut first, &first_waker).is_pending());
    assert!(poll(&mut second, &second_waker).is_pending());
    drop(held);
    assert_eq!(first_count.0.load(Ordering::SeqCst), 1);
    drop(first); // woken, never polled: its slot goes to the next in line
    assert_eq!(second_count.0.load(Ordering::SeqCst), 1);
    assert!(e.enqueue_with(LOW, || (), no_wait()).is_err());
    drop(second); // and with nobody left in line, to any producer
    let job = e.enqueue_with(LOW, || "took it", no_wait()).unwrap();
    drop(gate);
    assert_eq!(job.join(), Ok("took it"));
}

#[test]
fn a_dropped_waiter_hands_its_wake_up_to_the_next() {
    let e = exec(1, 1);
    let gate = hold_worker(&e, HIGH);
    let _queued = e.enqueue(LOW, || ()).unwrap();
    let (first_count, first_waker) = waker();
    let (second_count, second_waker) = waker();
    let mut first = e.reserve(LOW);
    let mut second = e.reserve(LOW);
    assert!(poll(&mut first, &first_waker).is_pending());
    assert!(poll(&mut second, &second_waker).is_pending());
    drop(gate);
    e.wait_idle();
    assert_eq!(first_count.0.load(Ordering::SeqCst), 1);
    drop(first); // woken, never looked again: the wake-up passes on
    assert_eq!(second_count.0.load(Ordering::SeqCst), 1);
    let Poll::Ready(Ok(permit)) = poll(&mut second, &second_waker) else {
        panic!("the slot passed on");
    };
    assert_eq!(permit.priority(), LOW);
    assert_eq!(permit.enqueue(|| 7).unwrap().join(), Ok(7));
}

#[test]
fn a_full_lane_never_holds_up_a_waiter_on_another() {
    let e = exec(1, 1);
    let gate = hold_worker(&e, HIGH);
    let _queued = e.enqueue(LOW, || ()).unwrap();
    let (_, w) = waker();
    let mut low = e.reserve(LOW);
    assert!(poll(&mut low, &w).is_pending());
    let mut high = e.reserve(HIGH);
    let Poll::Ready(Ok(permit)) = poll(&mut high, &w) else {
        panic!("the high lane has room");
    };
    let job = permit.enqueue(|| "high").unwrap();
    drop(gate);
    assert_eq!(job.join(), Ok("high"));
}

#[test]
fn shutdown_ends_every_wait_and_refuses_a_late_permit() {
    let e = exec(1, 1);
    let gate = hold_worker(&e, HIGH);
    let _queued = e.enqueue(LOW, || ()).unwrap();
    let (count, w) = waker();
    let mut waiting = e.reserve(LOW);
    assert!(poll(&mut waiting, &w).is_pending());
    let mut ready = e.reserve(HIGH);
    let Poll::Ready(Ok(permit)) = poll(&mut ready, &w) else {
        panic!("the high lane has room");
    };
    let handle = e.clone();
    let closer = std::thread::spawn(move || handle.shutdown());
    // The waiter is woken by the close, and told.
    crate::common::wait_until("the waiter is woken", || count.0.load(Ordering::SeqCst) > 0);
    assert!(matches!(
        poll(&mut waiting, &w),
        Poll::Ready(Err(EnqueueError::ShutDown { priority: LOW, .. }))
    ));
    // A permit given before the close hands its job back.
    let refused = permit.enqueue(|| "late").unwrap_err();
    assert!(matches!(
        refused,
        EnqueueError::ShutDown { priority: HIGH, .. }
    ));
    assert_eq!(refused.into_inner()(), "late");
    drop(gate);
    closer.join().unwrap();
    assert!(matches!(
        poll(&mut e.reserve(LOW), &w),
        Poll::Ready(Err(EnqueueError::ShutDown { .. }))
    ));
    assert!(matches!(
        poll(&mut e.reserve(Priority(5)), &w),
        Poll::Ready(Err(EnqueueError::UnknownPriority {
            priority: Priority(5),
            ..
        }))
    ));
}

#[test]
fn an_unbounded_lane_is_always_ready() {
    let e = Executor::builder()
        .lane(LOW, Capacity::Unbounded)
        .build()
        .unwrap();
    let (_, w) = waker();
    let permits: Vec<_> = (0..100)
        .map(|_| match poll(&mut e.reserve(LOW), &w) {
            Poll::Ready(Ok(p)) => p,
            _ => panic!("unbounded lanes have room"),
        })
        .collect();
    let handles: Vec<_> = permits
        .into_iter()
        .map(|p| p.enqueue(|| 1).unwrap())
        .collect();
    assert_eq!(
        handles.into_iter().map(|h| h.join().unwrap()).sum::<i32>(),
        100
    );
}

/// A waker that panics when woken.
struct Panics;

impl Wake for Panics {
    fn wake(self: Arc<Self>) {
        panic!("reserve test: a waker that panics");
    }
}

#[test]
fn a_waker_that_panics_never_harms_the_worker_that_frees_a_slot() {
    crate::common::quiet_panics("reserve test: a waker that panics");
    let e = exec(1, 1);
    let gate = hold_worker(&e, HIGH);
    let queued = e.enqueue(LOW, || ()).unwrap();
    let panicky = Waker::from(Arc::new(Panics));
    let mut waiting = e.reserve(LOW);
    assert!(poll(&mut waiting, &panicky).is_pending());
    // The worker frees the slot as it takes the queued job, and wakes the
    // waiter: the wake panics, on the worker's thread.
    drop(gate);
    queued.join().unwrap();
    e.wait_idle();
    assert_eq!(e.metrics().threads.live, 1);
    let (_, w) = waker();
    let Poll::Ready(Ok(permit)) = poll(&mut waiting, &w) else {
        panic!("the slot is free");
    };
    assert_eq!(permit.enqueue(|| 5).unwrap().join(), Ok(5));
}
