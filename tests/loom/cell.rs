//! Models of the job cell's one-shot protocol (`src/job/cell/`): a worker
//! completing a job races the handle being dropped, joined or polled. The
//! result is delivered exactly once or dropped exactly once, and a waiter
//! is never left asleep.
use crate::support::model;
use priority_executor::{Capacity, Executor, JobHandle, Priority};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

const LANE: Priority = Priority(1);

fn one_worker() -> Executor {
    let exec = Executor::builder()
        .name("loom")
        .core_threads(1)
        .max_threads(1)
        .lane(LANE, Capacity::Unbounded)
        .build()
        .unwrap();
    assert_eq!(exec.prestart_core_threads(), 1);
    exec
}

/// A result that counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// The handle is dropped while the worker completes: whichever side is
/// last drops the result, exactly once.
#[test]
fn complete_vs_drop_handle() {
    model(|| {
        let exec = one_worker();
        let drops = Arc::new(AtomicUsize::new(0));
        let result = Counted(drops.clone());
        let handle = exec.enqueue(LANE, move || result).unwrap();
        drop(handle);
        exec.shutdown();
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    });
}

/// `join` blocks while the worker completes: it returns the value, and the
/// value is dropped once, by the caller.
#[test]
fn complete_vs_join() {
    model(|| {
        let exec = one_worker();
        let drops = Arc::new(AtomicUsize::new(0));
        let result = Counted(drops.clone());
        let handle = exec.enqueue(LANE, move || result).unwrap();
        let value = handle.join().unwrap();
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        drop(value);
        exec.shutdown();
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    });
}

/// Counts wake-ups.
struct Flag(loom::sync::atomic::AtomicUsize);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, loom::sync::atomic::Ordering::SeqCst);
    }
}

fn poll_once<T>(
    handle: &mut JobHandle<T>,
    waker: &Waker,
) -> Poll<Result<T, priority_executor::JobError>> {
    Pin::new(handle).poll(&mut Context::from_waker(waker))
}

/// The handle is polled (twice, with two wakers, so the waker is replaced)
/// while the worker completes: a `Pending` poll is always followed by a
/// wake of the last waker, and the next poll is `Ready`.
#[test]
fn complete_vs_poll_and_replace_waker() {
    model(|| {
        let exec = one_worker();
        let mut handle = exec.enqueue(LANE, || 7).unwrap();
        let first = Arc::new(Flag(loom::sync::atomic::AtomicUsize::new(0)));
        let second = Arc::new(Flag(loom::sync::atomic::AtomicUsize::new(0)));
        let first_waker = Waker::from(first.clone());
        let second_waker = Waker::from(second.clone());
        let got = match poll_once(&mut handle, &first_waker) {
            Poll::Ready(v) => v,
            Poll::Pending => match poll_once(&mut handle, &second_waker) {
                Poll::Ready(v) => v,
                Poll::Pending => {
                    // Only the second waker may be woken now.
                    while second.0.load(loom::sync::atomic::Ordering::SeqCst) == 0 {
                        loom::thread::yield_now();
                    }
                    match poll_once(&mut handle, &second_waker) {
                        Poll::Ready(v) => v,
                        Poll::Pending => panic!("woken but not ready"),
                    }
                }
            },
        };
        assert_eq!(got, Ok(7));
        drop(handle);
        exec.shutdown();
    });
}

/// The handle is polled (leaving its waiter in the state word) and then
/// dropped while the worker completes: whichever side takes the waiter
/// (the worker to wake it, the handle to drop it) takes it once, and the
/// result is dropped once.
#[test]
fn poll_then_drop_handle_vs_complete() {
    model(|| {
        let exec = one_worker();
        let drops = Arc::new(AtomicUsize::new(0));
        let result = Counted(drops.clone());
        let mut handle = exec.enqueue(LANE, move || result).unwrap();
        let flag = Arc::new(Flag(loom::sync::atomic::AtomicUsize::new(0)));
        let waker = Waker::from(flag.clone());
        let polled = poll_once(&mut handle, &waker);
        drop(polled);
        drop(handle);
        exec.shutdown();
        drop(waker);
        assert_eq!(drops.load(Ordering::Relaxed), 1);
        assert_eq!(Arc::strong_count(&flag), 1, "the waiter was freed once");
    });
}

/// The handle cancels while the worker takes the job: exactly one wins.
/// A successful cancel means the job never ran and its captures were
/// dropped once; a refused one means it ran and the handle gets its value.
#[test]
fn cancel_vs_start() {
    model(|| {
        let exec = one_worker();
        let ran = Arc::new(AtomicUsize::new(0));
        let drops = Arc::new(AtomicUsize::new(0));
        let captured = Counted(drops.clone());
        let counter = ran.clone();
        let handle = exec
            .enqueue(LANE, move || {
                let _keep = &captured;
                counter.fetch_add(1, Ordering::Relaxed);
                7
            })
            .unwrap();
        let cancelled = handle.cancel();
        let result = handle.join();
        exec.shutdown();
        if cancelled {
            assert_eq!(result, Err(priority_executor::JobError::Cancelled));
            assert_eq!(ran.load(Ordering::Relaxed), 0);
        } else {
            assert_eq!(result, Ok(7));
            assert_eq!(ran.load(Ordering::Relaxed), 1);
        }
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    });
}

/// A cancelled handle with a waker registered is dropped while the worker
/// meets the job: the body and the waker are each dropped once, and the
/// waker is never woken.
#[test]
fn cancel_after_poll_then_drop_vs_start() {
    model(|| {
        let exec = one_worker();
        let drops = Arc::new(AtomicUsize::new(0));
        let captured = Counted(drops.clone());
        let mut handle = exec
            .enqueue(LANE, move || {
                let _keep = &captured;
            })
            .unwrap();
        let flag = Arc::new(Flag(loom::sync::atomic::AtomicUsize::new(0)));
        let waker = Waker::from(flag.clone());
        if poll_once(&mut handle, &waker).is_pending() && handle.cancel() {
            assert!(handle.is_finished());
            drop(handle);
            exec.shutdown();
            assert_eq!(flag.0.load(loom::sync::atomic::Ordering::SeqCst), 0);
            drop(waker);
            assert_eq!(Arc::strong_count(&flag), 1, "the waker was dropped");
        } else {
            drop(handle);
            exec.shutdown();
        }
        assert_eq!(drops.load(Ordering::Relaxed), 1);
    });
}
