//! `spawn_future`: futures run to completion on the workers at their
//! lane's priority, without an async runtime. A pending future releases
//! its worker and is queued again when woken; a wake during a poll is not
//! lost, a wake after completion does nothing.

use crate::common::watchdog;
use priority_executor::{Capacity, EnqueueError, Executor, JobError, Priority};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

const HIGH: Priority = Priority(10);
const LOW: Priority = Priority(1);

fn exec(threads: usize) -> Executor {
    Executor::builder()
        .name("futures")
        .core_threads(threads)
        .max_threads(threads)
        .lane(HIGH, Capacity::Unbounded)
        .lane(LOW, Capacity::Unbounded)
        .build()
        .unwrap()
}

#[test]
fn a_future_awaiting_another_job_releases_its_worker_meanwhile() {
    // One worker: the job the future awaits can only run if the pending
    // future gave the worker back.
    let result = watchdog("a future awaiting a job on a one-worker pool", || {
        let e = exec(1);
        let handle = e.clone();
        let total = e
            .spawn_future(HIGH, async move {
                let a = handle.enqueue(LOW, || 40).unwrap().await.unwrap();
                let b = handle.enqueue(LOW, || 2).unwrap().await.unwrap();
                a + b
            })
            .unwrap();
        let total = total.join();
        e.wait_idle();
        let high = e.metrics().lane(HIGH).unwrap().clone();
        (total, high.submitted, high.settled(), high.completed)
    });
    assert_eq!(result, (Ok(42), 1, 1, 1));
}

/// Pending until `open` is set, storing its waker for the test to wake.
struct Door {
    open: Arc<Mutex<(bool, Option<Waker>)>>,
    parked: mpsc::Sender<()>,
    polls: Arc<AtomicUsize>,
}

impl Future for Door {
    type Output = &'static str;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<&'static str> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let mut state = self.open.lock().unwrap();
        if state.0 {
            return Poll::Ready("opened");
        }
        state.1 = Some(cx.waker().clone());
        let _ = self.parked.send(());
        Poll::Pending
    }
}

#[test]
fn a_future_woken_from_another_thread_completes_and_later_wakes_do_nothing() {
    let e = exec(2);
    let open = Arc::new(Mutex::new((false, None::<Waker>)));
    let polls = Arc::new(AtomicUsize::new(0));
    let (parked_tx, parked) = mpsc::channel();
    let door = Door {
        open: Arc::clone(&open),
        parked: parked_tx,
        polls: Arc::clone(&polls),
    };
    let handle = e.spawn_future(LOW, door).unwrap();
    parked.recv().unwrap(); // polled once, pending, waker stored
    assert!(!handle.is_finished());
    let waker = {
        let opener = Arc::clone(&open);
        std::thread::spawn(move || {
            let mut state = opener.lock().unwrap();
            state.0 = true;
            let waker = state.1.take().unwrap();
            drop(state);
            waker.wake_by_ref();
            waker
        })
        .join()
        .unwrap()
    };
    assert_eq!(handle.join(), Ok("opened"));
    assert_eq!(polls.load(Ordering::SeqCst), 2);
    // Woken after completion: nothing is queued, nothing is polled.
    waker.wake_by_ref();
    waker.wake();
    e.wait_idle();
    assert_eq!(polls.load(Ordering::SeqCst), 2);
    let low = e.metrics().lane(LOW).unwrap().clone();
    assert_eq!((low.submitted, low.dispatched, low.settled()), (1, 2, 1));
}

/// Wakes itself during each poll and returns `Pending`, `left` times.
struct YieldTimes {
    left: usize,
    polls: Arc<AtomicUsize>,
}

impl Future for YieldTimes {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let polls = self.polls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.left == 0 {
            return Poll::Ready(polls);
        }
        self.left -= 1;
        // Woken while still being polled: this wake must not be lost.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[test]
fn a_wake_during_the_poll_is_not_lost() {
    let result = watchdog("a future waking itself during its polls", || {
        let e = exec(2);
        let handles: Vec<_> = (0..20)
            .map(|_| {
                let polls = Arc::new(AtomicUsize::new(0));
                e.spawn_future(HIGH, YieldTimes { left: 50, polls })
                    .unwrap()
            })
            .collect();
        let polls: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        e.wait_idle();
        let high = e.metrics().lane(HIGH).unwrap().clone();
        (polls, high.submitted, high.settled(), high.dispatched)
    });
    assert_eq!(result.0, vec![51; 20]);
    // One submission per future, each poll a dispatch at its priority.
    assert_eq!((result.1, result.2, result.3), (20, 20, 20 * 51));
}

#[test]
fn a_panicking_future_reports_its_panic_and_the_worker_lives() {
    let e = exec(1);
    let handle = e
        .spawn_future(LOW, async {
            if true {
                panic!("future went wrong");
            }
        })
        .unwrap();
    assert_eq!(
        handle.join(),
        Err(JobError::Panicked {
            message: "future went wrong".into()
        })
    );
    assert_eq!(e.spawn_future(LOW, async { 5 }).unwrap().join(), Ok(5));
    assert_eq!(e.metrics().lane(LOW).unwrap().panicked, 1);
}

#[test]
fn a_parked_future_woken_after_shutdown_now_is_cancelled_and_counted() {
    let e = exec(1);
    let open = Arc::new(Mutex::new((false, None::<Waker>)));
    let (parked_tx, parked) = mpsc::channel();
    let door = Door {
        open: Arc::clone(&open),
        parked: parked_tx,
        polls: Arc::new(AtomicUsize::new(0)),
    };
    let handle = e.spawn_future(LOW, door).unwrap();
    parked.recv().unwrap();
    assert!(e.shutdown_now().is_empty(), "parked, so not queued");
    let waker = open.lock().unwrap().1.take().unwrap();
    waker.wake();
    assert_eq!(handle.join(), Err(JobError::Cancelled));
    let low = e.metrics().lane(LOW).unwrap().clone();
    assert_eq!((low.cancelled, low.submitted, low.settled()), (1, 1, 1));
}

#[test]
fn a_refused_future_comes_back_unpolled() {
    let e = exec(1);
    let _ = e.shutdown_now();
    let err = e.spawn_future(LOW, async { 7 }).unwrap_err();
    assert!(matches!(err, EnqueueError::ShutDown { .. }));
    let other = exec(1);
    assert_eq!(
        other.spawn_future(LOW, err.into_inner()).unwrap().join(),
        Ok(7)
    );
}

/// Pending for ever; counts its drops; leaves its waker with the test.
struct Parked {
    dropped: Arc<AtomicUsize>,
    waker: Arc<Mutex<Option<Waker>>>,
}

impl Future for Parked {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        self.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_future_parked_when_its_executor_ends_is_dropped_and_its_handle_cancelled() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let waker = Arc::new(Mutex::new(None));
    let (handle, metrics) = {
        let (dropped, waker) = (dropped.clone(), waker.clone());
        watchdog("a parked future at the executor's end", move || {
            let exec = exec(1);
            let handle = exec
                .spawn_future(
                    HIGH,
                    Parked {
                        dropped,
                        waker: waker.clone(),
                    },
                )
                .unwrap();
            // Parked: it left its waker and released the worker.
            exec.wait_idle();
            assert!(waker.lock().unwrap().is_some());
            exec.shutdown();
            let metrics = exec.metrics();
            (handle.join(), metrics)
        })
    };
    assert_eq!(handle, Err(JobError::Cancelled));
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "the future was dropped");
    assert_eq!(metrics.lane(HIGH).unwrap().cancelled, 1);
    // A wake after the end does nothing.
    waker.lock().unwrap().take().unwrap().wake();
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

/// A future that leaves its waker in `waker` and stays pending; its
/// destructor panics.
struct Stranded {
    waker: Arc<Mutex<Option<Waker>>>,
}

impl Future for Stranded {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Stranded {
    fn drop(&mut self) {
        panic!("pool tests: deliberate panic in a future's drop");
    }
}

#[test]
fn a_future_whose_destructor_panics_goes_quietly_with_the_last_waker() {
    // Its handle dropped, the future lives on only in the waker it left:
    // dropping that waker, on this thread, drops the future, whose panic
    // must not reach the waker's owner.
    let exec = exec(1);
    let waker = Arc::new(Mutex::new(None));
    let handle = exec
        .spawn_future(
            HIGH,
            Stranded {
                waker: waker.clone(),
            },
        )
        .unwrap();
    exec.wait_idle();
    drop(handle);
    let last = waker
        .lock()
        .unwrap()
        .take()
        .expect("the future left its waker");
    drop(last);
    assert_eq!(exec.spawn_future(HIGH, async { 7 }).unwrap().join(), Ok(7));
}
